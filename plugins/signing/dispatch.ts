/**
 * A claimed sign, carried out by the settlement table (plugins/invoice/settlement.ts):
 * debit → "dispatching" recorded → regulator sign → confirm / reverse / freeze → the record
 * completed (or frozen) with the answer a same-key retry will get again. A failure before any money
 * effect releases the claim (the same key can be retried).
 */
import type { BillingIdentity } from "../../adapters/ports.ts";
import { regulatorViolations } from "../../adapters/regulator/port.ts";
import { gwError, type GatewayError, type Violation } from "../../core/errors/gateway-error.ts";
import { billingIdentityOf, errorAnswer, type SignRecord } from "../invoice/sign-attempts.ts";
import { debitFee, signEffect, signResultOf, type SignEffect } from "../invoice/settlement.ts";
import { finishRecord, regulatorAnswer, releaseClaim } from "./records.ts";
import type { PassThrough, SignCaller, SigningServiceOptions, SignRequest } from "./types.ts";
import { checkedInvoice, type CheckedInvoice } from "./validate.ts";

/** What every log line of one execution carries. */
type Base = { requestId: string; operationId: string; attemptNumber: number };

export async function executeSign(
  o: SigningServiceOptions,
  caller: SignCaller,
  r: SignRequest,
  rec: SignRecord,
  fingerprint: string,
  checked: CheckedInvoice | null,
  takenOver: boolean,
): Promise<PassThrough> {
  const { irn } = checked ?? (await checkedInvoice(o, caller, r.subBusinessId, r.document));
  const identity = billingIdentityOf({ subBusinessId: r.subBusinessId, domain: caller.domain, irn: irn.irn, attemptNumber: r.attemptNumber });
  const base: Base = { requestId: caller.requestId, operationId: rec.operationId, attemptNumber: r.attemptNumber };
  await _debit(o, caller, rec, identity, fingerprint, base, takenOver);
  await _markDispatching(o, rec, base);
  const result = await signResultOf(() => o.regulator.sign(caller.state, r.document, { requestId: caller.requestId }));
  return _settle(o, caller, rec, identity, base, signEffect(result, "passthrough"));
}

// --- Internal helpers ---

/** The debit rows of the table: only "dispatch" goes on; every other row answers here. */
async function _debit(o: SigningServiceOptions, caller: SignCaller, rec: SignRecord, identity: BillingIdentity, fingerprint: string, base: Base, takenOver: boolean): Promise<void> {
  const debit = await debitFee(o.billing, caller.businessId, identity, caller.feeKobo, fingerprint);
  switch (debit.effect) {
    case "dispatch":
      return;
    case "refused":
      await releaseClaim(o, rec);
      o.log.event("signing_billing_refused", { ...base, reason: debit.reason });
      throw gwError(debit.code, { detail: debit.detail });
    case "unknown":
      await releaseClaim(o, rec);
      o.log.warn("signing_billing_unavailable", { ...base, takenOver });
      throw gwError("GW_BILLING_SERVICE_UNAVAILABLE", {
        detail: "The fee could not be confirmed; the regulator was not called. Retry with the same key, attempt number and content.",
        cause: debit.error,
      });
    case "settled": {
      // The identity was settled before (record expired or lost): never a second sign for it.
      const err = gwError("GW_SIGN_ATTEMPT_ALREADY_PROCESSED", {
        detail: "This attempt was already processed; a new attempt needs the next x-attempt-number and a new key.",
        operationId: rec.operationId,
      });
      await finishRecord(o, rec, "completed", errorAnswer(err), debit.state);
      throw err;
    }
  }
}

/** "dispatching" recorded before the regulator is called: a stale record from here on is frozen, never taken over. */
async function _markDispatching(o: SigningServiceOptions, rec: SignRecord, base: Base): Promise<void> {
  const marked = await o.store.idempotency
    .updateOne({ _id: rec._id, owner: rec.owner, status: "in_progress" }, { $set: { phase: "dispatching", money: "debited" } })
    .catch(() => false);
  if (marked) return;
  // The regulator was not called; the debit stays and a retry with the same key replays it.
  await releaseClaim(o, rec);
  o.log.warn("signing_dispatch_mark_failed", base);
  throw gwError("GW_BILLING_SERVICE_UNAVAILABLE", {
    detail: "The attempt could not be recorded; the regulator was not called. Retry with the same key, attempt number and content.",
  });
}

