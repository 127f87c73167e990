/**
 * Recovery with killed processes, on a MongoDB-compatible store and the regulator simulator:
 *
 * 1. A gateway process SIGKILLed after its sign reached the regulator and before it could record
 *    anything leaves the attempt in_progress with the fee debited. Another process's recovery job
 *    finds it abandoned, freezes it, asks the regulator (confirm by IRN: it did sign) and confirms
 *    the held fee — once, with an audit entry.
 * 2. A recovery worker (`npm run worker`, boot/worker.ts) SIGKILLed in the middle of a run, while the
 *    regulator holds its confirm call: its run lease (Redis) keeps every other process's recovery
 *    out until the lease expires — nothing is asked or settled twice — and then another process
 *    settles the held fee, once.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createMongoDocumentStore } from "../../../adapters/document-store/mongodb.ts";
import { loadFixtures } from "../../../adapters/regulator/simulator/fixtures.ts";
import { startRegulatorSimulator, type RegulatorSimulator } from "../../../adapters/regulator/simulator/server.ts";
import { loadConfig } from "../../../config/load.ts";
import type { AuditDoc } from "../../../core/directory-store.ts";
import { recoveryFor } from "../../../plugins/recovery/plugin.ts";
import type { SignRecord } from "../../../plugins/signing/store.ts";
import { killAndWait, trackChild } from "../../support/child-process.ts";
import { ADMIN_KEY, DEMO_KEY, DEMO_RAW, PASSTHROUGH, startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { isMongoSkip, startMongoServer, type MongoServerHandle } from "../../support/mongo-server.ts";
import { startGatewayProcesses, type GatewayProcesses } from "../../support/processes.ts";
import { httpCall } from "../../support/raw-http.ts";
import { isRedisSkip, startRedisServer, type RedisServerHandle } from "../../support/redis-server.ts";
import { tempDir } from "../../support/temp.ts";
import { DEMO, demoInvoice } from "../../adapters/regulator/simulator/simulator-helpers.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const mongo = await startMongoServer();
if (isMongoSkip(mongo)) {
  test.skip(`recovery after a killed process (${mongo.skip})`, () => {});
  test.run();
} else {
  const redis = await startRedisServer();
  run(mongo, isRedisSkip(redis) ? redis.skip : redis);
}

function run(mongoServer: MongoServerHandle, redisServer: RedisServerHandle | string): void {
  let sim: RegulatorSimulator;
  const opened: Array<{ close(): Promise<void> } | GatewayProcesses> = [];
  const irnOf = (no: string) => `${no}-${DEMO.serviceId}-20240611`;

  /** The demo config on the shared MongoDB database, the simulator, and the given patch. */
  const rawConfig = (dbName: string, patch: Record<string, unknown>): Record<string, any> => {
    const raw = structuredClone(DEMO_RAW) as Record<string, any>;
    raw.storage = { driver: "mongodb", uri: mongoServer.uri, dbName };
    raw.coordination = { driver: "memory" };
    raw.regulator = { ...raw.regulator, simulator: { enabled: false }, baseUrls: { TEST: sim.url, LIVE: sim.url } };
    raw.email = { driver: "folder", dir: join(tempDir("recovery-kill"), "mail") };
    raw.log = { level: "warn", format: "json" };
    raw.recovery = { enabled: false };
    return { ...raw, ...patch };
  };
  const writeConfig = (raw: Record<string, unknown>): string => {
    const path = join(tempDir("recovery-kill-config"), "config.json");
    writeFileSync(path, JSON.stringify(raw));
    return path;
  };
  const onboard = async (call: (path: string, init: Record<string, any>) => Promise<{ status: number; json(): any; text?: string }>, key: string) => {
    const res = await call("/sub-businesses", {
      method: "POST",
      host: PASSTHROUGH,
      headers: { "x-api-key": DEMO_KEY, "x-idempotency-key": key, "content-type": "application/json" },
      body: JSON.stringify({ regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } }),
    });
    assert.is(res.status, 201);
    return (res.json() as { gatewaySubBusinessId: string }).gatewaySubBusinessId;
  };
  const debitsOf = async (g: TestGateway, irn: string) => {
    const wallet = await g.call("/admin/wallets/demo", { host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY } });
    return ((await wallet.json()).entries as Array<{ type: string; billingIdentity?: { irn: string } }>).filter((e) => e.billingIdentity?.irn === irn).map((e) => e.type);
  };

  test.before(async () => {
    sim = await startRegulatorSimulator({
      fixtures: loadFixtures(join(ROOT, "config/regulator-fixtures.json")),
      credentials: { apiKey: "sim_api_key_demo", apiSecret: "sim_api_secret_demo" },
    });
  });

  test.after(async () => {
    for (const o of opened.reverse()) await ("stop" in o ? o.stop() : o.close()).catch(() => undefined);
    await sim?.close();
    if (typeof redisServer !== "string") await redisServer.stop();
    await mongoServer.stop();
  });

  test("a gateway killed after the regulator signed: the recovery of another process confirms the held fee, once", async () => {
    const dbName = mongoServer.dbName();
    const raw = rawConfig(dbName, {});
    const procs = await startGatewayProcesses(writeConfig(raw), 1);
    opened.push(procs);
    const url = procs.urls[0]!;
    const sub = await onboard(async (path, init) => httpCall(url, path, init as never), "kill-onboard-1");
    const irn = irnOf("KILL001");
    // The regulator signs, then holds its answer: the process dies while waiting for it.
    sim.faults.set("sign", { kind: "latency", ms: 60_000, afterProcessing: true, times: 1 });
    const pending = httpCall(url, "/api/v1/invoice/sign", {
      method: "POST",
      host: PASSTHROUGH,
      headers: { "x-api-key": DEMO_KEY, "x-sub-business-id": sub, "x-idempotency-key": "kill-sign-0001", "content-type": "application/json" },
      body: JSON.stringify(demoInvoice("KILL001")),
    }).catch((e: unknown) => e);
    for (let i = 0; i < 400 && !sim.state.isSigned(irn); i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(sim.state.isSigned(irn), "the regulator signed");
    await procs.kill(0);
    await pending;

    const shared = await createMongoDocumentStore({ uri: mongoServer.uri, dbName });
    opened.push(shared);
    const records = shared.collection<SignRecord>("signing_idempotency");
    const left = (await records.find({}, { limit: 10 })).items.find((r) => r.attemptKey.includes(irn));
    assert.is(left?.status, "in_progress", "the dead process left its attempt in progress");
    assert.is(left?.phase, "dispatching");

    // Another process on the same store; its recovery treats the attempt as abandoned at once.
    const config = loadConfig({ raw: { ...raw, recovery: { enabled: false, abandonedAfterMs: 1, settleAfterMs: 1 } }, env: {} });
    const survivor = await startTestGateway({ config, regulatorBaseUrls: { TEST: sim.url, LIVE: sim.url } });
    opened.push(survivor);
    const recovery = recoveryFor(survivor.gateway.kit);
    const first = await recovery.runOnce();
    assert.is(first.confirmed, 1, JSON.stringify(first));
    const settled = await records.get(left!._id);
    assert.is(settled?.status, "resolved");
    assert.is(settled?.money, "confirmed");
    assert.is(settled?.resolution?.basis, "regulator_confirm_found");
    const second = await recovery.runOnce();
    assert.is(second.confirmed + second.reversed, 0, "settled once");
    const audit = await shared.collection<AuditDoc>("directory_audit").find({ "target.id": left!.operationId });
    assert.is(audit.items.length, 1);
    assert.is(audit.items[0]!.actor, "recovery");
    assert.equal(await debitsOf(survivor, irn), ["debit"], "one debit, confirmed (no reversal)");
    // The same request again answers the frozen outcome, never a second sign.
    const calls = sim.state.calls("sign");
    const replay = await survivor.call("/api/v1/invoice/sign", {
      method: "POST",
      host: PASSTHROUGH,
      headers: { "x-api-key": DEMO_KEY, "x-sub-business-id": sub, "x-idempotency-key": "kill-sign-0001" },
      body: demoInvoice("KILL001"),
    });
    assert.is(replay.status, 502);
    assert.is((await replay.json()).code, "GW_SIGN_OUTCOME_UNCONFIRMED");
    assert.is(sim.state.calls("sign"), calls);
  });

  if (typeof redisServer === "string") {
    test.skip(`a recovery worker killed mid-run (redis-server missing: ${redisServer})`, () => {});
  } else {
    test("a recovery worker killed mid-run: its lease keeps the others out until it expires; then the fee is settled once", async () => {
      const dbName = mongoServer.dbName();
      const LEASE_MS = 5_000;
      const coordination = { driver: "redis", url: redisServer.url, keyPrefix: `gh:kill-${process.pid}:` };
      // The gateway that freezes a sign (the regulator signs, then answers a renamed envelope).
      const raw = rawConfig(dbName, { coordination, recovery: { enabled: false, settleAfterMs: 1 } });
      const gateway = await startTestGateway({ config: loadConfig({ raw, env: {} }), regulatorBaseUrls: { TEST: sim.url, LIVE: sim.url } });
      opened.push(gateway);
      const sub = await onboard(async (path, init) => {
        const res = await gateway.call(path, { ...init, body: JSON.parse(init.body) });
        const json = await res.json();
        return { status: res.status, json: () => json };
      }, "kill-onboard-2");
      const irn = irnOf("KILL002");
      sim.faults.set("sign", { kind: "renamed", afterProcessing: true, times: 1 });
      const frozen = await gateway.call("/api/v1/invoice/sign", {
        method: "POST",
        host: PASSTHROUGH,
        headers: { "x-api-key": DEMO_KEY, "x-sub-business-id": sub, "x-idempotency-key": "kill-sign-0002" },
        body: demoInvoice("KILL002"),
      });
      assert.is(frozen.status, 502);
      const shared = await createMongoDocumentStore({ uri: mongoServer.uri, dbName });
      opened.push(shared);
      const held = (await shared.collection<SignRecord>("signing_idempotency").find({ money: "held" })).items.find((r) => r.attemptKey.includes(irn));
      assert.is(held?.status, "frozen");

      // The worker: recovery every 200 ms; the regulator holds its confirm call for a minute.
      sim.faults.set("confirm", { kind: "latency", ms: 60_000, times: 1 });
      const confirmsBefore = sim.state.calls("confirm");
      const workerConfig = writeConfig({
        ...raw,
        regulator: { ...raw.regulator, timeoutMs: 120_000 },
        stored: { processor: { enabled: false } },
        recovery: { enabled: true, intervalMs: 200, settleAfterMs: 1, leaseMs: LEASE_MS },
      });
      const worker = spawn(process.execPath, ["--import", "tsx", "boot/worker.ts", "--config", workerConfig], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
      trackChild(worker);
      let out = "";
      worker.stdout!.on("data", (d) => (out += d));
      worker.stderr!.on("data", (d) => (out += d));
      for (let i = 0; i < 1200 && sim.state.calls("confirm") === confirmsBefore && worker.exitCode === null; i++) await new Promise((r) => setTimeout(r, 25));
      assert.is(sim.state.calls("confirm"), confirmsBefore + 1, `the worker's run asked the regulator:\n${out}`);

      // Another process's recovery, on the same store and Redis, ready before the kill.
      const survivor = recoveryFor(gateway.gateway.kit);
      await killAndWait(worker);
      const blocked = await survivor.runOnce();
      assert.is(blocked.ran, false, "the dead worker's lease still holds the run");
      assert.is(sim.state.calls("confirm"), confirmsBefore + 1, "nobody asked the regulator twice");
      const still = await shared.collection<SignRecord>("signing_idempotency").get(held!._id);
      assert.is(still?.money, "held", "the dead worker settled nothing");

      // Once the lease expires (it is no longer renewed), the next run settles the fee.
      let run = blocked;
      for (let i = 0; i < 100 && !run.ran; i++) {
        await new Promise((r) => setTimeout(r, 200));
        run = await survivor.runOnce();
      }
      assert.ok(run.ran, "the lease expired");
      assert.is(run.confirmed, 1, JSON.stringify(run));
      const settled = await shared.collection<SignRecord>("signing_idempotency").get(held!._id);
      assert.is(settled?.money, "confirmed");
      assert.is(settled?.resolution?.by, "recovery");
      const audit = await shared.collection<AuditDoc>("directory_audit").find({ "target.id": held!.operationId });
      assert.is(audit.items.length, 1, "one settlement recorded");
      assert.equal(await debitsOf(gateway, irn), ["debit"], "one debit, confirmed, never reversed");
      assert.is((await survivor.runOnce()).confirmed, 0, "nothing left to settle");
    });
  }

  test.run();
}
