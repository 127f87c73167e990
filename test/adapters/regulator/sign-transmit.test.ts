/**
 * Regulator client: sign, transmit and the two validations, against the real simulator. Sign and
 * transmit outcomes are classified, never guessed: each ambiguous fault is checked together with what
 * the simulator actually did (IRN recorded or not).
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Fault } from "../../../adapters/regulator/simulator/faults.ts";
import type { RegulatorSimulator } from "../../../adapters/regulator/simulator/server.ts";
import { mapRegulatorFailure, type AmbiguousReason, type SignOutcome } from "../../../adapters/regulator/port.ts";
import { DEMO, demoInvoice, startDemoSimulator, startTestSimulator } from "./simulator/simulator-helpers.ts";
import { assertGw, bytesToText, closedPortUrl, CTX, gwFailure, makeClient, type ClientHarness } from "./regulator-helpers.ts";

const irnOf = (invoiceNo: string) => `${invoiceNo}-${DEMO.serviceId}-20240611`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let sim: RegulatorSimulator;
let h: ClientHarness;
let counter = 0;
/** A fresh invoice number per call (the simulator refuses a second sign of the same IRN). */
const fresh = () => `S${++counter}`;

async function setup(): Promise<void> {
  sim = await startDemoSimulator();
  h = makeClient({ TEST: sim.url }, { timeoutMs: 1_000 });
}
async function teardown(): Promise<void> {
  await h.close();
  await sim.close();
}
/** A fresh client (and circuit) per test: these tests fail on purpose far more than 20 times. */
async function reset(): Promise<void> {
  sim.reset();
  await h.close();
  h = makeClient({ TEST: sim.url }, { timeoutMs: 1_000 });
}

// ---------------------------------------------------------------------------
// sign
// ---------------------------------------------------------------------------

const sign = suite("regulator client: sign");
sign.before(setup);
sign.after(teardown);
sign.before.each(reset);

sign("success: HTTP 201, code 201, data.ok true → signed, the regulator's answer passed through", async () => {
  const no = fresh();
  const o = await h.client.sign("TEST", demoInvoice(no), CTX);
  assert.is(o.kind, "signed");
  if (o.kind !== "signed") return;
  assert.is(o.response.status, 201);
  assert.match(o.response.contentType, /^application\/json/);
  assert.equal(JSON.parse(bytesToText(o.response.body)), { code: 201, data: { ok: true } });
  assert.ok(sim.state.isSigned(irnOf(no)));
});

sign("the document given as bytes is sent unchanged", async () => {
  const no = fresh();
  const doc = demoInvoice(no, { note: "bytes ✓" });
  const o = await h.client.sign("TEST", new TextEncoder().encode(JSON.stringify(doc, null, 2)), CTX);
  assert.is(o.kind, "signed");
  assert.equal(sim.state.invoice(irnOf(no))!.invoice, doc);
});

const AMBIGUOUS: Array<[string, Fault, AmbiguousReason, boolean]> = [
  ["malformed body after signing", { kind: "malformed", afterProcessing: true }, "malformed_body", true],
  ["malformed body, nothing signed", { kind: "malformed" }, "malformed_body", false],
  ["empty body after signing", { kind: "empty", afterProcessing: true }, "empty_body", true],
  ["renamed envelope after signing", { kind: "renamed", afterProcessing: true }, "unrecognized_envelope", true],
  ["ok:false, nothing signed", { kind: "ok_false" }, "not_ok", false],
  ["ok:false after signing", { kind: "ok_false", afterProcessing: true }, "not_ok", true],
  ["timeout after signing", { kind: "timeout", afterProcessing: true }, "timeout", true],
  ["timeout, nothing signed", { kind: "timeout" }, "timeout", false],
  ["connection reset after signing", { kind: "reset", afterProcessing: true }, "connection_lost", true],
  ["connection reset, nothing signed", { kind: "reset" }, "connection_lost", false],
  ["HTTP 500, nothing signed", { kind: "status", status: 500 }, "server_error", false],
  ["HTTP 500 after signing", { kind: "status", status: 500, afterProcessing: true }, "server_error", true],
  ["HTTP 503", { kind: "status", status: 503 }, "server_error", false],
  ["HTTP 200 with code 200 (sign needs 201)", { kind: "custom", status: 200, body: { code: 200, data: { ok: true } } }, "unrecognized_envelope", false],
  ["HTTP 201 with code 201 but no data", { kind: "custom", status: 201, body: { code: 201 } }, "unrecognized_envelope", false],
  ["data.ok the string 'true'", { kind: "custom", status: 201, body: { code: 201, data: { ok: "true" } } }, "not_ok", false],
  ["a 302 (never followed)", { kind: "custom", status: 302, headers: { location: "http://127.0.0.1:1/" } }, "redirect", false],
  ["a 4xx without the regulator's error envelope", { kind: "custom", status: 400, body: "<html>bad gateway</html>" }, "unrecognized_error", false],
  ["HTTP 408", { kind: "status", status: 408 }, "timeout", false],
];

