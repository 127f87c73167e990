/**
 * The exchange routes: transmit a signed invoice (`POST /api/v1/invoice/transmit/{irn}`, which needs
 * the business's webhook URL), the receiving side's receipt confirmation (`PATCH …/transmit/{irn}`),
 * the lookups by IRN, TIN or party id, and pull (transmitted invoices by date and confirmation).
 */
import { isRealDate } from "../invoice-schema.ts";
import type { LookupKey } from "../router.ts";
import type { SimulatorStore } from "../state.ts";
import { OK_200, OK_201, VALIDATION_FAILED, dataAnswer, errorAnswer, exchangeView, partyField } from "../views.ts";
import type { Answer } from "../views.ts";

export function transmit(store: SimulatorStore, irn: string): Answer {
  const route = "transmit";
  const rec = store.signed.get(irn);
  if (!rec) return errorAnswer(404, route, "invoice not found");
  const webhook = store.fixtures.businesses.get(rec.business_id)?.business.webhook_url;
  if (typeof webhook !== "string" || webhook === "") return errorAnswer(400, route, "webhook url is not setup");
  if (rec.transmitted_at !== null) return errorAnswer(409, route, "invoice has already been transmitted");
  const now = new Date().toISOString();
  rec.transmitted_at = now;
  rec.updated_at = now;
  rec.status = "TRANSMITTED";
  return OK_201;
}

/** The receiving side confirms receipt of a transmitted invoice (the first confirmation's time is kept). */
export function confirmReceipt(store: SimulatorStore, irn: string): Answer {
  const rec = store.signed.get(irn);
  if (!rec || rec.transmitted_at === null) return errorAnswer(404, "confirm-receipt", "invoice not found");
  const now = new Date().toISOString();
  rec.receipt_confirmed_at ??= now;
  rec.updated_at = now;
  return OK_200;
}

/** One transmitted invoice by IRN, or every transmitted invoice whose supplier or customer has the TIN / party id. */
export function lookupExchanged(store: SimulatorStore, by: LookupKey, value: string): Answer {
  if (by === "irn") {
    const rec = store.signed.get(value);
    if (!rec || rec.transmitted_at === null) return errorAnswer(404, "transmit-lookup", "invoice not found");
    return dataAnswer(exchangeView(rec));
  }
  const out: Record<string, unknown>[] = [];
  for (const rec of store.signed.values()) {
    if (rec.transmitted_at === null) continue;
    const key = by === "tin" ? "tin" : "id";
    if (partyField(rec, "accounting_supplier_party", key) === value || partyField(rec, "accounting_customer_party", key) === value) {
      out.push(exchangeView(rec));
    }
  }
  return dataAnswer(out);
}

/** Transmitted invoices, optionally transmitted `from` / `to` a day (YYYY-MM-DD) and `confirmed` or not. */
export function pull(store: SimulatorStore, q: URLSearchParams): Answer {
  const confirmed = q.get("confirmed");
  const from = q.get("from");
  const to = q.get("to");
  for (const [name, value] of [["from", from], ["to", to]] as const) {
    if (value !== null && !_isIsoDate(value)) return errorAnswer(400, "pull", VALIDATION_FAILED, `${name} must be a date YYYY-MM-DD`);
  }
  const out: Record<string, unknown>[] = [];
  for (const rec of store.signed.values()) {
    if (rec.transmitted_at === null) continue;
    const day = rec.transmitted_at.slice(0, 10);
    if (from !== null && day < from) continue;
    if (to !== null && day > to) continue;
    if (confirmed !== null && (rec.receipt_confirmed_at !== null) !== (confirmed === "true")) continue;
    out.push(exchangeView(rec));
  }
  return dataAnswer(out);
}

// --- Internal helpers ---

function _isIsoDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  return m !== null && isRealDate(Number(m[1]), Number(m[2]), Number(m[3]));
}
