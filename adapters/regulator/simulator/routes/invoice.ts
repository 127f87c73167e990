/**
 * The invoice routes: IRN validation, invoice validation and signing (`POST /api/v1/invoice/
 * {validate,sign}`), confirm and download of a signed invoice, its payment-status update and
 * SearchInvoice. Signing records the invoice in the store; the rest read or update that record.
 */
import { PAYMENT_STATUSES, detailsText, isRealDate } from "../invoice-schema.ts";
import { activeBusiness, unknownBusiness } from "../state.ts";
import type { BusinessRecord, SimulatorStore } from "../state.ts";
import type { PaymentStatus } from "../types.ts";
import { OK_200, OK_201, VALIDATION_FAILED, confirmView, dataAnswer, errorAnswer, invoiceView, isObject, pageAnswer } from "../views.ts";
import type { Answer } from "../views.ts";

const INVOICE_FILTERS = ["irn", "payment_status", "invoice_type_code", "issue_date", "due_date", "tax_currency_code", "document_currency_code"] as const;
const IRN_SHAPE = /^[A-Za-z0-9]+-[A-Za-z0-9]{8}-(\d{4})(\d{2})(\d{2})$/;

export function validateIrn(store: SimulatorStore, body: unknown): Answer {
  const route = "irn-validate";
  if (!isObject(body)) return errorAnswer(400, route, VALIDATION_FAILED, "request body must be a JSON object");
  const reference = body.invoice_reference;
  const businessId = body.business_id;
  const irn = body.irn;
  if (typeof reference !== "string" || reference === "" || typeof businessId !== "string" || businessId === "" || typeof irn !== "string" || irn === "") {
    return errorAnswer(400, route, VALIDATION_FAILED, "invoice_reference, business_id and irn are required");
  }
  const found = activeBusiness(store, businessId, route);
  if ("status" in found) return found;
  const problem = _irnProblem(irn, found) ?? (irn.split("-")[0] === reference ? null : "invoice_reference differs from the invoice number in the irn");
  return problem ? errorAnswer(400, route, VALIDATION_FAILED, `irn validation failed: ${problem}`) : OK_200;
}

/** Validate (no state change) or sign (records the invoice): the schema, then the business's cross-checks. */
export function validateOrSign(store: SimulatorStore, body: unknown, route: "validate" | "sign"): Answer {
  if (!isObject(body)) return errorAnswer(400, route, VALIDATION_FAILED, "request body must be a JSON object");
  const problems = store.fixtures.checkInvoice(body);
  if (problems.length > 0) return errorAnswer(400, route, VALIDATION_FAILED, detailsText(problems));
  const irn = body.irn as string;
  const found = activeBusiness(store, body.business_id as string, route);
  if ("status" in found) return found;
  const cross = _crossProblems(store, body, irn, found);
  if (cross.length > 0) return errorAnswer(400, route, VALIDATION_FAILED, cross.join("; "));
  if (route === "validate") return OK_200;
  // The real API folds a duplicate into its validation refusal ("… also confirm this is not a duplicate request").
  if (store.signed.has(irn)) return errorAnswer(400, route, VALIDATION_FAILED, "an invoice with this irn already exists");
  const now = new Date().toISOString();
  store.signed.set(irn, {
    irn,
    business_id: found.business.id,
    entity_id: found.entity.id,
    status: "SIGNED",
    payment_status: typeof body.payment_status === "string" ? (body.payment_status as PaymentStatus) : "PENDING",
    payment_reference: null,
    signed_at: now,
    transmitted_at: null,
    receipt_confirmed_at: null,
    updated_at: now,
    invoice: body,
  });
  return OK_201;
}

/** Confirm (`withInvoice` false) or download (true) a signed invoice. */
export function confirmInvoice(store: SimulatorStore, irn: string, withInvoice: boolean): Answer {
  const rec = store.signed.get(irn);
  if (!rec) return errorAnswer(404, withInvoice ? "download" : "confirm", "invoice not found");
  return dataAnswer(confirmView(rec, withInvoice));
}

/** UpdateInvoice: the payment status (PENDING, PAID, CANCELED) and an optional `reference`. */
export function updateInvoice(store: SimulatorStore, irn: string, body: unknown): Answer {
  const route = "update";
  const rec = store.signed.get(irn);
  if (!rec) return errorAnswer(404, route, "invoice not found");
  if (!isObject(body)) return errorAnswer(400, route, VALIDATION_FAILED, "request body must be a JSON object");
  const status = body.payment_status;
  if (typeof status !== "string" || !PAYMENT_STATUSES.has(status)) {
    return errorAnswer(400, route, VALIDATION_FAILED, "payment_status must be one of PENDING, PAID, CANCELED");
  }
  const reference = body.reference;
  if (reference !== undefined && reference !== null && typeof reference !== "string") {
    return errorAnswer(400, route, VALIDATION_FAILED, "reference must be a string");
  }
  rec.payment_status = status as PaymentStatus;
  if (typeof reference === "string") rec.payment_reference = reference;
  rec.updated_at = new Date().toISOString();
  return OK_200;
}

/** SearchInvoice of one business: exact-match filters on the listed fields, paged by signing time. */
export function searchInvoices(store: SimulatorStore, businessId: string, q: URLSearchParams): Answer {
  const route = "invoice-search";
  const refused = unknownBusiness(store, businessId, route);
  if (refused) return refused;
  const filters = INVOICE_FILTERS.flatMap((k) => {
    const v = q.get(k);
    return v === null || v === "" ? [] : [[k, v] as const];
  });
  const items: Record<string, unknown>[] = [];
  for (const rec of store.signed.values()) {
    if (rec.business_id !== businessId) continue;
    const view = invoiceView(rec);
    if (filters.every(([k, v]) => view[k] === v)) items.push(view);
  }
  return pageAnswer(items, q, route, "signed_at");
}

// --- Internal helpers ---

/** IRN = {InvoiceNo}-{ServiceID}-{YYYYMMDD}, a real date, the business's template; the problem or null. */
function _irnProblem(irn: string, found: BusinessRecord): string | null {
  const m = IRN_SHAPE.exec(irn);
  if (!m) return "irn must be {invoice_id}-{service_id}-{YYYYMMDD}";
  if (!isRealDate(Number(m[1]), Number(m[2]), Number(m[3]))) return "the irn's date is not a valid YYYYMMDD date";
  if (found.template !== null && !found.template.test(irn)) return "the irn does not follow the business's irn template";
  return null;
}

/** What the schema cannot see: the IRN against the business, the supplier's TIN, the named parties and addresses. */
function _crossProblems(store: SimulatorStore, body: Record<string, unknown>, irn: string, found: BusinessRecord): string[] {
  const cross: string[] = [];
  const irnProblem = _irnProblem(irn, found);
  if (irnProblem) cross.push(`irn validation failed: ${irnProblem}`);
  const supplier = body.accounting_supplier_party as Record<string, unknown>;
  if (supplier.tin !== found.business.tin) cross.push("accounting_supplier_party.tin does not match the business's tin");
  for (const side of ["accounting_supplier_party", "accounting_customer_party"] as const) {
    const party = body[side];
    if (!isObject(party)) continue;
    if (typeof party.id === "string" && !store.parties.has(party.id)) cross.push(`${side}.id party not found`);
    if (typeof party.postal_address_id === "string" && !store.postalAddresses.has(party.postal_address_id)) {
      cross.push(`${side}.postal_address_id postal address not found`);
    }
  }
  return cross;
}
