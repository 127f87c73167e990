/**
 * The one contract every CoordinationStore passes (ARCHITECTURE.md §5): the memory store and the
 * Redis store run exactly these tests. Call `coordinationContract(...)` from a `*.test.ts` file; it
 * registers an uvu suite and runs it, then prints how long the suite took.
 *
 * Time: with `opts.advance` (a store built on `createManualClock().now`), windows and ttls are
 * crossed by moving the clock; without it (Redis uses the server's clock), the suite sleeps, using
 * short windows/ttls (≤ 600 ms in total).
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { isDependencyUnavailableError, type CoordinationStore, type PermitResult } from "../../adapters/ports.ts";

export interface CoordinationHandle {
  store: CoordinationStore;
  /**
   * A second handle on the SAME shared state (Redis: a second connection, like a second process;
   * memory: omit it, the store itself is used). Races and parallel takes are split across both.
   */
  peer?: CoordinationStore;
  cleanup(): Promise<void>;
}

export interface CoordinationContractOptions {
  /** Expected `store.kind`. */
  kind?: string;
  /** Moves the store's clock forward. Omitted: the suite really waits. */
  advance?: (ms: number) => void | Promise<void>;
  /** Runs once after every test and the cleanup (e.g. stop a server). */
  teardown?: () => Promise<void>;
}

export interface ManualClock {
  now: () => number;
  advance: (ms: number) => void;
}

/** A clock for the memory store; starts mid-window of any window ≤ 1 h that divides an hour. */
export function createManualClock(start = Date.UTC(2030, 0, 1, 12, 30, 0, 0) + 123): ManualClock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

