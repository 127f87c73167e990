/**
 * Two processor processes (`npm run worker`, boot/worker.ts) on Redis + a shared store — the
 * MongoDB-wire server, then an SQLite file on this host — race over 200 Stored invoices with
 * autoTransmit on (issue 10 "Bad input and faults", ARCHITECTURE.md §6–§7): every invoice is billed
 * once, signed once and transmitted once, both processes did part of the work, and the ledger
 * invariant holds. jongodb's findOneAndUpdate is not atomic; the MongoDB adapter's revision-token
 * compare-and-set is what this proves under contention there, and on SQLite the writers'
 * transactions under the file's write lock.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { HeartbeatDoc } from "../../../plugins/stored-processing/store.ts";
import { isRedisSkip, reportRedisSkip, startRedisServer, type RedisServerHandle } from "../../support/redis-server.ts";
import { sharedStores, type SharedStore } from "../../support/shared-store.ts";
import { FEE_KOBO, OPENING_KOBO, eventually, spawnWorker, startInfraOn, statusSummary, type Infra, type WorkerChild } from "./multiprocess-helpers.ts";

const COUNT = 200;
const redis = await startRedisServer();
if (isRedisSkip(redis)) reportRedisSkip("stored race e2e", redis.skip);
else {
  const stores = await sharedStores("stored race e2e");
  stores.forEach((shared, i) => run(redis, shared, i === stores.length - 1));
}

function run(redisServer: RedisServerHandle, shared: SharedStore, last: boolean): void {
  const test = suite(`stored race e2e (${shared.kind})`);
  let infra: Infra;
  const workers: WorkerChild[] = [];

  test.before(async () => {
    infra = await startInfraOn(`xrace${shared.kind}`, redisServer, shared, { autoTransmit: true, processor: { concurrency: 6 } });
  });
  test.after(async () => {
    for (const w of workers) await w.stop();
    await infra?.close();
    await shared.stop();
    if (last) await redisServer.stop();
  });

  test(`${COUNT} invoices, two processor processes: each billed once, signed once, transmitted once; the ledger holds`, async () => {
    workers.push(spawnWorker(infra.configPath), spawnWorker(infra.configPath));
    for (const w of workers) await w.ready;
    const beats = infra.store.collection<HeartbeatDoc>("stored_processor_heartbeats");
    await eventually("both processors beat", async () => (await beats.count({})) === 2);

    const ids: string[] = [];
    for (let i = 0; i < COUNT; i += 20)
      ids.push(...(await Promise.all(Array.from({ length: 20 }, (_, j) => infra.submit(`RACE${i + j}`, `xrace-key-${String(i + j).padStart(4, "0")}`)))));
    assert.is(new Set(ids).size, COUNT);

    await eventually(
      "every invoice transmitted",
      async () => (await infra.invoices()).filter((d) => d.status === "transmitted").length === COUNT,
      180_000,
      () => statusSummary(infra),
    );
    const docs = await infra.invoices();
    assert.is(docs.length, COUNT);
    for (const d of docs) {
      assert.is(d.status, "transmitted", `${d._id}: ${d.status} ${JSON.stringify(d.lastError)}`);
      assert.is(d.signAttempt, 1);
      assert.is(d.lease, undefined);
    }
    // The regulator: each IRN signed once and transmitted once.
    const signed = infra.sim.state.signedIrns();
    assert.is(signed.length, COUNT);
    assert.is(new Set(signed).size, COUNT);
    assert.is(infra.sim.state.calls("sign"), COUNT, "one sign call per invoice");
    assert.is(infra.sim.state.calls("transmit"), COUNT, "one transmission per invoice");
    assert.is(infra.sim.state.transmittedIrns().length, COUNT);
    // The ledger: one debit per invoice, none reversed, the invariant holds.
    const ledger = await infra.ledger();
    assert.is(ledger.debits, COUNT);
    assert.is(ledger.reversals, 0);
    assert.is(ledger.balanceKobo, OPENING_KOBO - COUNT * FEE_KOBO);
    // Both processes did part of the work. A heartbeat reports its count up to one beat late, so a
    // processor whose passes all ended after its last beat shows 0 for a moment: read after the beats.
    const counts = async () => (await beats.find({}, { limit: 10 })).items.map((b) => b.processed);
    await eventually("both heartbeats count their passes", async () => (await counts()).every((n) => n > 0), 5_000).catch(() => undefined);
    const processed = await counts();
    assert.is(processed.length, 2);
    for (const n of processed) assert.ok(n > 0, `each processor processed invoices: ${processed}`);

    for (const w of workers.splice(0)) assert.is((await w.stop()).code, 0, w.output());
    assert.is(await beats.count({}), 0, "stopped workers remove their heartbeats");
  });

  test.run();
}
