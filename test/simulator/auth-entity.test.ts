import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { RegulatorSimulator } from "../../adapters/regulator/simulator/server.ts";
import { call, DEMO, startDemoSimulator, startTestSimulator } from "./simulator-helpers.ts";

const test = suite("simulator: credentials, authentication, entity, routing, call counts");
let sim: RegulatorSimulator;
let testSim: RegulatorSimulator;

test.before(async () => {
  sim = await startDemoSimulator();
  testSim = await startTestSimulator();
});
test.after(async () => {
  await sim.close();
  await testSim.close();
});
test.before.each(() => {
  sim.reset();
});

const login = (email: string, password: string) =>
  call(sim, "POST", "/api/v1/utilities/authenticate", { body: { email, password } });

function assertErrorEnvelope(r: { status: number; json: any }, status: number, id: string): void {
  assert.is(r.status, status, JSON.stringify(r.json));
  assert.is(r.json.code, status);
  assert.is(r.json.data, null);
  assert.type(r.json.message, "string");
  assert.is(r.json.error.id, id);
  assert.type(r.json.error.handler, "string");
  assert.ok(Array.isArray(r.json.error.details));
  assert.type(r.json.error.public_message, "string");
}

test("GET /api answers health without credentials (and with them)", async () => {
  const r = await call(sim, "GET", "/api", { noAuth: true });
  assert.is(r.status, 200);
  assert.equal(r.json, { code: 200, data: { status: "ok" } });
  assert.match(r.headers.get("content-type") ?? "", "application/json");
  assert.is((await call(sim, "GET", "/api")).status, 200);
  assert.is(sim.state.calls("health"), 2);
});

test("missing or wrong deployment credentials → 401 api_credentials_invalid on every route", async () => {
  const paths: Array<[string, string]> = [
    ["POST", "/api/v1/utilities/authenticate"],
    ["GET", `/api/v1/entity/${DEMO.entityId}`],
    ["POST", "/api/v1/invoice/irn/validate"],
    ["POST", "/api/v1/invoice/validate"],
    ["POST", "/api/v1/invoice/sign"],
    ["POST", "/api/v1/invoice/transmit/INV1-94ND90NR-20240611"],
    ["GET", "/api/v1/invoice/confirm/INV1-94ND90NR-20240611"],
    ["GET", "/api/v1/invoice/download/INV1-94ND90NR-20240611"],
    ["PATCH", "/api/v1/invoice/update/INV1-94ND90NR-20240611"],
    ["GET", "/api/v1/invoice/resources/currencies"],
  ];
  for (const [method, path] of paths) {
    const missing = await call(sim, method, path, { noAuth: true, body: method === "GET" ? undefined : {} });
    assertErrorEnvelope(missing, 401, "api_credentials_invalid");
    assert.is(missing.json.error.handler, "api_authentication");
  }
  const wrongKey = await call(sim, "GET", `/api/v1/entity/${DEMO.entityId}`, {
    noAuth: true,
    headers: { "x-api-key": "nope", "x-api-secret": "test_api_secret" },
  });
  assertErrorEnvelope(wrongKey, 401, "api_credentials_invalid");
  const wrongSecret = await call(sim, "GET", `/api/v1/entity/${DEMO.entityId}`, {
    noAuth: true,
    headers: { "x-api-key": "test_api_key", "x-api-secret": "nope" },
  });
  assertErrorEnvelope(wrongSecret, 401, "api_credentials_invalid");
  const onlyKey = await call(sim, "GET", `/api/v1/entity/${DEMO.entityId}`, { noAuth: true, headers: { "x-api-key": "test_api_key" } });
  assertErrorEnvelope(onlyKey, 401, "api_credentials_invalid");
  // Rejected calls still count as calls of their route.
  assert.is(sim.state.calls("entity"), 4);
});

