/**
 * The alert engine's rules, driven by a manual clock (spec §6): 5 consecutive failures; ≥ 20 calls in
 * 5 minutes with a failure ratio above 20 %; a 15-minute cooldown per incident; one recovery
 * notification after 5 consecutive successes; immediate signals deduplicated by the same cooldown.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { engineHarness, fail, succeed } from "./alert-helpers.ts";

const tick = () => new Promise((r) => setImmediate(r));
const MINUTE = 60_000;

test("4 consecutive failures do not fire; the 5th does, once, with the allowlisted context", async () => {
  const h = await engineHarness();
  const rid = "0b7f4c1e-7a57-4c39-9a4f-2f1b8d3c6e01";
  fail(h.engine, 4, "regulator:LIVE", "sign", rid);
  await h.engine.flush();
  assert.is(h.alerts().length, 0, "4 failures are below the threshold");
  fail(h.engine, 1);
  await h.engine.flush();
  const [a] = h.alerts();
  assert.ok(a, "the 5th consecutive failure fires");
  assert.is(a!.signal, "dependency_sustained_failure");
  assert.is(a!.kind, "sustained_failure");
  assert.is(a!.dependency, "regulator:LIVE");
  assert.is(a!.operation, "sign");
  assert.is(a!.failureClass, "timeout");
  assert.is(a!.count, 5);
  assert.is(a!.ratio, 1);
  assert.equal(a!.requestIds, [rid]);
  assert.is(a!.environment, "test");
  assert.ok(a!.runbook.endsWith("#alert-dependency_sustained_failure"));
  await h.close();
});

test("a success in between resets the consecutive count: 4 failures, 1 success, 4 failures do not fire", async () => {
  const h = await engineHarness();
  fail(h.engine, 4);
  succeed(h.engine, 1);
  fail(h.engine, 4);
  await h.engine.flush();
  assert.is(h.alerts().length, 0);
  await h.close();
});

test("the ratio rule: 20 calls in 5 minutes with 5 failures (25 %) fire; 19 calls, or exactly 20 %, do not", async () => {
  // 19 calls, 5 failures spread so that no 5 are consecutive: below the 20-call minimum.
  const a = await engineHarness();
  for (let i = 0; i < 4; i++) {
    fail(a.engine, 1);
    succeed(a.engine, 3);
    a.clock.advance(MINUTE);
  }
  fail(a.engine, 1);
  succeed(a.engine, 2);
  await a.engine.flush();
  assert.is(a.alerts().length, 0, "19 calls: no alert");
  succeed(a.engine, 1); // 20 calls, 5 failures: exactly 25 %
  await a.engine.flush();
  assert.is(a.alerts().length, 1, "20 calls, 25 % failed: fires");
  assert.is(a.alerts()[0]!.ratio, 0.25);
  await a.close();

  // Exactly 20 % is not "above 20 %".
  const b = await engineHarness();
  for (let i = 0; i < 4; i++) {
    fail(b.engine, 1);
    succeed(b.engine, 4);
  }
  await b.engine.flush();
  assert.is(b.alerts().length, 0, "4 of 20 (20 %) does not fire");
  await b.close();
});

test("the window is 5 minutes: failures older than that no longer count toward the ratio", async () => {
  const h = await engineHarness();
  fail(h.engine, 1);
  succeed(h.engine, 1);
  fail(h.engine, 1);
  succeed(h.engine, 1);
  fail(h.engine, 1);
  succeed(h.engine, 1);
  fail(h.engine, 1);
  succeed(h.engine, 1); // 8 calls, 4 failures
  await h.engine.flush();
  h.clock.advance(6 * MINUTE); // those fall out of the window
  succeed(h.engine, 11);
  fail(h.engine, 1); // 12 calls in the window now: below 20, and old failures gone
  await h.engine.flush();
  succeed(h.engine, 7);
  fail(h.engine, 1); // 20 calls in the window, 2 failures: 10 %
  await h.engine.flush();
  assert.is(h.alerts().length, 0);
  await h.close();
});

test("the 15-minute cooldown deduplicates an incident; after it, a still-failing dependency notifies again", async () => {
  const h = await engineHarness();
  fail(h.engine, 5);
  await h.engine.flush();
  assert.is(h.alerts().length, 1);
  for (let i = 0; i < 14; i++) {
    h.clock.advance(MINUTE);
    fail(h.engine, 5);
    await h.engine.flush();
  }
  assert.is(h.alerts().length, 1, "14 minutes of failures: still one notification");
  const suppressed = (await h.engine.status()).suppressed;
  assert.ok(suppressed >= 14, `each flush with new failures was counted as suppressed (${suppressed})`);
  h.clock.advance(MINUTE + 1);
  fail(h.engine, 5);
  await h.engine.flush();
  assert.is(h.alerts().length, 2, "after 15 minutes the incident notifies again");
  await h.close();
});

test("5 consecutive successes send one recovery notification; 4 do not; more send nothing more", async () => {
  const h = await engineHarness();
  fail(h.engine, 5);
  await h.engine.flush();
  succeed(h.engine, 4);
  await h.engine.flush();
  assert.is(h.alerts().length, 1, "4 successes: not recovered");
  succeed(h.engine, 1);
  await h.engine.flush();
  const recovered = h.alerts().filter((a) => a.kind === "recovered");
  assert.is(recovered.length, 1);
  assert.is(recovered[0]!.signal, "dependency_recovered");
  assert.is(recovered[0]!.dependency, "regulator:LIVE");
  succeed(h.engine, 20);
  await h.engine.flush();
  h.clock.advance(MINUTE);
  await h.engine.flush();
  assert.is(h.alerts().filter((a) => a.kind === "recovered").length, 1, "one recovery notification only");
  assert.is(h.alerts().filter((a) => a.kind === "recovered").length + 1, h.alerts().length);
  await h.close();
});

test("recovery ends the incident: the next failures are a new incident, notified at once (no cooldown carried over)", async () => {
  const h = await engineHarness();
  fail(h.engine, 5);
  await h.engine.flush();
  succeed(h.engine, 5);
  await h.engine.flush();
  h.clock.advance(MINUTE);
  fail(h.engine, 5);
  await h.engine.flush();
  assert.equal(
    h.alerts().map((a) => a.kind),
    ["sustained_failure", "recovered", "sustained_failure"],
  );
  await h.close();
});

test("no recovery notification without an incident; keys are per dependency and operation", async () => {
  const h = await engineHarness();
  succeed(h.engine, 10);
  fail(h.engine, 4, "regulator:LIVE", "sign");
  fail(h.engine, 4, "regulator:LIVE", "transmit");
  fail(h.engine, 4, "documentStore", "invoices.insert");
  await h.engine.flush();
  assert.is(h.alerts().length, 0);
  await h.close();
});

test("immediate signals: sent at once; the same signal within 15 minutes is counted, not sent; after it, sent with the count", async () => {
  const h = await engineHarness();
  h.engine.raise({ signal: "capacity_exceeded", code: "GW_GATEWAY_CAPACITY_EXCEEDED" });
  await tick();
  assert.is(h.alerts().length, 1);
  assert.is(h.alerts()[0]!.kind, "immediate");
  assert.is(h.alerts()[0]!.code, "GW_GATEWAY_CAPACITY_EXCEEDED");
  for (let i = 0; i < 9; i++) h.engine.raise({ signal: "capacity_exceeded" });
  h.clock.advance(14 * MINUTE);
  h.engine.raise({ signal: "capacity_exceeded" });
  await tick();
  assert.is(h.alerts().length, 1, "deduplicated within the cooldown");
  h.clock.advance(MINUTE);
  h.engine.raise({ signal: "capacity_exceeded" });
  await tick();
  assert.is(h.alerts().length, 2);
  assert.is(h.alerts()[1]!.count, 11, "the occurrences since the last notification");
  await h.close();
});

test("immediate signals about different operations are each sent (each one's money is at risk)", async () => {
  const h = await engineHarness();
  const ops = ["1f0e4c1e-7a57-4c39-9a4f-2f1b8d3c6e01", "2f0e4c1e-7a57-4c39-9a4f-2f1b8d3c6e02"];
  for (const operationId of ops) h.engine.raise({ signal: "sign_outcome_unconfirmed", operationId, code: "GW_SIGN_OUTCOME_UNCONFIRMED" });
  h.engine.raise({ signal: "sign_outcome_unconfirmed", operationId: ops[0], code: "GW_SIGN_OUTCOME_UNCONFIRMED" });
  await tick();
  assert.equal(
    h.alerts().map((a) => a.operationId),
    ops,
  );
  assert.ok(h.logs.filter((l) => l.event === "gateway_alert").every((l) => l.level === "error"), "critical alerts are error records");
  await h.close();
});

test.run();
