/**
 * Pass-through transmission with durable claims (spec §3.3). One claim per transmission binding
 * (state, represented business, IRN), taken with a unique insert BEFORE the regulator is called; only
 * the holder dispatches and records the typed outcome:
 *
 *   in_progress | succeeded | rejected  → 409 GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED + operationId, no dispatch
 *   unknown (or a stale in_progress)    → 502 GW_TRANSMIT_OUTCOME_UNCONFIRMED + operationId, never replayed
 *   rejected, request with a NEW key    → a new attempt: the regulator certainly did not transmit, so
 *                                         the claim is taken over (compare-and-set on its operationId)
 *                                         with a new operationId; the rejected attempt stays in
 *                                         `rejectedAttempts` (audit). Same key or no key → 409.
 *
 * A regulator throw (it certainly did not transmit: not configured, circuit open, never connected,
 * throttled) releases the claim, so the request can be sent again; so does a claim insert whose answer
 * the store lost (503 by the route's declaration; the claim, if it landed, is taken back, retried in
 * the background while the store refuses). A retry with the same key that finds its own claim still
 * in progress waits for it (bounded) instead of answering 409 at once. The operation identity is the
 * binding itself; an x-idempotency-key, when sent, is recorded only as its HMAC. Without a key the
 * legacy identity is derived from the request binding (business + sub-business + IRN, spec §7.11).
 */
import { isDuplicateKeyError } from "../../adapters/ports.ts";
import { mapRegulatorFailure, type RegulatorResponse } from "../../adapters/regulator/port.ts";
import { repeatUndo, UNDO_REPEAT_MS } from "../../core/background-retry.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import { newId } from "../../core/ids.ts";
import { keyedHash } from "../../core/keyed-hash.ts";
import { writeOutcome } from "../../core/outcome-write.ts";
import { checkTransmitIrn } from "../invoice/checks.ts";
import { ownedBusiness } from "../invoice/represented-businesses.ts";
import { claimIdOf, type ClaimDoc, type ClaimState } from "../invoice/transmission-claims.ts";
import type { TransmissionDeps, TransmitCaller } from "./types.ts";

export async function transmit(o: TransmissionDeps, caller: TransmitCaller, subBusinessId: string, irn: string, key: string | null): Promise<RegulatorResponse> {
  const sub = await ownedBusiness(o.subs, caller, subBusinessId);
  checkTransmitIrn(irn, sub.identity.irnTemplate);
  const keyHash = key === null ? null : keyedHash(o.secret, `${caller.businessId}\u0000${key}`);
  const claim: ClaimDoc = {
    _id: claimIdOf(caller.businessId, caller.state, subBusinessId, irn),
    businessId: caller.businessId,
    state: caller.state,
    subBusinessId,
    irn,
    operationId: newId(),
    claimState: "in_progress",
    keyHash,
    owner: caller.requestId,
    startedAtMs: o.now(),
    completedAtMs: null,
    detail: null,
  };
  const deadline = o.now() + o.waitMs;
  for (;;) {
    if (await _inserted(o, claim)) return _dispatch(o, caller, claim);
    const existing = await o.claims.get(claim._id);
    if (!existing) continue; // withdrawn meanwhile: claim it
    if (_newAttemptAfterRejection(existing, keyHash)) {
      if (await _retakeRejected(o, existing, claim)) return _dispatch(o, caller, claim);
      continue;
    }
    // The same key still in progress (a retry after a lost answer): wait, bounded, for it to finish
    // or be withdrawn, rather than answer "in progress" for a claim that may never dispatch.
    const sameKeyInFlight = existing.claimState === "in_progress" && keyHash !== null && existing.keyHash === keyHash;
    if (!sameKeyInFlight || o.now() >= deadline || o.now() - existing.startedAtMs >= o.staleAfterMs) return _existing(o, existing);
    await new Promise((r) => setTimeout(r, o.pollMs));
  }
}

// --- Internal helpers ---

/** The claim inserted (true) or held by another request (false). */
async function _inserted(o: TransmissionDeps, claim: ClaimDoc): Promise<boolean> {
  try {
    claim.startedAtMs = o.now();
    await o.claims.insert(claim);
    return true;
  } catch (e) {
    if (isDuplicateKeyError(e)) return false;
    // The insert may have landed although its answer was lost; nothing was dispatched, so a
    // claim of ours that did land is taken back (the 503 asks for a same-key retry).
    await _withdraw(o, claim);
    throw e;
  }
}

/** A typed rejection proves nothing was transmitted: a request under another key is a new attempt. */
function _newAttemptAfterRejection(existing: ClaimDoc, keyHash: string | null): boolean {
  return existing.claimState === "rejected" && keyHash !== null && existing.keyHash !== keyHash;
}

/**
 * Replaces the rejected claim by this request's new claim (only if it is still that rejected
 * attempt: a concurrent retaker wins once), keeping the rejected attempt in its history.
 */
