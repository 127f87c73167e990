/**
 * Stored mode, the merchant's side (DECISIONS.md "Stored mode"): intake (intake.ts), the invoice
 * reads (reads.ts), transmission and cancellation by invoice ID (transmit.ts, cancel.ts), and the
 * resolution of a frozen invoice (resolve.ts). The processor (processor/) does the rest. A store
 * that cannot answer throws its DependencyUnavailableError: each route declares what that answers.
 */
import { openDirectoryStore } from "../../core/directory-store.ts";
import { openIdentityReviews, openRepresentedBusinesses } from "../invoice/represented-businesses.ts";
import { cancelInvoice } from "./cancel.ts";
import { intake } from "./intake.ts";
import { getInvoice, listInvoices } from "./reads.ts";
import { resolveFrozen } from "./resolve.ts";
import { transmitInvoice } from "./transmit.ts";
import type { StoredService, StoredServiceOptions } from "./types.ts";

export type { IntakeRequest, InvoicePage, StoredCaller, StoredOperator, StoredService, StoredServiceOptions } from "./types.ts";

export function createStoredService(o: StoredServiceOptions): StoredService {
  const deps = { ...o, invoices: o.store.invoices, subs: openRepresentedBusinesses(o.documentStore), reviews: openIdentityReviews(o.documentStore), audit: openDirectoryStore(o.documentStore).audit };
  return {
    intake: (caller, r) => intake(deps, caller, r),
    get: (businessId, invoiceId, state) => getInvoice(deps, businessId, invoiceId, state),
    list: (businessId, q, scope) => listInvoices(deps, businessId, q, scope),
    transmit: (caller, invoiceId) => transmitInvoice(deps, caller, invoiceId),
    cancel: (caller, invoiceId) => cancelInvoice(deps, caller, invoiceId),
    resolve: (operator, invoiceId, outcome) => resolveFrozen(deps, operator, invoiceId, outcome),
  };
}
