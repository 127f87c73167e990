/**
 * Redis coordination under faults (spec §8: protected work fails closed): a killed server, a hung
 * server, a refused first connect, and two connections (two processes) sharing one quota.
 * Prints measured latencies as `[timing] …` lines.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createRedisCoordination } from "../../adapters/coordination/redis.ts";
import { isDependencyUnavailableError, type CoordinationStore, type DependencyUnavailableError } from "../../adapters/ports.ts";
import { isRedisSkip, reportRedisSkip, startRedisServer } from "../support/redis-server.ts";

const server = await startRedisServer();
if (isRedisSkip(server)) {
  reportRedisSkip("coordination faults", server.skip);
} else {
  const test = suite("coordination redis: faults");
  const keyPrefix = `gh:test:${process.pid}:${Date.now().toString(36)}:`;
  const url = server.url;
  // Killing and pausing the server needs one this suite spawned: with an external REDIS_URL these two
  // tests are skipped, and say so (never under CI=true, whose .ci/run lets the suite spawn its own).
  const owned = server.owned;
  if (!owned) {
    process.stdout.write(`SKIPPED coordination redis faults: REDIS_URL points at an external server this suite cannot kill or pause\n`);
    test("skipping is allowed only outside CI, with a reason", () => assert.is.not(process.env.CI, "true"));
  }
  const stores: CoordinationStore[] = [];
  const open = async (commandTimeoutMs?: number): Promise<CoordinationStore> => {
    const s = await createRedisCoordination({ url, keyPrefix, ...(commandTimeoutMs ? { commandTimeoutMs } : {}) });
    stores.push(s);
    return s;
  };

  test.after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await server.stop();
  });

  (owned ? test : test.skip)("outage: every call rejects fast with DependencyUnavailableError; recovers after restart", async () => {
    const store = await open();
    for (let i = 0; i < 3; i++) assert.is((await store.takePermit("outage", 100, 60_000)).allowed, true);
    assert.is(await store.acquireLease("outage", "a", 10_000), true);

    await server.kill();
    let worst = 0;
    // Round 0 runs right after the kill (the client may not have seen the socket close yet).
    for (let round = 0; round < 5; round++) {
      const calls: Array<[string, () => Promise<unknown>]> = [
        ["takePermit", () => store.takePermit("outage", 100, 60_000)],
        ["acquireLease", () => store.acquireLease("outage-2", "b", 10_000)],
        ["releaseLease", () => store.releaseLease("outage", "a")],
        ["adjustInFlight", () => store.adjustInFlight("outage", 1, 10_000)],
        ["ping", () => store.ping()],
      ];
      for (const [name, call] of calls) {
        const { error, ms } = await _expectUnavailable(call, `${name} (round ${round})`);
        assert.ok(["transport", "timeout"].includes(error.failureClass), error.failureClass);
        assert.ok(ms < 2_000, `${name} took ${ms} ms`);
        worst = Math.max(worst, ms);
      }
      if (round === 2) {
        // A burst, as under load: 50 takes at once, none may resolve.
        const t0 = performance.now();
        const settled = await Promise.allSettled(Array.from({ length: 50 }, () => store.takePermit("outage", 100, 60_000)));
        const ms = performance.now() - t0;
        assert.ok(settled.every((r) => r.status === "rejected" && isDependencyUnavailableError(r.reason)), "burst: all rejected");
        assert.ok(ms < 2_000, `burst took ${ms} ms`);
        worst = Math.max(worst, ms);
      }
      await _sleep(100);
    }
    _timing(`outage: worst rejection latency ${worst.toFixed(1)} ms (25 calls + a burst of 50)`);

    const t0 = performance.now();
    await server.restart();
    const recovered = await _pollUntil(async () => {
      await store.ping();
      return true;
    }, 10_000);
    const recoveryMs = performance.now() - t0;
    assert.ok(recovered, "store works again after the server restarts");
    assert.ok(recoveryMs < 15_000, `recovered after ${recoveryMs} ms`);
    _timing(`outage: usable again ${recoveryMs.toFixed(0)} ms after restart() began`);
    // The restarted server is empty (no persistence): state starts fresh, scripts are reloaded.
    assert.equal(await store.takePermit("outage", 100, 60_000), { allowed: true, remaining: 99, retryAfterMs: 0 });
    assert.is(await store.acquireLease("outage", "b", 10_000), true);
    assert.is(await store.adjustInFlight("outage", 1, 10_000), 1);
    await store.ping();
  });

  (owned ? test : test.skip)("subscription across an outage: the subscriber is told of the gap, then receives again", async () => {
    const [store, publisher] = await Promise.all([open(), open()]);
    const got: string[] = [];
    let gaps = 0;
    const sub = await store.subscribe("outage-channel", { message: (m) => got.push(m), gap: () => void gaps++ });
    await publisher.publish("outage-channel", "before");
    assert.ok(await _pollUntil(async () => got.length === 1, 3_000), "delivered before the outage");
    assert.is(gaps, 0, "no gap while connected");

    await server.kill();
    await _expectUnavailable(() => publisher.publish("outage-channel", "lost"), "publish while down");
    await server.restart();
    assert.ok(await _pollUntil(async () => gaps === 1, 10_000), "gap reported once the subscription is back");
    // gap comes after resubscribing: a message published now arrives.
    assert.ok(
      await _pollUntil(async () => {
        await publisher.publish("outage-channel", "after");
        return got.includes("after");
      }, 5_000),
      "delivered after the outage",
    );
    assert.equal(got.filter((m) => m !== "after"), ["before"]);
    await sub.close();
  });

  (owned ? test : test.skip)("hung server: calls reject with failureClass timeout after commandTimeoutMs", async () => {
    const store = await open(200);
    assert.is((await store.takePermit("hung", 10, 60_000)).allowed, true);
    await server.pause();
    try {
      const results = await Promise.all([
        _expectUnavailable(() => store.takePermit("hung", 10, 60_000), "takePermit"),
        _expectUnavailable(() => store.acquireLease("hung", "a", 1000), "acquireLease"),
        _expectUnavailable(() => store.adjustInFlight("hung", 1, 1000), "adjustInFlight"),
        _expectUnavailable(() => store.ping(), "ping"),
      ]);
      for (const { error, ms } of results) {
        assert.is(error.failureClass, "timeout");
        assert.ok(ms >= 150 && ms < 1_500, `rejected after ${ms} ms (commandTimeoutMs 200)`);
      }
      _timing(`hung: rejected after ${Math.max(...results.map((r) => r.ms)).toFixed(0)} ms (commandTimeoutMs 200)`);
    } finally {
      await server.resume();
    }
    assert.ok(
      await _pollUntil(async () => (await store.takePermit("hung", 10, 60_000)).allowed, 5_000),
      "works again after the server resumes",
    );
  });

  test("first connect failure: the factory rejects quickly with a clear error and no credentials", async () => {
    const t0 = performance.now();
    let error: unknown;
    try {
      await createRedisCoordination({ url: "redis://:s3cret-pass@127.0.0.1:1", keyPrefix, commandTimeoutMs: 100 });
    } catch (e) {
      error = e;
    }
    const ms = performance.now() - t0;
    assert.ok(isDependencyUnavailableError(error), `got ${String(error)}`);
    const message = (error as Error).message;
    assert.match(message, "127.0.0.1:1");
    assert.not.match(message, "s3cret-pass");
    assert.ok(ms < 3000, `rejected after ${ms} ms`);
    _timing(`refused connect: factory rejected after ${ms.toFixed(0)} ms: ${message}`);
  });

  test("two connections (two processes) share one quota: 40 parallel takes, limit 10 → exactly 10", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).takePermit("shared-quota", 10, 3_600_000)),
    );
    assert.is(results.filter((r) => r.allowed).length, 10);
    assert.is((await a.takePermit("shared-quota", 10, 3_600_000)).allowed, false);
    assert.is((await b.takePermit("shared-quota", 10, 3_600_000)).allowed, false);
  });

  test.run();
}

// --- Internal helpers ---

async function _expectUnavailable(
  call: () => Promise<unknown>,
  what: string,
): Promise<{ error: DependencyUnavailableError; ms: number }> {
  const t0 = performance.now();
  let outcome: unknown;
  try {
    outcome = await call();
  } catch (e) {
    const ms = performance.now() - t0;
    assert.ok(isDependencyUnavailableError(e), `${what}: expected DependencyUnavailableError, got ${String(e)}`);
    assert.is((e as DependencyUnavailableError).dependency, "redis");
    return { error: e as DependencyUnavailableError, ms };
  }
  assert.unreachable(`${what}: resolved ${JSON.stringify(outcome)} while redis is down (must fail closed)`);
  throw new Error("unreachable");
}

async function _pollUntil(check: () => Promise<boolean>, budgetMs: number): Promise<boolean> {
  const deadline = performance.now() + budgetMs;
  while (performance.now() < deadline) {
    try {
      if (await check()) return true;
    } catch {
      // not yet
    }
    await _sleep(50);
  }
  return false;
}

function _sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function _timing(line: string): void {
  process.stdout.write(`\n  [timing] ${line}\n`);
}
