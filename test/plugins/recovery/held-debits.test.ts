/**
 * Held debits no sign record owns, over real HTTP and the regulator simulator: a Pass-through sign
 * claim released after its debit (regulator 429; a lost billing answer) leaves the fee `debited`
 * for the merchant's same-key retry. When the merchant never retries, the recovery run owns it:
 * reversed when the regulator proves the IRN unsigned (audit entry), an alert when nothing proves it.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { billingEntryId, openLedgerCollections } from "../../../adapters/billing/ledger.ts";
import type { BillingIdentity } from "../../../adapters/ports.ts";
import type { AuditDoc } from "../../../core/directory-store.ts";
import { recoveryFor } from "../../../plugins/recovery/plugin.ts";
import { PASSTHROUGH, SUB, expectProblem, invoice, irnOf, startSigningHarness } from "../signing/signing-helpers.ts";

const h = await startSigningHarness({ patch: { recovery: { settleAfterMs: 1, abandonedAfterMs: 1, overdueAfterMs: 86_400_000 } } });
test.after(() => h.close());
test.after.each(() => {
  h.billing.clear();
  h.sim.faults.clear();
});
const recovery = recoveryFor(h.tg.gateway.kit);
const alerts = (signal: string) => h.tg.logs.filter((l) => l.event === "gateway_alert" && l.signal === signal);
const debitState = async (no: string, attemptNumber = 1) => {
  const identity: BillingIdentity = { subBusinessId: SUB, domain: PASSTHROUGH, irn: irnOf(no), attemptNumber };
  return (await openLedgerCollections(h.store).entries.get(billingEntryId("debit", "demo", identity)))?.state;
};
const settle = () => new Promise((r) => setTimeout(r, 10));

test("regulator 429 after the debit, never retried → the run reverses the held fee (regulator: not signed) and audits it", async () => {
  const before = await h.ledgerBalanced();
  h.sim.faults.set("sign", { kind: "rate_limit", retryAfter: 1, times: 1 });
  await expectProblem(await h.sign(invoice("HD1"), { key: "hd1-key-0001" }), 429, "GW_RATE_LIMIT_EXCEEDED");
  assert.is(await debitState("HD1"), "debited", "the fee is held for the same-key retry");
  await settle();
  const run = await recovery.runOnce();
  assert.ok(run.reversed >= 1, JSON.stringify(run));
  assert.is(await debitState("HD1"), "reversed");
  const after = await h.ledgerBalanced();
  assert.is(after.balanceKobo, before.balanceKobo, "the fee is back");
  const audit = await h.store.collection<AuditDoc>("directory_audit").findOne({ action: "held_debit.reverse" });
  assert.is(audit?.actor, "recovery");
  assert.is((await recovery.runOnce()).reversed, 0, "reversed once");
});

test("billing answer lost after the debit committed, never retried → reversed by the run", async () => {
  h.billing.faults = { debit: "unavailable_after_commit", once: true };
  await expectProblem(await h.sign(invoice("HD2"), { key: "hd2-key-0001" }), 503, "GW_BILLING_SERVICE_UNAVAILABLE");
  assert.is(await debitState("HD2"), "debited");
  await settle();
  await recovery.runOnce();
  assert.is(await debitState("HD2"), "reversed");
  await h.ledgerBalanced();
});

test("held with no record while the IRN is signed (by a later attempt) → not provable: recovery_unprovable alert, the fee stays held", async () => {
  h.sim.faults.set("sign", { kind: "rate_limit", retryAfter: 1, times: 1 });
  await expectProblem(await h.sign(invoice("HD3"), { key: "hd3-key-0001" }), 429, "GW_RATE_LIMIT_EXCEEDED");
  assert.is((await h.sign(invoice("HD3"), { key: "hd3-key-0002", attempt: 2 })).status, 201);
  await settle();
  await recovery.runOnce();
  assert.is(await debitState("HD3"), "debited", "nothing proves what attempt 1 did");
  assert.is(await debitState("HD3", 2), "confirmed");
  assert.ok(alerts("recovery_unprovable").length > 0, "the operator is alerted");
  assert.ok(h.tg.logs.some((l) => l.event === "recovery_unprovable" && l.failureClass === "signed_without_record"));
});

test("a held fee whose same-key retry came back is left to its record", async () => {
  h.billing.faults = { debit: "unavailable_after_commit", once: true };
  await expectProblem(await h.sign(invoice("HD4"), { key: "hd4-key-0001" }), 503, "GW_BILLING_SERVICE_UNAVAILABLE");
  assert.is((await h.sign(invoice("HD4"), { key: "hd4-key-0001" })).status, 201);
  await settle();
  await recovery.runOnce();
  assert.is(await debitState("HD4"), "confirmed");
  await h.ledgerBalanced();
});

test.run();
