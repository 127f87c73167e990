/**
 * Regulator client: taxpayer authentication and entity loading, against the real simulator over HTTP
 * (demo and test fixtures), with the §7.6 mapping of every outcome.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { RegulatorSimulator } from "../../../adapters/regulator/simulator/server.ts";
import { ENTITY_LIMITS } from "../../../adapters/regulator/port.ts";
import { DEMO, startDemoSimulator, startTestSimulator } from "./simulator/simulator-helpers.ts";
import { assertGw, CTX, gwFailure, makeClient, type ClientHarness } from "./regulator-helpers.ts";

// ---------------------------------------------------------------------------
// authenticate (demo fixtures)
// ---------------------------------------------------------------------------

const auth = suite("regulator client: authenticate");
let sim: RegulatorSimulator;
let h: ClientHarness;

auth.before(async () => {
  sim = await startDemoSimulator();
  h = makeClient({ TEST: sim.url }, { timeoutMs: 1_000 });
});
auth.after(async () => {
  await h.close();
  await sim.close();
});
/** A fresh client (and circuit) per test: several tests fail on purpose. */
auth.before.each(async () => {
  sim.reset();
  await h.close();
  h = makeClient({ TEST: sim.url }, { timeoutMs: 1_000 });
});

const login = (email: string, password: string) => h.client.authenticate("TEST", { email, password }, CTX);

for (const [email, password, entityId] of [
  ["taxpayer@demo.ng", "demo-password-1", "0b4e6f2a-5c1d-4e8b-9a3f-7d2c1e0f9a11"],
  ["multi@demo.ng", "demo-password-2", "1c5f7a3b-6d2e-4f9c-8b4a-8e3d2f1a0b22"],
  ["inactive@demo.ng", "demo-password-3", "2d6a8b4c-7e3f-4a0d-9c5b-9f4e3a2b1c33"],
  ["notemplate@demo.ng", "demo-password-4", "3e7b9c5d-8f4a-4b1e-8d6c-0a5f4b3c2d44"],
] as const) {
  auth(`${email}: logs in → its entity id`, async () => {
    const r = await login(email, password);
    assert.equal(r, { entityId });
  });
}

auth("unlinked@demo.ng (right password) → GW_REG_APPLICATION_NOT_LINKED 403, not a dependency failure", async () => {
  assertGw(await gwFailure(login("unlinked@demo.ng", "demo-password-5")), "GW_REG_APPLICATION_NOT_LINKED", 403, false);
});

auth("wrong password → GW_REG_LOGIN_INVALID 422", async () => {
  assertGw(await gwFailure(login(DEMO.email, "not-the-password")), "GW_REG_LOGIN_INVALID", 422, false);
});

auth("unknown email → GW_REG_CREDENTIALS_REJECTED 400", async () => {
  assertGw(await gwFailure(login("nobody@demo.ng", "whatever-1")), "GW_REG_CREDENTIALS_REJECTED", 400, false);
});

auth("empty password or email → GW_REG_CREDENTIALS_REQUIRED without calling the regulator", async () => {
  const a = await h.client.authenticate("TEST", { email: DEMO.email, password: "" }, CTX).catch((e) => e);
  assert.is(a.code, "GW_REG_CREDENTIALS_REQUIRED");
  const b = await h.client.authenticate("TEST", { email: " ", password: "x" }, CTX).catch((e) => e);
  assert.is(b.code, "GW_REG_CREDENTIALS_REQUIRED");
  assert.is(sim.state.calls("authenticate"), 0);
});

auth("deployment credentials rejected (400 \"unable to validate api key\") → GW_REG_VERIFICATION_UNAVAILABLE 503 (never a customer error) + alert event", async () => {
  sim.faults.set("authenticate", { kind: "reject_credentials", times: 1 });
  const raisedBefore = h.raised.length;
  const e = await gwFailure(login(DEMO.email, DEMO.password));
  assertGw(e, "GW_REG_VERIFICATION_UNAVAILABLE", 503, true);
  assert.is(e.failureClass, "credentials_rejected");
  const alerts = h.events("regulator_credentials_rejected");
  assert.is(alerts.length, 1);
  assert.is(alerts[0]!.level, "error");
  assert.is(alerts[0]!.dependency, "regulator:TEST");
  assert.is(alerts[0]!.requestId, CTX.requestId);
  assert.is(alerts[0]!.alert, "immediate");
  assert.is(alerts[0]!.upstreamStatus, 400);
  assert.equal(
    h.raised.slice(raisedBefore).map((r) => [r.signal, r.dependency, r.failureClass]),
    [["regulator_credentials_rejected", "regulator:TEST", "credentials_rejected"]],
    "the immediate signal reached the alert channel",
  );
});

