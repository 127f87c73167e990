/**
 * Stage 9, quota: route-class quotas (sign, management, default) per credential, taken from the
 * coordination port after authentication; when the store cannot enforce them, protected work fails
 * closed with a structured 503 and never runs. The in-process store gets an injected clock, so
 * window arithmetic is deterministic.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createMemoryCoordination } from "../../adapters/coordination/memory.ts";
import type { CoordinationStore, PermitResult } from "../../adapters/ports.ts";
import { plugins } from "../../plugins/index.ts";
import { expectProblem } from "../support/assertions.ts";
import { DEMO_KEY, DEMO_KEY_HEADERS as KEY, DEMO_RAW, OTHER, OTHER_KEY, PASSTHROUGH, gatewayTracker } from "../support/gateway.ts";
import { probeHits, probePlugin } from "../support/probe-plugin.ts";

/** A 60 s window boundary plus 15 s: 45 s of the window remain. */
const WINDOW_START = 1_900_000_020_000;
const QUOTAS = { limits: { quotas: { management: { limit: 3, windowSeconds: 60 }, sign: { limit: 2, windowSeconds: 60 } } } };

function clockedStore(start = WINDOW_START + 15_000) {
  const c = { t: start };
  return { clock: c, store: createMemoryCoordination({ clock: () => c.t }) };
}

let seq = 0;
const item = (key: string = DEMO_KEY) => ({
  method: "POST",
  headers: { "x-api-key": key, "x-idempotency-key": `quota-test-${String(++seq).padStart(4, "0")}` },
  body: { name: "widget" },
});
const sign = () => ({
  method: "POST",
  headers: { ...KEY, "x-idempotency-key": `quota-sign-${String(++seq).padStart(4, "0")}`, "x-sub-business-id": "sub-1" },
  body: { invoice: 1 },
});

/**
 * A coordination store whose permit calls fail (or hang), the rest answering normally. `inProcess`:
 * it passes for the in-process store and also offers the synchronous `takePermitNow`, which throws
 * (the quota stage then takes the in-process fast path).
 */
