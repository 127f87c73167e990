/**
 * Simulator: deployment credentials, taxpayer login, verify-TIN, the entity in the real GetEntity
 * shape, the router, health and call counts — each in the real API's answer shape
 * (docs/regulator-simulator.md; sources: mukhtar-github/taxpoynt-platform docs/).
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { RegulatorSimulator } from "../../../../adapters/regulator/simulator/server.ts";
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const VALIDATION_FAILED = "validation failed: we are unable to process your request. also confirm this is not a duplicate request";
const NO_ROUTE = { code: 404, data: null, message: "no route found for this path. kindly check your request and try again" };

const login = (email: string, password: string) => call(sim, "POST", "/api/v1/utilities/authenticate", { body: { email, password } });

/** The real error envelope: code = HTTP status, data null, a per-request UUID id, details a string or absent. */
function assertErrorEnvelope(r: { status: number; json: any }, status: number, publicMessage: string, handler?: string): void {
  assert.is(r.status, status, JSON.stringify(r.json));
  assert.equal(Object.keys(r.json), ["code", "data", "message", "error"]);
  assert.is(r.json.code, status);
  assert.is(r.json.data, null);
  assert.is(r.json.message, "error has occurred");
  assert.match(r.json.error.id, UUID);
  if (handler !== undefined) assert.is(r.json.error.handler, handler);
  assert.ok(r.json.error.details === undefined || typeof r.json.error.details === "string");
  assert.is(r.json.error.public_message, publicMessage);
}

test("GET /api answers the recorded health body {\"healthy\":true} without credentials", async () => {
  const r = await call(sim, "GET", "/api", { noAuth: true });
  assert.is(r.status, 200);
  assert.is(r.text, '{"healthy":true}');
  assert.is(r.headers.get("content-length"), "16");
  assert.is(r.headers.get("cache-control"), "private");
  assert.is(r.headers.get("content-type"), "application/json; charset=utf-8");
  assert.is((await call(sim, "GET", "/api")).status, 200);
  assert.is(sim.state.calls("health"), 2);
});

test("missing or wrong deployment credentials → the recorded 400 \"unable to validate api key\" on every route but health and resources", async () => {
  const irn = "INV1-94ND90NR-20240611";
  const paths: Array<[string, string]> = [
    ["POST", "/api/v1/utilities/authenticate"],
    ["POST", "/api/v1/utilities/verify-tin/"],
    ["GET", "/api/v1/entity?size=20&page=1&sort_by=created_at&sort_direction_desc=true"],
    ["GET", `/api/v1/entity/${DEMO.entityId}`],
    ["POST", "/api/v1/invoice/irn/validate"],
    ["POST", "/api/v1/invoice/validate"],
    ["POST", "/api/v1/invoice/sign"],
    ["POST", "/api/v1/invoice/party"],
    ["GET", `/api/v1/invoice/party/${DEMO.businessId}`],
    ["GET", `/api/v1/invoice/${DEMO.businessId}`],
    ["POST", `/api/v1/invoice/transmit/${irn}`],
    ["PATCH", `/api/v1/invoice/transmit/${irn}`],
    ["GET", `/api/v1/invoice/transmit/lookup/${irn}`],
    ["GET", `/api/v1/invoice/transmit/lookup/tin/${DEMO.tin}`],
    ["GET", "/api/v1/invoice/transmit/self-health-check"],
    ["GET", "/api/v1/invoice/transmit/pull?confirmed=true"],
    ["GET", `/api/v1/invoice/confirm/${irn}`],
    ["GET", `/api/v1/invoice/download/${irn}`],
    ["PATCH", `/api/v1/invoice/update/${irn}`],
  ];
  const ids = new Set<string>();
  for (const [method, path] of paths) {
    const missing = await call(sim, method, path, { noAuth: true, body: method === "GET" ? undefined : {} });
    assertErrorEnvelope(missing, 400, "unable to validate api key", "handler");
    assert.not.ok("details" in missing.json.error, path);
    // The recorded answers are 175 bytes: this envelope, byte for byte, with another UUID.
    assert.is(missing.headers.get("content-length"), "175", path);
    ids.add(missing.json.error.id);
  }
  assert.is(ids.size, paths.length, "error.id is a fresh UUID per request");
  const wrong: Array<Record<string, string>> = [{ "x-api-key": "nope", "x-api-secret": "test_api_secret" }, { "x-api-key": "test_api_key", "x-api-secret": "nope" }, { "x-api-key": "test_api_key" }];
  for (const headers of wrong) {
    assertErrorEnvelope(await call(sim, "GET", `/api/v1/entity/${DEMO.entityId}`, { noAuth: true, headers }), 400, "unable to validate api key");
  }
  // Rejected calls still count as calls of their route.
  assert.is(sim.state.calls("entity"), 4);
});

test("resource lists need no credentials (the documented curls send none)", async () => {
  const r = await call(sim, "GET", "/api/v1/invoice/resources/currencies", { noAuth: true });
  assert.is(r.status, 200);
  assert.is(r.json.code, 200);
});

