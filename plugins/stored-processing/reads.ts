/**
 * The invoice reads (merchant and operator), and the compare-and-set every request's change of an
 * invoice makes (transmit, cancel, resolve): on `rev`, so a request never overwrites the processor's
 * change, nor the processor a request's.
 */
import { isInvalidQueryError, type Filter } from "../../adapters/ports.ts";
import { gwError, type GatewayError } from "../../core/errors/gateway-error.ts";
import type { RegulatorState } from "../../adapters/regulator/port.ts";
import type { InvoiceDoc } from "../invoice/stored-invoices.ts";
import { rangeEnd, rangeStart, type ListQueryInput } from "./schemas.ts";
import type { InvoicePage, ListScope, StoredDeps } from "./types.ts";

const DEFAULT_PAGE = 50;

/**
 * One invoice of the business; with `state`, only one of the business's current environment (TEST /
 * LIVE): an invoice of the other environment is not found there.
 */
export async function getInvoice(o: StoredDeps, businessId: string, invoiceId: string, state?: RegulatorState): Promise<InvoiceDoc> {
  const doc = await o.invoices.get(invoiceId);
  if (!doc || doc.businessId !== businessId || (state !== undefined && doc.state !== state)) throw invoiceNotFound();
  return doc;
}


/** The business's invoices (merchant), or every business's (operator: `businessId` null). */
export async function listInvoices(o: StoredDeps, businessId: string | null, q: ListQueryInput, scope: ListScope = {}): Promise<InvoicePage> {
  const filter: Filter = businessId === null ? {} : { businessId };
  if (scope.state !== undefined) filter.state = scope.state;
  if (scope.domain !== undefined) filter.domain = scope.domain;
  if (q.status) filter.status = q.status;
  if (q.subBusinessId) filter.subBusinessId = q.subBusinessId;
  if (q.direction) filter.direction = q.direction;
  if (q.createdFrom || q.createdTo) {
    const range: Record<string, number> = {};
    if (q.createdFrom) range.$gte = rangeStart(q.createdFrom);
    if (q.createdTo) range.$lte = rangeEnd(q.createdTo);
    filter.createdAtMs = range;
  }
  try {
    return await o.invoices.find(filter, { sort: [{ field: "createdAtMs", direction: -1 }], limit: q.limit ?? DEFAULT_PAGE, cursor: q.cursor ?? null });
  } catch (e) {
    if (!isInvalidQueryError(e)) throw e;
    throw gwError("GW_REQUEST_VALIDATION_FAILED", {
      detail: "The cursor is not one this list returned.",
      violations: [{ location: "query", field: "cursor", code: "FORMAT", detail: "use nextCursor of a previous page" }],
    });
  }
}

/** `set` (and `unset`) on the invoice as read, with the next `rev`; null when someone wrote first. */
export function casInvoice(o: StoredDeps, doc: InvoiceDoc, set: Partial<InvoiceDoc>, unset: string[] = []): Promise<InvoiceDoc | null> {
  const next = { ...set, rev: doc.rev + 1, updatedAt: new Date().toISOString() };
  return o.invoices.findOneAndUpdate({ _id: doc._id, rev: doc.rev }, unset.length > 0 ? { $set: next, $unset: unset } : { $set: next });
}

export function invoiceNotFound(): GatewayError {
  return gwError("GW_INVOICE_NOT_FOUND", { detail: "No invoice with that id under this business." });
}
