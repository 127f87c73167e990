/**
 * Processors dying and stopping, across real processes on Redis + the MongoDB-wire server (issue 10
 * "Bad input and faults", ARCHITECTURE.md §7): a processor SIGKILLed between the debit and the sign
 * is finished by another processor with one debit; one SIGKILLed between the sign and the record
 * leaves an unprovable outcome, which the next processor freezes (one debit, held, never replayed);
 * a worker stopped with SIGTERM finishes its current step, hands the rest back and exits 0.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isMongoSkip, startMongoServer, type MongoServerHandle } from "../../support/mongo-server.ts";
import { isRedisSkip, reportRedisSkip, startRedisServer, type RedisServerHandle } from "../../support/redis-server.ts";
import { eventually, spawnWorker, startInfra, type Infra, type WorkerChild } from "./multiprocess-helpers.ts";

const redis = await startRedisServer();
const mongo = await startMongoServer();
if (isRedisSkip(redis)) reportRedisSkip("stored crash e2e", redis.skip);
else if (isMongoSkip(mongo)) reportRedisSkip("stored crash e2e (MongoDB-compatible server missing)", mongo.skip);
else run(redis, mongo);

function run(redisServer: RedisServerHandle, mongoServer: MongoServerHandle): void {
  let infra: Infra;

  test.before(async () => {
    infra = await startInfra("xcrash", redisServer, mongoServer, { processor: { concurrency: 1, leaseMs: 5_000 } });
  });
  test.after(async () => {
    await infra?.close();
    await redisServer.stop();
    await mongoServer.stop();
  });

  const status = async (id: string) => (await infra.invoices()).find((d) => d._id === id);

  test("SIGKILL between the debit and the sign: another processor signs it; one debit, one sign", async () => {
    const before = await infra.ledger();
    const id = await infra.submit("KILL1", "xcrash-kill1-0001");
    const a = spawnWorker(infra.configPath, "after-debit");
    const exit = await a.exited;
    assert.ok(_killed(exit), `${exit.code} ${exit.signal} ${a.output()}`);
    const dead = await status(id);
    assert.is(dead?.status, "signing", "the processor died holding the invoice");
    assert.is(dead?.step, "bill", "before anything was dispatched");
    assert.is((await infra.ledger()).debits - before.debits, 1, "the debit happened");
    assert.is(infra.sim.state.calls("sign"), 0);

    const b = spawnWorker(infra.configPath, "none");
    await b.ready;
    await eventually("signed by the second processor", async () => (await status(id))?.status === "signed");
    const after = await infra.ledger();
    assert.is(after.debits - before.debits, 1, "one debit: the second processor's debit replayed it");
    assert.is(after.reversals, before.reversals);
    assert.is(infra.sim.state.calls("sign"), 1, "signed once");
    _assertStopped(b, await b.stop());
  });

  test("SIGKILL between the sign and the record: frozen by the next processor, one debit held, never signed again", async () => {
    const before = await infra.ledger();
    const signs = infra.sim.state.calls("sign");
    const id = await infra.submit("KILL2", "xcrash-kill2-0001");
    const a = spawnWorker(infra.configPath, "after-sign");
    const exit = await a.exited;
    assert.ok(_killed(exit), `${exit.code} ${exit.signal} ${a.output()}`);
    assert.is(infra.sim.state.calls("sign") - signs, 1, "the regulator signed before the processor died");
    assert.is((await status(id))?.step, "dispatching");

    const b = spawnWorker(infra.configPath, "none");
    await b.ready;
    await eventually("frozen by the second processor", async () => (await status(id))?.status === "frozen");
    const frozen = (await status(id))!;
    assert.is(frozen.lastError?.code, "GW_SIGN_OUTCOME_UNCONFIRMED");
    await new Promise((r) => setTimeout(r, 500));
    assert.is(infra.sim.state.calls("sign") - signs, 1, "never replayed");
    const after = await infra.ledger();
    assert.is(after.debits - before.debits, 1, "one debit");
    assert.is(after.reversals, before.reversals, "held, not reversed");
    _assertStopped(b, await b.stop());
  });

  test("SIGTERM: the worker finishes the step in flight, hands the invoice back, exits 0; another worker completes it", async () => {
    infra.sim.faults.set("sign", { kind: "latency", ms: 1_500, times: 1 });
    const signs = infra.sim.state.calls("sign");
    const id = await infra.submit("TERM1", "xcrash-term1-0001");
    const a = spawnWorker(infra.configPath, "none");
    const owner = (await a.ready).slice("WORKER ".length);
    await eventually("the sign is in flight", async () => infra.sim.state.calls("sign") > signs, 20_000);
    _assertStopped(a, await a.stop());
    const handed = (await status(id))!;
    assert.is(handed.status, "signed", "the sign in flight was finished and recorded, not frozen");
    assert.is(handed.lease, undefined, "no lease left behind");
    assert.ok(handed.dueAt !== null || handed.settle === false, "the rest is due for the next worker");
    assert.is(await infra.store.collection("stored_processor_heartbeats").get(owner), null, "the stopped worker removed its heartbeat");

    const b = spawnWorker(infra.configPath);
    await b.ready;
    await eventually("settled by the next worker", async () => {
      const d = await status(id);
      return d?.settle === false && d.dueAt === null;
    });
    assert.is(infra.sim.state.calls("sign") - signs, 1);
    _assertStopped(b, await b.stop());
  });
}

test.run();

/** SIGKILLed (the worker runs as one node process: the signal is its own). */
function _killed(exit: { code: number | null; signal: NodeJS.Signals | null }): boolean {
  return exit.signal === "SIGKILL";
}

/** A graceful stop: exit code 0, no signal; a failure shows the exit and everything the worker printed. */
function _assertStopped(w: WorkerChild, exit: { code: number | null; signal: NodeJS.Signals | null }): void {
  assert.equal(exit, { code: 0, signal: null }, `the worker did not stop gracefully: ${JSON.stringify(exit)}; its output:\n${w.output()}`);
}
