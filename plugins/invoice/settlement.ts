/**
 * The settlement table: what each outcome of a billed sign does to its fee (spec §3.2,
 * ARCHITECTURE.md §7 invariant 1). Pass-through signing (one request) and the Stored processor (an
 * invoice's steps) both follow it, and each records the effect its own way.
 *
 *   debit                                    effect
 *     debited, or a replay still debited     dispatch: mark the dispatch, then sign
 *     a replay already confirmed / reversed  settled: this identity is never signed again
 *     refused (wallet, rule, attempt taken)  refused: nothing charged; the reason's code
 *     billing did not answer                 unknown: nothing is known to be charged
 *   sign (after the dispatch mark)
 *     signed                                 confirm the debit
 *     rejected by the regulator              reverse it ("regulator_rejected"): GW_SIGN_REJECTED
 *     not performed (the call threw)         reverse it ("regulator_not_called"): the thrown code;
 *                                            throttled in Pass-through: keep it (the same-key retry
 *                                            the 429 asks for replays the debit, never a second charge)
 *     ambiguous                              hold it: frozen GW_SIGN_OUTCOME_UNCONFIRMED, never replayed
 *   settlement that fails
 *     the confirmation                       held: GW_SIGN_RECOVERY_UNAVAILABLE (the regulator signed)
 *     the reversal                           held: GW_SIGN_REVERSAL_UNCONFIRMED (the regulator did not)
 *
 * Recovery reads the last two rows back (`heldProof`): such a held fee needs no regulator check.
 */
import { isBillingError, type BillingLedger, type BillingIdentity, type DebitResult } from "../../adapters/ports.ts";
import type { AmbiguousReason, RegulatorResponse, SignOutcome } from "../../adapters/regulator/port.ts";
import type { GwCode } from "../../core/errors/catalog.ts";
import { gwError, isGatewayError, type GatewayError } from "../../core/errors/gateway-error.ts";

/** Who settles: a Pass-through request, or the Stored processor. */
export type SettlementMode = "passthrough" | "stored";

/** Why a fee goes back (the ledger's reversal reason). */
export type ReversalReason = "regulator_rejected" | "regulator_not_called" | "abandoned_before_dispatch" | "regulator_not_signed";

export type BillingRefusalReason = "wallet_declined" | "attempt_conflict" | "rule_rejected";

/** A refused debit: its public code and detail. */
export const BILLING_REFUSALS: Readonly<Record<BillingRefusalReason, { code: GwCode; detail: string }>> = {
  wallet_declined: { code: "GW_BILLING_WALLET_DECLINED", detail: "The wallet could not fund the signing fee; fund it, then retry." },
  attempt_conflict: {
    code: "GW_BILLING_ATTEMPT_CONFLICT",
    detail: "This billing identity (represented business, domain, IRN, attempt number) was billed for different content; contact support.",
  },
  rule_rejected: { code: "GW_BILLING_REQUEST_REJECTED", detail: "A billing rule rejected the request." },
};

export type DebitEffect =
  | { effect: "dispatch"; result: DebitResult }
  | { effect: "settled"; state: "confirmed" | "reversed" }
  | { effect: "refused"; reason: BillingRefusalReason; code: GwCode; detail: string }
  | { effect: "unknown"; error: unknown };

/** Debits the fee once per billing identity and says what follows (the table's debit rows). */
export async function debitFee(billing: BillingLedger, businessId: string, identity: BillingIdentity, feeKobo: number, fingerprint: string): Promise<DebitEffect> {
  let result: DebitResult;
  try {
    result = await billing.debit(businessId, identity, feeKobo, fingerprint);
  } catch (e) {
    if (!isBillingError(e)) return { effect: "unknown", error: e };
    const refusal = BILLING_REFUSALS[e.reason] ?? BILLING_REFUSALS.rule_rejected;
    return { effect: "refused", reason: e.reason, ...refusal };
  }
  if (result.kind === "replay" && result.state !== "debited") return { effect: "settled", state: result.state };
  return { effect: "dispatch", result };
}

/** What the regulator's sign call gave: its classified outcome, or the error it threw (it did not sign). */
export type SignResult = SignOutcome | { kind: "thrown"; error: unknown };

export type SignEffect =
  | { money: "confirm"; response: RegulatorResponse }
  | { money: "reverse"; why: "regulator_rejected"; code: "GW_SIGN_REJECTED"; upstreamErrorId: string | null; regulatorMessage?: string }
  | { money: "reverse"; why: "regulator_not_called"; code: GwCode; error: GatewayError }
  | { money: "keep"; error: GatewayError }
  | { money: "hold"; code: "GW_SIGN_OUTCOME_UNCONFIRMED"; reason: AmbiguousReason };

/** The regulator's sign call, its throw kept as a result (a throw means it certainly did not sign). */
export async function signResultOf(call: () => Promise<SignOutcome>): Promise<SignResult> {
  try {
    return await call();
  } catch (e) {
    return { kind: "thrown", error: e };
  }
}

/** The table's sign rows: the money effect of a sign result ("keep" only in Pass-through). */
export function signEffect(result: SignResult, mode: "stored"): Exclude<SignEffect, { money: "keep" }>;
export function signEffect(result: SignResult, mode: SettlementMode): SignEffect;
export function signEffect(result: SignResult, mode: SettlementMode): SignEffect {
  switch (result.kind) {
    case "signed":
      return { money: "confirm", response: result.response };
    case "rejected":
      return {
        money: "reverse",
        why: "regulator_rejected",
        code: "GW_SIGN_REJECTED",
        upstreamErrorId: result.errorId,
        ...(result.message ? { regulatorMessage: result.message } : {}),
      };
    case "ambiguous":
      return { money: "hold", code: "GW_SIGN_OUTCOME_UNCONFIRMED", reason: result.reason };
    case "thrown": {
      const error = isGatewayError(result.error) ? result.error : gwError("GW_UPSTREAM_UNAVAILABLE", { cause: result.error });
      if (mode === "passthrough" && error.code === "GW_RATE_LIMIT_EXCEEDED") return { money: "keep", error };
      return { money: "reverse", why: "regulator_not_called", code: error.code, error };
    }
  }
}

/** A held fee whose recorded answer already proves what the regulator did (else: ask it). */
export function heldProof(code: string | null): { outcome: "signed" | "not_signed"; basis: string } | null {
  if (code === "GW_SIGN_REVERSAL_UNCONFIRMED") return { outcome: "not_signed", basis: "regulator_rejected" };
  if (code === "GW_SIGN_RECOVERY_UNAVAILABLE") return { outcome: "signed", basis: "regulator_signed" };
  return null;
}
