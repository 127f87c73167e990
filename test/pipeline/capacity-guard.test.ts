/**
 * Stage 6, capacity guard: in-flight limits, total and per canonical domain, with Retry-After; the
 * slot is released exactly once on every exit path (success, error, aborted connection); while
 * draining every new request gets the same 503. Requests are parked in /probe/slow (slowGate) so
 * the tests control exactly what is in flight.
 */
import { request } from "node:http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { plugins } from "../../plugins/index.ts";
import { expectProblem, until } from "../support/assertions.ts";
import { DEMO_KEY_HEADERS as KEY, OTHER, OTHER_KEY, PASSTHROUGH, STORED, gatewayTracker } from "../support/gateway.ts";
import { probePlugin, slowGate } from "../support/probe-plugin.ts";

const CAPACITY = { limits: { capacity: { total: 2, perDomain: 1, retryAfterSeconds: 3 } } };

async function expectFull(res: Response): Promise<void> {
  const body = await expectProblem(res, 503, "GW_GATEWAY_CAPACITY_EXCEEDED", "BACKOFF");
  assert.is(res.headers.get("retry-after"), "3", "Retry-After from limits.capacity.retryAfterSeconds");
  assert.is(body.retry.afterSeconds, 3);
  assert.is(body.retry.sameIdempotencyKey, true);
}

const { start, closeAll } = gatewayTracker();
test.after.each(async () => {
  slowGate.releaseAll();
  await closeAll();
});

test("per domain: a second request to a domain at its limit gets 503 with Retry-After; another domain still passes", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin], patch: CAPACITY });
  const parked = tg.call("/probe/slow", { host: PASSTHROUGH, headers: KEY });
  await until(() => slowGate.waiting.length === 1);
  assert.equal(tg.gateway.runtime.inFlight(), { total: 1, perDomain: { [PASSTHROUGH]: 1 } });

  await expectFull(await tg.call("/probe/echo", { host: PASSTHROUGH, headers: KEY }));
  // The per-domain key is the canonical host: other spellings of it share the slot.
  await expectFull(await tg.call("/probe/echo", { host: "PassThrough.Demo.Localhost.:3000", headers: KEY }));
  // Refused before authentication: no key, same 503.
  await expectFull(await tg.call("/probe/echo", { host: PASSTHROUGH }));
  assert.ok(tg.logs.some((l) => l.event === "gateway_capacity_exceeded" && l.host === PASSTHROUGH), "operator signal");

  const stored = await tg.call("/probe/echo", { host: STORED, headers: KEY });
  assert.is(stored.status, 200, "another domain has its own slot");
  // Health does not take a slot.
  assert.is((await tg.call("/health", { host: PASSTHROUGH })).status, 200);

  slowGate.releaseAll();
  assert.is((await parked).status, 200);
  assert.equal(tg.gateway.runtime.inFlight(), { total: 0, perDomain: {} });
  assert.is((await tg.call("/probe/echo", { host: PASSTHROUGH, headers: KEY })).status, 200, "the slot is free again");
  await tg.close();
});

test("total: with every slot taken, a domain with no request in flight is refused too", async () => {
  const tg = await start({ plugins: [probePlugin], patch: CAPACITY });
  const a = tg.call("/probe/slow", { host: PASSTHROUGH, headers: KEY });
  const b = tg.call("/probe/slow", { host: STORED, headers: KEY });
  await until(() => slowGate.waiting.length === 2);
  assert.is(tg.gateway.runtime.inFlight().total, 2);
  await expectFull(await tg.call("/probe/echo", { host: OTHER, headers: { "x-api-key": OTHER_KEY } }));
  slowGate.releaseAll();
  assert.is((await a).status, 200);
  assert.is((await b).status, 200);
  assert.is((await tg.call("/probe/echo", { host: OTHER, headers: { "x-api-key": OTHER_KEY } })).status, 200);
  await tg.close();
});

