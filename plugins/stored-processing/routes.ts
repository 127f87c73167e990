/**
 * Stored-mode routes (docs/stored-mode.md): the intake (the Stored declaration of
 * `POST /api/v1/invoice/sign`, a mode variant of the Pass-through sign), the invoice reads,
 * transmission and cancellation by invoice ID, and the regulator's inbound receiver.
 * Thin handlers: headers → service → the answer.
 */
import type { RequestContext } from "../../core/context.ts";
import { gwError, isGatewayError } from "../../core/errors/gateway-error.ts";
import type { RouteDeclaration } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import { subBusinessId } from "../../core/validation.ts";
import type { RegulatorState } from "../../adapters/regulator/port.ts";
import { INBOUND_PATH, SIGNATURE_HEADER, TIMESTAMP_HEADER, type InboundReceiver } from "./inbound.ts";
import { EmptyBody, IntakeBody, InvoiceParams, ListQuery, type ListQueryInput } from "./schemas.ts";
import { SUB_BUSINESS_HEADER } from "../invoice/headers.ts";
import { intakeView, invoiceView } from "../invoice/stored-invoices.ts";
import type { StoredCaller, StoredService } from "./types.ts";

export const STORED_PATHS = {
  intake: "/api/v1/invoice/sign",
  list: "/invoices",
  invoice: "/invoices/:invoiceId",
  transmit: "/invoices/:invoiceId/transmit",
  cancel: "/invoices/:invoiceId/cancel",
  inbound: INBOUND_PATH,
} as const;

const STORED = { service: "gateway", auth: "apiKey", modes: ["stored"] } as const;

/** What a merchant's read or change of its invoices answers when the invoice store cannot. */
export const INVOICE_STORE_UNAVAILABLE = { code: "GW_MANAGEMENT_SERVICE_UNAVAILABLE", detail: "The invoice store is unavailable; retry with backoff." } as const;
/** Merchant routes over the business's invoices. */
/**
 * The invoice routes answer in both modes: on a domain approved in Pass-through after Stored, the
 * invoices it took in as Stored (its backlog, which the processor still finishes) stay readable,
 * transmittable and cancellable there; anything else on a Pass-through domain is the mode conflict.
 */
const INVOICES = { service: "gateway", auth: "apiKey", modes: ["stored", "passthrough"], unavailable: INVOICE_STORE_UNAVAILABLE } as const;

export function storedRoutes(service: StoredService, inbound: InboundReceiver): RouteDeclaration[] {
  return [_intakeRoute(service), ..._invoiceRoutes(service), _inboundRoute(inbound)];
}

// --- Internal helpers ---

/** The Stored declaration of `POST /api/v1/invoice/sign`. */
function _intakeRoute(service: StoredService): RouteDeclaration {
  return {
    ...STORED,
    method: "POST",
    path: STORED_PATHS.intake,
    quota: "sign",
    bodyLimit: "large",
    idempotent: true,
    headers: [SUB_BUSINESS_HEADER],
    unavailable: {
      code: "GW_INVOICE_INTAKE_UNAVAILABLE",
      detail: "The gateway could not confirm that the invoice was accepted; retry with the same x-idempotency-key and content.",
    },
    schemas: { body: IntakeBody },
    summary: "Accept an invoice for Stored processing (202; billed when the processor signs it)",
    description:
      "Headers x-sub-business-id and x-idempotency-key (x-attempt-number is not used: the processor numbers its attempts). Body: the regulator's invoice document; business_id may be omitted (filled in) and irn may be omitted when invoice_reference and issue_date are sent (built from the IRN template). The invoice is stored before the answer: 202 { invoiceId, status, irn, subBusinessId, createdAt } with Location /invoices/{invoiceId}. The same key and content answer the same invoice.",
    responses: { 202: "Accepted: { invoiceId, status, irn, subBusinessId, createdAt }" },
    async handler(ctx) {
      const sub = subBusinessId(ctx);
      const key = ctx.idempotencyKey!;
      const doc = await service.intake(_caller(ctx), { subBusinessId: sub, idempotencyKey: key, body: ctx.body as Record<string, unknown> });
      return json(ctx, 202, intakeView(doc), { location: `/invoices/${doc._id}` });
    },
  };
}

