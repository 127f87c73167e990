/**
 * Operator routes of Stored mode: every business's invoices (frozen ones first of all) and the
 * resolution of a frozen invoice once the operator has checked at the regulator what happened.
 * x-admin-api-key, answered on every host, management quota per operator credential.
 */
import type { RequestContext } from "../../core/context.ts";
import type { RouteDeclaration } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import { AdminListQuery, InvoiceParams, ResolutionBody, type AdminListQueryInput, type ResolutionInput } from "./schemas.ts";
import { invoiceView } from "../invoice/stored-invoices.ts";
import { INVOICE_STORE_UNAVAILABLE } from "./routes.ts";
import type { StoredService } from "./types.ts";

export const STORED_ADMIN_PATHS = {
  list: "/admin/invoices",
  resolution: "/admin/invoices/:invoiceId/resolution",
} as const;

const OPERATOR = { service: "gateway", hosts: "any", auth: "admin", quota: "management", skip: ["mode"], unavailable: INVOICE_STORE_UNAVAILABLE } as const;

/** The decision's audit entry is appended by the service (resolve.ts), which the operator console calls too. */
export function storedAdminRoutes(service: StoredService): RouteDeclaration[] {
  return [
    {
      ...OPERATOR,
      method: "GET",
      path: STORED_ADMIN_PATHS.list,
      schemas: { query: AdminListQuery },
      summary: "Operator: stored invoices of every business (e.g. ?status=frozen), newest first",
      responses: { 200: "{ data: [invoice + businessId], nextCursor }" },
      async handler(ctx) {
        const { businessId, ...q } = ctx.query as unknown as AdminListQueryInput;
        const page = await service.list(businessId ?? null, q);
        return json(ctx, 200, { data: page.items.map((d) => ({ businessId: d.businessId, ...invoiceView(d, false) })), nextCursor: page.nextCursor });
      },
    },
    {
      ...OPERATOR,
      method: "POST",
      path: STORED_ADMIN_PATHS.resolution,
      idempotent: true,
      schemas: { params: InvoiceParams, body: ResolutionBody },
      summary: "Operator: resolve a frozen invoice after checking the regulator (signed / not_signed / transmitted / not_transmitted)",
      description:
        "A frozen sign: signed (the held fee is confirmed) or not_signed (the fee is reversed and the invoice is signed again under the next attempt). A frozen transmission: transmitted, or not_transmitted (back to signed). The rule of every operator resolution route (docs/operations.md \"Recovery jobs\"): x-idempotency-key required; the same decision again answers 200 with what was recorded; unknown invoice: 404 GW_OPERATION_NOT_FOUND; anything else not frozen: 409 GW_INVOICE_STATE_CONFLICT.",
      responses: { 200: "The invoice record (with businessId)" },
      async handler(ctx) {
        const outcome = (ctx.body as ResolutionInput).outcome;
        // The same decision again answers what an earlier request recorded (audited once, by that request).
        const doc = await service.resolve(_operator(ctx), ctx.params.invoiceId!, outcome);
        return json(ctx, 200, { businessId: doc.businessId, ...invoiceView(doc, false), resolution: doc.resolution ?? null });
      },
    },
  ];
}

// --- Internal helpers ---

function _operator(ctx: RequestContext): { requestId: string; credentialId: string } {
  return { requestId: ctx.requestId, credentialId: ctx.principal!.credentialId };
}
