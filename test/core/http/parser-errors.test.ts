/**
 * Issue 18 items 4, 5 and 6: requests Node's HTTP parser refuses, requests without Host, CONNECT,
 * request targets that are not paths, and headers that arrive too slowly are all answered in the
 * host's contract shape (collections envelope on collections hosts, problem+json on gateway hosts
 * and where no host is known) with a request id; the completion log records the canonical host
 * only, bounded. Raw bytes over real sockets: no HTTP client can send these.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { expectContractShape } from "../../support/assertions.ts";
import { PASSTHROUGH, gatewayTracker } from "../../support/gateway.ts";
import { rawExchange } from "../../support/raw-http.ts";

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

const HOSTS = [
  ["localhost", "collections"],
  [PASSTHROUGH, "gateway"],
  ["unknown.example", "gateway"],
] as const;

/** Requests Node's parser refuses, each with the Host line it carries (`{host}`). */
const MALFORMED: Array<[string, string | Array<string | number>, number]> = [
  ["20 KB header", `GET /health HTTP/1.1\r\nHost: {host}\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, 400],
  ["lower-case method", "get /health HTTP/1.1\r\nHost: {host}\r\n\r\n", 400],
  ["HTTP/9.9", "GET /health HTTP/9.9\r\nHost: {host}\r\n\r\n", 400],
  ["LF-only lines", "GET /health HTTP/1.1\nHost: {host}\n\n", 400],
  ["Content-Length: abc", "POST /health HTTP/1.1\r\nHost: {host}\r\nContent-Length: abc\r\n\r\n", 400],
  ["Content-Length: -1", "POST /health HTTP/1.1\r\nHost: {host}\r\nContent-Length: -1\r\n\r\n", 400],
  ["two Content-Lengths", "POST /health HTTP/1.1\r\nHost: {host}\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400],
  ["Transfer-Encoding and Content-Length", "POST /health HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n", 400],
  ["raw UTF-8 in the path", "GET /héalth HTTP/1.1\r\nHost: {host}\r\n\r\n", 400],
  ["space in a header name", "GET /health HTTP/1.1\r\nHost: {host}\r\nBad Header: x\r\n\r\n", 400],
  ["request line over server.maxUriLength", `GET /${"p".repeat(20_000)} HTTP/1.1\r\nHost: {host}\r\n\r\n`, 414],
];

for (const [name, bytes, status] of MALFORMED) {
  test(`${name}: answered ${status} in every host's contract shape, with a request id`, async () => {
    const tg = await start();
    const server = await tg.listen();
    for (const [host, service] of HOSTS) {
      const send = (Array.isArray(bytes) ? bytes : [bytes]).map((b) => (typeof b === "string" ? Buffer.from(b.replace("{host}", host), "utf8") : b));
      const ex = await rawExchange({ port: server.port, send, timeoutMs: 3_000 });
      assert.is(ex.responses.length, 1, `${host}: one answer (${ex.rest.slice(0, 80)})`);
      const body = expectContractShape(ex.responses[0]!, service, status);
      if (service === "gateway") assert.is(body.code, status === 414 ? "GW_REQUEST_URI_TOO_LONG" : "GW_REQUEST_HEADER_INVALID");
      assert.ok(ex.closed, `${host}: the connection closes`);
      const logged = tg.logs.find((l) => l.event === "gateway_request_completed" && l.requestId === body.requestId);
      assert.ok(logged, `${host}: the answer is logged as a request`);
      assert.is(logged!.status, status);
    }
  });
}

test("HTTP/1.1 without Host: 400 GW_REQUEST_HEADER_INVALID naming Host, problem+json with a request id (no host known)", async () => {
  const tg = await start();
  const server = await tg.listen();
  for (const path of ["/health", "/api/v1/payment-link", "/sub-businesses"]) {
    const ex = await rawExchange({ port: server.port, send: [`GET ${path} HTTP/1.1\r\n\r\n`], expect: 1, timeoutMs: 3_000 });
    const body = expectContractShape(ex.responses[0]!, "gateway", 400);
    assert.is(body.code, "GW_REQUEST_HEADER_INVALID");
    assert.equal(body.errors, [{ location: "header", field: "Host", code: "REQUIRED", detail: "required on HTTP/1.1" }]);
  }
  // HTTP/1.0 has no Host requirement: liveness answers.
  const old = await rawExchange({ port: server.port, send: ["GET /health HTTP/1.0\r\n\r\n"], expect: 1, timeoutMs: 3_000 });
  assert.is(old.responses[0]?.status, 200);
});

