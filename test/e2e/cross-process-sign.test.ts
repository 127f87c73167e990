/**
 * Billed signing across processes (issue 5 item 7, ARCHITECTURE.md §6–§7): two gateway processes
 * share one Redis and one document store (the MongoDB-compatible server, then an SQLite file on
 * this host), and reach the regulator simulator over HTTP.
 * Twenty identical sign requests split across both processes make exactly one regulator sign and
 * exactly one wallet debit. The merchant's side is the merchant client (docs/client.md).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { loadFixtures } from "../../adapters/regulator/simulator/fixtures.ts";
import { startRegulatorSimulator, type RegulatorSimulator } from "../../adapters/regulator/simulator/server.ts";
import { ADMIN_KEY, DEMO_KEY, DEMO_RAW, PASSTHROUGH } from "../support/gateway.ts";
import { tempDir } from "../support/temp.ts";
import { httpCall } from "../support/raw-http.ts";
import { startGatewayProcesses, type GatewayProcesses } from "../support/processes.ts";
import { isRedisSkip, reportRedisSkip, startRedisServer, type RedisServerHandle } from "../support/redis-server.ts";
import { sharedStores, type SharedStore } from "../support/shared-store.ts";
import { demoInvoice } from "../adapters/regulator/simulator/simulator-helpers.ts";
import { createInvoiceGatewayClient, isProblemError } from "../../client/index.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const FEE_KOBO = 5_000;

const redis = await startRedisServer();
if (isRedisSkip(redis)) reportRedisSkip("cross-process sign e2e", redis.skip);
else {
  const stores = await sharedStores("cross-process sign e2e");
  stores.forEach((store, i) => run(redis, store, i === stores.length - 1));
}

function run(redisServer: RedisServerHandle, store: SharedStore, last: boolean): void {
  const test = suite(`cross-process sign e2e (${store.kind})`);
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
    raw.storage = store.storage;
    raw.coordination = { driver: "redis", url: redisServer.url, keyPrefix: `xsign${process.pid}${store.kind}:` };
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
    await store.stop();
    if (last) await redisServer.stop();
  });

  test("20 identical sign requests through two processes: one regulator sign, one debit", async () => {
    // The merchant's side goes through the merchant client (docs/client.md), one per process.
    const merchants = urls.map((url) => createInvoiceGatewayClient({ baseUrl: url, host: PASSTHROUGH, apiKey: DEMO_KEY }));
    const onboard = await merchants[0]!.subBusinesses.onboard(
      { regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } },
      { idempotencyKey: "xsign-onboard-1" },
    );
    assert.is(onboard.status, 201);
    const sub = onboard.data.gatewaySubBusinessId;
    const before = await _wallet(urls[1]!);

    const document = demoInvoice("XPROC001");
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => merchants[i % 2]!.invoices.sign(sub, document, { idempotencyKey: "xsign-sign-0001", attemptNumber: 1 })),
    );
    const signed = results.filter((r) => r.status === "fulfilled");
    assert.ok(signed.length >= 1, "one request signed");
    for (const r of signed) assert.is(r.value.status, 201);
    for (const r of results)
      if (r.status === "rejected")
        assert.ok(
          isProblemError(r.reason) && r.reason.code === "GW_SIGN_ATTEMPT_ALREADY_PROCESSED" && r.reason.sends === 1,
          `only 'already processed', never resent: ${String(r.reason)}`,
        );
    assert.is(sim.state.calls("sign"), 1, "the regulator signed once");

    const after = await _wallet(urls[0]!);
    const debits = after.entries.filter((e) => e.type === "debit").length - before.entries.filter((e) => e.type === "debit").length;
    assert.is(debits, 1, "one debit for the attempt");
    assert.is(Math.round((before.balance - after.balance) * 100), FEE_KOBO);
  });

  test.run();
}

// --- Internal helpers ---

async function _wallet(url: string): Promise<{ balance: number; entries: Array<{ type: string }> }> {
  const res = await httpCall(url, "/admin/wallets/demo", { host: PASSTHROUGH, headers: { "x-admin-api-key": ADMIN_KEY } });
  assert.is(res.status, 200, res.text);
  return res.json() as { balance: number; entries: Array<{ type: string }> };
}
