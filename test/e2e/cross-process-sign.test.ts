/**
 * Billed signing across processes (issue 5 item 7, ARCHITECTURE.md §6–§7): two gateway processes
 * share one MongoDB-compatible server and one Redis, and reach the regulator simulator over HTTP.
 * Twenty identical sign requests split across both processes make exactly one regulator sign and
 * exactly one wallet debit.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadFixtures } from "../../adapters/regulator/simulator/fixtures.ts";
import { startRegulatorSimulator, type RegulatorSimulator } from "../../adapters/regulator/simulator/server.ts";
import { ADMIN_KEY, DEMO_KEY, DEMO_RAW, PASSTHROUGH } from "../support/gateway.ts";
import { tempDir } from "../support/temp.ts";
import { httpCall } from "../support/raw-http.ts";
import { startGatewayProcesses, type GatewayProcesses } from "../support/processes.ts";
import { isMongoSkip, startMongoServer, type MongoServerHandle } from "../support/mongo-server.ts";
import { isRedisSkip, reportRedisSkip, startRedisServer, type RedisServerHandle } from "../support/redis-server.ts";
import { demoInvoice } from "../simulator/simulator-helpers.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const FEE_KOBO = 5_000;

const redis = await startRedisServer();
const mongo = await startMongoServer();
if (isRedisSkip(redis)) reportRedisSkip("cross-process sign e2e", redis.skip);
else if (isMongoSkip(mongo)) reportRedisSkip("cross-process sign e2e (MongoDB-compatible server missing)", mongo.skip);
else run(redis, mongo);

function run(redisServer: RedisServerHandle, mongoServer: MongoServerHandle): void {
  let procs: GatewayProcesses | undefined;
  const urls: string[] = [];
  let sim: RegulatorSimulator;

  test.before(async () => {
    sim = await startRegulatorSimulator({
      fixtures: loadFixtures(join(ROOT, "config/regulator-fixtures.json")),
      credentials: { apiKey: "sim_api_key_demo", apiSecret: "sim_api_secret_demo" },
    });
    const dir = tempDir("xsign");
    const raw = structuredClone(DEMO_RAW) as Record<string, any>;
    raw.storage = { driver: "mongodb", uri: mongoServer.uri, dbName: mongoServer.dbName() };
    raw.coordination = { driver: "redis", url: redisServer.url, keyPrefix: `xsign${process.pid}:` };
    raw.regulator = { ...raw.regulator, simulator: { enabled: false }, baseUrls: { TEST: sim.url, LIVE: sim.url } };
    raw.email = { driver: "folder", dir: join(dir, "mail") };
    raw.limits = { quotas: { sign: { limit: 1000, windowSeconds: 60 }, management: { limit: 1000, windowSeconds: 60 } } };
    const path = join(dir, "config.json");
    writeFileSync(path, JSON.stringify(raw));
    procs = await startGatewayProcesses(path, 2);
    urls.push(...procs.urls);
  });

  test.after(async () => {
    await procs?.stop();
    await sim?.close();
    await redisServer.stop();
    await mongoServer.stop();
  });

  test("20 identical sign requests through two processes: one regulator sign, one debit", async () => {
    const onboard = await httpCall(urls[0]!, "/sub-businesses", {
      method: "POST",
      host: PASSTHROUGH,
      headers: { "x-api-key": DEMO_KEY, "x-idempotency-key": "xsign-onboard-1", "content-type": "application/json" },
      body: JSON.stringify({ regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } }),
    });
    assert.is(onboard.status, 201, onboard.text);
    const sub = (onboard.json() as { gatewaySubBusinessId: string }).gatewaySubBusinessId;
    const before = await _wallet(urls[1]!);

    const body = JSON.stringify(demoInvoice("XPROC001"));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        httpCall(urls[i % 2]!, "/api/v1/invoice/sign", {
          method: "POST",
          host: PASSTHROUGH,
          headers: {
            "x-api-key": DEMO_KEY,
            "x-sub-business-id": sub,
            "x-idempotency-key": "xsign-sign-0001",
            "x-attempt-number": "1",
            "content-type": "application/json",
          },
          body,
        }),
      ),
    );
    const statuses = results.map((r) => r.status);
    assert.ok(statuses.includes(201), `one request signed: ${statuses}`);
    for (const r of results) assert.ok(r.status === 201 || r.status === 409, `only the answer or 'already processed': ${r.status} ${r.text.slice(0, 200)}`);
    assert.is(sim.state.calls("sign"), 1, "the regulator signed once");

    const after = await _wallet(urls[0]!);
    const debits = after.entries.filter((e) => e.type === "debit").length - before.entries.filter((e) => e.type === "debit").length;
    assert.is(debits, 1, "one debit for the attempt");
    assert.is(Math.round((before.balance - after.balance) * 100), FEE_KOBO);
  });
}

test.run();

// --- Internal helpers ---

async function _wallet(url: string): Promise<{ balance: number; entries: Array<{ type: string }> }> {
  const res = await httpCall(url, "/admin/wallets/demo", { host: PASSTHROUGH, headers: { "x-admin-api-key": ADMIN_KEY } });
  assert.is(res.status, 200, res.text);
  return res.json() as { balance: number; entries: Array<{ type: string }> };
}
