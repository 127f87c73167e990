/**
 * Pass-through transmission with durable claims (spec §3.3). One claim per transmission binding
 * (state, represented business, IRN), taken with a unique insert BEFORE the regulator is called; only
 * the holder dispatches and records the typed outcome:
 *
 *   in_progress | succeeded | rejected  → 409 GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED + operationId, no dispatch
 *   unknown (or a stale in_progress)    → 502 GW_TRANSMIT_OUTCOME_UNCONFIRMED + operationId, never replayed
 *
 * A regulator throw (it certainly did not transmit: not configured, circuit open, never connected,
 * throttled) releases the claim, so the request can be sent again; so does a claim insert whose answer
 * the store lost (503; the claim, if it landed, is taken back, retried in the background while the
 * store refuses). A retry with the same key that finds its own claim still in progress waits for it
 * (bounded) instead of answering 409 at once. The operation identity is the
 * binding itself; an x-idempotency-key, when sent, is recorded only as its HMAC. Without a key the
 * legacy identity is derived from the request binding (business + sub-business + IRN, spec §7.11).
 */
import { randomUUID } from "node:crypto";
import { repeatUndo, UNDO_REPEAT_MS } from "../../core/background-retry.ts";
import { deriveKey, keyedHash } from "../../core/keyed-hash.ts";
import type { AlertChannel, Collection, Doc, DocumentStore } from "../../adapters/ports.ts";
import { isDependencyUnavailableError, isDuplicateKeyError } from "../../adapters/ports.ts";
import { mapRegulatorFailure, type RegulatorClient, type RegulatorResponse, type RegulatorState } from "../../adapters/regulator/port.ts";
import { gwError, isGatewayError } from "../../core/errors/gateway-error.ts";
import type { Logger } from "../../core/log.ts";
import { checkTransmitIrn } from "./schemas.ts";

export const TRANSMISSION_COLLECTION = "transmission_claims";

export type ClaimState = "in_progress" | "succeeded" | "rejected" | "unknown";

export interface ClaimDoc extends Doc {
  businessId: string;
  state: RegulatorState;
  subBusinessId: string;
  irn: string;
  operationId: string;
  claimState: ClaimState;
  /** HMAC of the x-idempotency-key, or null (legacy identity from the binding). */
  keyHash: string | null;
  owner: string;
  startedAtMs: number;
  completedAtMs: number | null;
  /** Regulator error.id of a rejection; the reason class of an unknown outcome. */
  detail: string | null;
  /** An operator's decision on an unknown outcome (plugins/recovery). */
  resolution?: { outcome: "transmitted"; by: string; at: string };
}

interface RepresentedBusiness extends Doc {
  businessId: string;
  externalBusinessId: string;
  identity: { tin: string; irnTemplate: string | null };
}

export interface TransmitCaller {
  requestId: string;
  businessId: string;
  state: RegulatorState;
}

export interface TransmissionOptions {
  store: DocumentStore;
  regulator: RegulatorClient;
  log: Logger;
  deploymentSecret: string;
  now: () => number;
  /** An in_progress claim older than this is presumed dead: unknown. */
  staleAfterMs: number;
  /** Immediate operator signals (spec §6): an unprovable transmission. */
  alerts?: AlertChannel;
  /** How long a same-key retry waits for its own claim still in progress (finished or withdrawn). */
  waitMs: number;
  pollMs: number;
}

