/**
 * The recovery jobs' rules, driven by a manual clock against the regulator simulator: a held fee is
 * looked at only once it is `settleAfterMs` old, an in-progress attempt is abandoned only after
 * `abandonedAfterMs`, a transmission claim is stale only after its lifetime, and "overdue
 * reconciliation" is signalled only past `overdueAfterMs` — one millisecond earlier nothing happens
 * (not even a regulator call). And the run lease: while one run holds it, another process's run
 * does nothing.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { BillingIdentity } from "../../../adapters/ports.ts";
import { recoveryFor } from "../../../plugins/recovery/plugin.ts";
import type { SignRecord } from "../../../plugins/signing/store.ts";
import type { ClaimDoc } from "../../../plugins/transmission/service.ts";
import { PASSTHROUGH, SUB, expectProblem, invoice, irnOf, startSigningHarness, type SigningHarness } from "../signing/signing-helpers.ts";
import { manualClock } from "../../support/manual-clock.ts";

const MINUTE = 60_000;
const SETTLE = 10 * MINUTE;
const ABANDONED = 60 * MINUTE;
const OVERDUE = 24 * 60 * MINUTE;
const REGULATOR_TIMEOUT = 1_500;
/** plugins/recovery: a claim is stale after twice the regulator timeout plus 30 s. */
const CLAIM_STALE = 2 * REGULATOR_TIMEOUT + 30_000;

const harness = () =>
  startSigningHarness({ patch: { recovery: { enabled: false, settleAfterMs: SETTLE, abandonedAfterMs: ABANDONED, overdueAfterMs: OVERDUE } } });
const records = (h: SigningHarness) => h.store.collection<SignRecord>("signing_idempotency");
const alerts = (h: SigningHarness, signal: string) => h.tg.logs.filter((l) => l.event === "gateway_alert" && l.signal === signal);

