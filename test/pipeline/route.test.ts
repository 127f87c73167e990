/**
 * Stage 2, route: method + path against the host's surface (404 / 405 + Allow), path+query length
 * (414), percent-decoding of path parameters, and the route's own params schema afterwards.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { expectProblem } from "../support/assertions.ts";
import { BEARER_DEMO, DEMO_KEY_HEADERS as KEY, PASSTHROUGH, gatewayTracker } from "../support/gateway.ts";
import { probeHits, probePlugin } from "../support/probe-plugin.ts";

const MUTATION = { ...KEY, "x-idempotency-key": "route-test-0001" };

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("an unknown path gives 404 GW_ROUTE_NOT_FOUND (DO_NOT_RETRY), before authentication", async () => {
  const tg = await start({ plugins: [probePlugin] });
  for (const headers of [KEY, {}]) {
    const res = await tg.call("/probe/nope", { headers });
    const body = await expectProblem(res, 404, "GW_ROUTE_NOT_FOUND", "DO_NOT_RETRY");
    assert.is(body.path, "/probe/nope");
    assert.is(body.retry.sameIdempotencyKey, false);
  }
  await expectProblem(await tg.call("/", { headers: KEY }), 404, "GW_ROUTE_NOT_FOUND", "DO_NOT_RETRY");
  const done = tg.logs.filter((l) => l.event === "gateway_request_completed");
  assert.ok(done.every((l) => l.route === null && l.code === "GW_ROUTE_NOT_FOUND"));
  await tg.close();
});

test("a known path with another method gives 405 GW_METHOD_NOT_ALLOWED with Allow listing the declared methods", async () => {
  const tg = await start({ plugins: [probePlugin] });
  probeHits.reset();
  for (const method of ["POST", "PUT", "PATCH", "OPTIONS"]) {
    const res = await tg.call("/probe/echo", { method, headers: KEY, body: method === "OPTIONS" ? undefined : {} });
    await expectProblem(res, 405, "GW_METHOD_NOT_ALLOWED", "AFTER_CORRECTION");
    assert.is(res.headers.get("allow"), "DELETE, GET", method);
  }
  // Unauthenticated: the method is refused before the key is looked at.
  const anon = await tg.call("/probe/echo", { method: "PUT", body: {} });
  await expectProblem(anon, 405, "GW_METHOD_NOT_ALLOWED", "AFTER_CORRECTION");
  // A parameterised path: Allow comes from the path's own declarations.
  const items = await tg.call("/probe/items/abc", { headers: KEY });
  await expectProblem(items, 405, "GW_METHOD_NOT_ALLOWED", "AFTER_CORRECTION");
  assert.is(items.headers.get("allow"), "POST");
  const counted = await tg.call("/probe/counted", { method: "DELETE", headers: KEY });
  await expectProblem(counted, 405, "GW_METHOD_NOT_ALLOWED", "AFTER_CORRECTION");
  assert.is(counted.headers.get("allow"), "GET, POST");
  assert.is(probeHits.count, 0, "the handler never ran");
  // Both declared methods are served.
  assert.is((await tg.call("/probe/echo", { headers: KEY })).status, 200);
  assert.is((await tg.call("/probe/echo", { method: "DELETE", headers: KEY })).status, 200);
  await tg.close();
});

test("path + query longer than server.maxUriLength gives 414 GW_REQUEST_URI_TOO_LONG; the limit itself passes", async () => {
  const max = 64;
  const tg = await start({ plugins: [probePlugin], patch: { server: { maxUriLength: max } } });
  const base = "/probe/echo?q=";
  const atLimit = base + "a".repeat(max - base.length);
  assert.is(atLimit.length, max);
  assert.is((await tg.call(atLimit, { headers: KEY })).status, 200, "exactly at the limit");
  const over = await tg.call(atLimit + "a", { headers: KEY });
  const body = await expectProblem(over, 414, "GW_REQUEST_URI_TOO_LONG", "AFTER_CORRECTION");
  assert.not.ok(JSON.stringify(body).includes("aaaaaaaaaaaaaaaa"), "the query is not echoed");
  // A long path alone counts too, and length is checked before the path is matched and before auth.
  await expectProblem(await tg.call("/probe/" + "x".repeat(max)), 414, "GW_REQUEST_URI_TOO_LONG", "AFTER_CORRECTION");
  await tg.close();
});

test("a collections route is not served on a gateway domain (404 problem+json)", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const res = await tg.call("/api/v1/probe", { host: PASSTHROUGH, headers: { authorization: `Bearer ${BEARER_DEMO}` } });
  await expectProblem(res, 404, "GW_ROUTE_NOT_FOUND", "DO_NOT_RETRY");
  await tg.close();
});

test("a gateway route on a collections host gives 404 in the collections envelope", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const res = await tg.call("/probe/echo", { host: "localhost", headers: KEY });
  assert.is(res.status, 404);
  assert.is(res.headers.get("content-type"), "application/json");
  const body = await res.json();
  assert.equal(Object.keys(body).sort(), ["errors", "message", "requestId", "requestTimestamp", "statusCode"]);
  assert.is(body.statusCode, 404);
  assert.equal(body.errors, []);
  assert.type(body.message, "string");
  assert.match(body.requestTimestamp, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/);
  assert.is(res.headers.get("x-request-id"), body.requestId);
  assert.is(body.code, undefined, "no problem+json fields");
  await tg.close();
});

test("a wrong method on a collections route gives 405 in the collections envelope, with Allow", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const res = await tg.call("/api/v1/probe", { method: "DELETE", host: "localhost", headers: { authorization: `Bearer ${BEARER_DEMO}` } });
  assert.is(res.status, 405);
  assert.is(res.headers.get("content-type"), "application/json");
  assert.is(res.headers.get("allow"), "GET, POST");
  const body = await res.json();
  assert.is(body.statusCode, 405);
  assert.is(res.headers.get("x-request-id"), body.requestId);
  await tg.close();
});

test("malformed percent-encoding in a path parameter gives 400 GW_REQUEST_PATH_PARAMETER_INVALID (location path)", async () => {
  const tg = await start({ plugins: [probePlugin] });
  for (const segment of ["%ZZ", "abc%", "%E0%A4%A", "ab%C3"]) {
    const res = await tg.call(`/probe/items/${segment}`, { method: "POST", headers: MUTATION, body: { name: "widget" } });
    const body = await expectProblem(res, 400, "GW_REQUEST_PATH_PARAMETER_INVALID", "AFTER_CORRECTION");
    assert.is(body.errors.length, 1, segment);
    assert.is(body.errors[0].location, "path");
    assert.is(body.errors[0].field, "itemId");
    assert.is(body.errors[0].code, "FORMAT");
  }
  // Decided at the route stage: no key needed to get it.
  await expectProblem(await tg.call("/probe/items/%ZZ", { method: "POST", body: {} }), 400, "GW_REQUEST_PATH_PARAMETER_INVALID", "AFTER_CORRECTION");
  await tg.close();
});

test("path parameters are percent-decoded before the route sees them", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const res = await tg.call("/probe/items/ab%63-%31", { method: "POST", headers: MUTATION, body: { name: "widget" } });
  assert.is(res.status, 200);
  assert.equal((await res.json()).params, { itemId: "abc-1" });
  await tg.close();
});

test("a path parameter that breaks the route's params schema gives 400 GW_REQUEST_PATH_PARAMETER_INVALID", async () => {
  const tg = await start({ plugins: [probePlugin] });
  for (const itemId of ["AB", "a", "has%20space", "x".repeat(21)]) {
    const res = await tg.call(`/probe/items/${itemId}`, { method: "POST", headers: MUTATION, body: { name: "widget" } });
    const body = await expectProblem(res, 400, "GW_REQUEST_PATH_PARAMETER_INVALID", "AFTER_CORRECTION");
    assert.ok(body.errors.length >= 1, itemId);
    assert.is(body.errors[0].location, "path");
    assert.is(body.errors[0].field, "itemId");
    assert.is(body.errors[0].pointer, undefined, "path problems carry a field, not a pointer");
    assert.ok(body.errors[0].detail.length <= 256);
  }
  await tg.close();
});

test.run();