test("demo logins answer the documented 200 sample's shape with their entity id", async () => {
  const cases: Array<[string, string, string]> = [
    ["taxpayer@demo.ng", "demo-password-1", DEMO.entityId],
    ["multi@demo.ng", "demo-password-2", "1c5f7a3b-6d2e-4f9c-8b4a-8e3d2f1a0b22"],
    ["inactive@demo.ng", "demo-password-3", "2d6a8b4c-7e3f-4a0d-9c5b-9f4e3a2b1c33"],
    ["notemplate@demo.ng", "demo-password-4", "3e7b9c5d-8f4a-4b1e-8d6c-0a5f4b3c2d44"],
    ["example-template@demo.ng", "demo-password-6", "5a9d1e7f-0b6c-4d3a-8f8e-2c7b6d5e4f66"],
  ];
  for (const [email, password, entityId] of cases) {
    const r = await login(email, password);
    assert.is(r.status, 200, email);
    assert.is(r.json.code, 200);
    assert.equal(Object.keys(r.json.data).sort(), ["entity_id", "id", "message", "received_at", "status"]);
    assert.is(r.json.data.entity_id, entityId);
    assert.is(r.json.data.message, "User logged in");
    assert.is(r.json.data.status, "200 OK");
  }
});

test("login email matches case-insensitively", async () => {
  const r = await login("TaxPayer@Demo.NG", "demo-password-1");
  assert.is(r.status, 200);
  assert.is(r.json.data.entity_id, DEMO.entityId);
});

test("taxpayer login refusals: 401 wrong password, 404 unknown user, 403 application not linked (only with the right password)", async () => {
  assertErrorEnvelope(await login("taxpayer@demo.ng", "demo-password-2"), 401, "invalid email or password", "utility_actions");
  assertErrorEnvelope(await login("nobody@demo.ng", "demo-password-1"), 404, "user not found");
  assertErrorEnvelope(await login("unlinked@demo.ng", "demo-password-5"), 403, "the taxpayer has not linked this application as an access point provider");
  assertErrorEnvelope(await login("unlinked@demo.ng", "wrong"), 401, "invalid email or password");
});

test("malformed authenticate bodies → 400 validation failed with a free-text details string", async () => {
  for (const opts of [{ rawBody: "{ email: " }, { rawBody: "" }, { body: { email: "taxpayer@demo.ng" } }, { body: { email: 1, password: [] } }, { body: [] }]) {
    const r = await call(sim, "POST", "/api/v1/utilities/authenticate", opts);
    assertErrorEnvelope(r, 400, VALIDATION_FAILED);
    assert.type(r.json.error.details, "string");
  }
});

test("verify-TIN (documented with a trailing slash): the documented sample's fields for a known TIN, 404 otherwise", async () => {
  for (const path of ["/api/v1/utilities/verify-tin/", "/api/v1/utilities/verify-tin"]) {
    const r = await call(sim, "POST", path, { body: { tin: DEMO.tin } });
    assert.is(r.status, 200);
    assert.equal(Object.keys(r.json.data).sort(), [
      "address", "email", "id", "jtb_tin", "message", "phone", "rc_number", "status",
      "taxofficer_id", "taxofficer_name", "taxpayer_name", "taxpayer_type", "tin",
    ]);
    assert.is(r.json.data.tin, DEMO.tin);
    assert.is(r.json.data.taxpayer_name, "Demo Trading Ltd");
    assert.is(r.json.data.message, "TIN Information");
  }
  assertErrorEnvelope(await call(sim, "POST", "/api/v1/utilities/verify-tin/", { body: { tin: "00000000-0000" } }), 404, "tin not found");
  assertErrorEnvelope(await call(sim, "POST", "/api/v1/utilities/verify-tin/", { body: {} }), 400, VALIDATION_FAILED);
});

test("entity lookup: the real GetEntity shape — no service_id, the service ID only inside irn_template", async () => {
  const r = await call(sim, "GET", `/api/v1/entity/${DEMO.entityId}`);
  assert.is(r.status, 200);
  assert.is(r.json.code, 200);
  const e = r.json.data;
  assert.equal(Object.keys(e), ["id", "reference", "custom_settings", "created_at", "updated_at", "businesses", "is_active", "app_reference"]);
  assert.is(e.id, DEMO.entityId);
  assert.is(e.is_active, true);
  const [b] = e.businesses;
  assert.equal(Object.keys(b), [
    "id", "reference", "name", "custom_settings", "created_at", "updated_at", "tin", "sector", "annual_turnover",
    "support_peppol", "is_realtime_reporting", "notification_channels", "erp_system", "irn_template", "is_active",
  ]);
  assert.equal([b.id, b.name, b.tin, b.irn_template, b.is_active], [DEMO.businessId, "Demo Trading Ltd", DEMO.tin, "{{invoice_id}}-94ND90NR-{{YYYYMMDD}}", true]);
});

