/**
 * Held Pass-through sign attempts: fees held because the outcome was unprovable (frozen), a
 * reversal or settlement did not confirm, or the attempt was abandoned (the holder died and the
 * caller never came back). Each is settled against the regulator (confirm by IRN): it holds the
 * invoice → the debit is confirmed; its own "no such invoice" → the debit is reversed; anything else
 * proves nothing → an alert (`recovery_unprovable`), the record stays as it is. A held fee whose
 * answer already proves the regulator's outcome (the settlement table's last rows) needs no check.
 * Each settlement is recorded on the record (`resolution`) and in the audit log.
 */
import { randomUUID } from "node:crypto";
import { isDependencyUnavailableError } from "../../../adapters/ports.ts";
import type { RegulatorState } from "../../../adapters/regulator/port.ts";
import { appendAudit } from "../../../core/directory-store.ts";
import { describeError } from "../../../core/log.ts";
import { heldProof } from "../../invoice/settlement.ts";
import { billingIdentityOf, errorAnswer, interruptedSignError, parseAttemptKey, type AttemptKeyParts, type SignRecord, type StoredAnswer } from "../../invoice/sign-attempts.ts";
import type { RecoveryContext, RunSummary, SettleOutcome } from "./types.ts";

export async function settleHeldSigns(c: RecoveryContext, s: RunSummary): Promise<void> {
  const { o, records } = c;
  const t = o.now();
  // Abandoned: in progress long past any request's lifetime (the holder died, the caller never retried).
  const abandoned = await records.find({ status: "in_progress", startedAtMs: { $lte: t - o.abandonedAfterMs } }, { limit: o.batchSize });
  for (const r of abandoned.items) {
    if (s.leaseLost) return;
    await _abandoned(c, r, s);
  }
  const held = await records.find({ money: "held", completedAtMs: { $lte: t - o.settleAfterMs } }, { limit: o.batchSize });
  for (const r of held.items) {
    if (s.leaseLost) return;
    await _held(c, r, "recovery", randomUUID(), s);
  }
}

/**
 * Confirms (signed) or reverses (not_signed) a held fee and records it; null when billing cannot
 * answer now or the record changed meanwhile. A settlement the ledger refuses throws (an operator
 * must look).
 */
export async function settleHeld(
  c: RecoveryContext,
  r: SignRecord,
  k: AttemptKeyParts,
  outcome: SettleOutcome,
  by: string,
  requestId: string | null,
  basis: string,
  s: RunSummary | null,
): Promise<SignRecord | null> {
  const identity = billingIdentityOf(k);
  try {
    if (outcome === "signed") await c.o.billing.confirm(r.businessId, identity);
    else await c.o.billing.reverse(r.businessId, identity, "regulator_not_signed");
  } catch (e) {
    if (isDependencyUnavailableError(e)) {
      c.o.log.warn("recovery_billing_unavailable", { operationId: r.operationId, error: describeError(e) });
      return null;
    }
    // The ledger refuses (e.g. confirming a reversed debit): an operator must look.
    if (s) unprovable(c, r.operationId, "billing_refused", s);
    throw e;
  }
  const at = c.o.now();
  const updated = await c.records.findOneAndUpdate(
    { _id: r._id, money: "held" },
    {
      $set: {
        status: "resolved",
        money: outcome === "signed" ? "confirmed" : "reversed",
        resolution: { outcome, by, at: new Date(at).toISOString(), basis },
      },
    },
  );
  if (!updated) return null;
  await _recorded(c, r, outcome, by, requestId, basis, "held", s);
  return updated;
}

/** Nothing proves what the regulator did: an alert; the record stays as it is. */
export function unprovable(c: RecoveryContext, operationId: string, failureClass: string, s: RunSummary): void {
  s.unprovable++;
  c.totals.unprovable++;
  c.count("held_signs", "unprovable");
  c.o.log.error("recovery_unprovable", { operationId, failureClass, alert: "immediate" });
  c.o.alerts?.raise({ signal: "recovery_unprovable", operation: "confirm", failureClass, operationId });
}

// --- Internal helpers ---

