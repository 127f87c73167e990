/**
 * The Stored invoices as the merchant dashboard reads and changes them (STORED_INVOICE_OPERATIONS):
 * the same service calls as `GET /invoices`, `GET /invoices/{id}`, `POST /invoices/{id}/transmit`
 * and `/cancel`, with the list route's query schema. The dashboard is not reached through one
 * domain, so every operation is scoped to the business and its current environment (as the routes
 * on a Stored domain); a change names the invoice's own domain as the caller's.
 */
import * as v from "valibot";
import type { Logger } from "../../core/log.ts";
import { validateInput } from "../../core/validation.ts";
import type { DashboardCaller, StoredInvoiceOperations } from "../invoice/dashboard-offers.ts";
import { invoiceNotFound } from "./reads.ts";
import { ListQuery, type ListQueryInput } from "./schemas.ts";
import type { StoredCaller, StoredService } from "./types.ts";

export function storedInvoiceOperations(service: StoredService, log: Logger): StoredInvoiceOperations {
  const get = (caller: Pick<DashboardCaller, "businessId" | "state">, invoiceId: string) => {
    if (!v.is(INVOICE_ID, invoiceId)) return Promise.reject(invoiceNotFound());
    return service.get(caller.businessId, invoiceId, caller.state);
  };
  const change = async (caller: DashboardCaller, invoiceId: string, what: "transmit" | "cancel") => {
    const doc = await get(caller, invoiceId);
    const stored: StoredCaller = { requestId: caller.requestId, businessId: caller.businessId, state: caller.state, domain: doc.domain ?? "", feeKobo: doc.feeKobo };
    const updated = await (what === "transmit" ? service.transmit(stored, invoiceId) : service.cancel(stored, invoiceId));
    log.event("stored_invoice_dashboard_change", { requestId: caller.requestId, actor: caller.actor, invoiceId, operationId: doc.operationId, change: what, status: updated.status });
    return updated;
  };
  return {
    list: (caller, query) => service.list(caller.businessId, validateInput(ListQuery, query, "query") as ListQueryInput, { state: caller.state }),
    get,
    transmit: (caller, invoiceId) => change(caller, invoiceId, "transmit"),
    cancel: (caller, invoiceId) => change(caller, invoiceId, "cancel"),
  };
}

// --- Internal helpers ---

const INVOICE_ID = v.pipe(v.string(), v.uuid());
