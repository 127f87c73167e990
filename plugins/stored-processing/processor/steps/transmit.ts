/**
 * transmitting: step "transmitting" recorded, then one regulator transmission: transmitted; a
 * rejection → back to signed with the error; ambiguous → frozen; not performed (the call threw) →
 * stays transmitting, dependency backoff. The outcome's write is retried (finishOutcome, record):
 * once the regulator answered, only a store outage longer than the retries may freeze the invoice.
 */
import { mapRegulatorFailure, type TransmitOutcome } from "../../../../adapters/regulator/port.ts";
import { freeze, mark, outage } from "../transitions.ts";
import type { Pass, StepResult } from "../types.ts";
import { finishOutcome, lastErrorOf, record, statusFields } from "../writes.ts";
import { thrownCode } from "./validate.ts";

export async function transmit(p: Pass): Promise<StepResult> {
  const marked = await mark(p, "transmitting", "transmit");
  if (marked !== "ok") return marked;
  const d = p.cur;
  const { o } = p.rt;
  p.worked = true;
  let outcome: TransmitOutcome;
  try {
    outcome = await o.regulator.transmit(d.state, d.irn, { requestId: d.operationId });
  } catch (e) {
    // Certainly not transmitted: the claim stays with this invoice, dispatched again after backoff.
    const back = await record(p, { step: "transmit" });
    if (back !== "ok") return back;
    return outage(p, thrownCode(e), {});
  }
  if (outcome.kind === "transmitted") {
    const at = new Date().toISOString();
    o.log.event("stored_invoice_transmitted", { invoiceId: d._id, operationId: d.operationId });
    return finishOutcome(p, { ...statusFields(d, "transmitted"), step: "done", outages: 0, lastError: null }, o.webhooks.event(d, "invoice.transmitted", "transmitted", at), null);
  }
  if (outcome.kind === "rejected") {
    o.log.event("stored_transmit_rejected", { invoiceId: d._id, operationId: d.operationId, upstreamErrorId: outcome.errorId });
    const code = mapRegulatorFailure(outcome, "transmit").code;
    return finishOutcome(p, { ...statusFields(d, "signed"), step: "done", lastError: lastErrorOf(code, outcome.message) }, [], null);
  }
  o.log.error("stored_transmit_outcome_unconfirmed", { invoiceId: d._id, operationId: d.operationId, reason: outcome.reason, alert: "immediate" });
  return freeze(p, "GW_TRANSMIT_OUTCOME_UNCONFIRMED", outcome.reason);
}
