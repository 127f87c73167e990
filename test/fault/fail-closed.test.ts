/**
 * Fail closed (spec §8, issue 3 item 6): the gateway on a real Redis; the Redis server is killed
 * mid-test. Protected work gets a structured 503 — never an unlimited pass — /health/ready says
 * not_ready, the coordination circuit opens and shows in /health/dependencies; when Redis comes
 * back the same process recovers.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { plugins } from "../../plugins/index.ts";
import { createPolicyRegistry } from "../../adapters/policies.ts";
import { ADMIN_KEY, DEMO_KEY, startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";
import { probePlugin } from "../support/probe-plugin.ts";
import { isRedisSkip, reportRedisSkip, startRedisServer, type RedisServerHandle } from "../support/redis-server.ts";

const redis = await startRedisServer();
if (isRedisSkip(redis) || !redis.owned) {
  reportRedisSkip("fail-closed e2e", isRedisSkip(redis) ? redis.skip : "REDIS_URL points at a server this test cannot kill");
} else {
  run(redis);
}

/** The circuits' clock: real time plus an offset the test can move (no 30 s sleeps). */
let offsetMs = 0;
const clock = { now: () => Date.now() + offsetMs };

function run(server: RedisServerHandle): void {
  let tg: TestGateway;

  test.before(async () => {
    const config = testConfig({ coordination: { driver: "redis", url: server.url, commandTimeoutMs: 1_000 } });
    tg = await startTestGateway({ config, plugins: [...plugins, probePlugin], policies: createPolicyRegistry({ clock }) });
  });
  test.after(async () => {
    await tg.close();
    await server.stop();
  });

  const echo = () => tg.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY } });
  const ready = () => tg.call("/health/ready", { host: "localhost" });
  const until = async (what: string, check: () => Promise<boolean>, ms = 8_000) => {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) assert.unreachable(`timed out waiting for: ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  test("with Redis up: quota-protected work passes and the gateway is ready", async () => {
    assert.is((await echo()).status, 200);
    assert.is((await ready()).status, 200);
  });

  test("Redis killed: every protected request gets 503 GW_GATEWAY_CAPACITY_EXCEEDED with Retry-After, none passes", async () => {
    await server.kill();
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await echo();
      statuses.push(res.status);
      if (res.status === 503) {
        const body = await res.json();
        assert.is(body.code, "GW_GATEWAY_CAPACITY_EXCEEDED");
        assert.is(body.retry.strategy, "BACKOFF");
        assert.ok(Number(res.headers.get("retry-after")) >= 1);
      }
    }
    assert.equal([...new Set(statuses)], [503], `some request passed without a quota decision: ${statuses}`);
    const logs = tg.logs.filter((l) => l.event === "gateway_quota_unenforceable");
    assert.ok(logs.length >= 30);
  });

  test("Redis killed: /health/ready turns not_ready, /health/live stays ok", async () => {
    await until("not_ready", async () => (await ready()).status === 503);
    const body = await (await ready()).json();
    assert.is(body.status, "not_ready");
    assert.ok(body.reasons.includes("coordination_store_unavailable"));
    assert.is((await tg.call("/health/live", { host: "localhost" })).status, 200);
  });

  test("the coordination circuit opened after the failures and shows in /health/dependencies", async () => {
    const res = await tg.call("/health/dependencies", { host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY } });
    assert.is(res.status, 200);
    const snap = await res.json();
    const circuit = snap.circuits.find((c: { dependency: string }) => c.dependency === "coordination");
    assert.ok(circuit, "coordination circuit listed");
    assert.is(circuit.state, "open");
    assert.ok(circuit.windowCalls >= 20, "opened only after at least 20 eligible calls");
    assert.ok(circuit.failureRatio >= 0.5);
    assert.ok(circuit.totalRefused > 0, "while open, calls are refused without reaching Redis");
  });

  test("Redis back: the same process recovers (after the circuit's half-open probe)", async () => {
    await server.restart();
    // Still open: Redis is back, but the circuit refuses until 30 s have passed (spec §3.5).
    assert.is((await echo()).status, 503);
    // Each 30 s step admits one half-open probe; a probe that lands before the client has
    // reconnected fails and re-opens the circuit, so step until one succeeds (bounded).
    let probes = 0;
    await until("echo 200 again", async () => {
      if ((await echo()).status === 200) return true;
      probes++;
      offsetMs += 30_000;
      return false;
    });
    assert.ok(probes <= 40, `recovered only after ${probes} half-open periods`);
    await until("ready again", async () => (await ready()).status === 200, 5_000);
  });
}

test.run();