function brokenStore(mode: { fail: "reject" | "hang" | "none" }, inProcess = false): CoordinationStore {
  const inner = createMemoryCoordination();
  const now = {
    takePermitNow(key: string, limit: number, windowMs: number): PermitResult {
      if (mode.fail !== "none") throw new Error("READONLY You can't write against a read only replica. redis://:hunter2@cache:6379");
      return inner.takePermitNow!(key, limit, windowMs);
    },
  };
  return {
    kind: inProcess ? "memory" : "broken",
    ...(inProcess ? now : {}),
    takePermit(key, limit, windowMs): Promise<PermitResult> {
      if (mode.fail === "reject") return Promise.reject(new Error("READONLY You can't write against a read only replica. redis://:hunter2@cache:6379"));
      if (mode.fail === "hang") return new Promise(() => {});
      return inner.takePermit(key, limit, windowMs);
    },
    acquireLease: (k, o, t) => inner.acquireLease(k, o, t),
    releaseLease: (k, o) => inner.releaseLease(k, o),
    adjustInFlight: (k, d, t) => inner.adjustInFlight(k, d, t),
    publish: (c, m) => inner.publish(c, m),
    subscribe: (c, h) => inner.subscribe(c, h),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
}

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("the management quota: the 4th request in the window gets 429 GW_RATE_LIMIT_EXCEEDED with Retry-After ≤ 60", async () => {
  const { store } = clockedStore();
  const tg = await start({ plugins: [probePlugin], patch: QUOTAS, ports: { coordination: store } });
  for (let i = 1; i <= 3; i++) assert.is((await tg.call("/probe/items/abc", item())).status, 200, `request ${i}`);
  const res = await tg.call("/probe/items/abc", item());
  const body = await expectProblem(res, 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  const after = Number(res.headers.get("retry-after"));
  assert.ok(Number.isInteger(after) && after >= 1 && after <= 60, `Retry-After ${after}`);
  assert.is(after, 45, "the rest of the 60 s window");
  assert.is(body.retry.afterSeconds, after);
  assert.is(body.retry.sameIdempotencyKey, true);
  assert.match(body.detail, /3 requests per 60 s/);
  await tg.close();
});

test("the quota is per class, not per route: every management route draws on one budget; refused requests never run", async () => {
  const { store } = clockedStore();
  const tg = await start({ plugins: [probePlugin], patch: QUOTAS, ports: { coordination: store } });
  probeHits.reset();
  assert.is((await tg.call("/probe/items/abc", item())).status, 200);
  assert.is((await tg.call("/probe/items/def", item())).status, 200);
  assert.is((await tg.call("/probe/counted", { method: "POST", headers: KEY, body: {} })).status, 200);
  await expectProblem(await tg.call("/probe/counted", { method: "POST", headers: KEY, body: {} }), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  await expectProblem(await tg.call("/probe/items/ghi", item()), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  assert.is(probeHits.count, 1, "the refused request never reached its handler");
  await tg.close();
});

test("the sign class has its own budget, separate from management and default", async () => {
  const { store } = clockedStore();
  const tg = await start({ plugins: [probePlugin], patch: QUOTAS, ports: { coordination: store } });
  for (let i = 0; i < 3; i++) await tg.call("/probe/items/abc", item());
  await expectProblem(await tg.call("/probe/items/abc", item()), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  assert.is((await tg.call("/probe/sign", sign())).status, 200, "sign 1 with management exhausted");
  assert.is((await tg.call("/probe/sign", sign())).status, 200, "sign 2");
  const over = await tg.call("/probe/sign", sign());
  const body = await expectProblem(over, 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  assert.match(body.detail, /2 requests per 60 s/);
  // The default class is untouched by both.
  assert.is((await tg.call("/probe/echo", { headers: KEY })).status, 200);
  await tg.close();
});

test("quotas are per credential: another key of the same business, or another business, has its own budget", async () => {
  const raw = structuredClone(DEMO_RAW) as any;
  raw.businesses[0].gateway.apiKeys.push({ id: "demo-secondary", key: "gw_demo_key_0002", demoOnly: true });
  const { store } = clockedStore();
  const tg = await start({ plugins: [probePlugin], patch: { ...QUOTAS, businesses: raw.businesses }, ports: { coordination: store } });
  for (let i = 0; i < 3; i++) assert.is((await tg.call("/probe/items/abc", item())).status, 200);
  await expectProblem(await tg.call("/probe/items/abc", item()), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  for (let i = 0; i < 3; i++) assert.is((await tg.call("/probe/items/abc", item("gw_demo_key_0002"))).status, 200, `secondary ${i + 1}`);
  await expectProblem(await tg.call("/probe/items/abc", item("gw_demo_key_0002")), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  for (let i = 0; i < 3; i++) assert.is((await tg.call("/probe/items/abc", { ...item(OTHER_KEY), host: OTHER })).status, 200, `other ${i + 1}`);
  // The Stored demo host is another business's (one approved domain per business): its key has its own budget.
  const stored = await tg.call("/probe/counted", { method: "POST", host: "stored.demo.localhost", headers: KEY, body: {} });
  assert.is(stored.status, 200, "the Stored business's key, its own budget");
  await tg.close();
});

test("quotas apply after authentication: refused credentials consume nothing; the next window starts afresh", async () => {
  const { store, clock } = clockedStore();
  const tg = await start({ plugins: [probePlugin], patch: QUOTAS, ports: { coordination: store } });
  for (let i = 0; i < 5; i++) assert.is((await tg.call("/probe/items/abc", { ...item(), headers: { "x-idempotency-key": `anon-${i}-xxxxxx` } })).status, 401);
  for (let i = 0; i < 5; i++) assert.is((await tg.call("/probe/items/abc", item("gw_unknown_key_9999"))).status, 401);
  for (let i = 1; i <= 3; i++) assert.is((await tg.call("/probe/items/abc", item())).status, 200, `request ${i} after refusals`);
  await expectProblem(await tg.call("/probe/items/abc", item()), 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  clock.t = WINDOW_START + 60_000;
  assert.is((await tg.call("/probe/items/abc", item())).status, 200, "a new window");
  await tg.close();
});

for (const inProcess of [false, true]) {
  test(`a coordination store that fails${inProcess ? " (in-process, answering synchronously)" : ""}: 503 GW_GATEWAY_CAPACITY_EXCEEDED (fail closed), never a 200, handler not run`, async () => {
    const mode: { fail: "reject" | "hang" | "none" } = { fail: "reject" };
    const store = brokenStore(mode, inProcess);
    const tg = await start({ plugins: [probePlugin], patch: QUOTAS, ports: { coordination: store } });
    assert.is(typeof tg.gateway.kit.ports.coordination.takePermitNow, inProcess ? "function" : "undefined", "the path under test");
    probeHits.reset();
    const requests = [
      () => tg.call("/probe/counted", { method: "POST", headers: KEY, body: {} }), // management
      () => tg.call("/probe/counted", { headers: KEY }), // default
      () => tg.call("/probe/sign", sign()), // sign
      () => tg.call("/probe/items/abc", item()),
    ];
    for (const send of requests) {
      const res = await send();
      const body = await expectProblem(res, 503, "GW_GATEWAY_CAPACITY_EXCEEDED", "BACKOFF");
      assert.ok(Number(res.headers.get("retry-after")) >= 1, "Retry-After");
      assert.is(body.retry.sameIdempotencyKey, true);
      assert.not.match(JSON.stringify(body), /hunter2|READONLY|redis:/, "nothing of the store's error leaks");
    }
    assert.is(probeHits.count, 0, "no protected work ran");
    assert.ok(tg.logs.some((l) => l.event === "gateway_quota_unenforceable"), "operators see why");
    assert.not.ok(JSON.stringify(tg.logs).includes("hunter2"), "the store's credentials never reach a log");
    assert.is(tg.gateway.runtime.inFlight().total, 0, "the capacity slot is released");
    // When the store answers again, so does the gateway.
    mode.fail = "none";
    assert.is((await tg.call("/probe/counted", { headers: KEY })).status, 200);
    await tg.close();
  });
}

test("a coordination store that hangs fails closed within the store timeout", async () => {
  const tg = await start({
    plugins: [probePlugin],
    patch: { ...QUOTAS, dependencies: { storeTimeoutMs: 100 } },
    ports: { coordination: brokenStore({ fail: "hang" }) },
  });
  probeHits.reset();
  const started = Date.now();
  const res = await tg.call("/probe/counted", { method: "POST", headers: KEY, body: {} });
  await expectProblem(res, 503, "GW_GATEWAY_CAPACITY_EXCEEDED", "BACKOFF");
  assert.ok(Date.now() - started < 2_000, "answered at the store timeout, not left hanging");
  assert.is(probeHits.count, 0);
  await tg.close();
});

test("routes without a credential are not metered (health and other public routes never touch the store)", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin], patch: QUOTAS, ports: { coordination: brokenStore({ fail: "reject" }) } });
  for (let i = 0; i < 3; i++) assert.is((await tg.call("/health", { host: PASSTHROUGH })).status, 200);
  await tg.close();
});

test.run();