async function _retakeRejected(o: TransmissionDeps, existing: ClaimDoc, claim: ClaimDoc): Promise<boolean> {
  const history = [...(existing.rejectedAttempts ?? []), { operationId: existing.operationId, detail: existing.detail, completedAtMs: existing.completedAtMs }];
  claim.startedAtMs = o.now();
  const taken = await o.claims.findOneAndUpdate(
    { _id: existing._id, claimState: "rejected", operationId: existing.operationId },
    {
      $set: {
        operationId: claim.operationId,
        claimState: "in_progress",
        keyHash: claim.keyHash,
        owner: claim.owner,
        startedAtMs: claim.startedAtMs,
        completedAtMs: null,
        detail: null,
        rejectedAttempts: history,
      },
    },
  );
  if (taken) o.log.event("transmission_new_attempt_after_rejection", { operationId: claim.operationId, previousOperationId: existing.operationId, attempts: history.length + 1 });
  return taken !== null;
}

/** Takes back a claim whose dispatch never started (repeated in the background: the store may refuse now, or an unacknowledged insert land later). */
function _withdraw(o: TransmissionDeps, claim: ClaimDoc): Promise<void> {
  return repeatUndo(
    () => o.claims.deleteMany({ _id: claim._id, owner: claim.owner, claimState: "in_progress" }).then(() => true, () => false),
    UNDO_REPEAT_MS,
    () => o.log.warn("transmission_claim_release_failed", { operationId: claim.operationId }),
  );
}

async function _existing(o: TransmissionDeps, c: ClaimDoc): Promise<never> {
  if (c.claimState === "in_progress" && o.now() - c.startedAtMs >= o.staleAfterMs) {
    await o.claims
      .findOneAndUpdate({ _id: c._id, owner: c.owner, claimState: "in_progress" }, { $set: { claimState: "unknown", detail: "stale_claim", completedAtMs: o.now() } })
      .catch(() => null);
    o.log.error("transmission_outcome_unconfirmed", { operationId: c.operationId, reason: "stale_claim", alert: "immediate" });
    o.alerts?.raise({ signal: "transmit_outcome_unconfirmed", operation: "transmit", failureClass: "stale_claim", operationId: c.operationId, code: "GW_TRANSMIT_OUTCOME_UNCONFIRMED" });
    c.claimState = "unknown";
  }
  if (c.claimState === "unknown")
    throw gwError("GW_TRANSMIT_OUTCOME_UNCONFIRMED", {
      detail: "An earlier transmission of this IRN has an unprovable result; it may already be transmitted. Do not resubmit; contact support with the operationId.",
      operationId: c.operationId,
    });
  throw gwError("GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED", {
    detail: `A transmission of this IRN is ${c.claimState === "in_progress" ? "in progress" : `recorded (${c.claimState})`}; nothing was dispatched.`,
    operationId: c.operationId,
  });
}

async function _dispatch(o: TransmissionDeps, caller: TransmitCaller, claim: ClaimDoc): Promise<RegulatorResponse> {
  const base = { requestId: caller.requestId, operationId: claim.operationId };
  let outcome;
  try {
    outcome = await o.regulator.transmit(caller.state, claim.irn, { requestId: caller.requestId });
  } catch (e) {
    // Thrown = certainly not transmitted: release the claim so the request can be sent again.
    await _withdraw(o, claim);
    throw e;
  }
  if (outcome.kind === "transmitted") {
    await _record(o, claim, base, "succeeded", null);
    o.log.event("transmission_succeeded", base);
    return outcome.response;
  }
  if (outcome.kind === "rejected") {
    await _record(o, claim, base, "rejected", outcome.errorId);
    o.log.event("transmission_rejected", { ...base, upstreamErrorId: outcome.errorId });
    const err = mapRegulatorFailure(outcome, "transmit");
    err.info.operationId = claim.operationId;
    throw err;
  }
  await _record(o, claim, base, "unknown", outcome.reason);
  o.log.error("transmission_outcome_unconfirmed", { ...base, reason: outcome.reason, alert: "immediate" });
  o.alerts?.raise({ signal: "transmit_outcome_unconfirmed", dependency: `regulator:${caller.state}`, operation: "transmit", failureClass: outcome.reason, requestId: caller.requestId, operationId: claim.operationId, code: "GW_TRANSMIT_OUTCOME_UNCONFIRMED" });
  throw gwError("GW_TRANSMIT_OUTCOME_UNCONFIRMED", {
    detail: "The regulator's result cannot be proved; the invoice may already be transmitted. Do not resubmit; contact support with the operationId.",
    operationId: claim.operationId,
  });
}

/**
 * The holder records the typed outcome, tried again while the store does not answer
 * (core/outcome-write.ts); a write lost for good is logged and alerted (the claim then goes stale →
 * unknown).
 */
async function _record(o: TransmissionDeps, claim: ClaimDoc, base: Record<string, unknown>, claimState: ClaimState, detail: string | null): Promise<void> {
  const completedAtMs = o.now();
  const written = await writeOutcome(() =>
    o.claims.findOneAndUpdate({ _id: claim._id, owner: claim.owner, claimState: "in_progress" }, { $set: { claimState, detail, completedAtMs } }),
  );
  if (written) return;
  o.log.warn("transmission_claim_write_failed", { ...base, claimState });
  o.alerts?.raise({ signal: "post_sign_state_missing", dependency: "documentStore", operation: "transmission_claims.findOneAndUpdate", operationId: claim.operationId });
}
