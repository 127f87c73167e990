/**
 * Regulator client on the wire: what every outbound call carries (deployment credentials, the hop
 * marker, the request id), redirects never followed, keep-alive reuse, base-path prefixes, the exact
 * bytes of a Pass-through document. Uses small node:http servers that record what they receive.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createHopMarker, HOP_HEADER } from "../../../core/http/hop.ts";
import { CREDENTIALS, demoInvoice } from "./simulator/simulator-helpers.ts";
import { assertGw, CTX, gwFailure, makeClient, startRecordingServer, type TestServer } from "./regulator-helpers.ts";

const test = suite("regulator client: wire");
let echo: TestServer;
let redirect: TestServer;

test.before(async () => {
  echo = await startRecordingServer();
  // Answers every call with a redirect to the echo server: a client that followed it would reach echo.
  redirect = await startRecordingServer((r) => ({ status: 302, headers: { location: `${echo.url}${r.url}` } }));
});
test.after(async () => {
  await echo.close();
  await redirect.close();
});
test.before.each(() => {
  echo.requests.length = 0;
  redirect.requests.length = 0;
});

test("every operation sends x-api-key, x-api-secret, the deployment's hop marker for the regulator's host and the request id", async () => {
  const h = makeClient({ TEST: echo.url });
  try {
    await h.client.authenticate("TEST", { email: "a@b.ng", password: "pw" }, CTX).catch(() => undefined);
    await h.client.getEntity("TEST", "ent-1", CTX).catch(() => undefined);
    await h.client.validateIrn("TEST", { invoice_reference: "A", business_id: "b", irn: "A-B-C" }, CTX);
    await h.client.validateInvoice("TEST", { a: 1 }, CTX);
    await h.client.sign("TEST", { a: 1 }, CTX);
    await h.client.transmit("TEST", "INV1-ABCD1234-20240611", CTX);
    await h.client.relay("TEST", { method: "GET", path: "/api/v1/invoice/resources/currencies" }, CTX);
    assert.is(echo.requests.length, 7);
    for (const r of echo.requests) {
      assert.ok(createHopMarker(CREDENTIALS.apiSecret).isOwn(String(r.headers[HOP_HEADER]), new URL(echo.url).host), r.url);
      assert.is(r.headers["x-api-key"], CREDENTIALS.apiKey, r.url);
      assert.is(r.headers["x-api-secret"], CREDENTIALS.apiSecret, r.url);
      assert.is(r.headers["x-request-id"], CTX.requestId, r.url);
    }
    assert.equal(
      echo.requests.map((r) => `${r.method} ${r.url}`),
      [
        "POST /api/v1/utilities/authenticate",
        "GET /api/v1/entity/ent-1",
        "POST /api/v1/invoice/irn/validate",
        "POST /api/v1/invoice/validate",
        "POST /api/v1/invoice/sign",
        "POST /api/v1/invoice/transmit/INV1-ABCD1234-20240611",
        "GET /api/v1/invoice/resources/currencies",
      ],
    );
    assert.is(echo.requests[5]!.body, "{}");
  } finally {
    await h.close();
  }
});

test("a request id that is not a safe token is not forwarded (and the call still goes out)", async () => {
  const h = makeClient({ TEST: echo.url });
  try {
    await h.client.relay("TEST", { method: "GET", path: "/api/v1/invoice/resources/x" }, { requestId: "bad id\r\nx: y" });
    assert.is(echo.requests.length, 1);
    assert.is(echo.requests[0]!.headers["x-request-id"], undefined);
  } finally {
    await h.close();
  }
});

test("redirects are never followed: relay → GW_UPSTREAM_RESPONSE_INVALID, sign → ambiguous, the target is never reached", async () => {
  const h = makeClient({ TEST: redirect.url });
  try {
    const e = await gwFailure(h.client.relay("TEST", { method: "GET", path: "/api/v1/invoice/resources/currencies" }, CTX));
    assertGw(e, "GW_UPSTREAM_RESPONSE_INVALID", 502, true);
    const o = await h.client.sign("TEST", demoInvoice("R1"), CTX);
    assert.equal(o, { kind: "ambiguous", reason: "redirect", upstreamStatus: 302 });
    const a = await gwFailure(h.client.authenticate("TEST", { email: "a@b.ng", password: "pw" }, CTX));
    assertGw(a, "GW_REG_AUTH_RESPONSE_INVALID", 502, true);
    assert.is(redirect.requests.length, 3);
    assert.is(echo.requests.length, 0);
  } finally {
    await h.close();
  }
});

test("keep-alive: 20 sequential calls reuse pooled connections (not one connection per call)", async () => {
  const h = makeClient({ TEST: echo.url });
  try {
    const before = echo.sockets();
    for (let i = 0; i < 20; i++) await h.client.relay("TEST", { method: "GET", path: "/api/v1/invoice/resources/currencies" }, CTX);
    // undici may open a second socket when a call is dispatched before the first socket reports "free".
    assert.ok(echo.sockets() - before <= 2, `${echo.sockets() - before} connections for 20 calls`);
  } finally {
    await h.close();
  }
});

test("a base URL with a path prefix is kept; TEST and LIVE on the same origin share one pool", async () => {
  const h = makeClient({ TEST: `${echo.url}/reg/test/`, LIVE: `${echo.url}/reg/live` });
  try {
    await h.client.relay("TEST", { method: "GET", path: "/api/v1/invoice/resources/a" }, CTX);
    await h.client.relay("LIVE", { method: "GET", path: "/api/v1/invoice/resources/b" }, CTX);
    assert.equal(
      echo.requests.map((r) => r.url),
      ["/reg/test/api/v1/invoice/resources/a", "/reg/live/api/v1/invoice/resources/b"],
    );
  } finally {
    await h.close();
  }
});

test("query parameters are encoded; raw bodies and content types are sent unchanged", async () => {
  const h = makeClient({ TEST: echo.url });
  try {
    await h.client.relay("TEST", { method: "GET", path: "/api/v1/invoice/resources/hs-codes", query: { q: "a b&c", page: 2, tag: ["x", "y"], skip: undefined } }, CTX);
    assert.is(echo.requests[0]!.url, "/api/v1/invoice/resources/hs-codes?q=a+b%26c&page=2&tag=x&tag=y");
    const raw = '{ "business_id" : "b",\n  "amount": 1.10 }';
    await h.client.sign("TEST", raw, CTX);
    assert.is(echo.requests[1]!.body, raw);
    assert.is(echo.requests[1]!.headers["content-type"], "application/json");
    await h.client.relay("TEST", { method: "POST", path: "/api/v1/invoice/irn/validate", body: new TextEncoder().encode("xyz"), contentType: "text/plain" }, CTX);
    assert.is(echo.requests[2]!.body, "xyz");
    assert.is(echo.requests[2]!.headers["content-type"], "text/plain");
  } finally {
    await h.close();
  }
});

test("invalid configuration is refused at construction", () => {
  for (const baseUrls of [{ TEST: "not a url" }, { TEST: "ftp://x.example" }, { TEST: "https://u:p@x.example" }, { LIVE: "https://x.example/?a=1" }]) {
    assert.throws(() => makeClient(baseUrls), RangeError, JSON.stringify(baseUrls));
  }
  assert.throws(() => makeClient({ TEST: echo.url }, { apiSecret: "" }), RangeError);
  assert.throws(() => makeClient({ TEST: echo.url }, { timeoutMs: 0 }), RangeError);
});

test("responses larger than maxResponseBytes are refused (relay) or ambiguous (sign)", async () => {
  const big = await startRecordingServer(() => ({ status: 201, body: JSON.stringify({ code: 201, data: { ok: true, pad: "x".repeat(5000) } }) }));
  const h = makeClient({ TEST: big.url }, { maxResponseBytes: 1024 });
  try {
    assertGw(await gwFailure(h.client.relay("TEST", { method: "GET", path: "/api/v1/invoice/resources/a" }, CTX)), "GW_UPSTREAM_RESPONSE_INVALID", 502, true);
    assert.equal(await h.client.sign("TEST", { a: 1 }, CTX), { kind: "ambiguous", reason: "response_too_large", upstreamStatus: 201 });
  } finally {
    await h.close();
    await big.close();
  }
});

test.run();
