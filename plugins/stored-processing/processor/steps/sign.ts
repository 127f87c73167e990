/**
 * validated / signing: the debit, then the sign, by the invoice kit's settlement table
 * (plugins/invoice/settlement.ts) as the processor applies it:
 *   debit   dispatch → "dispatching" recorded BEFORE the regulator is called → sign;
 *           refused: attempt taken → next signAttempt; wallet declined or rule → validated, one
 *           unit of the retry budget spent (rejected when none is left); unknown → validated,
 *           dependency backoff (budget kept); settled: reversed → next signAttempt, confirmed → frozen
 *   sign    confirm → signed (transmitting when the domain's autoTransmit is on), the confirmation
 *           owed (`settle`); reverse → step "reverse" (money.ts); hold → frozen
 */
import type { BillingIdentity } from "../../../../adapters/ports.ts";
import { keyedHash } from "../../../../core/keyed-hash.ts";
import { describeError } from "../../../../core/log.ts";
import { debitFee, signEffect, signResultOf, type DebitEffect } from "../../../invoice/settlement.ts";
import { billingIdentityOf } from "../../../invoice/sign-attempts.ts";
import type { InvoiceDoc } from "../../../invoice/stored-invoices.ts";
import { freeze, mark, outage, reject } from "../transitions.ts";
import type { Pass, StepResult } from "../types.ts";
import { backoff, finish, lastErrorOf, record, statusFields, write } from "../writes.ts";

export async function bill(p: Pass): Promise<StepResult> {
  const d = p.cur;
  const { o } = p.rt;
  p.worked = true;
  const debit = await debitFee(o.billing, d.businessId, invoiceBillingIdentity(d), d.feeKobo, _fingerprint(o.secret, d._id, d.signAttempt));
  switch (debit.effect) {
    case "refused":
      return _refused(p, debit);
    case "unknown":
      // Nothing is known to be charged; a retry of the same identity replays a debit that did happen.
      return outage(p, "GW_BILLING_SERVICE_UNAVAILABLE", { ...statusFields(d, "validated"), step: "bill", billDoubt: true });
    case "settled":
      if (debit.state === "reversed") return write(p, { signAttempt: d.signAttempt + 1, billDoubt: false });
      // Confirmed means a sign of ours was settled but never recorded: unprovable.
      return freeze(p, "GW_SIGN_OUTCOME_UNCONFIRMED", "settled_unrecorded");
    case "dispatch": {
      await o.hooks?.afterDebit?.(d._id);
      const marked = await mark(p, "dispatching", "bill", { billDoubt: false });
      if (marked !== "ok") return marked; // the regulator was not called; the debit replays next time
      return _sign(p);
    }
  }
}

/** The billing identity of the invoice's current sign attempt. */
export function invoiceBillingIdentity(d: InvoiceDoc): BillingIdentity {
  return billingIdentityOf({ subBusinessId: d.subBusinessId, domain: d.domain ?? "", irn: d.irn, attemptNumber: d.signAttempt });
}

// --- Internal helpers ---

async function _refused(p: Pass, debit: Extract<DebitEffect, { effect: "refused" }>): Promise<StepResult> {
  const d = p.cur;
  const { log } = p.rt.o;
  if (debit.reason === "attempt_conflict") {
    // This billing identity belongs to another operation (e.g. a Pass-through sign of the
    // same IRN on this domain): the processor's next attempt number.
    log.event("stored_sign_attempt_taken", { invoiceId: d._id, signAttempt: d.signAttempt });
    return write(p, { signAttempt: d.signAttempt + 1 });
  }
  const budgetLeft = d.budgetLeft - 1;
  log.event("stored_billing_refused", { invoiceId: d._id, reason: debit.reason, budgetLeft });
  if (budgetLeft <= 0) return reject(p, debit.code, undefined, "budget_spent", { budgetLeft: 0 });
  const spent = d.budget - budgetLeft;
  return finish(
    p,
    { ...statusFields(d, "validated"), step: "bill", budgetLeft, billDoubt: false, lastError: lastErrorOf(debit.code) },
    [],
    Date.now() + backoff(p.rt.o, spent),
  );
}

async function _sign(p: Pass): Promise<StepResult> {
  const d = p.cur;
  const { o } = p.rt;
  const result = await signResultOf(() => o.regulator.sign(d.state, d.document, { requestId: d.operationId }));
  if (result.kind !== "thrown") await o.hooks?.afterSign?.(d._id);
  const effect = signEffect(result, "stored");
  switch (effect.money) {
    case "confirm":
      return _signed(p);
    case "reverse":
      if (effect.why === "regulator_not_called")
        // Thrown = certainly not signed: the fee goes back, then the invoice waits as validated.
        return record(p, { step: "reverse", reverseFor: { why: "regulator_not_called", code: effect.code } });
      o.log.event("stored_sign_rejected", { invoiceId: d._id, operationId: d.operationId, upstreamErrorId: effect.upstreamErrorId });
      return record(p, { step: "reverse", reverseFor: { why: "regulator_rejected", code: effect.code, ...(effect.regulatorMessage ? { regulatorMessage: effect.regulatorMessage } : {}) } });
    case "hold":
      o.log.error("stored_sign_outcome_unconfirmed", { invoiceId: d._id, operationId: d.operationId, reason: effect.reason, alert: "immediate" });
      return freeze(p, effect.code, effect.reason);
  }
}

/** Signed: the confirmation is owed (`settle`), and the transmission follows when the domain says so. */
async function _signed(p: Pass): Promise<StepResult> {
  const d = p.cur;
  const { o } = p.rt;
  const auto = await _autoTransmitOf(p, d.domain);
  const at = new Date().toISOString();
  const events = o.webhooks.event(d, "invoice.signed", "signed", at);
  o.log.event("stored_invoice_signed", { invoiceId: d._id, operationId: d.operationId, autoTransmit: auto });
  return record(
    p,
    { ...statusFields(d, ...(auto ? (["signed", "transmitting"] as const) : (["signed"] as const))), step: auto ? "transmit" : "done", settle: true, outages: 0, lastError: null },
    events,
  );
}

/**
 * The domain's current autoTransmit. A record that cannot be read leaves the invoice `signed`
 * (the merchant or an operator transmits it by ID); the signing outcome is never put at risk for it.
 */
async function _autoTransmitOf(p: Pass, host: string | null): Promise<boolean> {
  if (!host) return false;
  const { directory, log } = p.rt.o;
  const cached = directory.cachedDomain(host);
  if (cached !== undefined) return cached?.autoTransmit === true;
  try {
    return (await directory.loadDomain(host))?.autoTransmit === true;
  } catch (e) {
    log.warn("stored_domain_unreadable", { host, error: describeError(e) });
    return false;
  }
}

/** The ledger fingerprint of one of the processor's attempts: unique to this invoice and attempt. */
function _fingerprint(secret: Buffer, invoiceId: string, attempt: number): string {
  return keyedHash(secret, `stored\u0000${invoiceId}\u0000${attempt}`);
}
