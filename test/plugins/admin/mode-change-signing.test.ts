/**
 * The control plane against the real invoice plugins (regulator simulator over HTTP, the document
 * ledger), over real HTTP:
 * - a sign request authorized under one modeVersion whose domain is approved in another mode before
 *   its handler ran answers 409 GW_DOMAIN_APPROVAL_STATE_CHANGED: nothing charged, regulator not called;
 * - represented-business mappings carry over a mode change (not onboarded again);
 * - a sign fee set through the Admin API is what the next sign debits;
 * - frozen Pass-through sign attempts are listed for operators.
 */
import { connect } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RunningServer } from "../../../core/server.ts";
import { httpCall } from "../../support/raw-http.ts";
import { ADMIN_KEY, DEMO_KEY, PASSTHROUGH, SUB, invoice, startSigningHarness } from "../signing/signing-helpers.ts";

const h = await startSigningHarness();
let server: RunningServer;
test.before(async () => {
  server = await h.tg.listen();
});
test.after(async () => {
  await h.close();
  await h.sim.close();
});

let n = 0;
const admin = async (method: string, path: string, body?: unknown) => {
  const res = await httpCall(server.url, path, {
    method,
    host: "localhost",
    headers: { "x-admin-api-key": ADMIN_KEY, "content-type": "application/json", ...(method === "GET" ? {} : { "x-idempotency-key": `mode-signing-${++n}-0001` }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
  return res.json() as any;
};
const signCalls = () => h.sim.state.calls("sign");
const debits = async () => (await h.billing.wallet("demo", 1000)).entries.filter((e) => e.type === "debit");

test("a sign authorized under modeVersion 1 whose domain is approved in Stored mode before its handler runs: 409 GW_DOMAIN_APPROVAL_STATE_CHANGED, nothing charged", async () => {
  const body = JSON.stringify(invoice("MV1"));
  const head = [
    "POST /api/v1/invoice/sign HTTP/1.1",
    `Host: ${PASSTHROUGH}`,
    `x-api-key: ${DEMO_KEY}`,
    `x-sub-business-id: ${SUB}`,
    "x-idempotency-key: mode-version-sign-0001",
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    "connection: close",
  ];
  const before = { calls: signCalls(), debits: (await debits()).length };
  const socket = connect(Number(new URL(server.url).port), "127.0.0.1");
  let answer = "";
  socket.on("data", (d) => (answer += d));
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  await new Promise<void>((resolve) => socket.on("connect", () => resolve()));
  // The head and half the body: the pipeline authorizes the request (modeVersion 1), then waits for the rest.
  socket.write(head.join("\r\n") + "\r\n\r\n" + body.slice(0, 200));
  // Until the gateway holds the request (it is in its pipeline), then a moment for the in-process stages.
  for (const end = Date.now() + 5_000; h.tg.gateway.runtime.inFlight().total === 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 100));
  await admin("POST", `/admin/domains/${PASSTHROUGH}/mode-change`, { mode: "stored" });
  const approved = await admin("POST", `/admin/domains/${PASSTHROUGH}/approval`, {});
  assert.is(approved.modeVersion, 2);
  socket.end(body.slice(200));
  await closed;
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
  const problem = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4).replace(/^[0-9a-f]+\r\n|\r\n0\r\n\r\n$/g, ""));
  assert.is(status, 409, answer.slice(0, 300));
  assert.is(problem.code, "GW_DOMAIN_APPROVAL_STATE_CHANGED");
  assert.is(problem.retry.strategy, "AFTER_CORRECTION");
  assert.is(signCalls(), before.calls, "the regulator was not called");
  assert.is((await debits()).length, before.debits, "nothing was charged");
  // A new request now meets the new mode: a Pass-through-only route is refused (on a Stored domain
  // the sign path itself is the Stored intake).
  const now = await h.call("POST", "/api/v1/invoice/validate", { sub: SUB, body: invoice("MV1") });
  assert.is(now.status, 409);
  assert.is((await now.json()).code, "GW_OPERATION_MODE_CONFLICT");
});

test("represented-business mappings carry over the mode change: the same represented business, not onboarded again", async () => {
  const res = await h.call("GET", "/sub-businesses");
  assert.is(res.status, 200);
  const ids = (await res.json()).data.map((s: { gatewaySubBusinessId: string }) => s.gatewaySubBusinessId);
  assert.equal(ids, [SUB]);
  // Back to Pass-through: signing works again with the same represented business.
  await admin("POST", `/admin/domains/${PASSTHROUGH}/mode-change`, { mode: "passthrough" });
  assert.is((await admin("POST", `/admin/domains/${PASSTHROUGH}/approval`, {})).modeVersion, 3);
  const signed = await h.sign(invoice("MV2"), { key: "mode-version-sign-0003" });
  assert.is(signed.status, 201, await signed.clone().text());
});

test("a sign fee set through the Admin API is what the next sign debits", async () => {
  const domain = await admin("PATCH", `/admin/domains/${PASSTHROUGH}`, { signFee: 75.25 });
  assert.is(domain.signFee, 75.25);
  const signed = await h.sign(invoice("FEE1"), { key: "fee-sign-0001" });
  assert.is(signed.status, 201);
  const last = (await debits())[0]!;
  assert.is(last.amountKobo, 7_525);
  assert.is(last.billingIdentity?.irn, invoice("FEE1").irn);
});

test("frozen Pass-through sign attempts are listed for operators (newest first, with a cursor), the debit held", async () => {
  for (const no of ["FZ1", "FZ2"]) {
    h.sim.faults.set("sign", { kind: "malformed", afterProcessing: true, times: 1 } as never);
    const res = await h.sign(invoice(no), { key: `frozen-sign-${no}-0001` });
    assert.is(res.status, 502);
  }
  const page1 = await admin("GET", "/admin/invoices/frozen?limit=1");
  assert.is(page1.data.length, 1);
  assert.type(page1.nextCursor, "string");
  const page2 = await admin("GET", `/admin/invoices/frozen?limit=1&cursor=${page1.nextCursor}`);
  const ops = [...page1.data, ...page2.data];
  assert.equal(ops.map((o) => o.irn), [invoice("FZ2").irn, invoice("FZ1").irn]);
  for (const o of ops) {
    assert.is(o.kind, "passthrough-sign");
    assert.is(o.businessId, "demo");
    assert.is(o.domain, PASSTHROUGH);
    assert.is(o.subBusinessId, SUB);
    assert.is(o.attemptNumber, 1);
    assert.is(o.money, "held");
    assert.is(o.code, "GW_SIGN_OUTCOME_UNCONFIRMED");
    assert.type(o.operationId, "string");
  }
  assert.equal((await admin("GET", "/admin/invoices/frozen?businessId=other")).data, []);
});

test.run();