export function coordinationContract(
  name: string,
  make: () => Promise<CoordinationHandle>,
  opts: CoordinationContractOptions = {},
): void {
  const test = suite(`coordination contract: ${name}`);
  const manual = opts.advance !== undefined;
  const advance = async (ms: number): Promise<void> => {
    if (opts.advance) await opts.advance(ms);
    else await _sleep(ms + REAL_TIME_MARGIN_MS);
  };
  let h: CoordinationHandle;
  let store: CoordinationStore;
  let peer: CoordinationStore;
  let started = 0;
  let n = 0;
  const runId = `${process.pid}-${Date.now().toString(36)}`;
  const key = (label: string): string => `contract:${runId}:${label}:${++n}`;

  test.before(async () => {
    started = performance.now();
    h = await make();
    store = h.store;
    peer = h.peer ?? h.store;
  });

  test.after(async () => {
    try {
      await h?.cleanup();
    } finally {
      await opts.teardown?.();
      process.stdout.write(`\n  [timing] coordination contract ${name}: ${(performance.now() - started).toFixed(0)} ms\n`);
    }
  });

  // ---- basics --------------------------------------------------------------------------------

  test("kind, and ping answers", async () => {
    if (opts.kind) assert.is(store.kind, opts.kind);
    else assert.type(store.kind, "string");
    await store.ping();
    await peer.ping();
  });

  // ---- permits -------------------------------------------------------------------------------

  test("permits up to the limit, then refused with retryAfterMs in (0, windowMs]", async () => {
    const k = key("limit");
    for (let i = 1; i <= 5; i++) {
      const r = await store.takePermit(k, 5, LONG_WINDOW_MS);
      assert.equal(r, { allowed: true, remaining: 5 - i, retryAfterMs: 0 }, `take ${i}`);
    }
    for (let i = 0; i < 2; i++) {
      const r = await store.takePermit(k, 5, LONG_WINDOW_MS);
      assert.is(r.allowed, false);
      assert.is(r.remaining, 0);
      assert.ok(r.retryAfterMs > 0 && r.retryAfterMs <= LONG_WINDOW_MS, `retryAfterMs ${r.retryAfterMs}`);
      assert.ok(Number.isInteger(r.retryAfterMs), "retryAfterMs is an integer");
    }
  });

  test("a new window grants again (retryAfterMs is the time to the window end)", async () => {
    const k = key("window");
    const refused = await _exhaust(store, k, 2, SHORT_WINDOW_MS);
    assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= SHORT_WINDOW_MS, `retryAfterMs ${refused.retryAfterMs}`);
    if (manual) {
      await advance(refused.retryAfterMs - 1);
      assert.equal(await store.takePermit(k, 2, SHORT_WINDOW_MS), { allowed: false, remaining: 0, retryAfterMs: 1 });
    }
    await advance(manual ? 1 : refused.retryAfterMs);
    assert.equal(await store.takePermit(k, 2, SHORT_WINDOW_MS), { allowed: true, remaining: 1, retryAfterMs: 0 });
  });

  test("separate keys are independent", async () => {
    const a = key("indep-a");
    const b = key("indep-b");
    assert.is((await store.takePermit(a, 1, LONG_WINDOW_MS)).allowed, true);
    assert.is((await store.takePermit(a, 1, LONG_WINDOW_MS)).allowed, false);
    assert.equal(await store.takePermit(b, 1, LONG_WINDOW_MS), { allowed: true, remaining: 0, retryAfterMs: 0 });
    assert.is((await peer.takePermit(b, 1, LONG_WINDOW_MS)).allowed, false);
  });

  test("50 parallel takes at a limit of 10 → exactly 10 permits", async () => {
    const k = key("parallel");
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? store : peer).takePermit(k, 10, LONG_WINDOW_MS)),
    );
    const allowed = results.filter((r) => r.allowed);
    assert.is(allowed.length, 10);
    assert.equal(
      allowed.map((r) => r.remaining).sort((x, y) => x - y),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    for (const r of results.filter((x) => !x.allowed)) {
      assert.is(r.remaining, 0);
      assert.ok(r.retryAfterMs > 0 && r.retryAfterMs <= LONG_WINDOW_MS);
    }
  });

  test("limit 0 refuses; invalid arguments reject with RangeError", async () => {
    assert.is((await store.takePermit(key("zero"), 0, LONG_WINDOW_MS)).allowed, false);
    await _rejectsWith(store.takePermit(key("bad"), 1, 0), (e) => e instanceof RangeError, "windowMs 0");
    await _rejectsWith(store.takePermit(key("bad"), 1.5, 1000), (e) => e instanceof RangeError, "limit 1.5");
    await _rejectsWith(store.acquireLease(key("bad"), "a", 0), (e) => e instanceof RangeError, "ttlMs 0");
    await _rejectsWith(store.adjustInFlight(key("bad"), 0.5, 1000), (e) => e instanceof RangeError, "delta 0.5");
  });

  test("takePermitNow, where offered (in-process stores), is takePermit answered synchronously: one count, same answers", async () => {
    if (!store.takePermitNow) {
      assert.is(store.kind === "memory", false, "the in-process store offers the synchronous variant");
      return;
    }
    const k = key("now");
    const first = store.takePermitNow(k, 3, LONG_WINDOW_MS);
    assert.not.ok(first instanceof Promise, "no promise");
    assert.equal(first, { allowed: true, remaining: 2, retryAfterMs: 0 });
    assert.equal(await store.takePermit(k, 3, LONG_WINDOW_MS), { allowed: true, remaining: 1, retryAfterMs: 0 }, "the same counter");
    assert.equal(store.takePermitNow(k, 3, LONG_WINDOW_MS), { allowed: true, remaining: 0, retryAfterMs: 0 });
    const refused = store.takePermitNow(k, 3, LONG_WINDOW_MS);
    assert.is(refused.allowed, false);
    assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= LONG_WINDOW_MS);
    assert.throws(() => store.takePermitNow!(key("bad"), 1, 0), (e: unknown) => e instanceof RangeError, "invalid arguments throw");
  });

  // ---- leases --------------------------------------------------------------------------------

  test("lease: acquire, a second owner is refused, the same owner is re-entrant", async () => {
    const k = key("lease");
    assert.is(await store.acquireLease(k, "a", 10_000), true);
    assert.is(await peer.acquireLease(k, "b", 10_000), false);
    assert.is(await store.acquireLease(k, "a", 10_000), true);
    assert.is(await peer.acquireLease(k, "a", 10_000), true, "re-entrant from any handle");
  });

  test("lease: release by a non-owner is refused; release by the owner lets another acquire", async () => {
    const k = key("release");
    assert.is(await store.acquireLease(k, "a", 10_000), true);
    assert.is(await peer.releaseLease(k, "b"), false);
    assert.is(await peer.acquireLease(k, "b", 10_000), false, "still held by a");
    assert.is(await store.releaseLease(k, "a"), true);
    assert.is(await store.releaseLease(k, "a"), false, "second release is a no-op");
    assert.is(await peer.acquireLease(k, "b", 10_000), true);
    assert.is(await store.releaseLease(key("never-held"), "a"), false);
  });

  test("lease: expiry lets another owner acquire; re-acquiring refreshes the ttl", async () => {
    const k = key("expiry");
    assert.is(await store.acquireLease(k, "a", LEASE_TTL_MS), true);
    await advance(LEASE_STEP_MS);
    assert.is(await store.acquireLease(k, "a", LEASE_TTL_MS), true, "refresh");
    await advance(LEASE_STEP_MS);
    assert.is(await peer.acquireLease(k, "b", LEASE_TTL_MS), false, "refreshed lease still held");
    await advance(LEASE_STEP_MS);
    assert.is(await peer.releaseLease(k, "a"), false, "an expired lease cannot be released");
    assert.is(await peer.acquireLease(k, "b", LEASE_TTL_MS), true, "expired: b takes over");
    assert.is(await store.acquireLease(k, "a", LEASE_TTL_MS), false);
  });

  test("lease: two workers racing for one key (20 rounds) → exactly one holder each round", async () => {
    for (let round = 0; round < 20; round++) {
      const k = key(`race-${round}`);
      // Each worker fires several attempts at once, from its own handle.
      const [w1, w2] = await Promise.all([
        Promise.all([0, 1, 2].map(() => store.acquireLease(k, "w1", 10_000))),
        Promise.all([0, 1, 2].map(() => peer.acquireLease(k, "w2", 10_000))),
      ]);
      const w1Holds = w1.some(Boolean);
      const w2Holds = w2.some(Boolean);
      assert.ok(w1Holds !== w2Holds, `round ${round}: w1=${w1} w2=${w2}`);
      // Re-entrancy: the winner's attempts all succeed, the loser's all fail.
      assert.ok((w1Holds ? w1 : w2).every(Boolean) && !(w1Holds ? w2 : w1).some(Boolean), `round ${round}`);
      assert.is(await store.acquireLease(k, "probe", 10_000), false, `round ${round}: probe`);
    }
  });

  // ---- in-flight -----------------------------------------------------------------------------

  test("in-flight: +1/-1 accounting, never below zero", async () => {
    const k = key("gauge");
    assert.is(await store.adjustInFlight(k, 1, 10_000), 1);
    assert.is(await peer.adjustInFlight(k, 1, 10_000), 2);
    assert.is(await store.adjustInFlight(k, -1, 10_000), 1);
    assert.is(await peer.adjustInFlight(k, 0, 10_000), 1);
    assert.is(await store.adjustInFlight(k, -1, 10_000), 0);
    assert.is(await store.adjustInFlight(k, -1, 10_000), 0, "clamped at zero");
    assert.is(await store.adjustInFlight(k, 1, 10_000), 1, "a clamped gauge counts from zero again");
  });

  test("in-flight: 50 parallel increments = 50, 50 parallel decrements back to 0", async () => {
    const k = key("gauge-par");
    const ups = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? store : peer).adjustInFlight(k, 1, 10_000)),
    );
    assert.equal(
      ups.sort((x, y) => x - y),
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    const downs = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? peer : store).adjustInFlight(k, -1, 10_000)),
    );
    assert.equal(
      downs.sort((x, y) => x - y),
      Array.from({ length: 50 }, (_, i) => i),
    );
    assert.is(await store.adjustInFlight(k, 0, 10_000), 0);
  });

  test("in-flight: a gauge expires after ttlMs without a change", async () => {
    const k = key("gauge-ttl");
    assert.is(await store.adjustInFlight(k, 3, LEASE_TTL_MS), 3);
    await advance(LEASE_STEP_MS);
    assert.is(await store.adjustInFlight(k, 1, LEASE_TTL_MS), 4, "a change refreshes the ttl");
    await advance(LEASE_STEP_MS);
    assert.is(await store.adjustInFlight(k, 0, LEASE_TTL_MS), 4, "still alive");
    await advance(LEASE_TTL_MS);
    assert.is(await store.adjustInFlight(k, 1, LEASE_TTL_MS), 1, "expired: counts from zero");
  });

  // ---- publish / subscribe -------------------------------------------------------------------

  test("publish/subscribe: a subscriber gets every message of its channel, in order, from another handle too", async () => {
    const channel = key("chan");
    const got: string[] = [];
    const other: string[] = [];
    const sub = await store.subscribe(channel, { message: (m) => got.push(m) });
    const unrelated = await store.subscribe(key("chan-other"), { message: (m) => other.push(m) });
    for (let i = 1; i <= 5; i++) await peer.publish(channel, `m${i}`);
    await store.publish(channel, "own");
    await _until(() => got.length === 6, "six messages");
    assert.equal(got, ["m1", "m2", "m3", "m4", "m5", "own"], "the publisher's own subscribers receive too; order kept");
    assert.equal(other, [], "another channel hears nothing");
    await sub.close();
    await unrelated.close();
  });

  test("publish/subscribe: every subscriber of a channel receives; a closed subscription receives nothing more", async () => {
    const channel = key("fanout");
    const a: string[] = [];
    const b: string[] = [];
    const subA = await store.subscribe(channel, { message: (m) => a.push(m) });
    const subB = await peer.subscribe(channel, {
      message: (m) => {
        b.push(m);
        throw new Error("a subscriber that throws does not stop delivery");
      },
    });
    await store.publish(channel, "one");
    await _until(() => a.length === 1 && b.length === 1, "both subscribers");
    await subA.close();
    await subA.close(); // twice is a no-op
    await store.publish(channel, "two");
    await _until(() => b.length === 2, "the open subscription");
    await _sleep(50);
    assert.equal(a, ["one"], "closed: nothing after close");
    assert.equal(b, ["one", "two"]);
    await subB.close();
  });

  // ---- lifecycle -----------------------------------------------------------------------------

  test("after close every call rejects with DependencyUnavailableError (fails closed)", async () => {
    const other = await make();
    await other.store.close();
    const isUnavailable = (e: unknown): boolean => isDependencyUnavailableError(e);
    await _rejectsWith(other.store.takePermit(key("closed"), 10, LONG_WINDOW_MS), isUnavailable, "takePermit");
    await _rejectsWith(other.store.acquireLease(key("closed"), "a", 1000), isUnavailable, "acquireLease");
    await _rejectsWith(other.store.releaseLease(key("closed"), "a"), isUnavailable, "releaseLease");
    await _rejectsWith(other.store.adjustInFlight(key("closed"), 1, 1000), isUnavailable, "adjustInFlight");
    await _rejectsWith(other.store.publish(key("closed"), "m"), isUnavailable, "publish");
    await _rejectsWith(other.store.subscribe(key("closed"), { message: () => {} }), isUnavailable, "subscribe");
    await _rejectsWith(other.store.ping(), isUnavailable, "ping");
    await other.cleanup();
  });

  test.run();
}

