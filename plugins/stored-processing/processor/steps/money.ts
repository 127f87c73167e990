/**
 * The money after a sign (the settlement table's last rows, as the processor applies them): a
 * reversal that is owed (then rejected, or back to validated under the next attempt), and the
 * confirmation of a signed invoice's debit (retried after backoff while billing cannot answer).
 */
import { describeError } from "../../../../core/log.ts";
import { outage, reject } from "../transitions.ts";
import type { Pass, StepResult } from "../types.ts";
import { finish, statusFields, write } from "../writes.ts";
import { invoiceBillingIdentity } from "./sign.ts";

export async function reverse(p: Pass): Promise<StepResult> {
  const d = p.cur;
  const { o } = p.rt;
  const why = d.reverseFor;
  if (!why) return write(p, { step: "bill" });
  p.worked = true;
  try {
    await o.billing.reverse(d.businessId, invoiceBillingIdentity(d), why.why);
  } catch (e) {
    o.log.error("stored_reversal_unconfirmed", { invoiceId: d._id, operationId: d.operationId, error: describeError(e), alert: "immediate" });
    o.alerts?.raise({ signal: "sign_reversal_unconfirmed", dependency: "billing", operationId: d.operationId, code: "GW_SIGN_REVERSAL_UNCONFIRMED" });
    return outage(p, "GW_SIGN_REVERSAL_UNCONFIRMED", {});
  }
  o.log.event("stored_sign_reversed", { invoiceId: d._id, operationId: d.operationId, why: why.why });
  if (why.why === "regulator_rejected") return reject(p, why.code, why.regulatorMessage, "sign_rejected");
  return outage(p, why.code, { ...statusFields(d, "validated"), step: "bill", signAttempt: d.signAttempt + 1, reverseFor: null });
}

export async function settle(p: Pass): Promise<StepResult> {
  const d = p.cur;
  const { o } = p.rt;
  try {
    await o.billing.confirm(d.businessId, invoiceBillingIdentity(d));
  } catch (e) {
    o.log.warn("stored_settlement_pending", { invoiceId: d._id, operationId: d.operationId, error: describeError(e) });
    p.settleFailed = true;
    p.outage = true;
    return "ok";
  }
  // Nothing else to do: the confirmation and the hand-back are one write.
  if (d.step === "done" && (p.flushed || d.events.length === 0)) return finish(p, { settle: false }, [], null);
  return write(p, { settle: false });
}