test("demo logins: taxpayer, multi, inactive and notemplate succeed with their entity id", async () => {
  const cases: Array<[string, string, string]> = [
    ["taxpayer@demo.ng", "demo-password-1", DEMO.entityId],
    ["multi@demo.ng", "demo-password-2", "1c5f7a3b-6d2e-4f9c-8b4a-8e3d2f1a0b22"],
    ["inactive@demo.ng", "demo-password-3", "2d6a8b4c-7e3f-4a0d-9c5b-9f4e3a2b1c33"],
    ["notemplate@demo.ng", "demo-password-4", "3e7b9c5d-8f4a-4b1e-8d6c-0a5f4b3c2d44"],
  ];
  for (const [email, password, entityId] of cases) {
    const r = await login(email, password);
    assert.is(r.status, 200, email);
    assert.is(r.json.code, 200);
    assert.is(r.json.data.entity_id, entityId);
    assert.is(r.json.data.user.email, email);
  }
});

test("login email matches case-insensitively", async () => {
  const r = await login("TaxPayer@Demo.NG", "demo-password-1");
  assert.is(r.status, 200);
  assert.is(r.json.data.entity_id, DEMO.entityId);
});

test("unlinked@demo.ng → 403 app_not_linked (only with the right password)", async () => {
  assertErrorEnvelope(await login("unlinked@demo.ng", "demo-password-5"), 403, "app_not_linked");
  assertErrorEnvelope(await login("unlinked@demo.ng", "wrong"), 401, "invalid_credentials");
});

test("wrong password → 401 invalid_credentials; unknown user → 404 user_not_found", async () => {
  const wrong = await login("taxpayer@demo.ng", "demo-password-2");
  assertErrorEnvelope(wrong, 401, "invalid_credentials");
  assert.is(wrong.json.error.handler, "authenticate");
  assertErrorEnvelope(await login("nobody@demo.ng", "demo-password-1"), 404, "user_not_found");
});

test("malformed authenticate bodies → 400", async () => {
  const notJson = await call(sim, "POST", "/api/v1/utilities/authenticate", { rawBody: "{ email: " });
  assertErrorEnvelope(notJson, 400, "invalid_json");
  const empty = await call(sim, "POST", "/api/v1/utilities/authenticate", { rawBody: "" });
  assertErrorEnvelope(empty, 400, "invalid_json");
  const missing = await call(sim, "POST", "/api/v1/utilities/authenticate", { body: { email: "taxpayer@demo.ng" } });
  assertErrorEnvelope(missing, 400, "validation_failed");
  assert.equal(missing.json.error.details, [{ pointer: "/password", code: "REQUIRED", message: "password is required" }]);
  const wrongTypes = await call(sim, "POST", "/api/v1/utilities/authenticate", { body: { email: 1, password: [] } });
  assertErrorEnvelope(wrongTypes, 400, "validation_failed");
  assert.equal(
    wrongTypes.json.error.details.map((d: any) => [d.pointer, d.code]),
    [
      ["/email", "TYPE"],
      ["/password", "TYPE"],
    ],
  );
  const array = await call(sim, "POST", "/api/v1/utilities/authenticate", { body: [] });
  assertErrorEnvelope(array, 400, "validation_failed");
});

test("entity lookup shape (demo taxpayer)", async () => {
  const r = await call(sim, "GET", `/api/v1/entity/${DEMO.entityId}`);
  assert.is(r.status, 200);
  assert.is(r.json.code, 200);
  const e = r.json.data;
  assert.is(e.id, DEMO.entityId);
  assert.type(e.reference, "string");
  assert.is(e.is_active, true);
  assert.equal(e.businesses, [
    {
      id: DEMO.businessId,
      name: "Demo Trading Ltd",
      tin: "12345678-0001",
      irn_template: "{{invoice_id}}-94ND90NR-{{YYYYMMDD}}",
      service_id: "94ND90NR",
      is_active: true,
    },
  ]);
});

