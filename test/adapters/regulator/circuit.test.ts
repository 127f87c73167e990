/**
 * Regulator client and the §3.5 circuit: one policy per state in the injected registry, driven by a
 * controllable clock (the registry's defaults). Opens at ≥ 20 eligible calls with ≥ 50 % failures,
 * then refuses without reaching the simulator (its call counts prove it); one probe after 30 s.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createPolicyRegistry } from "../../../adapters/policies.ts";
import type { RegulatorSimulator } from "../../../adapters/regulator/simulator/server.ts";
import { DEMO, demoInvoice, startDemoSimulator } from "./simulator/simulator-helpers.ts";
import { assertGw, CTX, gwFailure, makeClient, manualClock, type ClientHarness } from "./regulator-helpers.ts";

const CURRENCIES = "/api/v1/invoice/resources/currencies";

const test = suite("regulator client: circuit");
let sim: RegulatorSimulator;
let h: ClientHarness;

test.before(async () => {
  sim = await startDemoSimulator();
});
test.after(async () => {
  await sim.close();
});
test.before.each(() => {
  sim.reset();
  h = makeClient({ TEST: sim.url, LIVE: sim.url });
});
test.after.each(async () => {
  await h.close();
});

const resources = () => h.client.relay("TEST", { method: "GET", path: CURRENCIES }, CTX);
const state = (dep = "regulator:TEST") => h.policies.get(dep)!.snapshot().state;

async function failTimes(n: number): Promise<void> {
  for (let i = 0; i < n; i++) assertGw(await gwFailure(resources()), "GW_UPSTREAM_UNAVAILABLE", 502, true);
}

test("policies 'regulator:TEST' and 'regulator:LIVE' are registered for the configured states only", () => {
  assert.equal(h.policies.names(), ["regulator:LIVE", "regulator:TEST"]);
  const only = makeClient({ LIVE: sim.url });
  assert.equal(only.policies.names(), ["regulator:LIVE"]);
  void only.close();
});

test("19 failing calls keep it closed; the 20th opens it; then calls are refused without reaching the simulator", async () => {
  sim.faults.set("resources", { kind: "status", status: 500 });
  await failTimes(19);
  assert.is(state(), "closed");
  await failTimes(1);
  assert.is(state(), "open");
  assert.is(sim.state.calls("resources"), 20);

  const e = await gwFailure(resources());
  assertGw(e, "GW_UPSTREAM_UNAVAILABLE", 502, true);
  assert.is(e.regulatorFailure, "circuit_open");
  assertGw(await gwFailure(h.client.authenticate("TEST", { email: DEMO.email, password: DEMO.password }, CTX)), "GW_REG_VERIFICATION_UNAVAILABLE", 503, true);
  assertGw(await gwFailure(h.client.getEntity("TEST", DEMO.entityId, CTX)), "GW_REG_VERIFICATION_UNAVAILABLE", 503, true);
  // A refused sign throws (certainly not signed) instead of returning "ambiguous".
  assertGw(await gwFailure(h.client.sign("TEST", demoInvoice("C1"), CTX)), "GW_UPSTREAM_UNAVAILABLE", 502, true);

  assert.is(sim.state.totalCalls(), 20);
  const snap = h.policies.get("regulator:TEST")!.snapshot();
  assert.is(snap.totalRefused, 4);
  assert.is(snap.totalCalls, 20);
  const refused = h.events("gateway_dependency_call").filter((r) => r.outcome === "refused");
  assert.is(refused.length, 4);
  assert.ok(refused.every((r) => r.circuitState === "open" && r.failureClass === "circuit_open" && r.upstreamStatus === null));
});

test("50 % failures over 20 calls open it; 45 % do not", async () => {
  for (let i = 0; i < 11; i++) await resources();
  sim.faults.set("resources", { kind: "status", status: 503 });
  await failTimes(9);
  assert.is(state(), "closed", "9 of 20");
  await failTimes(2);
  assert.is(state(), "open", "11 of 22");
});

test("timeouts, resets, malformed answers and rejected deployment credentials all count", async () => {
  const c = makeClient({ TEST: sim.url }, { timeoutMs: 100 });
  try {
    const kinds = [{ kind: "timeout" }, { kind: "reset" }, { kind: "malformed" }, { kind: "reject_credentials" }, { kind: "status", status: 502 }] as const;
    for (let i = 0; i < 20; i++) {
      sim.faults.set("resources", { ...kinds[i % kinds.length]!, times: 1 });
      await c.client.relay("TEST", { method: "GET", path: CURRENCIES }, CTX).catch(() => undefined);
    }
    assert.is(c.policies.get("regulator:TEST")!.snapshot().state, "open");
  } finally {
    await c.close();
  }
});

test("customer 4xx, business rejections and 429 never open it", async () => {
  for (let i = 0; i < 15; i++) assertGw(await gwFailure(h.client.relay("TEST", { method: "GET", path: `/api/v1/invoice/confirm/NOPE${i}-${DEMO.serviceId}-20240611` }, CTX)), "GW_INVOICE_NOT_FOUND", 404, false);
  for (let i = 0; i < 10; i++) assertGw(await gwFailure(h.client.authenticate("TEST", { email: DEMO.email, password: "wrong" }, CTX)), "GW_REG_LOGIN_INVALID", 422, false);
  sim.faults.set("resources", { kind: "rate_limit", times: 10 });
  for (let i = 0; i < 10; i++) assertGw(await gwFailure(resources()), "GW_RATE_LIMIT_EXCEEDED", 429, false);
  assert.is((await h.client.sign("TEST", demoInvoice("DUP1"), CTX)).kind, "signed");
  for (let i = 0; i < 10; i++) assert.is((await h.client.sign("TEST", demoInvoice("DUP1"), CTX)).kind, "rejected");
  const snap = h.policies.get("regulator:TEST")!.snapshot();
  assert.is(snap.state, "closed");
  assert.is(snap.windowFailures, 0);
  assert.is(snap.windowCalls, 1, "only the successful sign is an eligible call");
});

test("after 30 s one probe reaches the simulator: success closes, failure reopens", async () => {
  sim.faults.set("resources", { kind: "status", status: 500 });
  await failTimes(20);
  assert.is(state(), "open");
  h.clock.advance(29_999);
  await gwFailure(resources());
  assert.is(sim.state.calls("resources"), 20, "still refused before 30 s");

  h.clock.advance(1);
  assert.is(state(), "half_open");
  await failTimes(1); // the probe fails (fault still set) → open again
  assert.is(sim.state.calls("resources"), 21);
  assert.is(state(), "open");

  sim.faults.clear();
  h.clock.advance(30_000);
  const r = await resources();
  assert.is(r.status, 200);
  assert.is(state(), "closed");
  assert.is(sim.state.calls("resources"), 22);
});

test("per state: TEST open does not affect LIVE", async () => {
  sim.faults.set("resources", { kind: "status", status: 500 });
  await failTimes(20);
  sim.faults.clear();
  assert.is(state(), "open");
  const live = await h.client.relay("LIVE", { method: "GET", path: CURRENCIES }, CTX);
  assert.is(live.status, 200);
  assert.is(state("regulator:LIVE"), "closed");
});

test("two clients on one registry share the state's circuit", async () => {
  const clock = manualClock();
  const policies = createPolicyRegistry({ clock });
  const a = makeClient({ TEST: sim.url }, { policies });
  const b = makeClient({ TEST: sim.url }, { policies });
  try {
    sim.faults.set("resources", { kind: "status", status: 500 });
    for (let i = 0; i < 20; i++) await a.client.relay("TEST", { method: "GET", path: CURRENCIES }, CTX).catch(() => undefined);
    const e = await gwFailure(b.client.relay("TEST", { method: "GET", path: CURRENCIES }, CTX));
    assert.is(e.regulatorFailure, "circuit_open");
    assert.equal(policies.names(), ["regulator:TEST"]);
  } finally {
    await a.close();
    await b.close();
  }
});

test.run();