auth("a client with the wrong deployment secret → the same dependency failure", async () => {
  const bad = makeClient({ TEST: sim.url }, { apiSecret: "wrong-secret" });
  try {
    const e = await gwFailure(bad.client.authenticate("TEST", { email: DEMO.email, password: DEMO.password }, CTX));
    assertGw(e, "GW_REG_VERIFICATION_UNAVAILABLE", 503, true);
    assert.is(bad.events("regulator_credentials_rejected").length, 1);
  } finally {
    await bad.close();
  }
});

for (const [name, fault] of [
  ["HTTP 500", { kind: "status", status: 500 }],
  ["HTTP 503", { kind: "status", status: 503 }],
  ["connection reset", { kind: "reset" }],
  ["timeout", { kind: "timeout" }],
] as const) {
  auth(`${name} → GW_REG_AUTH_UNAVAILABLE 502, a dependency failure`, async () => {
    sim.faults.set("authenticate", { ...fault, times: 1 });
    const e = await gwFailure(login(DEMO.email, DEMO.password));
    assertGw(e, "GW_REG_AUTH_UNAVAILABLE", 502, true);
  });
}

for (const [name, fault] of [
  ["malformed body", { kind: "malformed" }],
  ["empty body", { kind: "empty" }],
  ["renamed envelope", { kind: "renamed" }],
  ["no entity_id", { kind: "custom", status: 200, body: { code: 200, data: { user: { email: "x" } } } }],
  ["entity_id not a string", { kind: "custom", status: 200, body: { code: 200, data: { entity_id: 42 } } }],
  ["a 302 (never followed)", { kind: "custom", status: 302, headers: { location: "http://127.0.0.1:1/" } }],
  ["a 401 that is neither login nor deployment", { kind: "custom", status: 401, body: "<html>nope</html>" }],
] as const) {
  auth(`${name} → GW_REG_AUTH_RESPONSE_INVALID 502`, async () => {
    sim.faults.set("authenticate", { ...fault, times: 1 });
    const e = await gwFailure(login(DEMO.email, DEMO.password));
    assertGw(e, "GW_REG_AUTH_RESPONSE_INVALID", 502, true);
  });
}

auth("429 → GW_RATE_LIMIT_EXCEEDED with the regulator's Retry-After", async () => {
  sim.faults.set("authenticate", { kind: "rate_limit", retryAfter: 9, times: 1 });
  const e = await gwFailure(login(DEMO.email, DEMO.password));
  assertGw(e, "GW_RATE_LIMIT_EXCEEDED", 429, false);
  assert.is(e.info.retryAfterSeconds, 9);
});

auth("a state without a base URL → GW_REGULATOR_UNAVAILABLE 503, nothing called", async () => {
  const e = await gwFailure(h.client.authenticate("LIVE", { email: DEMO.email, password: DEMO.password }, CTX));
  assertGw(e, "GW_REGULATOR_UNAVAILABLE", 503, false);
  assert.is(sim.state.totalCalls(), 0);
});

auth("no error detail carries the password, the secret or the upstream message", async () => {
  const secretPassword = "Sup3r-Secret-Passw0rd";
  const errors = [await gwFailure(login(DEMO.email, secretPassword))];
  sim.faults.set("authenticate", { kind: "status", status: 500, message: "upstream-internal-message", times: 1 });
  errors.push(await gwFailure(login(DEMO.email, secretPassword)));
  for (const e of errors) {
    const text = JSON.stringify({ message: e.message, info: e.info });
    assert.not.ok(text.includes(secretPassword), text);
    assert.not.ok(text.includes("test_api_secret"), text);
    assert.not.ok(text.includes("upstream-internal-message"), text);
    assert.not.ok(text.includes("invalid email or password"), text);
  }
});

