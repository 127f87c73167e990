/**
 * RFC 9112 §3.2: a request with more than one Host header is refused with 400, over a real socket,
 * in the contract's shape (problem+json GW_REQUEST_HEADER_INVALID naming Host on gateway and unknown
 * hosts; the collections envelope on a collections host), before any route, credential or handler
 * is looked at. Two different values and two identical values alike; one Host still works.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DEMO_KEY, OTHER, PASSTHROUGH, gatewayTracker } from "../support/gateway.ts";
import { rawRequest } from "../support/raw-http.ts";
import { probeHits, probePlugin } from "../support/probe-plugin.ts";
import { plugins } from "../../plugins/index.ts";

const { start, closeAll } = gatewayTracker();
test.after(closeAll);

const tg = await start({ plugins: [...plugins, probePlugin] });
const server = await tg.listen();

const send = (hosts: string[], path = "/probe/counted", extra: string[] = [`x-api-key: ${DEMO_KEY}`]) =>
  rawRequest({ port: server.port, head: [`GET ${path} HTTP/1.1`, ...hosts.map((h) => `Host: ${h}`), ...extra, "Connection: close"] });

test("two Host headers, different or identical: 400 GW_REQUEST_HEADER_INVALID naming Host, the handler never runs", async () => {
  probeHits.reset();
  for (const hosts of [[PASSTHROUGH, OTHER], [PASSTHROUGH, PASSTHROUGH], [PASSTHROUGH, "unknown.example"], ["unknown.example", PASSTHROUGH], [PASSTHROUGH, PASSTHROUGH.toUpperCase(), PASSTHROUGH]]) {
    const res = await send(hosts);
    assert.is(res.status, 400, `${hosts.join(" | ")}: ${res.body.slice(0, 200)}`);
    assert.match(res.headers["content-type"] ?? "", /^application\/problem\+json/);
    const body = JSON.parse(res.body);
    assert.is(body.code, "GW_REQUEST_HEADER_INVALID");
    assert.equal(body.errors, [{ location: "header", field: "Host", code: "FORMAT", detail: "exactly one Host header" }]);
    assert.is(body.requestId, res.headers["x-request-id"]);
  }
  assert.is(probeHits.count, 0);
  assert.is((await send([PASSTHROUGH])).status, 200, "one Host is served");
});

test("on a collections host, the collections envelope", async () => {
  const res = await send(["localhost", "localhost"], "/api/v1/payment-link", []);
  assert.is(res.status, 400, res.body);
  const body = JSON.parse(res.body);
  assert.is(body.statusCode, 400);
  assert.is(body.requestId, res.headers["x-request-id"]);
  assert.ok(Array.isArray(body.errors));
});

test.run();