/** The sign rows of the table: confirm, reverse, keep or hold the fee, and answer. */
async function _settle(o: SigningServiceOptions, caller: SignCaller, rec: SignRecord, identity: BillingIdentity, base: Base, effect: SignEffect): Promise<PassThrough> {
  switch (effect.money) {
    case "confirm":
      return _confirm(o, caller, rec, identity, base, effect.response);
    case "reverse":
      if (effect.why === "regulator_not_called") return _reverse(o, caller, rec, identity, base, effect.error, "not_performed");
      return _reverse(
        o,
        caller,
        rec,
        identity,
        { ...base, upstreamErrorId: effect.upstreamErrorId },
        _rejected(rec.operationId, regulatorViolations(effect.regulatorMessage)),
        "rejected",
      );
    case "keep":
      // Throttled: keep the debit (no second charge on the same-key retry the error asks for).
      await releaseClaim(o, rec);
      o.log.event("signing_regulator_throttled", base);
      throw effect.error;
    case "hold":
      return _freeze(o, caller, rec, base, effect.reason);
  }
}

async function _confirm(o: SigningServiceOptions, caller: SignCaller, rec: SignRecord, identity: BillingIdentity, base: Base, response: PassThrough): Promise<PassThrough> {
  const operationId = rec.operationId;
  try {
    await o.billing.confirm(caller.businessId, identity);
  } catch (e) {
    const err = gwError("GW_SIGN_RECOVERY_UNAVAILABLE", {
      detail: "The invoice was signed and the fee charged, but settlement could not complete; do not resubmit, contact support.",
      operationId,
      cause: e,
    });
    o.log.error("signing_recovery_unavailable", { ...base, alert: "immediate" });
    o.alerts?.raise({ signal: "sign_recovery_unavailable", dependency: "billing", requestId: caller.requestId, operationId, code: "GW_SIGN_RECOVERY_UNAVAILABLE" });
    await finishRecord(o, rec, "completed", errorAnswer(err), "held");
    throw err;
  }
  await finishRecord(o, rec, "completed", regulatorAnswer(response), "confirmed");
  o.log.event("signing_signed", base);
  return response;
}

/** The fee goes back and `err` is the answer; a reversal that does not confirm holds the fee instead. */
async function _reverse(
  o: SigningServiceOptions,
  caller: SignCaller,
  rec: SignRecord,
  identity: BillingIdentity,
  base: Record<string, unknown>,
  err: GatewayError,
  why: "rejected" | "not_performed",
): Promise<never> {
  try {
    await o.billing.reverse(caller.businessId, identity, why === "rejected" ? "regulator_rejected" : "regulator_not_called");
  } catch (e) {
    const unconfirmed = gwError("GW_SIGN_REVERSAL_UNCONFIRMED", {
      detail: "The regulator did not sign, but the fee reversal could not be confirmed; do not resubmit, contact support.",
      operationId: rec.operationId,
      cause: e,
    });
    o.log.error("signing_reversal_unconfirmed", { ...base, why, alert: "immediate" });
    o.alerts?.raise({ signal: "sign_reversal_unconfirmed", dependency: "billing", requestId: caller.requestId, operationId: rec.operationId, code: "GW_SIGN_REVERSAL_UNCONFIRMED" });
    await finishRecord(o, rec, "completed", errorAnswer(unconfirmed), "held");
    throw unconfirmed;
  }
  o.log.event("signing_reversed", { ...base, why });
  await finishRecord(o, rec, "completed", errorAnswer(err), "reversed");
  throw err;
}

/** The regulator's rejection, with the fields it named (never its words) in `errors`. */
function _rejected(operationId: string, violations: Violation[]): GatewayError {
  return gwError("GW_SIGN_REJECTED", {
    detail: `The regulator rejected the invoice; the fee was reversed.${violations.length > 0 ? " The fields it named are listed in errors." : ""} A new attempt needs the next x-attempt-number and a new key.`,
    operationId,
    ...(violations.length > 0 ? { violations } : {}),
  });
}

/** Ambiguous: frozen, never replayed, the debit stays. */
async function _freeze(o: SigningServiceOptions, caller: SignCaller, rec: SignRecord, base: Base, reason: string): Promise<never> {
  const operationId = rec.operationId;
  const err = gwError("GW_SIGN_OUTCOME_UNCONFIRMED", {
    detail: "The regulator's result cannot be proved; the invoice may be signed. Do not resubmit or use a new key; contact support with the operationId.",
    operationId,
  });
  o.log.error("signing_outcome_unconfirmed", { ...base, reason, alert: "immediate" });
  o.alerts?.raise({ signal: "sign_outcome_unconfirmed", dependency: `regulator:${caller.state}`, operation: "sign", failureClass: reason, requestId: caller.requestId, operationId, code: "GW_SIGN_OUTCOME_UNCONFIRMED" });
  await finishRecord(o, rec, "frozen", errorAnswer(err), "held");
  throw err;
}
