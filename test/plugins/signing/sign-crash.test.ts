/**
 * Sign: a duplicate that outwaits the in-flight wait, a holder that died after dispatch (stale
 * record → frozen, never replayed), and no raw idempotency key or invoice data in logs or store.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { canonicalJson, deriveSigningSecret, keyedHash, type SignRecord } from "../../../plugins/signing/store.ts";
import { SUB, expectProblem, invoice, startSigningHarness } from "./signing-helpers.ts";

const h = await startSigningHarness({ signing: { inFlightWaitMs: 100, staleAfterMs: 60_000 } });
test.after(() => h.close());

test("a duplicate still waiting at the deadline → 409 GW_SIGN_ATTEMPT_ALREADY_PROCESSED; no second execution; later the same key gets 409 with the same operationId (processed), never a second 201", async () => {
  const calls = h.sim.state.calls("sign");
  h.sim.faults.set("sign", { kind: "latency", ms: 600, times: 1 });
  const first = h.sign(invoice("CR1"), { key: "cr1-secret-key-0001" });
  await new Promise((r) => setTimeout(r, 50));
  const dup = await expectProblem(await h.sign(invoice("CR1"), { key: "cr1-secret-key-0001" }), 409, "GW_SIGN_ATTEMPT_ALREADY_PROCESSED");
  assert.ok(dup.operationId);
  assert.is((await first).status, 201);
  const later = await expectProblem(await h.sign(invoice("CR1"), { key: "cr1-secret-key-0001" }), 409, "GW_SIGN_ATTEMPT_ALREADY_PROCESSED");
  assert.is(later.operationId, dup.operationId);
  assert.is(h.sim.state.calls("sign"), calls + 1);
  const logs = JSON.stringify(h.tg.logs);
  assert.not.ok(logs.includes("cr1-secret-key-0001"), "raw key never logged");
  assert.not.ok(logs.includes("12345678-0001"), "TIN never logged");
  const page = await h.store.collection<SignRecord>("signing_idempotency").find({}, { limit: 1000 });
  assert.not.ok(JSON.stringify(page.items).includes("cr1-secret-key-0001"), "raw key never stored");
});

test("a holder that died after dispatch (stale record in phase dispatching) → frozen: 502 GW_SIGN_OUTCOME_UNCONFIRMED, never replayed", async () => {
  const secret = deriveSigningSecret("test_api_secret");
  const key = "cr2-key-0001";
  const doc = invoice("CR2");
  const route = "POST /api/v1/invoice/sign";
  const id = `demo|${route}|${keyedHash(secret, `demo\u0000${route}\u0000${key}`)}`;
  await h.store.collection<SignRecord>("signing_idempotency").insert({
    _id: id,
    businessId: "demo",
    route,
    fingerprint: keyedHash(secret, `${canonicalJson(doc)}\u0000${SUB}\u00001`),
    attemptKey: `TEST|passthrough.demo.localhost|${SUB}|CR2-94ND90NR-20240611|1`,
    operationId: "op-crashed-0001",
    status: "in_progress",
    phase: "dispatching",
    owner: "dead-request",
    startedAtMs: Date.now() - 120_000,
    completedAtMs: null,
    answer: null,
    money: "debited",
    expiresAtMs: Date.now() + 60_000,
  });
  const calls = h.sim.state.calls("sign");
  const a = await expectProblem(await h.sign(doc, { key }), 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
  assert.is(a.operationId, "op-crashed-0001");
  const b = await expectProblem(await h.sign(doc, { key }), 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
  assert.is(b.operationId, "op-crashed-0001");
  assert.is(h.sim.state.calls("sign"), calls, "never replayed");
  const rec = await h.store.collection<SignRecord>("signing_idempotency").get(id);
  assert.is(rec?.status, "frozen");
});

test("the regulator never answers (timeout fault, deadline passes mid-call) → 502 frozen, debit held", async () => {
  const before = await h.ledgerBalanced();
  h.sim.faults.set("sign", { kind: "timeout", times: 1 });
  const pending = h.sign(invoice("CR3"), { key: "cr3-key-0001" });
  const body = await expectProblem(await pending, 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
  assert.ok(body.operationId);
  const after = await h.ledgerBalanced();
  assert.is(after.debits, before.debits + 1);
  assert.is(after.reversals, before.reversals);
});

test.run();
