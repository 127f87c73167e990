/**
 * The seven payment-link endpoints (Bearer, the collections envelope). Handlers stay thin: the
 * core has validated the declared body and query → call the service → answer the envelope.
 */
import type { RequestContext } from "../../../core/context.ts";
import type { RouteDeclaration } from "../../../core/plugin.ts";
import { envelope, pageMeta } from "../../../core/respond.ts";
import type { PaymentLink } from "./links/link.ts";
import {
  CreatePaymentLinkBody,
  ListLinksQuery,
  ListTransactionsQuery,
  ToggleStatusBody,
  type CreatePaymentLinkInput,
  type ListLinksInput,
  type ListTransactionsInput,
  type ToggleStatusInput,
} from "./links/schemas.ts";
import type { PaymentLinkServices } from "./services.ts";

export function paymentLinkRoutes(s: PaymentLinkServices): RouteDeclaration[] {
  return [
    _create(s),
    _list(s),
    _findByReference(s),
    _findBySourceReference(s),
    _transactionsByReference(s),
    _transactionsBySourceReference(s),
    _toggleStatus(s),
  ];
}

// --- Internal helpers ---

function _create({ links }: PaymentLinkServices): RouteDeclaration {
  return {
    method: "POST",
    path: "/api/v1/payment-link",
    service: "collections",
    auth: "bearer",
    schemas: { body: CreatePaymentLinkBody },
    summary: "Create a payment link",
    description:
      "Body: link_name, narration, fee_bearer (MERCHANT | CUSTOMER), source_reference (unique per business), optional amount (≥ 100), customer_emails, redirect_link, start_date, end_date (ISO 8601). 422 lists every failing field; 409 on a reused source_reference.",
    responses: { 201: "The payment link", 409: "source_reference already used", 422: "Validation errors" },
    async handler(ctx) {
      const link = await links.create(ctx.businessId!, ctx.body as CreatePaymentLinkInput);
      return envelope(ctx, 201, "Payment link created successfully.", links.view(link));
    },
  };
}

function _list({ links }: PaymentLinkServices): RouteDeclaration {
  return {
    method: "GET",
    path: "/api/v1/payment-link",
    service: "collections",
    auth: "bearer",
    schemas: { query: ListLinksQuery },
    summary: "List payment links (page, limit, status, search over link name and reference)",
    responses: { 200: "Payment links and meta" },
    async handler(ctx) {
      const q = ctx.query as unknown as ListLinksInput;
      const { items, total } = await links.list(ctx.businessId!, q);
      return envelope(ctx, 200, "Payment links retrieved successfully.", items.map(links.view), pageMeta(q.page, q.limit, total));
    },
  };
}

function _findByReference({ links }: PaymentLinkServices): RouteDeclaration {
  return {
    method: "GET",
    path: "/api/v1/payment-link/find-by-reference/:reference",
    service: "collections",
    auth: "bearer",
    summary: "Find a payment link by its generated reference",
    responses: { 200: "The payment link", 404: "No such link in this business" },
    async handler(ctx) {
      const link = await links.findByReference(ctx.businessId!, ctx.params.reference!);
      return envelope(ctx, 200, "Payment link retrieved successfully.", links.view(link));
    },
  };
}

function _findBySourceReference({ links }: PaymentLinkServices): RouteDeclaration {
  return {
    method: "GET",
    path: "/api/v1/payment-link/find-by-source-reference/:source_reference",
    service: "collections",
    auth: "bearer",
    summary: "Find a payment link by the caller's source reference",
    responses: { 200: "The payment link", 404: "No such link in this business" },
    async handler(ctx) {
      const link = await links.findBySourceReference(ctx.businessId!, ctx.params.source_reference!);
      return envelope(ctx, 200, "Payment link retrieved successfully.", links.view(link));
    },
  };
}

function _transactionsByReference(s: PaymentLinkServices): RouteDeclaration {
  return {
    method: "GET",
    path: "/api/v1/payment-link/find-by-reference/:reference/transactions",
    service: "collections",
    auth: "bearer",
    schemas: { query: ListTransactionsQuery },
    summary: "Transactions (checkout sessions) of a link, by its reference",
    responses: { 200: "Transactions and meta", 404: "No such link in this business" },
    async handler(ctx) {
      const link = await s.links.findByReference(ctx.businessId!, ctx.params.reference!);
      return _transactionsOf(s, ctx, link);
    },
  };
}

function _transactionsBySourceReference(s: PaymentLinkServices): RouteDeclaration {
  return {
    method: "GET",
    path: "/api/v1/payment-link/source-reference/:source_reference/transactions",
    service: "collections",
    auth: "bearer",
    schemas: { query: ListTransactionsQuery },
    summary: "Transactions (checkout sessions) of a link, by its source reference",
    responses: { 200: "Transactions and meta", 404: "No such link in this business" },
    async handler(ctx) {
      const link = await s.links.findBySourceReference(ctx.businessId!, ctx.params.source_reference!);
      return _transactionsOf(s, ctx, link);
    },
  };
}

function _toggleStatus({ links }: PaymentLinkServices): RouteDeclaration {
  return {
    method: "POST",
    path: "/api/v1/payment-link/toggle-status",
    service: "collections",
    auth: "bearer",
    schemas: { body: ToggleStatusBody },
    summary: "Activate or deactivate a payment link (link_id: its reference or id)",
    responses: { 200: "The updated payment link", 404: "No such link in this business", 422: "Validation errors" },
    async handler(ctx) {
      const input = ctx.body as ToggleStatusInput;
      const link = await links.toggle(ctx.businessId!, input.link_id, input.activate);
      return envelope(ctx, 200, input.activate ? "Payment link activated." : "Payment link deactivated.", links.view(link));
    },
  };
}

async function _transactionsOf({ checkout }: PaymentLinkServices, ctx: RequestContext, link: PaymentLink): Promise<Response> {
  const q = ctx.query as unknown as ListTransactionsInput;
  const { items, total } = await checkout.transactions(ctx.businessId!, link._id, q);
  return envelope(ctx, 200, "Payment link transactions retrieved successfully.", items.map(checkout.view), pageMeta(q.page, q.limit, total));
}