// ---------------------------------------------------------------------------
// getEntity
// ---------------------------------------------------------------------------

const entity = suite("regulator client: getEntity");
let demoSim: RegulatorSimulator;
let testSim: RegulatorSimulator;
let demo: ClientHarness;
let tst: ClientHarness;

entity.before(async () => {
  demoSim = await startDemoSimulator();
  testSim = await startTestSimulator();
  demo = makeClient({ TEST: demoSim.url, LIVE: demoSim.url }, { timeoutMs: 1_000 });
  tst = makeClient({ TEST: testSim.url });
});
entity.after(async () => {
  await demo.close();
  await tst.close();
  await demoSim.close();
  await testSim.close();
});
entity.before.each(async () => {
  demoSim.reset();
  testSim.reset();
  await demo.close();
  demo = makeClient({ TEST: demoSim.url, LIVE: demoSim.url }, { timeoutMs: 1_000 });
});

entity("demo taxpayer: login then entity → one active business, only the needed fields", async () => {
  const { entityId } = await demo.client.authenticate("TEST", { email: DEMO.email, password: DEMO.password }, CTX);
  const e = await demo.client.getEntity("TEST", entityId, CTX);
  assert.equal(e, {
    id: DEMO.entityId,
    reference: "ENT-000001",
    active: true,
    businesses: [
      {
        id: DEMO.businessId,
        name: "Demo Trading Ltd",
        tin: DEMO.tin,
        irnTemplate: "{{invoice_id}}-94ND90NR-{{YYYYMMDD}}",
        serviceId: DEMO.serviceId,
        active: true,
      },
    ],
  });
});

entity("LIVE uses its own base URL and policy", async () => {
  const e = await demo.client.getEntity("LIVE", DEMO.entityId, CTX);
  assert.is(e.id, DEMO.entityId);
  assert.equal(demo.policies.names(), ["regulator:LIVE", "regulator:TEST"]);
});

entity("multi-business entity (demo): both businesses with their TINs and templates", async () => {
  const e = await demo.client.getEntity("TEST", "1c5f7a3b-6d2e-4f9c-8b4a-8e3d2f1a0b22", CTX);
  assert.is(e.businesses.length, 2);
  assert.equal(
    e.businesses.map((b) => [b.id, b.tin, b.serviceId, b.irnTemplate, b.active]),
    [
      ["8a4b0d3f-2c5e-4f7a-9b1c-3d4e5f6a7b02", "22222222-0001", "5A7B9C1D", "{{invoice_id}}-5A7B9C1D-{{YYYYMMDD}}", true],
      ["9b5c1e4a-3d6f-4a8b-8c2d-4e5f6a7b8c03", "22222222-0002", "6B8C0D2E", "{{invoice_id}}-6B8C0D2E-{{YYYYMMDD}}", true],
    ],
  );
});

entity("demo notemplate (irn_template null) → irnTemplate null", async () => {
  const e = await demo.client.getEntity("TEST", "3e7b9c5d-8f4a-4b1e-8d6c-0a5f4b3c2d44", CTX);
  assert.is(e.businesses[0]!.irnTemplate, null);
});

entity("demo inactive entity → active false (the plugin decides GW_REG_ENTITY_INACTIVE)", async () => {
  const e = await demo.client.getEntity("TEST", "2d6a8b4c-7e3f-4a0d-9c5b-9f4e3a2b1c33", CTX);
  assert.is(e.active, false);
});

entity("test fixtures: three businesses, one inactive", async () => {
  const e = await tst.client.getEntity("TEST", "e1000000-0000-4000-8000-000000000002", CTX);
  assert.equal(
    e.businesses.map((b) => [b.tin, b.active]),
    [
      ["20000002-0001", true],
      ["20000002-0002", true],
      ["20000002-0003", false],
    ],
  );
});