/** The business's invoices: list, one, transmit and cancel by id. */
function _invoiceRoutes(service: StoredService): RouteDeclaration[] {
  return [
    {
      ...INVOICES,
      method: "GET",
      path: STORED_PATHS.list,
      quota: "management",
      schemas: { query: ListQuery },
      summary: "List the business's stored invoices, outbound and inbound, newest first (cursor pagination)",
      description: "Filters: status, subBusinessId, direction (outbound | inbound), createdFrom / createdTo (date or ISO date-time, inclusive). limit ≤ 100 (default 50); pass nextCursor as cursor for the next page. Items leave the document out.",
      responses: { 200: "{ data: [invoice], nextCursor }" },
      async handler(ctx) {
        const backlog = await _backlogDomain(ctx, service);
        const page = await service.list(ctx.businessId!, ctx.query as unknown as ListQueryInput, { state: ctx.state as RegulatorState, domain: backlog });
        return json(ctx, 200, { data: page.items.map((d) => invoiceView(d, false)), nextCursor: page.nextCursor });
      },
    },
    {
      ...INVOICES,
      method: "GET",
      path: STORED_PATHS.invoice,
      quota: "management",
      schemas: { params: InvoiceParams },
      summary: "One stored invoice: status, status history, attempts, last error, operationId, IRN and the document",
      responses: { 200: "The invoice record" },
      async handler(ctx) {
        await _backlogInvoice(ctx, service);
        return json(ctx, 200, invoiceView(await service.get(ctx.businessId!, ctx.params.invoiceId!, ctx.state as RegulatorState), true));
      },
    },
    {
      ...INVOICES,
      method: "POST",
      path: STORED_PATHS.transmit,
      idempotent: "optional",
      quota: "default",
      schemas: { params: InvoiceParams },
      summary: "Transmit a signed stored invoice (body {}); the processor dispatches it once",
      description:
        "signed → 202, status transmitting. transmitting/transmitted → 409 GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED with the operationId; pending/validated/signing → 422 GW_INVOICE_NOT_TRANSMITTABLE; rejected/cancelled/frozen → 409 GW_INVOICE_STATE_CONFLICT.",
      responses: { 202: "The invoice record (status transmitting)" },
      async handler(ctx) {
        if (!_isEmptyObject(ctx.body))
          throw gwError("GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY", { detail: "The transmit body must be exactly {}." });
        await _backlogInvoice(ctx, service);
        const doc = await service.transmit(_caller(ctx), ctx.params.invoiceId!);
        return json(ctx, 202, invoiceView(doc, false), { location: `/invoices/${doc._id}` });
      },
    },
    {
      ...INVOICES,
      method: "POST",
      path: STORED_PATHS.cancel,
      idempotent: "optional",
      quota: "default",
      schemas: { params: InvoiceParams, body: EmptyBody },
      summary: "Cancel a pending or validated stored invoice (body {}); nothing is billed",
      description: "pending/validated → 200, status cancelled; cancelled → 200 again; any other status → 409 GW_INVOICE_STATE_CONFLICT.",
      responses: { 200: "The invoice record (status cancelled)" },
      async handler(ctx) {
        await _backlogInvoice(ctx, service);
        return json(ctx, 200, invoiceView(await service.cancel(_caller(ctx), ctx.params.invoiceId!), false));
      },
    },
  ];
}