test("entity lookup: multi has two active businesses; inactive entity; business without template", async () => {
  const multi = await call(sim, "GET", "/api/v1/entity/1c5f7a3b-6d2e-4f9c-8b4a-8e3d2f1a0b22");
  assert.equal(
    multi.json.data.businesses.map((b: any) => [b.tin, b.service_id, b.is_active]),
    [
      ["22222222-0001", "5A7B9C1D", true],
      ["22222222-0002", "6B8C0D2E", true],
    ],
  );
  const inactive = await call(sim, "GET", "/api/v1/entity/2d6a8b4c-7e3f-4a0d-9c5b-9f4e3a2b1c33");
  assert.is(inactive.json.data.is_active, false);
  const noTemplate = await call(sim, "GET", "/api/v1/entity/3e7b9c5d-8f4a-4b1e-8d6c-0a5f4b3c2d44");
  assert.is(noTemplate.json.data.businesses[0].irn_template, null);
  assert.is(noTemplate.json.data.businesses[0].is_active, true);
});

test("entity lookup: unknown entity → 404 entity_not_found", async () => {
  assertErrorEnvelope(await call(sim, "GET", "/api/v1/entity/00000000-0000-4000-8000-000000000000"), 404, "entity_not_found");
});

test("test fixtures: absent template key, overrides (malformed metadata), long metadata, missing entity", async () => {
  const missing = await call(testSim, "GET", "/api/v1/entity/e1000000-0000-4000-8000-000000000006");
  assert.not.ok("irn_template" in missing.json.data.businesses[0]);
  const bad = await call(testSim, "GET", "/api/v1/entity/e1000000-0000-4000-8000-000000000009");
  assert.is(bad.json.data.businesses[0].service_id, null);
  assert.is(bad.json.data.businesses[0].tin, 90000009);
  assert.is(bad.json.data.businesses[0].is_active, "yes");
  const long = await call(testSim, "GET", "/api/v1/entity/e1000000-0000-4000-8000-000000000008");
  assert.ok(long.json.data.reference.length > 255);
  assert.ok(long.json.data.businesses[0].id.length > 255);
  const ghost = await call(testSim, "POST", "/api/v1/utilities/authenticate", {
    body: { email: "ghost@test.ng", password: "test-password-ghost" },
  });
  assert.is(ghost.status, 200);
  const ghostEntity = await call(testSim, "GET", `/api/v1/entity/${ghost.json.data.entity_id}`);
  assert.is(ghostEntity.status, 404);
});

test("unknown path → 404 route_not_found; wrong method → 405 with Allow; neither is counted", async () => {
  assertErrorEnvelope(await call(sim, "GET", "/api/v1/nothing/here"), 404, "route_not_found");
  assertErrorEnvelope(await call(sim, "GET", "/elsewhere", { noAuth: true }), 404, "route_not_found");
  assertErrorEnvelope(await call(sim, "GET", "/api/v1/invoice/irn/other"), 404, "route_not_found");
  const wrongMethod = await call(sim, "GET", "/api/v1/invoice/sign");
  assertErrorEnvelope(wrongMethod, 405, "method_not_allowed");
  assert.is(wrongMethod.headers.get("allow"), "POST");
  assert.is(sim.state.totalCalls(), 0);
});

test("call counting per route, resetCalls and reset", async () => {
  await login("taxpayer@demo.ng", "demo-password-1");
  await login("taxpayer@demo.ng", "wrong");
  await call(sim, "GET", `/api/v1/entity/${DEMO.entityId}`);
  await call(sim, "GET", "/api/v1/invoice/resources/currencies");
  const counts = sim.state.callCounts();
  assert.is(counts.authenticate, 2);
  assert.is(counts.entity, 1);
  assert.is(counts.resources, 1);
  assert.is(counts.sign, 0);
  assert.is(sim.state.totalCalls(), 4);
  sim.resetCalls();
  assert.is(sim.state.totalCalls(), 0);
  await call(sim, "GET", "/api");
  sim.reset();
  assert.is(sim.state.calls("health"), 0);
});

test.run();
