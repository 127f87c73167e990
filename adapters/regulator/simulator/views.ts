/**
 * The regulator's answer shapes, as the simulator serves them (docs/regulator-simulator.md has the
 * table, with sources): the error envelope and its recorded messages, the router's 404, the fixed
 * success answers, the search page, and the views of entities and invoices that the routes list.
 * No I/O here: the routes decide *what* to answer, this file *how* it looks.
 */
import { randomUUID } from "node:crypto";
import type { FixtureEntity } from "./fixtures.ts";
import type { SimulatorRoute } from "./router.ts";
import type { SignedInvoiceRecord } from "./types.ts";

// ---------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------

/** An answer: `raw` (pre-serialised JSON) wins over `body`. */
export interface Answer {
  status: number;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}

/** The recorded health answer (content-length 16). */
export const HEALTH: Answer = { status: 200, raw: JSON.stringify({ healthy: true }) };
export const OK_200: Answer = { status: 200, raw: JSON.stringify({ code: 200, data: { ok: true } }) };
export const OK_201: Answer = { status: 201, raw: JSON.stringify({ code: 201, data: { ok: true } }) };

/** A success answer `{ code: status, data }` (the real success envelope). */
export function dataAnswer(data: unknown, status = 200): Answer {
  return { status, body: { code: status, data } };
}

/** An error answer of `route` in the real envelope. */
export function errorAnswer(status: number, route: SimulatorRoute, publicMessage: string, details?: string): Answer {
  return { status, body: errorEnvelope(status, HANDLER_OF[route], publicMessage, details) };
}

/** The answer when the simulator itself fails while processing a call. */
export function internalError(route: SimulatorRoute): Answer {
  return errorAnswer(500, route, "internal server error");
}

/** The `data` of an answer's body, or undefined (what a `renamed` fault after processing carries). */
export function dataOf(answer: Answer): unknown {
  const body: unknown = answer.raw !== undefined ? JSON.parse(answer.raw) : answer.body;
  return isObject(body) && "data" in body ? body.data : undefined;
}

// ---------------------------------------------------------------------------
// Error answers (the regulator's shapes)
// ---------------------------------------------------------------------------

/**
 * The real error envelope (FIRS-MBS_E-Invoicing_Documentation.md, every recorded 400):
 * `{ code, data: null, message: "error has occurred", error: { id, handler, details?, public_message } }`
 * with `id` a fresh UUID per request and `details` a free-text string, often absent.
 */
export interface ErrorEnvelope {
  code: number;
  data: null;
  message: string;
  error: { id: string; handler: string; details?: string; public_message: string };
}

export function errorEnvelope(status: number, handler: string, publicMessage: string, details?: string): ErrorEnvelope {
  // Key order as recorded: id, handler, details (when present), public_message.
  const error: ErrorEnvelope["error"] =
    details === undefined
      ? { id: randomUUID(), handler, public_message: publicMessage }
      : { id: randomUUID(), handler, details, public_message: publicMessage };
  return { code: status, data: null, message: "error has occurred", error };
}

/** The recorded public message of the regulator's validation refusals (GetEntity, "invalid UUID length"). */
export const VALIDATION_FAILED = "validation failed: we are unable to process your request. also confirm this is not a duplicate request";

/** The recorded answer to a deployment key/secret the regulator cannot validate: HTTP 400, handler "handler". */
export function credentialsRejectedBody(): string {
  return JSON.stringify(errorEnvelope(400, "handler", "unable to validate api key"));
}

/** The regulator router's recorded answer to an unknown path (HTTP 404, no `error` object). */
export const NO_ROUTE_BODY = JSON.stringify({
  code: 404,
  data: null,
  message: "no route found for this path. kindly check your request and try again",
});

export const NO_ROUTE: Answer = { status: 404, raw: NO_ROUTE_BODY };

/** `error.handler` per route: "entity_actions" is recorded; the others are modelled the same way. */
export const HANDLER_OF: Readonly<Record<SimulatorRoute, string>> = {
  authenticate: "utility_actions",
  "verify-tin": "utility_actions",
  "entity-search": "entity_actions",
  entity: "entity_actions",
  "irn-validate": "invoice_actions",
  validate: "invoice_actions",
  sign: "invoice_actions",
  "party-create": "party_actions",
  "party-search": "party_actions",
  "invoice-search": "invoice_actions",
  transmit: "transmit_actions",
  "confirm-receipt": "transmit_actions",
  "transmit-lookup": "transmit_actions",
  "self-health-check": "transmit_actions",
  pull: "transmit_actions",
  confirm: "invoice_actions",
  download: "invoice_actions",
  update: "invoice_actions",
  resources: "resource_actions",
  health: "handler",
};

// ---------------------------------------------------------------------------
// Search pages
// ---------------------------------------------------------------------------

const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;

/**
 * `size` / `page` / `sort_by` / `sort_direction_desc` as documented (`sort_by=created_at` sorts by
 * `createdField`, the item's creation time); the page shape is modelled.
 */
