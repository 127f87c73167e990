/**
 * Issue 18 item 1: a request that ran is never reported as failed. Answers on one connection leave
 * in request order (RFC 9112 §9.3.2): bytes Node cannot parse after a dispatched request are
 * answered only after that request's own answer, then the connection closes; a parse failure inside
 * a dispatched request's body is answered by that request itself, in its host's shape. All through
 * real sockets, with the bytes written raw.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { expectContractShape, until } from "../../support/assertions.ts";
import { BEARER_DEMO, DEMO_KEY, PASSTHROUGH, gatewayTracker } from "../../support/gateway.ts";
import { rawExchange } from "../../support/raw-http.ts";
import { probePlugin, slowGate } from "../../support/probe-plugin.ts";
import { plugins } from "../../../plugins/index.ts";
import { SUB, invoice, startSigningHarness } from "../../plugins/signing/signing-helpers.ts";

const { start, track, closeAll } = gatewayTracker();
test.after.each(closeAll);

function post(path: string, host: string, headers: string[], body: string, declared = Buffer.byteLength(body)): string {
  return [`POST ${path} HTTP/1.1`, `Host: ${host}`, "Content-Type: application/json", `Content-Length: ${declared}`, ...headers, "", body].join("\r\n");
}

/** Waits until a request is parked in /probe/slow, lets the rest of the exchange happen, releases it. */
async function releaseWhenParked(): Promise<void> {
  await until(() => slowGate.waiting.length > 0);
  await new Promise((r) => setTimeout(r, 100));
  slowGate.releaseAll();
}

test("a body one byte longer than its Content-Length: the client reads 201 for the link it created, then a 400 for the stray byte", async () => {
  const tg = await start();
  const server = await tg.listen();
  const body = JSON.stringify({ link_name: "T", narration: "x", fee_bearer: "MERCHANT", source_reference: "trail-1" });
  const ex = await rawExchange({ port: server.port, send: [post("/api/v1/payment-link", "localhost", [`Authorization: Bearer ${BEARER_DEMO}`], body) + "X"] });
  assert.ok(ex.responses.length >= 1, "an answer arrived");
  const first = ex.responses[0]!;
  assert.is(first.status, 201, "the first answer on the connection is the request's own");
  assert.is(JSON.parse(first.body).data.sourceReference, "trail-1");
  // The stray byte is the start of a request Node cannot parse: answered after, in the host's shape.
  assert.is(ex.responses.length, 2);
  const stray = expectContractShape(ex.responses[1]!, "collections", 400);
  assert.is.not(stray.requestId, JSON.parse(first.body).requestId);
  assert.ok(ex.closed, "the connection closes after the stray bytes are answered");
  // What the client was told is what happened: the link exists, once.
  const found = await tg.call("/api/v1/payment-link/find-by-source-reference/trail-1", { host: "localhost", headers: { authorization: `Bearer ${BEARER_DEMO}` } });
  assert.is(found.status, 200);
});

test("on the sign route: the client reads the sign answer (one NGN 50 debit), never a 400 for work that happened", async () => {
  const h = track(await startSigningHarness());
  const server = await h.tg.listen();
  const body = JSON.stringify(invoice("TRAIL1"));
  const headers = [`x-api-key: ${DEMO_KEY}`, "x-idempotency-key: trail-sign-0001", `x-sub-business-id: ${SUB}`];
  const ex = await rawExchange({ port: server.port, send: [post("/api/v1/invoice/sign", PASSTHROUGH, headers, body) + "X"] });
  assert.is(ex.responses[0]?.status, 201, "the sign answer comes first");
  expectContractShape(ex.responses[1]!, "gateway", 400);
  const ledger = await h.ledgerBalanced();
  assert.is(ledger.debits, 1, "signed and debited once");
  assert.is(ledger.reversals, 0);
  // The merchant resends with the same key and content: told the attempt was processed (409 with its
  // operationId, spec §3.2), no second debit.
  const replay = await h.sign(invoice("TRAIL1"), { key: "trail-sign-0001" });
  assert.is(replay.status, 409);
  assert.is(((await replay.json()) as { code: string }).code, "GW_SIGN_ATTEMPT_ALREADY_PROCESSED");
  assert.is((await h.ledgerBalanced()).debits, 1);
});

