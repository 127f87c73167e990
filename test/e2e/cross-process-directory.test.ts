/**
 * The control plane across processes (issue 13): two gateway processes share one Redis and one
 * document store (the MongoDB-compatible server, jongodb, then an SQLite file on this host). A key created through one process works on both at once; a key
 * revoked through one is refused by the very next request to either (keys are never answered from a
 * cache); a mode change through one reaches the other's cached domain record through Redis
 * publish/subscribe, long before that cache's TTL (60 s here) would have.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ADMIN_KEY, DEMO_KEY, DEMO_RAW, PASSTHROUGH } from "../support/gateway.ts";
import { httpCall } from "../support/raw-http.ts";
import { startGatewayProcesses, type GatewayProcesses } from "../support/processes.ts";
import { isRedisSkip, reportRedisSkip, startRedisServer, type RedisServerHandle } from "../support/redis-server.ts";
import { sharedStores, type SharedStore } from "../support/shared-store.ts";

const redis = await startRedisServer();
if (isRedisSkip(redis)) reportRedisSkip("cross-process directory e2e", redis.skip);
else {
  const stores = await sharedStores("cross-process directory e2e");
  stores.forEach((store, i) => run(redis, store, i === stores.length - 1));
}

function run(redisServer: RedisServerHandle, store: SharedStore, last: boolean): void {
  const test = suite(`cross-process directory e2e (${store.kind})`);
  let procs: GatewayProcesses | undefined;
  let dir = "";
  let a = "";
  let b = "";

  test.before(async () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-xdir-"));
    const raw = structuredClone(DEMO_RAW) as Record<string, any>;
    raw.storage = store.storage;
    raw.coordination = { driver: "redis", url: redisServer.url, keyPrefix: `xdir${process.pid}${store.kind}:` };
    raw.regulator.simulator = { enabled: false };
    raw.limits = { quotas: { management: { limit: 10_000, windowSeconds: 60 }, default: { limit: 10_000, windowSeconds: 60 } } };
    raw.directory = { domainCacheTtlMs: 60_000 };
    const path = join(dir, "config.json");
    writeFileSync(path, JSON.stringify(raw));
    procs = await startGatewayProcesses(path, 2);
    [a, b] = procs.urls as [string, string];
  });

  test.after(async () => {
    await procs?.stop();
    await store.stop();
    if (last) await redisServer.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  let idem = 0;
  const admin = async (url: string, method: string, path: string, body?: unknown) => {
    const res = await httpCall(url, path, {
      method,
      host: "localhost",
      headers: { "x-admin-api-key": ADMIN_KEY, "content-type": "application/json", ...(method === "GET" ? {} : { "x-idempotency-key": `xdir-op-${++idem}-0001` }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
    return res.json() as any;
  };
  const echo = (url: string, key: string) => httpCall(url, "/probe/echo", { host: PASSTHROUGH, headers: { "x-api-key": key } });
  const storedOnly = (url: string) => httpCall(url, "/probe/stored-only", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } });

  test("both processes serve the seeded demo keys", async () => {
    assert.is((await echo(a, DEMO_KEY)).status, 200);
    assert.is((await echo(b, DEMO_KEY)).status, 200);
  });

  test("a key created through process A works on process B at once", async () => {
    const created = await admin(a, "POST", "/admin/keys", { scheme: "gateway", businessId: "demo", id: "xdir-key" });
    const key = created.plainKey as string;
    assert.is((await echo(b, key)).status, 200);
    assert.is((await echo(a, key)).status, 200);
  });

  test("a key revoked through process A is refused by the very next request to A and to B (never a cached answer)", async () => {
    const created = await admin(b, "POST", "/admin/keys", { scheme: "gateway", businessId: "demo", id: "xdir-leaked" });
    const key = created.plainKey as string;
    // Both processes have just authorized it, so a cache would hold it now.
    for (let i = 0; i < 3; i++) {
      assert.is((await echo(a, key)).status, 200);
      assert.is((await echo(b, key)).status, 200);
    }
    await admin(a, "POST", "/admin/keys/xdir-leaked/revoke", {});
    const [onA, onB] = await Promise.all([echo(a, key), echo(b, key)]);
    assert.is(onB.status, 401, onB.text);
    assert.is((onB.json() as { code: string }).code, "GW_API_KEY_INVALID");
    assert.is(onA.status, 401);
    // The business's other keys are unaffected on both.
    assert.is((await echo(b, DEMO_KEY)).status, 200);
  });

  test("a mode change through A reaches B's cached domain record through Redis pub/sub, not its 60 s TTL", async () => {
    // B caches the domain (Pass-through, approved).
    assert.is((await storedOnly(b)).status, 409);
    await admin(a, "POST", `/admin/domains/${PASSTHROUGH}/mode-change`, { mode: "stored" });
    // Waited for at most 10 s: only the notification can do it (B's cached record is fresh for 60 s).
    await _until(async () => (await storedOnly(b)).status === 503, "B sees the drain");
    const drained = await storedOnly(b);
    assert.is((drained.json() as { code: string }).code, "GW_TENANT_MODE_UNAVAILABLE");
    assert.ok(Number(drained.headers["retry-after"]) >= 1);
    await admin(a, "POST", `/admin/domains/${PASSTHROUGH}/approval`, {});
    await _until(async () => (await storedOnly(b)).status === 200, "B serves the new mode");
    const domain = await admin(b, "GET", `/admin/domains/${PASSTHROUGH}`);
    assert.equal([domain.mode, domain.modeVersion, domain.approval], ["stored", 2, "approved"]);
  });

  test.run();
}

async function _until(check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.unreachable(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