for (const [name, fault, reason, signedAtRegulator] of AMBIGUOUS) {
  sign(`${name} → ambiguous (${reason}); simulator ${signedAtRegulator ? "DID" : "did NOT"} record the IRN`, async () => {
    const no = fresh();
    sim.faults.set("sign", { ...fault, times: 1 });
    const o: SignOutcome = await h.client.sign("TEST", demoInvoice(no), CTX);
    assert.is(o.kind, "ambiguous", JSON.stringify(o));
    if (o.kind !== "ambiguous") return;
    assert.is(o.reason, reason);
    assert.is(sim.state.isSigned(irnOf(no)), signedAtRegulator);
    const [event] = h.events("gateway_dependency_call");
    assert.is(event!.result, "ambiguous");
    assert.is(event!.operation, "sign");
  });
}

sign("an ambiguous sign counts against the circuit", async () => {
  const before = h.policies.get("regulator:TEST")!.snapshot().totalFailures;
  sim.faults.set("sign", { kind: "status", status: 500, times: 1 });
  await h.client.sign("TEST", demoInvoice(fresh()), CTX);
  assert.is(h.policies.get("regulator:TEST")!.snapshot().totalFailures, before + 1);
});

sign("duplicate IRN → the real API's 400 \"validation failed … not a duplicate request\": rejected bad_request (not counted)", async () => {
  const no = fresh();
  assert.is((await h.client.sign("TEST", demoInvoice(no), CTX)).kind, "signed");
  const before = h.policies.get("regulator:TEST")!.snapshot().totalFailures;
  const o = await h.client.sign("TEST", demoInvoice(no), CTX);
  assert.is(o.kind, "rejected");
  if (o.kind !== "rejected") return;
  assert.is(o.status, 400);
  assert.is(o.reason, "bad_request");
  assert.match(o.errorId ?? "", UUID);
  assert.is(h.policies.get("regulator:TEST")!.snapshot().totalFailures, before);
  const [event] = h.events("gateway_dependency_call").slice(-1);
  assert.is(event!.rejectionReason, "bad_request");
  assert.is(event!.providerCorrelationId, o.errorId, "the regulator's per-request error.id is logged for correlation");
});

sign("each error carries a fresh error.id: it is correlation, never a reason", async () => {
  const doc = demoInvoice(fresh());
  doc.accounting_supplier_party.tin = "99999999-9999";
  const a = await h.client.sign("TEST", doc, CTX);
  const b = await h.client.sign("TEST", doc, CTX);
  assert.ok(a.kind === "rejected" && b.kind === "rejected");
  if (a.kind !== "rejected" || b.kind !== "rejected") return;
  assert.equal({ ...a, errorId: null, message: null }, { kind: "rejected", status: 400, reason: "bad_request", errorId: null, message: null });
  assert.is.not(a.errorId, b.errorId);
});

