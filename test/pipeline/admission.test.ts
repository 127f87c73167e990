/**
 * Stage 5, admission: an early per-window limit keyed by canonical domain + trusted client address,
 * before authentication. The window is driven by an injected clock, so nothing here depends on
 * wall-clock timing.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { plugins } from "../../plugins/index.ts";
import { expectProblem } from "../support/assertions.ts";
import {
  DEMO_KEY_HEADERS as KEY,
  OTHER,
  OTHER_KEY,
  PASSTHROUGH,
  STORED,
  TRUSTED_EDGE as EDGE,
  gatewayTracker,
} from "../support/gateway.ts";
import { probeHits, probePlugin } from "../support/probe-plugin.ts";

/** A window boundary (multiple of 10 s) plus 2.5 s: 7.5 s of the 10 s window remain. */
const WINDOW_START = 1_900_000_000_000;

function clock(start = WINDOW_START + 2_500) {
  const c = { t: start, now: () => c.t };
  return c;
}

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("the request over perClient in a window gives 429 GW_RATE_LIMIT_EXCEEDED with Retry-After to the window's end", async () => {
  const c = clock();
  const tg = await start({ plugins: [probePlugin], now: c.now, patch: { limits: { admission: { perClient: 3, windowSeconds: 10 } } } });
  probeHits.reset();
  for (let i = 1; i <= 3; i++) assert.is((await tg.call("/probe/counted", { headers: KEY })).status, 200, `request ${i}`);
  const res = await tg.call("/probe/counted", { headers: KEY });
  const body = await expectProblem(res, 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  assert.is(res.headers.get("retry-after"), "8", "ceil(7.5 s) to the end of the window");
  assert.is(body.retry.afterSeconds, 8);
  assert.is(body.retry.sameIdempotencyKey, true);
  assert.is(probeHits.count, 3, "the refused request never reached its handler");
  // Later in the same window the wait is shorter, never below 1 s.
  c.t = WINDOW_START + 9_999;
  const late = await tg.call("/probe/counted", { headers: KEY });
  await expectProblem(late, 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  assert.is(late.headers.get("retry-after"), "1");
  // The next window starts afresh.
  c.t = WINDOW_START + 10_000;
  for (let i = 1; i <= 3; i++) assert.is((await tg.call("/probe/counted", { headers: KEY })).status, 200, `next window ${i}`);
  await expectProblem(await tg.call("/probe/counted", { headers: KEY }), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  await tg.close();
});

test("admission runs before authentication: unauthenticated requests count, and the 4th is 429, not 401", async () => {
  const tg = await start({ plugins: [probePlugin], now: clock().now, patch: { limits: { admission: { perClient: 3, windowSeconds: 10 } } } });
  for (let i = 1; i <= 3; i++) assert.is((await tg.call("/probe/echo")).status, 401, `request ${i}`);
  await expectProblem(await tg.call("/probe/echo"), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  await expectProblem(await tg.call("/probe/echo", { headers: KEY }), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  await tg.close();
});

test("the key is the canonical domain: other hosts have their own budget, spellings of one host share it", async () => {
  const tg = await start({ plugins: [probePlugin], now: clock().now, patch: { limits: { admission: { perClient: 3, windowSeconds: 10 } } } });
  for (const host of [PASSTHROUGH, "PassThrough.Demo.Localhost.:3000", "passthrough.demo.localhost."])
    assert.is((await tg.call("/probe/echo", { host, headers: KEY })).status, 200, host);
  await expectProblem(await tg.call("/probe/echo", { host: PASSTHROUGH, headers: KEY }), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  for (let i = 1; i <= 3; i++) assert.is((await tg.call("/probe/echo", { host: STORED, headers: KEY })).status, 200, `stored ${i}`);
  for (let i = 1; i <= 3; i++) assert.is((await tg.call("/probe/echo", { host: OTHER, headers: { "x-api-key": OTHER_KEY } })).status, 200, `other ${i}`);
  await expectProblem(await tg.call("/probe/echo", { host: STORED, headers: KEY }), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  await tg.close();
});

test("the key is the trusted client address: another client has its own budget; X-Forwarded-For changes nothing", async () => {
  const tg = await start({
    plugins: [probePlugin],
    now: clock().now,
    patch: { edge: EDGE, limits: { admission: { perClient: 3, windowSeconds: 10 } } },
  });
  const from = (ip: string, extra: Record<string, string> = {}) =>
    tg.call("/probe/echo", { headers: { ...KEY, "x-edge-secret": EDGE.secret, "x-edge-client-ip": ip, ...extra } });
  for (let i = 1; i <= 3; i++) assert.is((await from("10.0.0.1", { "x-forwarded-for": `192.0.2.${i}` })).status, 200);
  await expectProblem(await from("10.0.0.1", { "x-forwarded-for": "192.0.2.99" }), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  for (let i = 1; i <= 3; i++) assert.is((await from("10.0.0.2")).status, 200, `second client ${i}`);
  await expectProblem(await from("10.0.0.2"), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  await tg.close();
});

test("beyond maxTrackedClients new clients share one bucket (memory stays bounded); tracked clients keep theirs", async () => {
  const tg = await start({
    plugins: [probePlugin],
    now: clock().now,
    patch: { edge: EDGE, limits: { admission: { perClient: 2, windowSeconds: 10, maxTrackedClients: 1 } } },
  });
  const from = (ip: string) => tg.call("/probe/echo", { headers: { ...KEY, "x-edge-secret": EDGE.secret, "x-edge-client-ip": ip } });
  assert.is((await from("10.0.0.1")).status, 200, "tracked client");
  assert.is((await from("10.0.0.2")).status, 200, "overflow 1");
  assert.is((await from("10.0.0.3")).status, 200, "overflow 2");
  await expectProblem(await from("10.0.0.4"), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  assert.is((await from("10.0.0.1")).status, 200, "the tracked client still has its own budget");
  await expectProblem(await from("10.0.0.1"), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  await tg.close();
});

test("health skips admission; pipeline.disable: [\"admission\"] turns the stage off", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin], now: clock().now, patch: { limits: { admission: { perClient: 1, windowSeconds: 10 } } } });
  assert.is((await tg.call("/probe/echo", { headers: KEY })).status, 200);
  await expectProblem(await tg.call("/probe/echo", { headers: KEY }), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  for (let i = 0; i < 3; i++) assert.is((await tg.call("/health")).status, 200);
  await tg.close();

  const off = await start({
    plugins: [probePlugin],
    now: clock().now,
    patch: { pipeline: { disable: ["admission"] }, limits: { admission: { perClient: 1, windowSeconds: 10 } } },
  });
  assert.not.ok(off.gateway.pipeline.names.includes("admission"));
  for (let i = 0; i < 3; i++) assert.is((await off.call("/probe/echo", { headers: KEY })).status, 200);
  await off.close();
});

test.run();