/** A frozen sign the regulator did perform (it answered a renamed envelope after signing). */
async function frozenSign(h: SigningHarness, no: string): Promise<SignRecord> {
  h.sim.faults.set("sign", { kind: "renamed", afterProcessing: true, times: 1 });
  const body = await expectProblem(await h.sign(invoice(no), { key: `rules-${no}-key` }), 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
  const rec = await records(h).findOne({ operationId: body.operationId });
  assert.is(rec?.money, "held");
  return rec!;
}

test("a held fee is settled only once it is settleAfterMs old (10 minutes by default)", async () => {
  const h = await harness();
  try {
    const rec = await frozenSign(h, "RL1");
    const clock = manualClock(rec.completedAtMs!);
    const recovery = recoveryFor(h.tg.gateway.kit, { now: clock.now });
    const confirms = h.sim.state.calls("confirm");
    clock.advance(SETTLE - 1);
    assert.is((await recovery.runOnce()).confirmed, 0);
    assert.is(h.sim.state.calls("confirm"), confirms, "the regulator is not even asked yet");
    assert.is((await records(h).get(rec._id))?.money, "held");
    clock.advance(1);
    assert.is((await recovery.runOnce()).confirmed, 1);
    assert.is((await records(h).get(rec._id))?.money, "confirmed");
  } finally {
    await h.close();
  }
});

test("an in-progress attempt is abandoned only after abandonedAfterMs (60 minutes): then frozen and settled", async () => {
  const h = await harness();
  try {
    const irn = irnOf("RL2");
    const identity: BillingIdentity = { subBusinessId: SUB, domain: PASSTHROUGH, irn, attemptNumber: 1 };
    await h.billing.debit("demo", identity, 5_000, "fp-rl2");
    const startedAtMs = Date.now();
    await records(h).insert({
      _id: "rules|rl2",
      businessId: "demo",
      route: "POST /api/v1/invoice/sign",
      fingerprint: "fp-rl2",
      attemptKey: `TEST|${PASSTHROUGH}|${SUB}|${irn}|1`,
      operationId: "1e4e4c1e-7a57-4c39-9a4f-2f1b8d3c6e02",
      status: "in_progress",
      phase: "dispatching",
      owner: "a-request-still-running",
      startedAtMs,
      completedAtMs: null,
      answer: null,
      money: "debited",
      expiresAtMs: startedAtMs + OVERDUE,
    });
    const clock = manualClock(startedAtMs);
    const recovery = recoveryFor(h.tg.gateway.kit, { now: clock.now });
    clock.advance(ABANDONED - 1);
    const early = await recovery.runOnce();
    assert.is(early.confirmed + early.reversed, 0);
    assert.is((await records(h).get("rules|rl2"))?.status, "in_progress", "a request may still hold it: left alone");
    clock.advance(1);
    const run = await recovery.runOnce();
    assert.is(run.reversed, 1, "the regulator has no such invoice: the fee goes back");
    const rec = await records(h).get("rules|rl2");
    assert.is(rec?.status, "resolved");
    assert.is(rec?.money, "reversed");
    assert.ok(alerts(h, "sign_outcome_unconfirmed").some((a) => a.failureClass === "abandoned"));
  } finally {
    await h.close();
  }
});

test("a transmission claim in progress becomes unknown only after its lifetime (2 × regulator timeout + 30 s)", async () => {
  const h = await harness();
  try {
    const claims = h.store.collection<ClaimDoc>("transmission_claims");
    const startedAtMs = Date.now();
    await claims.insert({
      _id: "rules-claim",
      businessId: "demo",
      state: "TEST",
      subBusinessId: SUB,
      irn: irnOf("RL3"),
      operationId: "2e4e4c1e-7a57-4c39-9a4f-2f1b8d3c6e03",
      claimState: "in_progress",
      keyHash: null,
      owner: "a-request-still-running",
      startedAtMs,
      completedAtMs: null,
      detail: null,
    });
    const clock = manualClock(startedAtMs);
    const recovery = recoveryFor(h.tg.gateway.kit, { now: clock.now });
    clock.advance(CLAIM_STALE - 1);
    assert.is((await recovery.runOnce()).claimsUnknown, 0);
    assert.is((await claims.get("rules-claim"))?.claimState, "in_progress");
    clock.advance(1);
    assert.is((await recovery.runOnce()).claimsUnknown, 1);
    assert.is((await claims.get("rules-claim"))?.claimState, "unknown");
    assert.ok(alerts(h, "transmit_outcome_unconfirmed").some((a) => a.failureClass === "stale_claim"));
  } finally {
    await h.close();
  }
});

test("overdue reconciliation is signalled only once something stays unresolved past overdueAfterMs (24 hours)", async () => {
  const h = await harness();
  try {
    const rec = await frozenSign(h, "RL4");
    h.sim.faults.set("confirm", { kind: "status", status: 503 }); // the regulator cannot prove anything
    const clock = manualClock(rec.completedAtMs!);
    const recovery = recoveryFor(h.tg.gateway.kit, { now: clock.now });
    clock.advance(OVERDUE - 1);
    const early = await recovery.runOnce();
    assert.is(early.unprovable, 1, "looked at, not provable");
    assert.is(early.overdue, 0);
    assert.is(alerts(h, "reconciliation_overdue").length, 0);
    clock.advance(1);
    const late = await recovery.runOnce();
    assert.is(late.overdue, 1);
    const [alert] = alerts(h, "reconciliation_overdue");
    assert.ok(alert, "reconciliation_overdue raised");
    assert.is(alert!.count, 1);
    h.sim.faults.clear("confirm");
  } finally {
    await h.close();
  }
});

test("the run lease: while one run holds it, another run does nothing; afterwards the record is already settled", async () => {
  const h = await harness();
  try {
    const rec = await frozenSign(h, "RL5");
    const clock = manualClock(rec.completedAtMs! + SETTLE);
    const a = recoveryFor(h.tg.gateway.kit, { now: clock.now });
    const b = recoveryFor(h.tg.gateway.kit, { now: clock.now });
    h.sim.faults.set("confirm", { kind: "latency", ms: 500, times: 1 });
    const confirms = h.sim.state.calls("confirm");
    const first = a.runOnce();
    for (let i = 0; i < 400 && h.sim.state.calls("confirm") === confirms; i++) await new Promise((r) => setTimeout(r, 5));
    const blocked = await b.runOnce();
    assert.is(blocked.ran, false, "A holds the lease");
    assert.is(h.sim.state.calls("confirm"), confirms + 1, "only A asked the regulator");
    assert.is((await first).confirmed, 1);
    const after = await b.runOnce();
    assert.is(after.ran, true, "A released the lease");
    assert.is(after.confirmed, 0, "nothing left: settled once");
    await h.ledgerBalanced();
  } finally {
    await h.close();
  }
});

test.run();