entity("test fixtures: irn_template key absent → null; irn_template null → null", async () => {
  const missing = await tst.client.getEntity("TEST", "e1000000-0000-4000-8000-000000000006", CTX);
  assert.is(missing.businesses[0]!.irnTemplate, null);
  const nul = await tst.client.getEntity("TEST", "e1000000-0000-4000-8000-000000000007", CTX);
  assert.is(nul.businesses[0]!.irnTemplate, null);
});

entity("long metadata (reference 600, name 1024, id 299 chars) → GW_REG_ENTITY_METADATA_UNSUPPORTED, neutral", async () => {
  const e = await gwFailure(tst.client.getEntity("TEST", "e1000000-0000-4000-8000-000000000008", CTX));
  assertGw(e, "GW_REG_ENTITY_METADATA_UNSUPPORTED", 502, false);
});

entity("malformed business fields (tin a number, is_active 'yes') → GW_REG_BUSINESS_METADATA_INVALID, neutral", async () => {
  const e = await gwFailure(tst.client.getEntity("TEST", "e1000000-0000-4000-8000-000000000009", CTX));
  assertGw(e, "GW_REG_BUSINESS_METADATA_INVALID", 502, false);
});

entity("the real template form: the service ID is derived from `{{invoice_id(e.g:…)}}-EXMP0001-{{YYYYMMDD(e.g:…)}}`", async () => {
  const { entityId } = await tst.client.authenticate("TEST", { email: "example-template@test.ng", password: "test-password-example" }, CTX);
  const e = await tst.client.getEntity("TEST", entityId, CTX);
  assert.equal(e.businesses[0], {
    id: "b1000000-0000-4000-8000-000000001001",
    name: "Example Template Ltd",
    tin: "10000010-0001",
    irnTemplate: "{{invoice_id(e.g:INV00XXX)}}-EXMP0001-{{YYYYMMDD(e.g:20250629)}}",
    serviceId: "EXMP0001",
    active: true,
  });
});

entity("a template without a service ID in the supported place → GW_REG_BUSINESS_METADATA_INVALID, neutral", async () => {
  const e = await gwFailure(tst.client.getEntity("TEST", "e1000000-0000-4000-8000-000000000012", CTX));
  assertGw(e, "GW_REG_BUSINESS_METADATA_INVALID", 502, false);
});

entity("no `name` on a business (the real answer may omit it) → name \"\"", async () => {
  const b = { id: "b1", tin: "T", irn_template: "{{invoice_id}}-ABCD1234-{{YYYYMMDD}}", is_active: true };
  demoSim.faults.set("entity", {
    kind: "custom",
    status: 200,
    body: { code: 200, data: { id: DEMO.entityId, reference: "R", is_active: true, businesses: [b] } },
    times: 1,
  });
  const e = await demo.client.getEntity("TEST", DEMO.entityId, CTX);
  assert.equal(e.businesses[0], { id: "b1", name: "", tin: "T", irnTemplate: b.irn_template, serviceId: "ABCD1234", active: true });
});

entity("the real 400 for an entity id it cannot read (\"invalid UUID length: 13\") → GW_REG_ENTITY_NOT_FOUND, neutral", async () => {
  const e = await gwFailure(demo.client.getEntity("TEST", "31569955-0001", CTX));
  assertGw(e, "GW_REG_ENTITY_NOT_FOUND", 404, false);
});

entity("login succeeds but the entity does not exist (ghost) → GW_REG_ENTITY_NOT_FOUND 404", async () => {
  const { entityId } = await tst.client.authenticate("TEST", { email: "ghost@test.ng", password: "test-password-ghost" }, CTX);
  const e = await gwFailure(tst.client.getEntity("TEST", entityId, CTX));
  assertGw(e, "GW_REG_ENTITY_NOT_FOUND", 404, false);
});

entity("more than 100 businesses → GW_REG_ENTITY_METADATA_UNSUPPORTED", async () => {
  const businesses = Array.from({ length: ENTITY_LIMITS.businesses + 1 }, (_, i) => ({
    id: `b-${i}`,
    name: "n",
    tin: `T-${i}`,
    irn_template: null,
    is_active: true,
  }));
  demoSim.faults.set("entity", {
    kind: "custom",
    status: 200,
    body: { code: 200, data: { id: DEMO.entityId, reference: "R", is_active: true, businesses } },
    times: 1,
  });
  assertGw(await gwFailure(demo.client.getEntity("TEST", DEMO.entityId, CTX)), "GW_REG_ENTITY_METADATA_UNSUPPORTED", 502, false);
});