export function createTransmissionService(o: TransmissionOptions) {
  const { regulator, log, now } = o;
  const claims: Collection<ClaimDoc> = o.store.collection<ClaimDoc>(TRANSMISSION_COLLECTION, {
    indexes: [{ fields: ["businessId", "state", "subBusinessId"] }, { fields: ["operationId"] }, { fields: ["claimState", "startedAtMs"] }],
  });
  const subs = o.store.collection<RepresentedBusiness>("onboarding_sub_businesses");
  const secret = deriveKey(o.deploymentSecret, "transmission-idempotency-v1");

  async function db<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (isGatewayError(e)) throw e;
      if (isDependencyUnavailableError(e))
        throw gwError("GW_MANAGEMENT_SERVICE_UNAVAILABLE", { detail: "The gateway's store is unavailable; nothing was transmitted.", cause: e });
      throw e;
    }
  }

  async function transmit(caller: TransmitCaller, subBusinessId: string, irn: string, key: string | null): Promise<RegulatorResponse> {
    const sub = await db(() => subs.get(`${caller.state}:${subBusinessId}`));
    if (!sub) throw gwError("GW_SUB_BUSINESS_NOT_FOUND", { detail: "No represented business with that x-sub-business-id." });
    if (sub.businessId !== caller.businessId)
      throw gwError("GW_SUB_BUSINESS_FORBIDDEN", { detail: "That represented business belongs to another top-level business." });
    checkTransmitIrn(irn, sub.identity.irnTemplate);

    const id = `${caller.businessId}|${caller.state}|${subBusinessId}|${irn}`;
    const keyHash = key === null ? null : keyedHash(secret, `${caller.businessId}\u0000${key}`);
    const startedAtMs = now();
    const claim: ClaimDoc = {
      _id: id,
      businessId: caller.businessId,
      state: caller.state,
      subBusinessId,
      irn,
      operationId: randomUUID(),
      claimState: "in_progress",
      keyHash,
      owner: caller.requestId,
      startedAtMs,
      completedAtMs: null,
      detail: null,
    };
    const deadline = now() + o.waitMs;
    for (;;) {
      try {
        claim.startedAtMs = now();
        await claims.insert(claim);
        return _dispatch(caller, claim);
      } catch (e) {
        if (!isDuplicateKeyError(e)) {
          // The insert may have landed although its answer was lost; nothing was dispatched, so a
          // claim of ours that did land is taken back (the 503 asks for a same-key retry).
          await _withdraw(claim);
          await db(() => Promise.reject(e));
        }
      }
      const existing = await db(() => claims.get(id));
      if (!existing) continue; // withdrawn meanwhile: claim it
      // The same key still in progress (a retry after a lost answer): wait, bounded, for it to finish
      // or be withdrawn, rather than answer "in progress" for a claim that may never dispatch.
      const sameKeyInFlight = existing.claimState === "in_progress" && keyHash !== null && existing.keyHash === keyHash;
      if (!sameKeyInFlight || now() >= deadline || now() - existing.startedAtMs >= o.staleAfterMs) return _existing(existing);
      await new Promise((r) => setTimeout(r, o.pollMs));
    }
  }

  /** Takes back a claim whose dispatch never started (repeated in the background: the store may refuse now, or an unacknowledged insert land later). */
  function _withdraw(claim: ClaimDoc): Promise<void> {
    return repeatUndo(
      () => claims.deleteMany({ _id: claim._id, owner: claim.owner, claimState: "in_progress" }).then(() => true, () => false),
      UNDO_REPEAT_MS,
      () => log.warn("transmission_claim_release_failed", { operationId: claim.operationId }),
    );
  }

  async function _existing(c: ClaimDoc): Promise<never> {
    if (c.claimState === "in_progress" && now() - c.startedAtMs >= o.staleAfterMs) {
      await claims
        .findOneAndUpdate({ _id: c._id, owner: c.owner, claimState: "in_progress" }, { $set: { claimState: "unknown", detail: "stale_claim", completedAtMs: now() } })
        .catch(() => null);
      log.error("transmission_outcome_unconfirmed", { operationId: c.operationId, reason: "stale_claim", alert: "immediate" });
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

  async function _dispatch(caller: TransmitCaller, claim: ClaimDoc): Promise<RegulatorResponse> {
    const base = { requestId: caller.requestId, operationId: claim.operationId };
    const record = (claimState: ClaimState, detail: string | null) =>
      claims
        .findOneAndUpdate({ _id: claim._id, owner: claim.owner, claimState: "in_progress" }, { $set: { claimState, detail, completedAtMs: now() } })
        .catch(() => {
          log.warn("transmission_claim_write_failed", { ...base, claimState });
          o.alerts?.raise({ signal: "post_sign_state_missing", dependency: "documentStore", operation: "transmission_claims.findOneAndUpdate", operationId: claim.operationId });
          return null;
        });
    let outcome;
    try {
      outcome = await regulator.transmit(caller.state, claim.irn, { requestId: caller.requestId });
    } catch (e) {
      // Thrown = certainly not transmitted: release the claim so the request can be sent again.
      await _withdraw(claim);
      throw e;
    }
    if (outcome.kind === "transmitted") {
      await record("succeeded", null);
      log.event("transmission_succeeded", base);
      return outcome.response;
    }
    if (outcome.kind === "rejected") {
      await record("rejected", outcome.errorId);
      log.event("transmission_rejected", { ...base, upstreamErrorId: outcome.errorId });
      const err = mapRegulatorFailure(outcome, "transmit");
      err.info.operationId = claim.operationId;
      throw err;
    }
    await record("unknown", outcome.reason);
    log.error("transmission_outcome_unconfirmed", { ...base, reason: outcome.reason, alert: "immediate" });
    o.alerts?.raise({ signal: "transmit_outcome_unconfirmed", dependency: `regulator:${caller.state}`, operation: "transmit", failureClass: outcome.reason, requestId: caller.requestId, operationId: claim.operationId, code: "GW_TRANSMIT_OUTCOME_UNCONFIRMED" });
    throw gwError("GW_TRANSMIT_OUTCOME_UNCONFIRMED", {
      detail: "The regulator's result cannot be proved; the invoice may already be transmitted. Do not resubmit; contact support with the operationId.",
      operationId: claim.operationId,
    });
  }

  return { transmit };
}

export type TransmissionService = ReturnType<typeof createTransmissionService>;
