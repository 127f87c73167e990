/**
 * An operator's (or the recovery jobs') resolution of a frozen invoice, after checking at the
 * regulator (confirm by IRN) what happened:
 *   frozen sign         signed → signed (the held debit is confirmed by the processor)
 *                       not_signed → the held debit is reversed, then the invoice is signed again
 *                       under the next attempt number (back through validated)
 *   frozen transmission transmitted → transmitted; not_transmitted → signed (it may be transmitted again)
 * The processor is woken: the invoice has work again. The same decision again answers the invoice as
 * recorded; an unknown invoice is GW_OPERATION_NOT_FOUND, as on every operator resolution route.
 *
 * An operator's decision (actor `operator:<credential>`, or none given) is appended to the audit log
 * here, once, by the call that recorded it: the Admin API route and the operator console call this
 * same service, so both write the same `invoice.resolve` entry. The recovery jobs write their own
 * entry (with the regulator's answer as its basis) and pass their own actor.
 */
import { appendAudit } from "../../core/directory-store.ts";
import { describeError } from "../../core/log.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import type { FrozenInvoiceOutcome } from "../invoice/offers.ts";
import type { InvoiceDoc } from "../invoice/stored-invoices.ts";
import { casInvoice } from "./reads.ts";
import type { StoredDeps, StoredOperator } from "./types.ts";

export async function resolveFrozen(o: StoredDeps, operator: StoredOperator, invoiceId: string, outcome: FrozenInvoiceOutcome): Promise<InvoiceDoc> {
  for (;;) {
    const doc = await o.invoices.get(invoiceId);
    if (!doc) throw gwError("GW_OPERATION_NOT_FOUND", { detail: "No invoice with that invoiceId." });
    if (doc.status !== "frozen") {
      // The same decision again (a retried request under another key): what was recorded.
      if (doc.resolution?.outcome === outcome) return doc;
      throw gwError("GW_INVOICE_STATE_CONFLICT", { detail: `Only a frozen invoice can be resolved; this one is ${doc.status}.` });
    }
    const at = new Date().toISOString();
    _checkOutcome(doc, outcome);
    const by = operator.actor ?? `operator:${operator.credentialId}`;
    const updated = await casInvoice(o, doc, { ..._resolution(o, doc, outcome, at), resolution: { outcome, by, at } });
    if (!updated) continue;
    o.log.event("stored_invoice_resolved", { requestId: operator.requestId, credentialId: operator.credentialId, invoiceId, operationId: doc.operationId, outcome });
    if (by.startsWith("operator:")) await _audit(o, by, operator.requestId, updated, outcome);
    o.onDue();
    return updated;
  }
}

// --- Internal helpers ---

/** The operator's decision in the directory's audit log (GET /admin/audit); best effort: the decision stands. */
async function _audit(o: StoredDeps, actor: string, requestId: string, doc: InvoiceDoc, outcome: FrozenInvoiceOutcome): Promise<void> {
  await appendAudit(o.audit, { actor, requestId, action: "invoice.resolve", target: { type: "operation", id: doc.operationId }, changes: { invoiceId: doc._id, outcome } }, Date.now()).catch((e) =>
    o.log.warn("stored_resolution_audit_failed", { requestId, invoiceId: doc._id, error: describeError(e) }),
  );
}

/** A frozen sign takes signed / not_signed; a frozen transmission transmitted / not_transmitted. */
function _checkOutcome(doc: InvoiceDoc, outcome: FrozenInvoiceOutcome): void {
  const frozenSign = doc.lastError?.code === "GW_SIGN_OUTCOME_UNCONFIRMED";
  const allowed = frozenSign ? ["signed", "not_signed"] : ["transmitted", "not_transmitted"];
  if (!allowed.includes(outcome))
    throw gwError("GW_REQUEST_VALIDATION_FAILED", {
      detail: `This invoice froze during ${frozenSign ? "signing" : "transmission"}: the outcome is one of ${allowed.join(", ")}.`,
      violations: [{ location: "body", pointer: "/outcome", code: "MISMATCH", detail: `one of ${allowed.join(", ")}` }],
    });
}

/** The invoice's fields after the decision. */
function _resolution(o: StoredDeps, doc: InvoiceDoc, outcome: FrozenInvoiceOutcome, at: string): Partial<InvoiceDoc> {
  const history = (s: InvoiceDoc["status"]) => [...doc.statusHistory, { status: s, at }];
  switch (outcome) {
    case "signed":
      return { status: "signed", statusHistory: history("signed"), step: "done", settle: true, lastError: null, dueAt: Date.now(), events: [...doc.events, ...o.webhooks.event(doc, "invoice.signed", "signed", at)] };
    case "not_signed":
      return { status: "signing", statusHistory: history("signing"), step: "reverse", reverseFor: { why: "regulator_not_called", code: "GW_SIGN_OUTCOME_UNCONFIRMED" }, dueAt: Date.now() };
    case "transmitted":
      return { status: "transmitted", statusHistory: history("transmitted"), step: "done", lastError: null, dueAt: Date.now(), events: [...doc.events, ...o.webhooks.event(doc, "invoice.transmitted", "transmitted", at)] };
    case "not_transmitted":
      return { status: "signed", statusHistory: history("signed"), step: "done", dueAt: doc.settle || doc.events.length > 0 ? Date.now() : null };
  }
}
