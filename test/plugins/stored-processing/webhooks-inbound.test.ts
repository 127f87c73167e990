/**
 * Invoice webhooks and inbound invoices (issue 10 items 5, 6, 8): `invoice.*` events reach the
 * business's `gateway.webhook` endpoint through the durable outbox, signed per Standard Webhooks with
 * body `{ type, data }` (never the document); the regulator's inbound deliveries are verified (HMAC,
 * replay window), deduplicated by delivery id, stored as `received` under the buyer's business and
 * announced; the processor heartbeat and backlog appear in /health/dependencies.
 */
import { createHmac } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { signDelivery } from "../../../adapters/regulator/simulator/inbound.ts";
import { verifyWebhook } from "../../../client/webhooks.ts";
import { ADMIN_KEY } from "../../support/gateway.ts";
import { until } from "../../support/assertions.ts";
import { DEMO, SUB, accepted, demoInvoice, expectProblem, intakeInvoice, irnOf, startStoredHarness } from "./stored-helpers.ts";

const h = await startStoredHarness({ webhooks: true, patch: { dependencies: { healthRefreshMs: 100 } } });
test.after(() => h.close());

const SECRET = "test_api_secret"; // the deployment's regulator secret in the harness
const final = (inv: Record<string, any>) => ["signed", "transmitted", "rejected", "frozen", "cancelled"].includes(inv.status);
const eventsOf = (id: string) => h.received.filter((r) => r.json.data.invoiceId === id).map((r) => r.json.type);

/** A delivery as the regulator sends it, signed at `timestamp` (seconds). */
function delivery(body: Record<string, unknown>, options: { timestamp?: number; secret?: string; signature?: string | null } = {}) {
  const text = JSON.stringify(body);
  const ts = options.timestamp ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = { "x-regulator-timestamp": String(ts) };
  if (options.signature !== null) headers["x-regulator-signature"] = options.signature ?? signDelivery(options.secret ?? SECRET, ts, text);
  return h.call("POST", "/regulator/inbound-invoices", { host: "127.0.0.1", apiKey: null, headers, body: text });
}

/** An invoice another taxpayer issued to the demo taxpayer (the buyer). */
function inboundDoc(no: string) {
  // The buyer is the demo taxpayer itself (the supplier party, complete as the regulator's schema requires).
  return demoInvoice(no, { accounting_customer_party: { ...demoInvoice(no).accounting_supplier_party, tin: DEMO.tin } });
}

test("accepted → signed → transmitted: three signed webhooks { type, data }, without the document", async () => {
  const id = (await accepted(await h.intake(intakeInvoice("WH1"), { key: "wh-key-0001" }))).invoiceId as string;
  await h.waitFor(id, final);
  assert.is((await h.call("POST", `/invoices/${id}/transmit`, { body: {} })).status, 202);
  await h.waitFor(id, (i) => i.status === "transmitted");
  await until(() => eventsOf(id).length === 3, 5_000);
  // At-least-once delivery in parallel: the order of arrival is not guaranteed.
  assert.equal(eventsOf(id).sort(), ["invoice.accepted", "invoice.signed", "invoice.transmitted"]);
  for (const r of h.received.filter((x) => x.json.data.invoiceId === id)) {
    assert.ok(verifyWebhook(h.webhookSecret, r.headers, r.body), "Standard Webhooks signature verifies");
    assert.equal(Object.keys(r.json).sort(), ["data", "type"]);
    assert.is(r.json.data.irn, irnOf("WH1"));
    assert.is(r.json.data.subBusinessId, SUB);
    assert.is(r.json.data.direction, "outbound");
    assert.ok(r.json.data.operationId);
    assert.not.ok(r.body.includes("USB keyboard"), "never the document");
  }
  assert.is(h.received.find((r) => r.json.type === "invoice.signed" && r.json.data.invoiceId === id)!.json.data.status, "signed");
  const raw = await h.raw(id);
  assert.equal(raw?.events, [], "enqueued events are cleared from the invoice");
});