/** An abandoned attempt: before "dispatching" the regulator was never called; from then on it is frozen first. */
async function _abandoned(c: RecoveryContext, r: SignRecord, s: RunSummary): Promise<void> {
  const k = parseAttemptKey(r.attemptKey);
  if (!k) return;
  const at = c.o.now();
  if (r.phase === "dispatching") {
    const frozen = await c.records.findOneAndUpdate(
      { _id: r._id, owner: r.owner, status: "in_progress" },
      { $set: { status: "frozen", phase: "done", answer: errorAnswer(interruptedSignError(r.operationId)), money: "held", completedAtMs: at } },
    );
    if (!frozen) return;
    c.o.log.error("signing_outcome_unconfirmed", { operationId: r.operationId, reason: "abandoned", alert: "immediate" });
    c.o.alerts?.raise({ signal: "sign_outcome_unconfirmed", operation: "sign", failureClass: "abandoned", operationId: r.operationId, code: "GW_SIGN_OUTCOME_UNCONFIRMED" });
    return _held(c, frozen, "recovery", randomUUID(), s);
  }
  // Claimed: the regulator was never called. A debit, if one was made, goes back.
  try {
    await c.o.billing.reverse(r.businessId, billingIdentityOf(k), "abandoned_before_dispatch");
  } catch (e) {
    if (isDependencyUnavailableError(e)) return; // next run
    // No debit (the holder died before it) or a declined one: nothing is held; the key may be retried.
    await _released(c, r, s);
    return;
  }
  const answer: StoredAnswer = {
    kind: "error",
    code: "GW_SIGN_ATTEMPT_ALREADY_PROCESSED",
    detail: "This attempt was abandoned before the regulator was called; its fee was reversed. A new attempt needs the next x-attempt-number and a new key.",
    operationId: r.operationId,
    violations: null,
  };
  const resolution = { outcome: "not_signed", by: "recovery", at: new Date(at).toISOString(), basis: "never_dispatched" };
  const done = await c.records.findOneAndUpdate(
    { _id: r._id, owner: r.owner, status: "in_progress", phase: "claimed" },
    { $set: { status: "resolved", phase: "done", answer, money: "reversed", completedAtMs: at, resolution } },
  );
  if (!done) return;
  await _recorded(c, r, "not_signed", "recovery", null, "never_dispatched", "none", s);
}

/** An abandoned claim with nothing held: removed, so the key may be retried. */
async function _released(c: RecoveryContext, r: SignRecord, s: RunSummary): Promise<void> {
  const released = await c.records.deleteMany({ _id: r._id, owner: r.owner, status: "in_progress", phase: "claimed" });
  if (released === 0) return;
  s.released++;
  c.totals.released++;
  c.count("held_signs", "released");
  c.o.log.event("recovery_sign_released", { operationId: r.operationId });
}

/**
 * A held fee: the regulator is asked (confirm by IRN) unless the answer already says what the
 * regulator did (a rejection whose reversal did not confirm; a sign whose settlement did not).
 */
async function _held(c: RecoveryContext, r: SignRecord, by: string, requestId: string, s: RunSummary): Promise<void> {
  const k = parseAttemptKey(r.attemptKey);
  if (!k) return;
  let proof = heldProof(r.answer?.kind === "error" ? r.answer.code : null);
  if (!proof) {
    const confirmed = await c.o.regulator.confirm(k.state as RegulatorState, k.irn, { requestId });
    if (confirmed.kind === "unknown") {
      unprovable(c, r.operationId, `regulator_${confirmed.failureClass}`, s);
      return;
    }
    proof = confirmed.kind === "found" ? { outcome: "signed", basis: "regulator_confirm_found" } : { outcome: "not_signed", basis: "regulator_confirm_not_found" };
  }
  await settleHeld(c, r, k, proof.outcome, by, requestId, proof.basis, s);
}

async function _recorded(c: RecoveryContext, r: SignRecord, outcome: SettleOutcome, by: string, requestId: string | null, basis: string, from: string, s: RunSummary | null): Promise<void> {
  const money = outcome === "signed" ? "confirmed" : "reversed";
  if (s) {
    if (outcome === "signed") {
      s.confirmed++;
      c.totals.confirmed++;
    } else {
      s.reversed++;
      c.totals.reversed++;
    }
  }
  c.count("held_signs", money);
  c.o.log.event("recovery_sign_settled", { operationId: r.operationId, outcome, by: by.startsWith("operator:") ? "operator" : by, basis, money });
  await appendAudit(
    c.audit,
    { actor: by, requestId, action: "sign_attempt.resolve", target: { type: "operation", id: r.operationId }, changes: { outcome, basis, money: { from, to: money } } },
    c.o.now(),
  ).catch((e) => c.o.log.warn("recovery_audit_failed", { operationId: r.operationId, error: describeError(e) }));
}
