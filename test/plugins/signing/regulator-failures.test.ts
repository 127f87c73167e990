/**
 * The regulator failure codes over a gateway route (real HTTP, the regulator simulator):
 * GW_UPSTREAM_TIMEOUT, GW_UPSTREAM_RESPONSE_INVALID, GW_REGULATOR_UNAVAILABLE (no regulator for the
 * business's state), and the Pass-through sign the regulator certainly did not perform (its
 * deployment credentials refused): the debit is reversed and the error stored for the same key.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { plugins } from "../../../plugins/index.ts";
import type { SignRecord } from "../../../plugins/invoice/sign-attempts.ts";
import { DEMO_KEY, PASSTHROUGH, startTestGateway } from "../../support/gateway.ts";
import { SUB, expectProblem, invoice, irnOf, startSigningHarness } from "./signing-helpers.ts";

const h = await startSigningHarness();
test.after(() => h.close());
test.after.each(() => h.sim.faults.clear());
const currencies = () => h.call("GET", "/api/v1/invoice/resources/currencies");

test("the regulator does not answer in time → 504 GW_UPSTREAM_TIMEOUT", async () => {
  h.sim.faults.set("resources", { kind: "timeout", times: 1 });
  await expectProblem(await currencies(), 504, "GW_UPSTREAM_TIMEOUT");
});

test("an answer the gateway cannot use (a malformed validation answer; a route the regulator does not serve) → 502 GW_UPSTREAM_RESPONSE_INVALID", async () => {
  h.sim.faults.set("validate", { kind: "malformed", times: 5 });
  await expectProblem(await h.call("POST", "/api/v1/invoice/validate", { body: invoice("UR1"), sub: SUB }), 502, "GW_UPSTREAM_RESPONSE_INVALID");
  h.sim.faults.clear();
  h.sim.faults.set("resources", { kind: "no_route", times: 5 });
  await expectProblem(await currencies(), 502, "GW_UPSTREAM_RESPONSE_INVALID");
});

test("Pass-through sign the regulator certainly did not perform (deployment credentials refused) → its error; debit reversed; the error stored for the same key", async () => {
  const before = await h.ledgerBalanced();
  const calls = h.sim.state.calls("sign");
  h.sim.faults.set("sign", { kind: "reject_credentials", times: 1 });
  const first = await expectProblem(await h.sign(invoice("NS1"), { key: "ns1-key-0001" }), 502, "GW_UPSTREAM_UNAVAILABLE");
  assert.not.ok(h.sim.state.isSigned(irnOf("NS1")));
  const after = await h.ledgerBalanced();
  assert.is(after.debits, before.debits + 1, "debited once");
  assert.is(after.reversals, before.reversals + 1, "and reversed");
  assert.is(after.balanceKobo, before.balanceKobo);
  const rec = await h.store.collection<SignRecord>("signing_idempotency").findOne({ operationId: first.operationId ?? "" });
  const stored = rec ?? (await h.store.collection<SignRecord>("signing_idempotency").find({}, { limit: 1000 })).items.find((r) => r.attemptKey.includes(irnOf("NS1")));
  assert.is(stored?.money, "reversed");
  assert.is(stored?.answer?.kind === "error" ? stored.answer.code : null, "GW_UPSTREAM_UNAVAILABLE", "the error is stored");
  await expectProblem(await h.sign(invoice("NS1"), { key: "ns1-key-0001" }), 502, "GW_UPSTREAM_UNAVAILABLE");
  assert.is(h.sim.state.calls("sign"), calls + 1, "the replay does not call the regulator");
  assert.is((await h.sign(invoice("NS1"), { key: "ns1-key-0002", attempt: 2 })).status, 201, "the next attempt signs");
});

test("no regulator configured for the business's state → 503 GW_REGULATOR_UNAVAILABLE", async () => {
  const tg = await startTestGateway({ plugins, regulatorBaseUrls: { LIVE: h.sim.url } });
  try {
    const res = await tg.call("/api/v1/invoice/resources/currencies", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } });
    await expectProblem(res, 503, "GW_REGULATOR_UNAVAILABLE");
  } finally {
    await tg.close();
  }
});

test.run();