test("invoice.rejected (with the code and violations) and invoice.frozen", async () => {
  const bad = intakeInvoice("WH2");
  delete bad.invoice_line;
  const rejected = (await accepted(await h.intake(bad, { key: "wh-key-0002" }))).invoiceId as string;
  h.sim.faults.set("sign", { kind: "renamed", afterProcessing: true, times: 1 });
  const frozen = (await accepted(await h.intake(intakeInvoice("WH3"), { key: "wh-key-0003" }))).invoiceId as string;
  await h.waitFor(rejected, final);
  await h.waitFor(frozen, final);
  await until(() => eventsOf(rejected).length === 2 && eventsOf(frozen).length === 2, 5_000);
  assert.equal(eventsOf(rejected).sort(), ["invoice.accepted", "invoice.rejected"]);
  const r = h.received.find((x) => x.json.type === "invoice.rejected" && x.json.data.invoiceId === rejected)!;
  assert.is(r.json.data.lastError.code, "GW_REQUEST_VALIDATION_FAILED");
  assert.match(r.json.data.lastError.regulatorMessage, /invoice_line/, "the regulator's explanation reaches the business");
  assert.equal(eventsOf(frozen).sort(), ["invoice.accepted", "invoice.frozen"]);
  assert.is(h.received.find((x) => x.json.type === "invoice.frozen")!.json.data.lastError.code, "GW_SIGN_OUTCOME_UNCONFIRMED");
});

test("the outbox unreachable when an event is recorded: it is enqueued later, exactly once per event", async () => {
  // Webhooks are recorded on the invoice with the transition; a failed enqueue is retried by the processor.
  const id = (await accepted(await h.intake(intakeInvoice("WH4"), { key: "wh-key-0004" }))).invoiceId as string;
  await h.waitFor(id, final);
  await until(() => eventsOf(id).length === 2, 5_000);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(eventsOf(id).sort(), ["invoice.accepted", "invoice.signed"], "no duplicates");
});

test("the simulator pushes an invoice it signed to the buyer: stored as inbound / received, listed, announced", async () => {
  // Sign an invoice of the demo taxpayer addressed to itself as buyer (one fixture taxpayer).
  const id = (await accepted(await h.intake(intakeInvoice("IN1", { overrides: inboundDoc("IN1") }), { key: "wh-in-0001" }))).invoiceId as string;
  await h.waitFor(id, final);
  const push = await fetch(`${h.sim.url}/__sim/inbound`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ target: `${h.server.url}/regulator/inbound-invoices`, irn: irnOf("IN1") }),
  });
  const pushed = await push.json();
  assert.is(pushed.status, 200, JSON.stringify(pushed));
  assert.equal(pushed.response, { status: "accepted" });
  const list = await (await h.call("GET", "/invoices?direction=inbound")).json();
  const inbound = list.data.find((d: { irn: string }) => d.irn === irnOf("IN1"));
  assert.ok(inbound, "listed under the buyer's business");
  assert.is(inbound.status, "received");
  assert.is(inbound.direction, "inbound");
  assert.is(inbound.subBusinessId, SUB);
  assert.equal((await h.invoice(inbound.invoiceId)).document, h.sim.state.invoice(irnOf("IN1"))!.invoice);
  await until(() => eventsOf(inbound.invoiceId).includes("invoice.inbound.received"), 5_000);
  // The same delivery again (same id): acknowledged, nothing stored twice.
  const again = await fetch(`${h.sim.url}/__sim/inbound`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ target: `${h.server.url}/regulator/inbound-invoices`, irn: irnOf("IN1"), deliveryId: pushed.deliveryId }),
  });
  assert.equal((await again.json()).response, { status: "duplicate" });
  const after = await (await h.call("GET", "/invoices?direction=inbound")).json();
  assert.is(after.data.filter((d: { irn: string }) => d.irn === irnOf("IN1")).length, 1);
  await new Promise((r) => setTimeout(r, 150));
  assert.is(eventsOf(inbound.invoiceId).length, 1, "one webhook");
});

