/**
 * The invoice kit's settlement table (plugins/invoice/settlement.ts), row by row: what a debit and
 * a sign result do to the fee, for Pass-through and for the Stored processor, and what a held fee's
 * recorded answer already proves.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { BillingError, DependencyUnavailableError, type BillingLedger, type DebitResult } from "../../../adapters/ports.ts";
import { gwError } from "../../../core/errors/gateway-error.ts";
import { debitFee, heldProof, signEffect, signResultOf } from "../../../plugins/invoice/settlement.ts";

const IDENTITY = { subBusinessId: "sub-1", domain: "gw.example", irn: "INV1-SVC1-20240611", attemptNumber: 1 };
const RESPONSE = { status: 201, contentType: "application/json", body: new Uint8Array(), headers: {} };

function ledger(debit: () => Promise<DebitResult>): BillingLedger {
  return { debit, reverse: async () => ({ entryId: "r" }), confirm: async () => undefined, credit: async () => ({ entryId: "c", created: true }), wallet: async () => ({ businessId: "b", currency: "NGN", balanceKobo: 0, entries: [] }) };
}

test("debit: debited, or a replay still debited, dispatches", async () => {
  assert.is((await debitFee(ledger(async () => ({ kind: "debited", entryId: "e", balanceKobo: 0 })), "b", IDENTITY, 100, "f")).effect, "dispatch");
  assert.is((await debitFee(ledger(async () => ({ kind: "replay", entryId: "e", state: "debited" })), "b", IDENTITY, 100, "f")).effect, "dispatch");
});

test("debit: a replay of a settled identity is never signed again", async () => {
  for (const state of ["confirmed", "reversed"] as const)
    assert.equal(await debitFee(ledger(async () => ({ kind: "replay", entryId: "e", state })), "b", IDENTITY, 100, "f"), { effect: "settled", state });
});

test("debit: refusals carry their public code; any other failure leaves the charge unknown", async () => {
  const refusedCode = async (reason: "wallet_declined" | "attempt_conflict" | "rule_rejected") => {
    const e = await debitFee(ledger(() => Promise.reject(new BillingError(reason, "no"))), "b", IDENTITY, 100, "f");
    return e.effect === "refused" ? `${e.reason} ${e.code}` : e.effect;
  };
  assert.is(await refusedCode("wallet_declined"), "wallet_declined GW_BILLING_WALLET_DECLINED");
  assert.is(await refusedCode("attempt_conflict"), "attempt_conflict GW_BILLING_ATTEMPT_CONFLICT");
  assert.is(await refusedCode("rule_rejected"), "rule_rejected GW_BILLING_REQUEST_REJECTED");
  const outage = new DependencyUnavailableError("billing", "down");
  assert.equal(await debitFee(ledger(() => Promise.reject(outage)), "b", IDENTITY, 100, "f"), { effect: "unknown", error: outage });
});

test("sign: signed → confirm; rejected → reverse as regulator_rejected; ambiguous → hold", () => {
  for (const mode of ["passthrough", "stored"] as const) {
    assert.equal(signEffect({ kind: "signed", response: RESPONSE }, mode), { money: "confirm", response: RESPONSE });
    assert.equal(signEffect({ kind: "rejected", status: 400, reason: "bad_request", errorId: "id-1", message: "bad" }, mode), {
      money: "reverse",
      why: "regulator_rejected",
      code: "GW_SIGN_REJECTED",
      upstreamErrorId: "id-1",
      regulatorMessage: "bad",
    });
    assert.equal(signEffect({ kind: "ambiguous", reason: "timeout" }, mode), { money: "hold", code: "GW_SIGN_OUTCOME_UNCONFIRMED", reason: "timeout" });
  }
});

test("sign: a throw reverses as regulator_not_called; throttled keeps the fee in Pass-through only", async () => {
  const down = await signResultOf(() => Promise.reject(gwError("GW_UPSTREAM_UNAVAILABLE")));
  for (const mode of ["passthrough", "stored"] as const) {
    const e = signEffect(down, mode);
    assert.ok(e.money === "reverse" && e.why === "regulator_not_called" && e.code === "GW_UPSTREAM_UNAVAILABLE");
  }
  const raw = signEffect(await signResultOf(() => Promise.reject(new Error("boom"))), "stored");
  assert.ok(raw.money === "reverse" && raw.code === "GW_UPSTREAM_UNAVAILABLE", "a non-catalog throw is an upstream outage");
  const throttled = await signResultOf(() => Promise.reject(gwError("GW_RATE_LIMIT_EXCEEDED")));
  assert.is(signEffect(throttled, "passthrough").money, "keep");
  const stored = signEffect(throttled, "stored");
  assert.ok(stored.money === "reverse" && stored.code === "GW_RATE_LIMIT_EXCEEDED");
});

test("held fees: the recorded answer proves the outcome of a failed settlement, nothing else", () => {
  assert.equal(heldProof("GW_SIGN_REVERSAL_UNCONFIRMED"), { outcome: "not_signed", basis: "regulator_rejected" });
  assert.equal(heldProof("GW_SIGN_RECOVERY_UNAVAILABLE"), { outcome: "signed", basis: "regulator_signed" });
  assert.is(heldProof("GW_SIGN_OUTCOME_UNCONFIRMED"), null);
  assert.is(heldProof(null), null);
});

test.run();