test("entity lookup: multi has two active businesses; inactive entity; business without template; the example-text template", async () => {
  const multi = await call(sim, "GET", "/api/v1/entity/1c5f7a3b-6d2e-4f9c-8b4a-8e3d2f1a0b22");
  assert.equal(
    multi.json.data.businesses.map((b: any) => [b.tin, b.irn_template, b.is_active]),
    [
      ["22222222-0001", "{{invoice_id}}-5A7B9C1D-{{YYYYMMDD}}", true],
      ["22222222-0002", "{{invoice_id}}-6B8C0D2E-{{YYYYMMDD}}", true],
    ],
  );
  const inactive = await call(sim, "GET", "/api/v1/entity/2d6a8b4c-7e3f-4a0d-9c5b-9f4e3a2b1c33");
  assert.is(inactive.json.data.is_active, false);
  const noTemplate = await call(sim, "GET", "/api/v1/entity/3e7b9c5d-8f4a-4b1e-8d6c-0a5f4b3c2d44");
  assert.is(noTemplate.json.data.businesses[0].irn_template, null);
  const example = await call(sim, "GET", "/api/v1/entity/5a9d1e7f-0b6c-4d3a-8f8e-2c7b6d5e4f66");
  assert.is(example.json.data.businesses[0].irn_template, "{{invoice_id(e.g:INV00XXX)}}-3F7A2C1E-{{YYYYMMDD(e.g:20250629)}}");
});

test("entity lookup: an id that is not a UUID → the recorded 400 (\"invalid UUID length: 13\"); unknown UUID → 404", async () => {
  const bad = await call(sim, "GET", "/api/v1/entity/31569955-0001");
  assertErrorEnvelope(bad, 400, VALIDATION_FAILED, "entity_actions");
  assert.is(bad.json.error.details, "invalid UUID length: 13");
  assert.is(bad.headers.get("content-length"), "294", "the recorded answer's length");
  assertErrorEnvelope(await call(sim, "GET", "/api/v1/entity/00000000-0000-4000-8000-000000000000"), 404, "entity not found", "entity_actions");
});

test("SearchEntity (GET /api/v1/entity): the entities in GetEntity's shape, paged, filtered by reference", async () => {
  const all = await call(sim, "GET", "/api/v1/entity?size=20&page=1&sort_by=created_at&sort_direction_desc=true");
  assert.is(all.status, 200);
  assert.is(all.json.data.page.totalCount, 6);
  const one = await call(sim, "GET", "/api/v1/entity?reference=ENT-000001");
  assert.equal(one.json.data.items.map((e: { id: string }) => e.id), [DEMO.entityId]);
  assert.equal(one.json.data.items[0], (await call(sim, "GET", `/api/v1/entity/${DEMO.entityId}`)).json.data);
});

test("test fixtures: absent template key, overrides (malformed metadata), long metadata, missing entity", async () => {
  const missing = await call(testSim, "GET", "/api/v1/entity/e1000000-0000-4000-8000-000000000006");
  assert.not.ok("irn_template" in missing.json.data.businesses[0]);
  const bad = await call(testSim, "GET", "/api/v1/entity/e1000000-0000-4000-8000-000000000009");
  assert.is(bad.json.data.businesses[0].tin, 90000009);
  assert.is(bad.json.data.businesses[0].is_active, "yes");
  const long = await call(testSim, "GET", "/api/v1/entity/e1000000-0000-4000-8000-000000000008");
  assert.ok(long.json.data.reference.length > 255);
  assert.ok(long.json.data.businesses[0].id.length > 255);
  const ghost = await call(testSim, "POST", "/api/v1/utilities/authenticate", { body: { email: "ghost@test.ng", password: "test-password-ghost" } });
  assert.is(ghost.status, 200);
  assert.is((await call(testSim, "GET", `/api/v1/entity/${ghost.json.data.entity_id}`)).status, 404);
});

test("unknown path or method → the router's recorded un-enveloped 404; not counted", async () => {
  for (const [method, path] of [
    ["POST", "/v1/vat/postPayment"],
    ["GET", "/api/v1/nothing/here"],
    ["GET", "/elsewhere"],
    ["GET", "/api/v1/invoice/irn/other"],
    ["DELETE", "/api/v1/invoice/sign"],
    ["POST", "/api"],
    ["GET", "/api/v1/invoice/resources/states"],
  ] as const) {
    const r = await call(sim, method, path, { noAuth: true });
    assert.is(r.status, 404, `${method} ${path}`);
    assert.equal(r.json, NO_ROUTE);
  }
  assert.is(sim.state.totalCalls() - sim.state.calls("resources"), 0);
});

test("GET /api/v1/invoice/{BUSINESS_ID} is SearchInvoice: GET .../sign reads \"sign\" as a business id", async () => {
  const r = await call(sim, "GET", "/api/v1/invoice/sign");
  assertErrorEnvelope(r, 400, VALIDATION_FAILED, "invoice_actions");
  assert.is(r.json.error.details, "invalid UUID length: 4");
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