entity("an answer for another entity id → GW_REG_BUSINESS_METADATA_INVALID; duplicate business ids → the repeated one marked invalid", async () => {
  const b = { id: "b1", name: "n", tin: "T", is_active: true };
  demoSim.faults.set("entity", {
    kind: "custom",
    status: 200,
    body: { code: 200, data: { id: "someone-else", reference: "R", is_active: true, businesses: [b] } },
    times: 1,
  });
  assertGw(await gwFailure(demo.client.getEntity("TEST", DEMO.entityId, CTX)), "GW_REG_BUSINESS_METADATA_INVALID", 502, false);
  demoSim.faults.set("entity", {
    kind: "custom",
    status: 200,
    body: { code: 200, data: { id: DEMO.entityId, reference: "R", is_active: true, businesses: [b, b] } },
    times: 1,
  });
  // The repeated business is the malformed one; the first stays selectable (only the selected business must be sound).
  const e = await demo.client.getEntity("TEST", DEMO.entityId, CTX);
  assert.equal(e.businesses.map((x) => x.metadataProblem ?? null), [null, "invalid"]);
});

entity("a malformed sibling is kept with its own problem; the entity answers (only the selected business must be sound)", async () => {
  const { entityId } = await tst.client.authenticate("TEST", { email: "sibling-malformed@test.ng", password: "test-password-sibling" }, CTX);
  const e = await tst.client.getEntity("TEST", entityId, CTX);
  assert.equal(e.businesses.map((x) => [x.id, x.metadataProblem ?? null]), [
    ["b1000000-0000-4000-8000-000000001301", null],
    ["b1000000-0000-4000-8000-000000001302", "invalid"],
  ]);
});

for (const [name, fault] of [
  ["malformed body", { kind: "malformed" }],
  ["empty body", { kind: "empty" }],
  ["renamed envelope", { kind: "renamed" }],
] as const) {
  entity(`${name} → GW_REG_BUSINESS_METADATA_INVALID, counted as an invalid contract`, async () => {
    demoSim.faults.set("entity", { ...fault, times: 1 });
    const e = await gwFailure(demo.client.getEntity("TEST", DEMO.entityId, CTX));
    assertGw(e, "GW_REG_BUSINESS_METADATA_INVALID", 502, true);
    assert.is(e.failureClass, "invalid_response");
  });
}

entity("5xx / timeout on the entity read → GW_REG_AUTH_UNAVAILABLE (verification did not complete)", async () => {
  demoSim.faults.set("entity", { kind: "status", status: 502, times: 1 });
  assertGw(await gwFailure(demo.client.getEntity("TEST", DEMO.entityId, CTX)), "GW_REG_AUTH_UNAVAILABLE", 502, true);
  demoSim.faults.set("entity", { kind: "timeout", times: 1 });
  const e = await gwFailure(demo.client.getEntity("TEST", DEMO.entityId, CTX));
  assertGw(e, "GW_REG_AUTH_UNAVAILABLE", 502, true);
  assert.is(e.failureClass, "timeout");
});

entity("deployment credentials rejected on the entity read → GW_REG_VERIFICATION_UNAVAILABLE", async () => {
  demoSim.faults.set("entity", { kind: "reject_credentials", times: 1 });
  assertGw(await gwFailure(demo.client.getEntity("TEST", DEMO.entityId, CTX)), "GW_REG_VERIFICATION_UNAVAILABLE", 503, true);
});

entity("an entity id with reserved characters is sent percent-encoded", async () => {
  const e = await gwFailure(demo.client.getEntity("TEST", "../../invoice/resources/currencies", CTX));
  assertGw(e, "GW_REG_ENTITY_NOT_FOUND", 404, false);
  assert.is(demoSim.state.calls("entity"), 1);
  assert.is(demoSim.state.calls("resources"), 0);
});

auth.run();
entity.run();
