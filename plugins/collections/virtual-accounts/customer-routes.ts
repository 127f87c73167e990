/**
 * The customer endpoints (Bearer, the collections envelope): create a customer (with its dedicated
 * multi_use account when has_wallet), read one, and attach a dedicated account to one that has none.
 */
import type { RouteDeclaration } from "../../../core/plugin.ts";
import { envelope } from "../../../core/respond.ts";
import { CreateCustomerBody, type CreateCustomerInput } from "./schemas.ts";
import type { VirtualAccountServices } from "./services.ts";

export function customerRoutes({ customers }: VirtualAccountServices): RouteDeclaration[] {
  return [
    {
      method: "POST",
      path: "/api/v1/customers",
      service: "collections",
      auth: "bearer",
      schemas: { body: CreateCustomerBody },
      summary: "Create a customer (has_wallet: true also creates its dedicated multi_use virtual account)",
      description: "Body: first_name, last_name (1–100 characters), email, phone (7–15 digits, optional +), has_wallet (boolean, default false).",
      responses: { 201: "The customer (with its virtual account when has_wallet)", 422: "Validation errors" },
      async handler(ctx) {
        const created = await customers.create(ctx.businessId!, ctx.body as CreateCustomerInput);
        return envelope(ctx, 201, "Customer created successfully.", customers.view(created));
      },
    },
    {
      method: "GET",
      path: "/api/v1/customers/:id",
      service: "collections",
      auth: "bearer",
      summary: "A customer of this business, with its dedicated virtual account",
      responses: { 200: "The customer", 404: "No such customer in this business" },
      async handler(ctx) {
        const found = await customers.get(ctx.businessId!, ctx.params.id!);
        return envelope(ctx, 200, "Customer retrieved successfully.", customers.view(found));
      },
    },
    {
      method: "POST",
      path: "/api/v1/customers/:id/virtual-account",
      service: "collections",
      auth: "bearer",
      summary: "Attach a dedicated multi_use virtual account to a customer that has none",
      responses: { 201: "The customer with its new virtual account", 404: "No such customer in this business", 409: "The customer already has one" },
      async handler(ctx) {
        const attached = await customers.attachAccount(ctx.businessId!, ctx.params.id!);
        return envelope(ctx, 201, "Virtual account attached to the customer.", customers.view(attached));
      },
    },
  ];
}