test("inbound verification: bad signature 401, missing headers and stale timestamps 400, other content under a used id 409", async () => {
  const body = { delivery_id: "dlv-verify-0001", environment: "TEST", buyer_tin: DEMO.tin, irn: irnOf("IN2"), invoice: inboundDoc("IN2") };
  await expectProblem(await delivery(body, { secret: "not-the-secret" }), 401, "GW_API_KEY_INVALID");
  await expectProblem(await delivery(body, { signature: "v1,AAAA" }), 401, "GW_API_KEY_INVALID");
  const missing = await expectProblem(await delivery(body, { signature: null }), 400, "GW_REQUEST_HEADER_INVALID");
  assert.equal(missing.errors[0], { location: "header", field: "x-regulator-signature", code: "REQUIRED", detail: "v1,<base64 HMAC-SHA256>" });
  const stale = await expectProblem(await delivery(body, { timestamp: Math.floor(Date.now() / 1000) - 301 }), 400, "GW_REQUEST_HEADER_INVALID");
  assert.is(stale.errors[0].code, "RANGE");
  await expectProblem(await delivery(body, { timestamp: Math.floor(Date.now() / 1000) + 400 }), 400, "GW_REQUEST_HEADER_INVALID");
  // A body changed after signing does not verify.
  const ts = Math.floor(Date.now() / 1000);
  const sig = signDelivery(SECRET, ts, JSON.stringify(body));
  const tampered = await h.call("POST", "/regulator/inbound-invoices", {
    host: "127.0.0.1",
    apiKey: null,
    headers: { "x-regulator-timestamp": String(ts), "x-regulator-signature": sig },
    body: JSON.stringify({ ...body, buyer_tin: "99999999-0001" }),
  });
  await expectProblem(tampered, 401, "GW_API_KEY_INVALID");
  assert.equal(await (await delivery(body)).json(), { status: "accepted" });
  // Whitespace the regulator adds is part of what it signed: raw bytes are verified.
  const spaced = JSON.stringify({ ...body, delivery_id: "dlv-verify-0002" }, null, 2);
  const sig2 = "v0,ignored v1," + createHmac("sha256", SECRET).update(`${ts}.${spaced}`).digest("base64");
  const ok = await h.call("POST", "/regulator/inbound-invoices", {
    host: "127.0.0.1",
    apiKey: null,
    headers: { "x-regulator-timestamp": String(ts), "x-regulator-signature": sig2 },
    body: spaced,
  });
  assert.is(ok.status, 200, await ok.clone().text());
  await expectProblem(await delivery({ ...body, irn: irnOf("IN3") }), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  const invalid = await expectProblem(await delivery({ ...body, delivery_id: "dlv-verify-0003", environment: "PROD" }), 400, "GW_REQUEST_VALIDATION_FAILED");
  assert.is(invalid.errors[0].pointer, "/environment");
});

test("an unknown buyer TIN (or another environment) is acknowledged and dropped, logged without the TIN", async () => {
  const unknown = { delivery_id: "dlv-unknown-0001", environment: "TEST", buyer_tin: "77777777-0001", irn: irnOf("IN4"), invoice: inboundDoc("IN4") };
  assert.equal(await (await delivery(unknown)).json(), { status: "accepted" });
  const live = { ...unknown, delivery_id: "dlv-unknown-0002", environment: "LIVE", buyer_tin: DEMO.tin };
  assert.equal(await (await delivery(live)).json(), { status: "accepted" });
  const list = await (await h.call("GET", "/invoices?direction=inbound")).json();
  assert.not.ok(list.data.some((d: { irn: string }) => d.irn === irnOf("IN4")));
  const logs = JSON.stringify(h.tg.logs.filter((l) => l.event === "stored_inbound_unrouted"));
  assert.ok(logs.length > 2);
  assert.not.ok(logs.includes("77777777-0001"));
});

test("/health/dependencies: the processor heartbeat, the backlog per status, the oldest pending age", async () => {
  h.sim.faults.set("validate", { kind: "status", status: 503 });
  const id = (await accepted(await h.intake(intakeInvoice("HB1"), { key: "wh-hb-0001" }))).invoiceId as string;
  await h.waitFor(id, (i) => i.attempts >= 1);
  await new Promise((r) => setTimeout(r, 150));
  const res = await h.tg.gateway.fetch(new Request("http://localhost/health/dependencies", { headers: { host: "localhost", "x-admin-api-key": ADMIN_KEY } }));
  assert.is(res.status, 200);
  // The snapshot refreshes in the background; wait for one that includes the pending invoice.
  let snap = (await res.json()) as Record<string, any>;
  const deadline = Date.now() + 8_000;
  while (!(snap.workers?.storedProcessor?.backlog?.pending >= 1)) {
    assert.ok(Date.now() < deadline, JSON.stringify(snap.workers));
    await new Promise((r) => setTimeout(r, 100));
    snap = (await (await h.tg.gateway.fetch(new Request("http://localhost/health/dependencies", { headers: { host: "localhost", "x-admin-api-key": ADMIN_KEY } }))).json()) as Record<string, any>;
  }
  const sp = snap.workers.storedProcessor;
  assert.is(sp.processors.length, 1);
  assert.equal(Object.keys(sp.processors[0]).sort(), ["concurrency", "host", "id", "inFlight", "lastTickAgeMs", "lastTickAt", "pid", "processed", "startedAt"]);
  assert.is(sp.processors[0].pid, process.pid);
  assert.ok(sp.processors[0].lastTickAgeMs >= 0);
  assert.equal(Object.keys(sp.backlog).sort(), ["pending", "signing", "transmitting", "validated"]);
  assert.ok(sp.oldestPendingAgeMs >= 0);
  assert.type(sp.frozen, "number");
  h.sim.faults.clear("validate");
});

test.run();
