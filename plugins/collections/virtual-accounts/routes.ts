/**
 * The virtual-account endpoints (Bearer, the collections envelope): create, list, find and
 * toggle-status. Handlers stay thin: the core has validated the declared body and query → call the
 * service → answer the envelope. Read docs/collections-virtual-accounts.md.
 */
import type { RouteDeclaration } from "../../../core/plugin.ts";
import { envelope, pageMeta } from "../../../core/respond.ts";
import { FindVirtualAccountQuery, ListVirtualAccountsQuery, findInputFromQuery, listInputFromQuery } from "./query-schemas.ts";
import { ToggleVirtualAccountBody, createVirtualAccountBody, type CreateVirtualAccountInput, type ToggleVirtualAccountInput } from "./schemas.ts";
import type { VirtualAccountServices } from "./services.ts";

export function virtualAccountRoutes(s: VirtualAccountServices): RouteDeclaration[] {
  return [_create(s), _list(s), _find(s), _toggleStatus(s)];
}

// --- Internal helpers ---

function _create({ accounts, clock }: VirtualAccountServices): RouteDeclaration {
  return {
    method: "POST",
    path: "/api/v1/virtual-account",
    service: "collections",
    auth: "bearer",
    schemas: { body: createVirtualAccountBody(clock) },
    summary: "Create a virtual account",
    description:
      "Body: account_type (single_use | multi_use), account_name and source_reference (3–250 characters; source_reference unique per business), optional amount (> 0, fixed expected amount), expires_at (YYYY-MM-DD HH:MM:SS UTC, in the future and within 24 hours; required for single_use, omitted for multi_use). 422 lists every failing field; 409 on a reused source_reference.",
    responses: { 201: "The virtual account", 409: "source_reference already used", 422: "Validation errors" },
    async handler(ctx) {
      const account = await accounts.create(ctx.businessId!, ctx.body as CreateVirtualAccountInput);
      return envelope(ctx, 201, "Virtual account created successfully.", accounts.view(account));
    },
  };
}

function _list({ accounts }: VirtualAccountServices): RouteDeclaration {
  return {
    method: "GET",
    path: "/api/v1/virtual-account",
    service: "collections",
    auth: "bearer",
    schemas: { query: ListVirtualAccountsQuery },
    summary: "List virtual accounts (filters, search, creation range, sort on createdAt, page/limit)",
    description:
      "status selects on the derived status at the time of the request (active, inactive, expired). startDate/endDate: YYYY-MM-DD (whole UTC days, inclusive) or YYYY-MM-DD HH:MM:SS. sort: ASC | DESC (default DESC). limit default 1000 (at most 1000), page default 1.",
    responses: { 200: "Virtual accounts and meta", 422: "Validation errors" },
    async handler(ctx) {
      const q = listInputFromQuery(ctx.query);
      const { items, total, now } = await accounts.list(ctx.businessId!, q);
      return envelope(
        ctx,
        200,
        "Virtual accounts retrieved successfully.",
        items.map((a) => accounts.view(a, now)),
        pageMeta(q.page, q.limit, total),
      );
    },
  };
}

function _find({ accounts }: VirtualAccountServices): RouteDeclaration {
  return {
    method: "GET",
    path: "/api/v1/virtual-account/find",
    service: "collections",
    auth: "bearer",
    schemas: { query: FindVirtualAccountQuery },
    summary: "Find one virtual account by exactly one of reference or sourceReference",
    responses: { 200: "The virtual account", 404: "No such account in this business", 422: "Neither or both lookup parameters" },
    async handler(ctx) {
      const by = findInputFromQuery(ctx.query);
      const account =
        by.by === "reference"
          ? await accounts.findByReference(ctx.businessId!, by.value)
          : await accounts.findBySourceReference(ctx.businessId!, by.value);
      return envelope(ctx, 200, "Virtual account retrieved successfully.", accounts.view(account));
    },
  };
}

function _toggleStatus({ accounts }: VirtualAccountServices): RouteDeclaration {
  return {
    method: "POST",
    path: "/api/v1/virtual-account/toggle-status",
    service: "collections",
    auth: "bearer",
    schemas: { body: ToggleVirtualAccountBody },
    summary: "Activate or deactivate a virtual account (by its reference)",
    description: "Body: reference, activate (boolean). An inactive account refuses deposits (they are refunded). Expired accounts cannot change status (409).",
    responses: { 200: "The updated virtual account", 404: "No such account in this business", 409: "The account has expired", 422: "Validation errors" },
    async handler(ctx) {
      const input = ctx.body as ToggleVirtualAccountInput;
      const account = await accounts.toggle(ctx.businessId!, input.reference, input.activate);
      return envelope(ctx, 200, input.activate ? "Virtual account activated." : "Virtual account deactivated.", accounts.view(account));
    },
  };
}
