/** Cancellation of a Stored invoice by its id: only before billing started (nothing is billed). */
import { gwError } from "../../core/errors/gateway-error.ts";
import type { InvoiceDoc } from "../invoice/stored-invoices.ts";
import { casInvoice, getInvoice } from "./reads.ts";
import type { StoredCaller, StoredDeps } from "./types.ts";

/** pending / validated → cancelled (nothing billed); cancelled again → the same answer. */
export async function cancelInvoice(o: StoredDeps, caller: StoredCaller, invoiceId: string): Promise<InvoiceDoc> {
  for (;;) {
    const doc = await getInvoice(o, caller.businessId, invoiceId, caller.state);
    if (doc.status === "cancelled") return doc;
    // Checked before the status: while billing is retried the invoice moves between validated and
    // signing, and the merchant gets the same answer in both.
    if (doc.billDoubt && (doc.status === "validated" || doc.status === "signing"))
      throw gwError("GW_INVOICE_STATE_CONFLICT", {
        detail: "The invoice's fee charge is still being confirmed with billing; cancellation is possible once billing answers. Retry later.",
      });
    if ((doc.status !== "pending" && doc.status !== "validated") || doc.direction !== "outbound")
      throw gwError("GW_INVOICE_STATE_CONFLICT", { detail: `A ${doc.status} invoice cannot be cancelled.` });
    const updated = await casInvoice(
      o,
      doc,
      {
        status: "cancelled",
        statusHistory: [...doc.statusHistory, { status: "cancelled", at: new Date().toISOString() }],
        step: "done",
        // Webhooks recorded but not yet enqueued still go out.
        dueAt: doc.events.length > 0 ? Date.now() : null,
      },
      ["irnLock"],
    );
    if (!updated) continue;
    o.log.event("stored_invoice_cancelled", { requestId: caller.requestId, invoiceId, operationId: doc.operationId });
    return updated;
  }
}