test("CONNECT is answered as an unsupported method (405 with Allow, or 404), in the host's shape, never a silent close", async () => {
  const tg = await start();
  const server = await tg.listen();
  const tunnel = await rawExchange({ port: server.port, send: ["CONNECT example.com:443 HTTP/1.1\r\nHost: localhost\r\n\r\n"], timeoutMs: 3_000 });
  expectContractShape(tunnel.responses[0]!, "collections", 404);
  assert.ok(tunnel.closed);
  const known = await rawExchange({ port: server.port, send: [`CONNECT /health HTTP/1.1\r\nHost: ${PASSTHROUGH}\r\n\r\n`], timeoutMs: 3_000 });
  const body = expectContractShape(known.responses[0]!, "gateway", 405);
  assert.is(body.code, "GW_METHOD_NOT_ALLOWED");
  assert.is(known.responses[0]!.headers.allow, "GET");
  const unknown = await rawExchange({ port: server.port, send: ["CONNECT /x HTTP/1.1\r\nHost: nowhere.example\r\n\r\n"], timeoutMs: 3_000 });
  assert.is(expectContractShape(unknown.responses[0]!, "gateway", 404).code, "GW_DOMAIN_NOT_PROVISIONED");
});

test("a request target that is neither a path nor an http(s) URL gets a 400 in the host's shape (srvx would answer a bare 400)", async () => {
  const tg = await start();
  const server = await tg.listen();
  for (const [host, service] of HOSTS) {
    const ex = await rawExchange({ port: server.port, send: [`GET ftp://files.example/x HTTP/1.1\r\nHost: ${host}\r\n\r\n`], timeoutMs: 3_000 });
    expectContractShape(ex.responses[0]!, service, 400);
  }
});

test("headers slower than server.headerReadTimeoutMs: 408 in the host's shape, then the connection closes", async () => {
  const tg = await start({ patch: { server: { headerReadTimeoutMs: 300 } } });
  const server = await tg.listen();
  // A fresh connection whose headers trickle in: no host can be known yet (the gateway's shape).
  const slow = await rawExchange({
    port: server.port,
    send: ["GET /health HTTP/1.1\r\n", 100, "Host: localhost\r\n", 100, "X-A: 1\r\n", 200, "X-B: 2\r\n", 200, "X-C: 3\r\n"],
    timeoutMs: 5_000,
  });
  const body = expectContractShape(slow.responses[0]!, "gateway", 408);
  assert.is(body.code, "GW_REQUEST_BODY_TIMEOUT");
  assert.match(body.detail, /headers did not arrive within 300 ms/);
  assert.ok(slow.closed);
  // A keep-alive connection whose second request is slow: the host of the connection gives the shape.
  const second = await rawExchange({
    port: server.port,
    send: ["GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n", 50, "GET /health HTTP/1.1\r\n", 200, "X-A: 1\r\n", 200, "X-B: 1\r\n"],
    timeoutMs: 5_000,
  });
  assert.equal(
    second.responses.map((r) => r.status),
    [200, 408],
  );
  expectContractShape(second.responses[1]!, "collections", 408);
  // Headers that arrive in time are served.
  const ok = await rawExchange({ port: server.port, send: ["GET /health HTTP/1.1\r\n", 50, "Host: localhost\r\n\r\n"], expect: 1, timeoutMs: 3_000 });
  assert.is(ok.responses[0]?.status, 200);
});

test("the completion log records the canonical host only, bounded: no userinfo, no port, no 5 000-character value", async () => {
  const tg = await start();
  const server = await tg.listen();
  for (const host of ["user:pw@localhost", `${"h".repeat(5_000)}.example`, "LocalHost.:3000", "local host", "[::1]:8080"]) {
    const ex = await rawExchange({ port: server.port, send: [`GET /health HTTP/1.1\r\nHost: ${host}\r\n\r\n`], expect: 1, timeoutMs: 3_000 });
    assert.is(ex.responses[0]?.status, 200, host.slice(0, 40));
  }
  const hosts = tg.logs.filter((l) => l.event === "gateway_request_completed").map((l) => l.host);
  assert.equal(hosts, ["", "", "localhost", "", "::1"]);
  for (const l of tg.logs) assert.not.ok(JSON.stringify(l).includes("user:pw"), "no userinfo in any log line");
});

test.run();
