/**
 * Regulator client logging: exactly one `gateway_dependency_call` per call with the spec §6 fields, and
 * nothing secret in any captured record (passwords, deployment credentials, bodies, IRNs in paths,
 * query strings, upstream messages, taxpayer data).
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { RegulatorSimulator } from "../../../adapters/regulator/simulator/server.ts";
import { CREDENTIALS, DEMO, demoInvoice, startDemoSimulator } from "./simulator/simulator-helpers.ts";
import { CTX, makeClient, type ClientHarness } from "./regulator-helpers.ts";

const CURRENCIES = "/api/v1/invoice/resources/currencies";

const test = suite("regulator client: logging");
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
  // Long enough for a first call on a loaded machine (200 ms once was not); only the timeout fault waits for it.
  h = makeClient({ TEST: sim.url }, { timeoutMs: 1_500 });
});
test.after.each(async () => {
  await h.close();
});

test("a successful call: one info event with every §6 field", async () => {
  await h.client.getEntity("TEST", DEMO.entityId, CTX);
  const events = h.events("gateway_dependency_call");
  assert.is(events.length, 1);
  const e = events[0]!;
  assert.is(e.level, "info");
  assert.is(e.requestId, CTX.requestId);
  assert.is(e.dependency, "regulator:TEST");
  assert.is(e.operation, "getEntity");
  assert.type(e.latencyMs, "number");
  assert.ok((e.latencyMs as number) >= 0);
  assert.is(e.upstreamStatus, 200);
  assert.is(e.outcome, "success");
  assert.is(e.contractVersion, "1.1.6");
  assert.is(e.circuitState, "closed");
  assert.not.ok("failureClass" in e);
  assert.not.ok("providerCorrelationId" in e);
});

test("providerCorrelationId is the regulator's x-request-id (only a safe token)", async () => {
  sim.faults.set("resources", { kind: "custom", status: 200, body: { code: 200, data: [] }, headers: { "x-request-id": "reg-7f3a.91:x" }, times: 1 });
  await h.client.relay("TEST", { method: "GET", path: CURRENCIES }, CTX);
  sim.faults.set("resources", { kind: "custom", status: 200, body: { code: 200, data: [] }, headers: { "x-request-id": "has space <script>" }, times: 1 });
  await h.client.relay("TEST", { method: "GET", path: CURRENCIES }, CTX);
  const [a, b] = h.events("gateway_dependency_call");
  assert.is(a!.providerCorrelationId, "reg-7f3a.91:x");
  assert.is(a!.operation, "relay.resources");
  assert.not.ok("providerCorrelationId" in b!);
});

test("failures: warn level, normalized failureClass, upstream status; one event per call", async () => {
  sim.faults.set("resources", { kind: "status", status: 503, times: 1 });
  await h.client.relay("TEST", { method: "GET", path: CURRENCIES }, CTX).catch(() => undefined);
  sim.faults.set("resources", { kind: "timeout", times: 1 });
  await h.client.relay("TEST", { method: "GET", path: CURRENCIES }, CTX).catch(() => undefined);
  sim.faults.set("sign", { kind: "malformed", times: 1 });
  await h.client.sign("TEST", demoInvoice("LG1"), CTX);
  await h.client.relay("TEST", { method: "GET", path: `/api/v1/invoice/confirm/NOPE-${DEMO.serviceId}-20240611` }, CTX).catch(() => undefined);
  await h.client.relay("LIVE", { method: "GET", path: CURRENCIES }, CTX).catch(() => undefined);
  const events = h.events("gateway_dependency_call");
  assert.is(events.length, 5);
  const pick = (e: Record<string, unknown>) => [e.level, e.operation, e.upstreamStatus, e.outcome, e.failureClass];
  assert.equal(events.map(pick), [
    ["warn", "relay.resources", 503, "failure", "server_error"],
    ["warn", "relay.resources", null, "failure", "timeout"],
    ["warn", "sign", 201, "failure", "invalid_response"],
    ["info", "relay.confirm", 404, "neutral", "rejected"],
    ["warn", "relay.resources", null, "refused", "not_configured"],
  ]);
  assert.is(events[2]!.result, "ambiguous");
  assert.is(events[2]!.invalidReason, "malformed_body");
  assert.is(events[3]!.rejectionReason, "not_found");
  assert.match(String(events[3]!.providerCorrelationId), /^[0-9a-f-]{36}$/, "the regulator's per-request error.id, for correlation");
  assert.is(events[4]!.dependency, "regulator:LIVE");
});

test("no captured record contains a password, a deployment credential, a body, an IRN, a query or an upstream message", async () => {
  const password = "Pa55-word-that-must-never-leak";
  const marker = "INVOICE-BODY-MARKER-93c1";
  const queryMarker = "QUERY-MARKER-77aa";
  await h.client.authenticate("TEST", { email: "taxpayer@demo.ng", password }, CTX).catch(() => undefined);
  await h.client.authenticate("TEST", { email: DEMO.email, password: DEMO.password }, CTX);
  sim.faults.set("authenticate", { kind: "reject_credentials", times: 1 });
  await h.client.authenticate("TEST", { email: DEMO.email, password }, CTX).catch(() => undefined);
  const doc = demoInvoice("LK1", { note: marker });
  await h.client.sign("TEST", doc, CTX);
  await h.client.sign("TEST", doc, CTX); // duplicate → rejected
  sim.faults.set("sign", { kind: "status", status: 500, message: "UPSTREAM-MESSAGE-5e2d", times: 1 });
  await h.client.sign("TEST", demoInvoice("LK2", { note: marker }), CTX);
  await h.client.validateInvoice("TEST", { ...doc, accounting_supplier_party: { tin: "0" } }, CTX);
  await h.client.transmit("TEST", `LK1-${DEMO.serviceId}-20240611`, CTX);
  await h.client.relay("TEST", { method: "GET", path: "/api/v1/invoice/resources/hs-codes", query: { q: queryMarker } }, CTX);
  await h.client.relay("TEST", { method: "GET", path: `/api/v1/invoice/download/LK1-${DEMO.serviceId}-20240611` }, CTX);

  assert.ok(h.logs.length >= 10);
  assert.is(h.events("regulator_credentials_rejected").length, 1);
  const text = JSON.stringify(h.logs);
  for (const secret of [
    password,
    DEMO.password,
    CREDENTIALS.apiKey,
    CREDENTIALS.apiSecret,
    marker,
    queryMarker,
    "UPSTREAM-MESSAGE-5e2d",
    "invalid email or password",
    "an invoice with this irn already exists",
    "webhook url",
    `LK1-${DEMO.serviceId}`,
    DEMO.email,
    DEMO.tin,
  ]) {
    assert.not.ok(text.includes(secret), `log contains ${secret}`);
  }
});

test.run();