test("the slot is released after every error exit: handler crash, later-stage refusals, input errors", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { limits: { capacity: { total: 1, perDomain: 1 } } } });
  const next = async (why: string) => {
    assert.equal(tg.gateway.runtime.inFlight(), { total: 0, perDomain: {} }, why);
    assert.is((await tg.call("/probe/echo", { headers: KEY })).status, 200, `next request passes after ${why}`);
  };
  await expectProblem(await tg.call("/probe/boom", { headers: KEY }), 500, "GW_INTERNAL_ERROR", "CONTACT_SUPPORT");
  await next("a handler exception (500)");
  assert.is((await tg.call("/probe/echo")).status, 401);
  await next("an auth refusal (401)");
  assert.is((await tg.call("/probe/stored-only", { headers: KEY })).status, 409);
  await next("a mode conflict (409)");
  assert.is((await tg.call("/probe/items/abc", { method: "POST", headers: KEY, body: { name: "xx" } })).status, 400);
  await next("a missing idempotency key (400)");
  assert.is(
    (await tg.call("/probe/items/abc", { method: "POST", headers: { ...KEY, "x-idempotency-key": "cap-test-0001", "content-type": "application/json" }, body: "{nope" })).status,
    400,
  );
  await next("invalid JSON (400)");
  await tg.close();
});

test("each slot is released exactly once (a double release would free someone else's slot)", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { limits: { capacity: { total: 2, perDomain: 2 } } } });
  const parked = tg.call("/probe/slow", { headers: KEY });
  await until(() => slowGate.waiting.length === 1);
  assert.is((await tg.call("/probe/boom", { host: STORED, headers: KEY })).status, 500);
  assert.is((await tg.call("/probe/echo", { host: STORED })).status, 401);
  assert.is((await tg.call("/probe/echo", { host: STORED, headers: KEY })).status, 200);
  assert.equal(tg.gateway.runtime.inFlight(), { total: 1, perDomain: { [PASSTHROUGH]: 1 } }, "only the parked request holds a slot");
  slowGate.releaseAll();
  await parked;
  assert.equal(tg.gateway.runtime.inFlight(), { total: 0, perDomain: {} });
  await tg.close();
});

test("the slot is released when the client aborts the connection mid-request (real HTTP)", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { limits: { capacity: { total: 1, perDomain: 1 } } } });
  const server = await tg.listen();
  const ac = new AbortController();
  const req = request({ host: "127.0.0.1", port: server.port, path: "/probe/slow", headers: { host: PASSTHROUGH, ...KEY }, signal: ac.signal });
  const outcome = new Promise<string>((resolve) => {
    req.on("response", (res) => resolve(`response ${res.statusCode}`));
    req.on("error", (e) => resolve(e.name));
  });
  req.end();
  await until(() => slowGate.waiting.length === 1);
  assert.is(tg.gateway.runtime.inFlight().total, 1);
  ac.abort();
  assert.is(await outcome, "AbortError", "the client gave up without a response");
  // The handler's work is still in flight until it finishes; then the slot must come back.
  slowGate.releaseAll();
  assert.is(await tg.gateway.runtime.waitIdle(3_000), true, "in-flight returns to 0");
  assert.equal(tg.gateway.runtime.inFlight(), { total: 0, perDomain: {} });
  await until(() => tg.logs.some((l) => l.event === "gateway_request_completed" && l.route === "GET /probe/slow"));
  assert.is((await tg.call("/probe/echo", { headers: KEY })).status, 200, "the only slot is usable again");
  await tg.close();
});

test("while draining every new request gets 503 GW_GATEWAY_CAPACITY_EXCEEDED with Retry-After; health still answers", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin], patch: CAPACITY });
  assert.is((await tg.call("/probe/echo", { headers: KEY })).status, 200);
  tg.gateway.runtime.startDraining();
  await expectFull(await tg.call("/probe/echo", { headers: KEY }));
  await expectFull(await tg.call("/probe/echo", { host: STORED, headers: KEY }));
  await expectFull(await tg.call("/probe/echo", { host: STORED }));
  assert.equal(tg.gateway.runtime.inFlight(), { total: 0, perDomain: {} }, "a refused request holds no slot");
  assert.is((await tg.call("/health")).status, 200);
  await tg.close();
});

test.run();