for (const [name, change] of [
  ["supplier e-mail missing", (d: Record<string, any>) => delete d.accounting_supplier_party.email],
  ["tax_currency_code missing", (d: Record<string, any>) => delete d.tax_currency_code],
  ["invoice type 383 (not in the recorded list)", (d: Record<string, any>) => (d.invoice_type_code = "383")],
  ["supplier telephone without +", (d: Record<string, any>) => (d.accounting_supplier_party.telephone = "08012345678")],
  ["payment_status REJECTED", (d: Record<string, any>) => (d.payment_status = "REJECTED")],
] as const) {
  sign(`the realistic simulator enforces the documented schema: ${name} → rejected, nothing signed`, async () => {
    const no = fresh();
    const doc = demoInvoice(no);
    change(doc);
    const o = await h.client.sign("TEST", doc, CTX);
    assert.is(o.kind, "rejected");
    assert.not.ok(sim.state.isSigned(irnOf(no)));
  });
}

for (const code of ["380", "381", "385", "388", "394", "395", "396", "397"]) {
  sign(`invoice type ${code} (recorded list) signs`, async () => {
    const no = fresh();
    assert.is((await h.client.sign("TEST", demoInvoice(no, { invoice_type_code: code }), CTX)).kind, "signed");
  });
}

sign("unknown business → rejected 404 not_found", async () => {
  const o = await h.client.sign("TEST", demoInvoice(fresh(), { business_id: "00000000-0000-0000-0000-000000000000" }), CTX);
  assert.is(o.kind, "rejected");
  if (o.kind === "rejected") assert.is(o.reason, "not_found");
});

sign("the regulator router's un-enveloped 404 → throws GW_UPSTREAM_RESPONSE_INVALID (certainly not signed), counted", async () => {
  const no = fresh();
  sim.faults.set("sign", { kind: "no_route", times: 1 });
  const e = await gwFailure(h.client.sign("TEST", demoInvoice(no), CTX));
  assertGw(e, "GW_UPSTREAM_RESPONSE_INVALID", 502, true);
  assert.is(e.regulatorFailure, "route_not_found");
  assert.not.ok(sim.state.isSigned(irnOf(no)));
  assert.is(h.events("gateway_dependency_call")[0]!.result, "not_performed");
});

sign("429 → throws GW_RATE_LIMIT_EXCEEDED with Retry-After (certainly not signed)", async () => {
  const no = fresh();
  sim.faults.set("sign", { kind: "rate_limit", retryAfter: 4, times: 1 });
  const e = await gwFailure(h.client.sign("TEST", demoInvoice(no), CTX));
  assertGw(e, "GW_RATE_LIMIT_EXCEEDED", 429, false);
  assert.is(e.info.retryAfterSeconds, 4);
  assert.not.ok(sim.state.isSigned(irnOf(no)));
});

sign("deployment credentials rejected (400 \"unable to validate api key\") → throws GW_UPSTREAM_UNAVAILABLE (dependency failure) + alert", async () => {
  const no = fresh();
  const raisedBefore = h.raised.length;
  sim.faults.set("sign", { kind: "reject_credentials", times: 1 });
  const e = await gwFailure(h.client.sign("TEST", demoInvoice(no), CTX));
  assertGw(e, "GW_UPSTREAM_UNAVAILABLE", 502, true);
  assert.is(e.failureClass, "credentials_rejected");
  assert.is(h.events("regulator_credentials_rejected").length, 1);
  assert.equal(
    h.raised.slice(raisedBefore).map((r) => [r.signal, r.dependency, r.failureClass]),
    [["regulator_credentials_rejected", "regulator:TEST", "credentials_rejected"]],
    "the immediate signal reached the alert channel",
  );
  assert.not.ok(sim.state.isSigned(irnOf(no)));
});

sign("connection refused → throws GW_UPSTREAM_UNAVAILABLE (the request never left)", async () => {
  const dead = makeClient({ TEST: await closedPortUrl() });
  try {
    const e = await gwFailure(dead.client.sign("TEST", demoInvoice(fresh()), CTX));
    assertGw(e, "GW_UPSTREAM_UNAVAILABLE", 502, true);
    assert.is(e.failureClass, "transport");
  } finally {
    await dead.close();
  }
});

sign("a state without a base URL → throws GW_REGULATOR_UNAVAILABLE 503", async () => {
  assertGw(await gwFailure(h.client.sign("LIVE", demoInvoice(fresh()), CTX)), "GW_REGULATOR_UNAVAILABLE", 503, false);
  assert.is(sim.state.calls("sign"), 0);
});

