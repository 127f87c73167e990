/** Transmission of a Stored invoice by its id: signed → transmitting; the processor dispatches it once. */
import { gwError } from "../../core/errors/gateway-error.ts";
import type { InvoiceDoc } from "../invoice/stored-invoices.ts";
import { casInvoice, getInvoice } from "./reads.ts";
import type { StoredCaller, StoredDeps } from "./types.ts";

/** signed → transmitting; the answers of DECISIONS.md for every other status. */
export async function transmitInvoice(o: StoredDeps, caller: StoredCaller, invoiceId: string): Promise<InvoiceDoc> {
  for (;;) {
    const doc = await getInvoice(o, caller.businessId, invoiceId, caller.state);
    switch (doc.status) {
      case "signed": {
        const updated = await casInvoice(o, doc, {
          status: "transmitting",
          statusHistory: [...doc.statusHistory, { status: "transmitting", at: new Date().toISOString() }],
          step: "transmit",
          dueAt: Date.now(),
          lastError: null,
        });
        if (!updated) continue;
        o.log.event("stored_transmit_requested", { requestId: caller.requestId, invoiceId, operationId: doc.operationId });
        o.onDue();
        return updated;
      }
      case "transmitting":
      case "transmitted":
        throw gwError("GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED", {
          detail: `The invoice's transmission is ${doc.status === "transmitting" ? "in progress" : "recorded"}; nothing new was dispatched.`,
          operationId: doc.operationId,
        });
      case "pending":
      case "validated":
      case "signing":
        throw gwError("GW_INVOICE_NOT_TRANSMITTABLE", { detail: `The invoice is ${doc.status}; it can be transmitted once it is signed.` });
      default:
        throw gwError("GW_INVOICE_STATE_CONFLICT", { detail: `A ${doc.status} invoice cannot be transmitted.` });
    }
  }
}
