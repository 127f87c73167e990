/**
 * Across processes (issue 3 item 8, ARCHITECTURE.md §6): two gateway processes share one Redis
 * and one document store — the MongoDB-compatible server, then an SQLite file on this host. A
 * quota of N per window holds across both (N permits in total, not 2N), and a unique-key mutation
 * raced through both processes is stored once.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { DEMO_KEY, DEMO_RAW, PASSTHROUGH } from "../support/gateway.ts";
import { tempDir } from "../support/temp.ts";
import { httpCall } from "../support/raw-http.ts";
import { startGatewayProcesses, type GatewayProcesses } from "../support/processes.ts";
import { isRedisSkip, reportRedisSkip, startRedisServer, type RedisServerHandle } from "../support/redis-server.ts";
import { sharedStores, type SharedStore } from "../support/shared-store.ts";

const QUOTA = 7;

const redis = await startRedisServer();
if (isRedisSkip(redis)) reportRedisSkip("cross-process e2e", redis.skip);
else {
  const stores = await sharedStores("cross-process e2e");
  stores.forEach((store, i) => run(redis, store, i === stores.length - 1));
}

function run(redisServer: RedisServerHandle, store: SharedStore, last: boolean): void {
  const test = suite(`cross-process e2e (${store.kind})`);
  let procs: GatewayProcesses | undefined;
  const urls: string[] = [];

  test.before(async () => {
    const dir = tempDir("xproc");
    const raw = structuredClone(DEMO_RAW) as Record<string, any>;
    raw.storage = store.storage;
    raw.coordination = { driver: "redis", url: redisServer.url, keyPrefix: `xproc${process.pid}${store.kind}:` };
    raw.regulator.simulator = { enabled: false };
    raw.limits = { quotas: { management: { limit: QUOTA, windowSeconds: 60 } } };
    const path = join(dir, "config.json");
    writeFileSync(path, JSON.stringify(raw));
    procs = await startGatewayProcesses(path, 2);
    urls.push(...procs.urls);
  });

  test.after(async () => {
    await procs?.stop();
    await store.stop();
    if (last) await redisServer.stop();
  });

  test("two processes listen on different ports and share no memory", () => {
    assert.is(urls.length, 2);
    assert.is.not(urls[0], urls[1]);
  });

  test(`a management quota of ${QUOTA}/60 s holds across both processes (N permits in total, not 2N)`, async () => {
    const calls = Array.from({ length: 20 }, (_, i) =>
      httpCall(urls[i % 2]!, `/probe/items/item-${i}`, {
        method: "POST",
        host: PASSTHROUGH,
        headers: { "x-api-key": DEMO_KEY, "x-idempotency-key": `xproc-key-${i}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "quota" }),
      }),
    );
    const results = await Promise.all(calls);
    const ok = results.filter((r) => r.status === 200).length;
    const limited = results.filter((r) => r.status === 429);
    assert.is(ok, QUOTA, `statuses: ${results.map((r) => r.status)}`);
    assert.is(limited.length, 20 - QUOTA);
    for (const r of limited) {
      assert.is((r.json() as { code: string }).code, "GW_RATE_LIMIT_EXCEEDED");
      assert.ok(Number(r.headers["retry-after"]) >= 1);
    }
  });

  test(`a unique-key mutation raced through both processes is stored exactly once in ${store.kind}`, async () => {
    const calls = Array.from({ length: QUOTA - 1 }, (_, i) =>
      httpCall(urls[i % 2]!, "/hello/greetings", {
        method: "POST",
        // Business "other": its own credential, so the quota test above has not used its budget.
        host: "other.demo.localhost",
        headers: { "x-api-key": "gw_other_key_0001", "x-idempotency-key": "xproc-greeting-1", "content-type": "application/json" },
        body: JSON.stringify({ name: "Ngozi" }),
      }),
    );
    const results = await Promise.all(calls);
    const created = results.filter((r) => r.status === 201).length;
    assert.is(created, 1, `statuses: ${results.map((r) => `${r.status} ${r.text.slice(0, 120)}`)}`);
    assert.ok(results.every((r) => r.status === 201 || r.status === 200), "the others are replays of the same key");
    const inspect = await store.open();
    try {
      assert.is(await inspect.collection("hello_greetings").count({ name: "Ngozi" }), 1);
    } finally {
      await inspect.close();
    }
  });

  test.run();
}