// ---------------------------------------------------------------------------
// transmit
// ---------------------------------------------------------------------------

const transmit = suite("regulator client: transmit");
transmit.before(setup);
transmit.after(teardown);
transmit.before.each(reset);

async function signed(): Promise<string> {
  const no = fresh();
  const o = await h.client.sign("TEST", demoInvoice(no), CTX);
  assert.is(o.kind, "signed");
  return irnOf(no);
}

transmit("success → transmitted, answer passed through", async () => {
  const irn = await signed();
  const o = await h.client.transmit("TEST", irn, CTX);
  assert.is(o.kind, "transmitted");
  if (o.kind === "transmitted") assert.is(o.response.status, 201);
  assert.ok(sim.state.isTransmitted(irn));
});

const reasonOf = (o: { kind: string; reason?: unknown }) => [o.kind, o.reason];

transmit("never signed → rejected 404 not_found; twice → rejected 409 conflict", async () => {
  assert.equal(reasonOf(await h.client.transmit("TEST", irnOf("NEVER1"), CTX)), ["rejected", "not_found"]);
  const irn = await signed();
  assert.is((await h.client.transmit("TEST", irn, CTX)).kind, "transmitted");
  assert.equal(reasonOf(await h.client.transmit("TEST", irn, CTX)), ["rejected", "conflict"]);
});

transmit("the business's webhook URL not set up (\"webhook url is not setup\") → rejected webhook_not_configured → GW_INVOICE_NOT_TRANSMITTABLE", async () => {
  const tsim = await startTestSimulator();
  const th = makeClient({ TEST: tsim.url });
  try {
    const business = "b1000000-0000-4000-8000-000000001101";
    const irn = "NW1-NOWH0001-20240611";
    const doc = demoInvoice("NW1", { business_id: business, irn });
    doc.accounting_supplier_party.tin = "10000011-0001";
    assert.is((await th.client.sign("TEST", doc, CTX)).kind, "signed");
    const o = await th.client.transmit("TEST", irn, CTX);
    assert.equal(reasonOf(o), ["rejected", "webhook_not_configured"]);
    if (o.kind === "rejected") assert.is(mapRegulatorFailure(o, "transmit").code, "GW_INVOICE_NOT_TRANSMITTABLE");
    assert.not.ok(tsim.state.isTransmitted(irn));
  } finally {
    await th.close();
    await tsim.close();
  }
});

transmit("the regulator router's un-enveloped 404 → throws GW_UPSTREAM_RESPONSE_INVALID, never ambiguous", async () => {
  const irn = await signed();
  sim.faults.set("transmit", { kind: "no_route", times: 1 });
  const e = await gwFailure(h.client.transmit("TEST", irn, CTX));
  assertGw(e, "GW_UPSTREAM_RESPONSE_INVALID", 502, true);
  assert.not.ok(sim.state.isTransmitted(irn));
});

for (const [name, fault, reason, transmitted] of [
  ["timeout after transmitting", { kind: "timeout", afterProcessing: true }, "timeout", true],
  ["timeout, nothing transmitted", { kind: "timeout" }, "timeout", false],
  ["reset after transmitting", { kind: "reset", afterProcessing: true }, "connection_lost", true],
  ["HTTP 500", { kind: "status", status: 500 }, "server_error", false],
  ["malformed after transmitting", { kind: "malformed", afterProcessing: true }, "malformed_body", true],
  ["renamed envelope", { kind: "renamed", afterProcessing: true }, "unrecognized_envelope", true],
  ["ok:false", { kind: "ok_false" }, "not_ok", false],
] as Array<[string, Fault, AmbiguousReason, boolean]>) {
  transmit(`${name} → ambiguous (${reason}); simulator ${transmitted ? "DID" : "did NOT"} record it`, async () => {
    const irn = await signed();
    sim.faults.set("transmit", { ...fault, times: 1 });
    const o = await h.client.transmit("TEST", irn, CTX);
    assert.equal(o.kind, "ambiguous");
    if (o.kind === "ambiguous") assert.is(o.reason, reason);
    assert.is(sim.state.isTransmitted(irn), transmitted);
  });
}