// --- Internal helpers ---

/** Long enough that a wall-clock window boundary during one test is practically impossible. */
const LONG_WINDOW_MS = 3_600_000;
const SHORT_WINDOW_MS = 250;
const LEASE_TTL_MS = 1_500;
const LEASE_STEP_MS = 900;
/** Real-time waits add this much, so a real server's expiry has certainly happened. */
const REAL_TIME_MARGIN_MS = 15;

/** Waits (real time) until `done()`; messages travel through a server, so delivery is not instant. */
async function _until(done: () => boolean, what: string, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) assert.unreachable(`timed out waiting for ${what}`);
    await _sleep(5);
  }
}

function _sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Takes permits until one is refused and returns that refusal. With a real clock a window boundary
 * may pass mid-way (the count restarts); the loop allows for one such restart.
 */
async function _exhaust(store: CoordinationStore, key: string, limit: number, windowMs: number): Promise<PermitResult> {
  for (let i = 0; i < 2 * limit + 2; i++) {
    const r = await store.takePermit(key, limit, windowMs);
    if (!r.allowed) return r;
  }
  throw new Error(`never refused after ${2 * limit + 2} takes at limit ${limit}`);
}

async function _rejectsWith(p: Promise<unknown>, check: (e: unknown) => boolean, what: string): Promise<void> {
  let outcome: unknown;
  try {
    outcome = await p;
  } catch (e) {
    assert.ok(check(e), `${what}: unexpected error ${String(e)}`);
    return;
  }
  assert.unreachable(`${what}: resolved ${JSON.stringify(outcome)} instead of rejecting`);
}