export function pageAnswer<T extends object>(items: readonly T[], q: URLSearchParams, route: SimulatorRoute, createdField: string): Answer {
  const size = q.get("size") === null ? DEFAULT_PAGE_SIZE : Number(q.get("size"));
  const page = q.get("page") === null ? 1 : Number(q.get("page"));
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE || !Number.isInteger(page) || page < 1) {
    return errorAnswer(400, route, VALIDATION_FAILED, `size must be 1..${MAX_PAGE_SIZE} and page at least 1`);
  }
  const sortBy = q.get("sort_by") ?? "created_at";
  const sortKey = sortBy === "created_at" ? createdField : sortBy;
  const desc = q.get("sort_direction_desc") !== "false";
  const sorted = [...items].sort((x, y) => {
    const a = String((x as Record<string, unknown>)[sortKey] ?? "");
    const b = String((y as Record<string, unknown>)[sortKey] ?? "");
    return desc ? b.localeCompare(a) : a.localeCompare(b);
  });
  const start = (page - 1) * size;
  return {
    status: 200,
    body: {
      code: 200,
      data: {
        items: sorted.slice(start, start + size),
        page: { page, size, hasNextPage: start + size < sorted.length, hasPreviousPage: page > 1, totalCount: sorted.length },
      },
    },
  };
}

// ---------------------------------------------------------------------------
// Record views
// ---------------------------------------------------------------------------

/** A fixed timestamp for fixture records (the answers stay byte-identical from run to run). */
const FIXTURE_TIME = "2025-01-01T00:00:00.000000Z";

/** The real GetEntity answer's shape (docs/regulator-simulator.md lists the fields and defaults). */
export function entityView(entity: FixtureEntity): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: entity.id,
    reference: entity.reference,
    custom_settings: null,
    created_at: FIXTURE_TIME,
    updated_at: FIXTURE_TIME,
    businesses: entity.businesses.map((b) => {
      const bv: Record<string, unknown> = {
        id: b.id,
        reference: b.reference ?? b.id.slice(0, 8),
        name: b.name,
        custom_settings: null,
        created_at: FIXTURE_TIME,
        updated_at: FIXTURE_TIME,
        tin: b.tin,
        sector: b.sector ?? "General Commerce",
        annual_turnover: b.annual_turnover ?? "1 million - 50 million",
        support_peppol: b.support_peppol ?? false,
        is_realtime_reporting: b.is_realtime_reporting ?? false,
        notification_channels: b.notification_channels ?? "email",
        erp_system: b.erp_system ?? "",
      };
      if (b.irn_template !== undefined) bv.irn_template = b.irn_template;
      bv.is_active = b.is_active;
      return { ...bv, ...(b.overrides ?? {}) };
    }),
    is_active: entity.is_active,
    app_reference: entity.app_reference ?? "gatehouse",
  };
  return { ...view, ...(entity.overrides ?? {}) };
}

/** One field of a signed invoice's supplier or customer party. */
export function partyField(rec: SignedInvoiceRecord, side: string, key: string): unknown {
  const party = rec.invoice[side];
  return isObject(party) ? party[key] : undefined;
}

/** An exchanged (transmitted) invoice, as the lookups and pull list it (modelled: no recorded answer). */
export function exchangeView(rec: SignedInvoiceRecord): Record<string, unknown> {
  return {
    irn: rec.irn,
    business_id: rec.business_id,
    supplier_tin: partyField(rec, "accounting_supplier_party", "tin") ?? null,
    customer_tin: partyField(rec, "accounting_customer_party", "tin") ?? null,
    transmitted_at: rec.transmitted_at,
    receipt_confirmed: rec.receipt_confirmed_at !== null,
    receipt_confirmed_at: rec.receipt_confirmed_at,
  };
}

/** An invoice as SearchInvoice lists it: the searchable fields (modelled: no recorded answer). */
export function invoiceView(rec: SignedInvoiceRecord): Record<string, unknown> {
  const doc = rec.invoice;
  return {
    irn: rec.irn,
    business_id: rec.business_id,
    invoice_type_code: doc.invoice_type_code ?? null,
    issue_date: doc.issue_date ?? null,
    due_date: doc.due_date ?? null,
    document_currency_code: doc.document_currency_code ?? null,
    tax_currency_code: doc.tax_currency_code ?? null,
    payment_status: rec.payment_status,
    status: rec.status,
    signed_at: rec.signed_at,
    transmitted_at: rec.transmitted_at,
  };
}

/** The status and dates of a signed invoice (confirm), with the document itself (download). */
export function confirmView(rec: SignedInvoiceRecord, withInvoice: boolean): Record<string, unknown> {
  const data: Record<string, unknown> = {
    irn: rec.irn,
    business_id: rec.business_id,
    status: rec.status,
    payment_status: rec.payment_status,
    signed_at: rec.signed_at,
    transmitted_at: rec.transmitted_at,
    updated_at: rec.updated_at,
  };
  if (withInvoice) data.invoice = rec.invoice;
  return data;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