transmit("credentials rejected / 429 / no base URL → throw (certainly not transmitted)", async () => {
  const irn = await signed();
  sim.faults.set("transmit", { kind: "reject_credentials", times: 1 });
  assertGw(await gwFailure(h.client.transmit("TEST", irn, CTX)), "GW_UPSTREAM_UNAVAILABLE", 502, true);
  sim.faults.set("transmit", { kind: "rate_limit", times: 1 });
  const e = await gwFailure(h.client.transmit("TEST", irn, CTX));
  assertGw(e, "GW_RATE_LIMIT_EXCEEDED", 429, false);
  assert.is(e.info.retryAfterSeconds, 1);
  assertGw(await gwFailure(h.client.transmit("LIVE", irn, CTX)), "GW_REGULATOR_UNAVAILABLE", 503, false);
  assert.not.ok(sim.state.isTransmitted(irn));
});

// ---------------------------------------------------------------------------
// validateInvoice, validateIrn
// ---------------------------------------------------------------------------

const validate = suite("regulator client: validateInvoice / validateIrn");
validate.before(setup);
validate.after(teardown);
validate.before.each(reset);

validate("valid invoice → valid; nothing signed", async () => {
  const no = fresh();
  const o = await h.client.validateInvoice("TEST", demoInvoice(no), CTX);
  assert.is(o.kind, "valid");
  assert.not.ok(sim.state.isSigned(irnOf(no)));
});

validate("invalid invoice → rejected bad_request; the regulator's free-text explanation is carried for the business's own record, never logged", async () => {
  const doc = demoInvoice(fresh());
  doc.invoice_line[0].invoiced_quantity = 0;
  const o = await h.client.validateInvoice("TEST", doc, CTX);
  assert.equal(reasonOf(o), ["rejected", "bad_request"]);
  assert.equal(Object.keys(o).sort(), ["errorId", "kind", "message", "reason", "status"]);
  const message = (o as { message: string }).message;
  assert.match(message, /invoiced_quantity/);
  assert.ok(message.length <= 500 && !/[\u0000-\u001f]/.test(message));
  const [event] = h.events("gateway_dependency_call").slice(-1);
  assert.not.match(JSON.stringify(event), message, "the explanation is not logged");
});

validate("dependency problems throw the ordinary mapping", async () => {
  sim.faults.set("validate", { kind: "status", status: 500, times: 1 });
  assertGw(await gwFailure(h.client.validateInvoice("TEST", demoInvoice(fresh()), CTX)), "GW_UPSTREAM_UNAVAILABLE", 502, true);
  sim.faults.set("validate", { kind: "timeout", times: 1 });
  assertGw(await gwFailure(h.client.validateInvoice("TEST", demoInvoice(fresh()), CTX)), "GW_UPSTREAM_TIMEOUT", 504, true);
  sim.faults.set("validate", { kind: "malformed", times: 1 });
  assertGw(await gwFailure(h.client.validateInvoice("TEST", demoInvoice(fresh()), CTX)), "GW_UPSTREAM_RESPONSE_INVALID", 502, true);
  sim.faults.set("validate", { kind: "ok_false", times: 1 });
  assertGw(await gwFailure(h.client.validateInvoice("TEST", demoInvoice(fresh()), CTX)), "GW_UPSTREAM_RESPONSE_INVALID", 502, true);
});

validate("IRN validation: valid, then a foreign IRN → rejected irn_invalid", async () => {
  const ok = await h.client.validateIrn("TEST", { invoice_reference: "INV9", business_id: DEMO.businessId, irn: irnOf("INV9") }, CTX);
  assert.is(ok.kind, "valid");
  const bad = await h.client.validateIrn("TEST", { invoice_reference: "INV9", business_id: DEMO.businessId, irn: "INV9-ZZZZZZZZ-20240611" }, CTX);
  assert.equal(reasonOf(bad), ["rejected", "bad_request"]);
  if (bad.kind === "rejected") assert.is(mapRegulatorFailure(bad, "validateIrn").code, "GW_INVOICE_IRN_INVALID");
});

sign.run();
transmit.run();
validate.run();