test("pipelined requests are answered in order; an unparseable one after them waits for both answers, then the connection closes", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin] });
  const server = await tg.listen();
  const get = (path: string) => [`GET ${path} HTTP/1.1`, `Host: ${PASSTHROUGH}`, `x-api-key: ${DEMO_KEY}`, "", ""].join("\r\n");
  const exchange = rawExchange({ port: server.port, send: [get("/probe/slow") + get("/probe/echo") + "BROKEN\r\n\r\n"], timeoutMs: 5_000 });
  // The first request is parked in its handler while the rest of the bytes have arrived and failed to parse.
  await releaseWhenParked();
  const ex = await exchange;
  assert.equal(
    ex.responses.map((r) => r.status),
    [200, 200, 400],
  );
  assert.equal(JSON.parse(ex.responses[0]!.body), { done: true }, "the slow request's answer is first");
  assert.is(JSON.parse(ex.responses[1]!.body).route, "GET /probe/echo");
  expectContractShape(ex.responses[2]!, "gateway", 400);
  assert.ok(ex.closed);
});

test("a malformed chunk inside a dispatched request's body: that request answers GW_REQUEST_BODY_INCOMPLETE in its host's shape, then the connection closes", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin] });
  const server = await tg.listen();
  const head = ["POST /api/v1/probe HTTP/1.1", "Host: localhost", `Authorization: Bearer ${BEARER_DEMO}`, "Content-Type: application/json", "Transfer-Encoding: chunked", "", ""].join("\r\n");
  const ex = await rawExchange({ port: server.port, send: [head + '5\r\n{"amo\r\n', 50, "zz\r\nunt\":500}\r\n0\r\n\r\n"] });
  assert.is(ex.responses.length, 1, "one answer: the request's own");
  const body = expectContractShape(ex.responses[0]!, "collections", 400);
  assert.match(body.message, /framing/);
  assert.ok(ex.closed);
  await new Promise((r) => setTimeout(r, 50));
  const done = tg.logs.filter((l) => l.event === "gateway_request_completed");
  assert.equal(
    done.map((l) => [l.route, l.code]),
    [["POST /api/v1/probe", "GW_REQUEST_BODY_INCOMPLETE"]],
    "the request is logged once, with its route",
  );
  assert.is(tg.gateway.runtime.inFlight().total, 0);
});

test("a body cut short by a half-close on a collections route: GW_REQUEST_BODY_INCOMPLETE in the collections envelope", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin] });
  const server = await tg.listen();
  const ex = await rawExchange({
    port: server.port,
    send: [post("/api/v1/probe", "localhost", [`Authorization: Bearer ${BEARER_DEMO}`], '{"amount":', 100)],
    end: true,
  });
  assert.is(ex.responses.length, 1);
  const body = expectContractShape(ex.responses[0]!, "collections", 400);
  assert.match(body.message, /ended before the whole body/);
  assert.ok(ex.closed);
});

test("a client that half-closes (FIN) right after a complete request still reads the answer of a request that takes its time", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin] });
  const server = await tg.listen();
  const exchange = rawExchange({
    port: server.port,
    send: [[`GET /probe/slow HTTP/1.1`, `Host: ${PASSTHROUGH}`, `x-api-key: ${DEMO_KEY}`, "", ""].join("\r\n")],
    end: true,
    timeoutMs: 5_000,
  });
  await releaseWhenParked();
  const ex = await exchange;
  assert.equal(
    ex.responses.map((r) => r.status),
    [200],
  );
  assert.ok(ex.closed, "then the server closes its side too");
});

test("keep-alive still works: two well-formed requests on one connection are both answered and the connection stays open", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin] });
  const server = await tg.listen();
  const get = [`GET /probe/echo HTTP/1.1`, `Host: ${PASSTHROUGH}`, `x-api-key: ${DEMO_KEY}`, "", ""].join("\r\n");
  const ex = await rawExchange({ port: server.port, send: [get, 30, get], expect: 2, timeoutMs: 3_000 });
  assert.equal(
    ex.responses.map((r) => r.status),
    [200, 200],
  );
  assert.not.ok(ex.closed, "the server did not close the connection");
});

test.run();