/** The regulator's inbound deliveries (not a customer route). */
function _inboundRoute(inbound: InboundReceiver): RouteDeclaration {
  return {
    method: "POST",
    path: STORED_PATHS.inbound,
    service: "gateway",
    hosts: "any",
    auth: "none",
    quota: "none",
    bodyLimit: "large",
    rejectServerFields: false,
    skip: ["auth", "ip-allowlist", "quota", "mode"],
    // The HMAC is checked over the raw bytes before anything parses them; one address gets few tries.
    verifyBody: (ctx, rawBody) => inbound.verify({ rawBody, timestamp: ctx.req.headers.get(TIMESTAMP_HEADER), signature: ctx.req.headers.get(SIGNATURE_HEADER) }),
    admission: inbound.admission,
    headers: [
      { name: TIMESTAMP_HEADER, required: true, description: "Unix time in seconds of the delivery, within the replay window." },
      { name: SIGNATURE_HEADER, required: true, description: 'v1,<base64 HMAC-SHA256 of "timestamp.body"> keyed by the deployment\'s regulator secret (several space-separated).' },
    ],
    unavailable: { code: "GW_INVOICE_INTAKE_UNAVAILABLE", detail: "The delivery could not be stored; deliver it again." },
    summary: "The regulator's inbound-invoice deliveries (HMAC-signed; not a customer route)",
    description:
      "Headers x-regulator-timestamp (Unix seconds, within the replay window) and x-regulator-signature: v1,<base64 HMAC-SHA256 of \"timestamp.body\"> keyed by the deployment's regulator secret. Body { delivery_id, environment, buyer_tin, irn, invoice }. A repeated delivery id is acknowledged without storing anything again.",
    responses: { 200: '{ status: "accepted" | "duplicate" }' },
    async handler(ctx) {
      const status = await inbound.receive({
        requestId: ctx.requestId,
        rawBody: ctx.rawBody ?? new Uint8Array(),
        body: ctx.body,
        timestamp: ctx.req.headers.get(TIMESTAMP_HEADER),
        signature: ctx.req.headers.get(SIGNATURE_HEADER),
      });
      return json(ctx, 200, { status });
    },
  };
}

/**
 * On a Pass-through domain: the domain to list by, when it took in Stored invoices before its mode
 * changed; otherwise the mode conflict every Stored-only route answers there. null on a Stored domain.
 */
async function _backlogDomain(ctx: RequestContext, service: StoredService): Promise<string | undefined> {
  if (ctx.mode !== "passthrough") return undefined;
  const host = ctx.domain!.host;
  const any = await service.list(ctx.businessId!, { limit: 1 } as ListQueryInput, { state: ctx.state as RegulatorState, domain: host });
  if (any.items.length === 0) throw _modeConflict();
  return host;
}

/** On a Pass-through domain, only an invoice this domain took in as Stored is served. */
async function _backlogInvoice(ctx: RequestContext, service: StoredService): Promise<void> {
  if (ctx.mode !== "passthrough") return;
  const doc = await service.get(ctx.businessId!, ctx.params.invoiceId!, ctx.state as RegulatorState).catch((e: unknown) => {
    if (isGatewayError(e) && e.code === "GW_INVOICE_NOT_FOUND") return null;
    throw e;
  });
  if (!doc || doc.domain !== ctx.domain!.host) throw _modeConflict();
}

function _modeConflict(): Error {
  return gwError("GW_OPERATION_MODE_CONFLICT", {
    detail:
      "This domain is in Pass-through mode; this endpoint is a Stored-mode endpoint (it still serves the invoices the domain took in while it was Stored). Use the Pass-through routes, or ask the operator for a mode change.",
  });
}

function _caller(ctx: RequestContext): StoredCaller {
  return {
    requestId: ctx.requestId,
    businessId: ctx.businessId!,
    state: ctx.state as RegulatorState,
    domain: ctx.domain!.host,
    feeKobo: ctx.domain!.signFeeKobo,
  };
}

function _isEmptyObject(body: unknown): boolean {
  return typeof body === "object" && body !== null && !Array.isArray(body) && Object.keys(body).length === 0;
}
