/**
 * Regulator client: the generic relay of the direct routes (resources, IRN validation, confirm,
 * download, payment update) against the real simulator: 2xx passed through (status, content type,
 * body, safe headers), everything else a mapped GatewayError with the regulator's body discarded.
 * Also the exported failure mapping, case by case.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { RegulatorSimulator } from "../../../adapters/regulator/simulator/server.ts";
import { mapRegulatorFailure } from "../../../adapters/regulator/port.ts";
import type { RegulatorFailure, RegulatorOperation } from "../../../adapters/regulator/port.ts";
import { classifyError } from "../../../adapters/policies.ts";
import { call, DEMO, demoInvoice, startDemoSimulator } from "./simulator/simulator-helpers.ts";
import { assertGw, bytesToText, closedPortUrl, CTX, gwFailure, makeClient, type ClientHarness } from "./regulator-helpers.ts";

const irnOf = (invoiceNo: string) => `${invoiceNo}-${DEMO.serviceId}-20240611`;
const CURRENCIES = "/api/v1/invoice/resources/currencies";

let sim: RegulatorSimulator;
let h: ClientHarness;

const relay = suite("regulator client: relay");
relay.before(async () => {
  sim = await startDemoSimulator();
  h = makeClient({ TEST: sim.url }, { timeoutMs: 1_000 });
});
relay.after(async () => {
  await h.close();
  await sim.close();
});
relay.before.each(async () => {
  sim.reset();
  await h.close();
  h = makeClient({ TEST: sim.url }, { timeoutMs: 1_000 });
});

const get = (path: string) => h.client.relay("TEST", { method: "GET", path }, CTX);

relay("resources: status, content type and body exactly as the regulator sent them", async () => {
  const direct = await call(sim, "GET", CURRENCIES);
  const r = await get(CURRENCIES);
  assert.is(r.status, 200);
  assert.is(r.contentType, direct.headers.get("content-type"));
  assert.is(bytesToText(r.body), direct.text);
  assert.equal(r.headers, {});
});

relay("confirm / download / payment update of a signed invoice", async () => {
  const no = "RL1";
  assert.is((await h.client.sign("TEST", demoInvoice(no), CTX)).kind, "signed");
  const irn = encodeURIComponent(irnOf(no));
  const confirm = await get(`/api/v1/invoice/confirm/${irn}`);
  assert.is(JSON.parse(bytesToText(confirm.body)).data.status, "SIGNED");
  const upd = await h.client.relay("TEST", { method: "PATCH", path: `/api/v1/invoice/update/${irn}`, body: { payment_status: "PAID" } }, CTX);
  assert.is(upd.status, 200);
  const download = await get(`/api/v1/invoice/download/${irn}`);
  const data = JSON.parse(bytesToText(download.body)).data;
  assert.is(data.payment_status, "PAID");
  assert.is(data.invoice.irn, irnOf(no));
});

relay("IRN validation relayed with a raw body", async () => {
  const body = JSON.stringify({ invoice_reference: "INV5", business_id: DEMO.businessId, irn: irnOf("INV5") });
  const r = await h.client.relay("TEST", { method: "POST", path: "/api/v1/invoice/irn/validate", body }, CTX);
  assert.is(r.status, 200);
  assert.equal(JSON.parse(bytesToText(r.body)), { code: 200, data: { ok: true } });
});

relay("a 2xx is passed through unchanged even when it is not the usual envelope", async () => {
  sim.faults.set("resources", { kind: "custom", status: 203, body: "plain text, not JSON", headers: { "content-type": "text/plain" }, times: 1 });
  const r = await get(CURRENCIES);
  assert.is(r.status, 203);
  assert.is(r.contentType, "text/plain");
  assert.is(bytesToText(r.body), "plain text, not JSON");
});

relay("only the safe subset of response headers comes back", async () => {
  sim.faults.set("resources", {
    kind: "custom",
    status: 200,
    body: { code: 200, data: [] },
    headers: {
      etag: '"v1"',
      "content-disposition": "attachment; filename=x.json",
      "set-cookie": "s=1",
      "cache-control": "public, max-age=600",
      "x-request-id": "reg-123",
      "x-api-secret": "leak",
    },
    times: 1,
  });
  const r = await get(CURRENCIES);
  assert.equal(r.headers, { etag: '"v1"', "content-disposition": "attachment; filename=x.json" });
});

relay("timeout → GW_UPSTREAM_TIMEOUT 504", async () => {
  sim.faults.set("resources", { kind: "timeout", times: 1 });
  const e = await gwFailure(get(CURRENCIES));
  assertGw(e, "GW_UPSTREAM_TIMEOUT", 504, true);
  assert.is(e.failureClass, "timeout");
});

for (const status of [500, 502, 503, 504]) {
  relay(`HTTP ${status} → GW_UPSTREAM_UNAVAILABLE 502, body discarded`, async () => {
    sim.faults.set("resources", { kind: "status", status, message: "internal-upstream-detail", times: 1 });
    const e = await gwFailure(get(CURRENCIES));
    assertGw(e, "GW_UPSTREAM_UNAVAILABLE", 502, true);
    assert.is(e.failureClass, "server_error");
    assert.not.ok(JSON.stringify({ m: e.message, i: e.info }).includes("internal-upstream-detail"));
  });
}

relay("connection reset → GW_UPSTREAM_UNAVAILABLE 502", async () => {
  sim.faults.set("resources", { kind: "reset", times: 1 });
  assertGw(await gwFailure(get(CURRENCIES)), "GW_UPSTREAM_UNAVAILABLE", 502, true);
});

relay("connection refused → GW_UPSTREAM_UNAVAILABLE 502", async () => {
  const dead = makeClient({ TEST: await closedPortUrl() });
  try {
    assertGw(await gwFailure(dead.client.relay("TEST", { method: "GET", path: CURRENCIES }, CTX)), "GW_UPSTREAM_UNAVAILABLE", 502, true);
  } finally {
    await dead.close();
  }
});

relay("429 → GW_RATE_LIMIT_EXCEEDED with the regulator's Retry-After (not a dependency failure)", async () => {
  sim.faults.set("resources", { kind: "rate_limit", retryAfter: 7, times: 1 });
  const e = await gwFailure(get(CURRENCIES));
  assertGw(e, "GW_RATE_LIMIT_EXCEEDED", 429, false);
  assert.is(e.info.retryAfterSeconds, 7);
});

relay("429 without Retry-After → 1 s; with an HTTP date → the seconds until then", async () => {
  sim.faults.set("resources", { kind: "custom", status: 429, body: { code: 429, data: null }, times: 1 });
  assert.is((await gwFailure(get(CURRENCIES))).info.retryAfterSeconds, 1);
  const at = new Date(Date.now() + 20_000).toUTCString();
  sim.faults.set("resources", { kind: "custom", status: 429, headers: { "retry-after": at }, times: 1 });
  const s = (await gwFailure(get(CURRENCIES))).info.retryAfterSeconds!;
  assert.ok(s >= 18 && s <= 21, String(s));
});

relay("deployment credentials rejected (the real 400 \"unable to validate api key\") → GW_UPSTREAM_UNAVAILABLE 502 + regulator_credentials_rejected", async () => {
  const raisedBefore = h.raised.length;
  sim.faults.set("resources", { kind: "reject_credentials", times: 1 });
  const e = await gwFailure(get(CURRENCIES));
  assertGw(e, "GW_UPSTREAM_UNAVAILABLE", 502, true);
  assert.is(e.failureClass, "credentials_rejected");
  assert.equal(classifyError(e), { verdict: "failure", failureClass: "credentials_rejected" });
  const [signal] = h.events("regulator_credentials_rejected");
  assert.is(signal!.alert, "immediate");
  assert.is(signal!.upstreamStatus, 400);
  assert.equal(
    h.raised.slice(raisedBefore).map((r) => [r.signal, r.dependency, r.failureClass]),
    [["regulator_credentials_rejected", "regulator:TEST", "credentials_rejected"]],
    "the immediate signal reached the alert channel",
  );
  assert.is(h.policies.get("regulator:TEST")!.snapshot().lastFailureClass, "credentials_rejected");
});

for (const status of [401, 403]) {
  relay(`an HTTP ${status} on a call other than the taxpayer login → deployment credentials rejected, counted`, async () => {
    sim.faults.set("confirm", { kind: "custom", status, body: { code: status, data: null, message: "error has occurred" }, times: 1 });
    const e = await gwFailure(get(`/api/v1/invoice/confirm/${irnOf("X1")}`));
    assertGw(e, "GW_UPSTREAM_UNAVAILABLE", 502, true);
    assert.is(e.failureClass, "credentials_rejected");
    assert.is(h.events("regulator_credentials_rejected")[0]!.upstreamStatus, status);
  });
}

relay("a 3xx → GW_UPSTREAM_RESPONSE_INVALID (contract failure, not followed)", async () => {
  sim.faults.set("resources", { kind: "custom", status: 301, headers: { location: `${sim.url}/api` }, times: 1 });
  const e = await gwFailure(get(CURRENCIES));
  assertGw(e, "GW_UPSTREAM_RESPONSE_INVALID", 502, true);
  assert.is(sim.state.calls("health"), 0);
});

relay("customer 4xx → mapped codes, neutral for the circuit", async () => {
  const before = h.policies.get("regulator:TEST")!.snapshot().totalFailures;
  assertGw(await gwFailure(get(`/api/v1/invoice/confirm/${irnOf("NOPE1")}`)), "GW_INVOICE_NOT_FOUND", 404, false);
  const bad = { invoice_reference: "INV5", business_id: DEMO.businessId, irn: "INV5-ZZZZZZZZ-20240611" };
  // Relayed, a refusal is a generic validation failure; through validateIrn the operation says it is the IRN.
  assertGw(
    await gwFailure(h.client.relay("TEST", { method: "POST", path: "/api/v1/invoice/irn/validate", body: bad }, CTX)),
    "GW_REQUEST_VALIDATION_FAILED",
    400,
    false,
  );
  const o = await h.client.validateIrn("TEST", bad, CTX);
  assert.is(o.kind, "rejected");
  if (o.kind === "rejected") assert.is(mapRegulatorFailure(o, "validateIrn").code, "GW_INVOICE_IRN_INVALID");
  assert.is(h.policies.get("regulator:TEST")!.snapshot().totalFailures, before);
});

relay("a 400 \"validation failed\" → GW_REQUEST_VALIDATION_FAILED, never the regulator's free-text details", async () => {
  assert.is((await h.client.sign("TEST", demoInvoice("RL2"), CTX)).kind, "signed");
  const e = await gwFailure(
    h.client.relay("TEST", { method: "PATCH", path: `/api/v1/invoice/update/${irnOf("RL2")}`, body: { payment_status: "MAYBE" } }, CTX),
  );
  assertGw(e, "GW_REQUEST_VALIDATION_FAILED", 400, false);
  const text = JSON.stringify({ m: e.message, i: e.info });
  assert.not.ok(text.includes("payment_status must be"), text);
  assert.not.ok(text.includes("validation failed:"), text);
});

relay("payment status CANCELED is accepted (PENDING, PAID, CANCELED)", async () => {
  assert.is((await h.client.sign("TEST", demoInvoice("RL3"), CTX)).kind, "signed");
  const body = { payment_status: "CANCELED", reference: "void-0001" };
  const r = await h.client.relay("TEST", { method: "PATCH", path: `/api/v1/invoice/update/${irnOf("RL3")}`, body }, CTX);
  assert.is(r.status, 200);
  assert.is(sim.state.invoice(irnOf("RL3"))!.payment_status, "CANCELED");
});

relay("a path (or resource list) the regulator does not serve: its router's 404 → GW_UPSTREAM_RESPONSE_INVALID, counted (invalid contract)", async () => {
  for (const path of ["/api/v1/nothing/here", "/api/v1/invoice/resources/unknown-list"]) {
    const e = await gwFailure(get(path));
    assertGw(e, "GW_UPSTREAM_RESPONSE_INVALID", 502, true);
    assert.is(e.regulatorFailure, "route_not_found");
  }
});

relay("a state without a base URL → GW_REGULATOR_UNAVAILABLE 503", async () => {
  assertGw(await gwFailure(h.client.relay("LIVE", { method: "GET", path: CURRENCIES }, CTX)), "GW_REGULATOR_UNAVAILABLE", 503, false);
});

relay("wiring errors are refused before any call (RangeError)", async () => {
  for (const req of [
    { method: "GET", path: "/api/v1/../../admin" },
    { method: "GET", path: "/api/v1/invoice/%2e%2e/x" },
    { method: "GET", path: "/other/path" },
    { method: "GET", path: "/api/v1//x" },
    { method: "GET", path: `${CURRENCIES}?a=1` },
    { method: "GET", path: "http://evil.example/api/v1/x" },
    { method: "GET", path: CURRENCIES, body: "{}" },
    { method: "TRACE", path: CURRENCIES },
  ] as const) {
    const e = await h.client.relay("TEST", req as never, CTX).catch((x: unknown) => x);
    assert.instance(e, RangeError, JSON.stringify(req));
  }
  assert.is(sim.state.totalCalls(), 0);
});

// ---------------------------------------------------------------------------
// The exported mapping
// ---------------------------------------------------------------------------

const mapping = suite("regulator client: mapRegulatorFailure");

const CASES: Array<[RegulatorFailure, RegulatorOperation, string, boolean]> = [
  [{ kind: "not_configured" }, "relay", "GW_REGULATOR_UNAVAILABLE", false],
  [{ kind: "not_configured" }, "authenticate", "GW_REGULATOR_UNAVAILABLE", false],
  [{ kind: "circuit_open" }, "relay", "GW_UPSTREAM_UNAVAILABLE", true],
  [{ kind: "circuit_open" }, "sign", "GW_UPSTREAM_UNAVAILABLE", true],
  [{ kind: "circuit_open" }, "authenticate", "GW_REG_VERIFICATION_UNAVAILABLE", true],
  [{ kind: "circuit_open" }, "getEntity", "GW_REG_VERIFICATION_UNAVAILABLE", true],
  [{ kind: "timeout" }, "relay", "GW_UPSTREAM_TIMEOUT", true],
  [{ kind: "timeout" }, "authenticate", "GW_REG_AUTH_UNAVAILABLE", true],
  [{ kind: "transport", dispatched: false }, "relay", "GW_UPSTREAM_UNAVAILABLE", true],
  [{ kind: "transport", dispatched: true }, "getEntity", "GW_REG_AUTH_UNAVAILABLE", true],
  [{ kind: "server_error", upstreamStatus: 500 }, "validateInvoice", "GW_UPSTREAM_UNAVAILABLE", true],
  [{ kind: "server_error", upstreamStatus: 503 }, "authenticate", "GW_REG_AUTH_UNAVAILABLE", true],
  [{ kind: "rate_limited", retryAfterSeconds: 3 }, "authenticate", "GW_RATE_LIMIT_EXCEEDED", false],
  [{ kind: "credentials_rejected", upstreamStatus: 400 }, "relay", "GW_UPSTREAM_UNAVAILABLE", true],
  [{ kind: "credentials_rejected", upstreamStatus: 400 }, "authenticate", "GW_REG_VERIFICATION_UNAVAILABLE", true],
  [{ kind: "credentials_rejected", upstreamStatus: 403 }, "sign", "GW_UPSTREAM_UNAVAILABLE", true],
  [{ kind: "route_not_found", upstreamStatus: 404 }, "getEntity", "GW_REG_VERIFICATION_UNAVAILABLE", true],
  [{ kind: "route_not_found", upstreamStatus: 404 }, "transmit", "GW_UPSTREAM_RESPONSE_INVALID", true],
  [{ kind: "redirect", upstreamStatus: 302 }, "relay", "GW_UPSTREAM_RESPONSE_INVALID", true],
  [{ kind: "invalid_response", reason: "malformed_body", upstreamStatus: 200 }, "relay", "GW_UPSTREAM_RESPONSE_INVALID", true],
  [{ kind: "invalid_response", reason: "empty_body", upstreamStatus: 200 }, "authenticate", "GW_REG_AUTH_RESPONSE_INVALID", true],
  [{ kind: "invalid_response", reason: "unrecognized_envelope", upstreamStatus: 200 }, "getEntity", "GW_REG_BUSINESS_METADATA_INVALID", true],
  [{ kind: "entity_metadata", problem: "invalid" }, "getEntity", "GW_REG_BUSINESS_METADATA_INVALID", false],
  [{ kind: "entity_metadata", problem: "unsupported" }, "getEntity", "GW_REG_ENTITY_METADATA_UNSUPPORTED", false],
  [{ kind: "rejected", status: 401, reason: "unauthorized", errorId: null }, "authenticate", "GW_REG_LOGIN_INVALID", false],
  [{ kind: "rejected", status: 404, reason: "not_found", errorId: null }, "authenticate", "GW_REG_CREDENTIALS_REJECTED", false],
  [{ kind: "rejected", status: 400, reason: "bad_request", errorId: null }, "authenticate", "GW_REG_CREDENTIALS_REJECTED", false],
  [{ kind: "rejected", status: 403, reason: "forbidden", errorId: null }, "authenticate", "GW_REG_APPLICATION_NOT_LINKED", false],
  [{ kind: "rejected", status: 404, reason: "not_found", errorId: null }, "getEntity", "GW_REG_ENTITY_NOT_FOUND", false],
  [{ kind: "rejected", status: 400, reason: "bad_request", errorId: null }, "getEntity", "GW_REG_ENTITY_NOT_FOUND", false],
  [{ kind: "rejected", status: 409, reason: "conflict", errorId: null }, "getEntity", "GW_REG_BUSINESS_METADATA_INVALID", false],
  [{ kind: "rejected", status: 400, reason: "bad_request", errorId: null }, "validateIrn", "GW_INVOICE_IRN_INVALID", false],
  [{ kind: "rejected", status: 400, reason: "bad_request", errorId: null }, "validateInvoice", "GW_REQUEST_VALIDATION_FAILED", false],
  [{ kind: "rejected", status: 404, reason: "not_found", errorId: null }, "relay", "GW_INVOICE_NOT_FOUND", false],
  [{ kind: "rejected", status: 409, reason: "conflict", errorId: null }, "transmit", "GW_INVOICE_STATE_CONFLICT", false],
  [{ kind: "rejected", status: 400, reason: "webhook_not_configured", errorId: null }, "transmit", "GW_INVOICE_NOT_TRANSMITTABLE", false],
  [{ kind: "rejected", status: 413, reason: "payload_too_large", errorId: null }, "relay", "GW_REQUEST_BODY_TOO_LARGE", false],
  [{ kind: "rejected", status: 422, reason: "bad_request", errorId: null }, "relay", "GW_REQUEST_VALIDATION_FAILED", false],
];

for (const [failure, op, code, counts] of CASES) {
  const label = failure.kind === "rejected" ? `rejected ${failure.status} ${failure.reason}` : failure.kind;
  mapping(`${op}: ${label} → ${code}`, () => {
    const e = mapRegulatorFailure(failure, op);
    assert.is(e.code, code);
    assert.is(e.dependencyFailure, counts);
    assert.is(classifyError(e).verdict, counts ? "failure" : "neutral");
  });
}

relay.run();
mapping.run();
