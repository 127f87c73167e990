import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  classifyError,
  createDependencyPolicy,
  createPolicyRegistry,
  type CallReport,
  type CircuitState,
  type DependencyPolicy,
  type DependencyPolicyOptions,
} from "../../adapters/policies.ts";
import { DependencyUnavailableError, DuplicateKeyError, isDependencyUnavailableError } from "../../adapters/ports.ts";
import { manualClock, type ManualClock } from "../support/manual-clock.ts";

const T0 = 1_700_000_000_000; // a whole second, so 1 s buckets line up with the test's arithmetic

interface Harness {
  clock: ManualClock;
  policy: DependencyPolicy;
  changes: CircuitState[];
  /** Times `fn` was actually invoked. */
  calls: { n: number };
  ok(): Promise<unknown>;
  fail(error?: unknown): Promise<unknown>;
}

function harness(overrides: Partial<DependencyPolicyOptions> = {}): Harness {
  const clock = manualClock(T0);
  const changes: CircuitState[] = [];
  const calls = { n: 0 };
  const policy = createDependencyPolicy({
    dependency: "regulator:TEST",
    timeoutMs: 5_000,
    clock,
    onStateChange: (state) => changes.push(state),
    ...overrides,
  });
  const ok = () =>
    policy
      .execute(async () => {
        calls.n += 1;
        return "ok";
      })
      .catch((e: unknown) => e);
  const fail = (error: unknown = _transportError()) =>
    policy
      .execute(async () => {
        calls.n += 1;
        throw error;
      })
      .catch((e: unknown) => e);
  return { clock, policy, changes, calls, ok, fail };
}

async function times(n: number, f: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < n; i++) await f();
}

function deferred<T>(): { promise: Promise<T>; resolve(v: T): void; reject(e: unknown): void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function assertRefused(e: unknown, dependency = "regulator:TEST"): void {
  assert.ok(isDependencyUnavailableError(e), `expected DependencyUnavailableError, got ${String(e)}`);
  const err = e as DependencyUnavailableError;
  assert.is(err.failureClass, "circuit_open");
  assert.is(err.dependency, dependency);
}

async function openCircuit(h: Harness): Promise<void> {
  await times(20, () => h.fail());
  assert.is(h.policy.snapshot().state, "open");
}

// ---------------------------------------------------------------------------
const opening = suite("policies: opening (spec §3.5)");

opening("19 failures in the window: still closed (below the 20-call minimum)", async () => {
  const h = harness();
  await times(19, () => h.fail());
  const s = h.policy.snapshot();
  assert.is(s.state, "closed");
  assert.is(s.windowCalls, 19);
  assert.is(s.windowFailures, 19);
  assert.is(s.failureRatio, 1);
  assert.equal(h.changes, []);
  assert.is(await h.ok(), "ok");
});

opening("20 calls with 10 failures: open", async () => {
  const h = harness();
  await times(10, () => h.ok());
  await times(9, () => h.fail());
  assert.is(h.policy.snapshot().state, "closed");
  await h.fail();
  const s = h.policy.snapshot();
  assert.is(s.state, "open");
  assert.is(s.windowCalls, 20);
  assert.is(s.windowFailures, 10);
  assert.is(s.failureRatio, 0.5);
  assert.equal(h.changes, ["open"]);
});

opening("20 calls with 10 failures, failures first: opens on the 20th call", async () => {
  const h = harness();
  await times(10, () => h.fail());
  await times(9, () => h.ok());
  assert.is(h.policy.snapshot().state, "closed");
  await h.ok();
  assert.is(h.policy.snapshot().state, "open");
});

opening("20 calls with 9 failures: closed; 11 of 22 opens", async () => {
  const h = harness();
  await times(11, () => h.ok());
  await times(9, () => h.fail());
  let s = h.policy.snapshot();
  assert.is(s.state, "closed");
  assert.is(s.windowCalls, 20);
  assert.is(s.windowFailures, 9);
  await h.fail(); // 10 / 21 < 50 %
  assert.is(h.policy.snapshot().state, "closed");
  await h.fail(); // 11 / 22 = 50 %
  s = h.policy.snapshot();
  assert.is(s.state, "open");
  assert.is(s.windowCalls, 22);
});

opening("old failures slide out of the 30 s window", async () => {
  const h = harness();
  await times(19, () => h.fail()); // at T0
  h.clock.advance(30_000);
  assert.is(h.policy.snapshot().windowCalls, 0);
  await h.fail();
  const s = h.policy.snapshot();
  assert.is(s.state, "closed");
  assert.is(s.windowCalls, 1);
  assert.is(s.totalFailures, 20);
});

opening("failures just inside the window still count", async () => {
  const h = harness();
  await times(19, () => h.fail()); // at T0
  h.clock.advance(29_999);
  assert.is(h.policy.snapshot().windowCalls, 19);
  await h.fail();
  assert.is(h.policy.snapshot().state, "open");
});

opening("the window slides bucket by bucket", async () => {
  const h = harness();
  await times(10, () => h.fail()); // T0
  h.clock.advance(15_000);
  await times(9, () => h.ok()); // T0 + 15 s
  h.clock.advance(15_000); // T0 + 30 s: the 10 failures have left
  await h.ok();
  const s = h.policy.snapshot();
  assert.is(s.state, "closed");
  assert.is(s.windowCalls, 10);
  assert.is(s.windowFailures, 0);
});

opening("a result classified as failure counts; results are successes by default", async () => {
  const h = harness();
  const call = (status: number) =>
    h.policy.execute(async () => ({ status }), { classify: (r) => (r.status >= 500 ? "failure" : "success") });
  await times(10, () => call(200));
  await times(10, () => call(503));
  const s = h.policy.snapshot();
  assert.is(s.state, "open");
  assert.is(s.lastFailureClass, "server_error");
  const h2 = harness();
  await times(10, () =>
    h2.policy.execute(async () => ({ bad: true }), {
      classify: () => ({ verdict: "failure", failureClass: "invalid_response" }),
    }),
  );
  assert.is(h2.policy.snapshot().lastFailureClass, "invalid_response");
});

opening("a call admitted before the circuit opened does not count once it settles", async () => {
  const h = harness();
  const slow = deferred<string>();
  const inFlight = h.policy.execute(() => slow.promise);
  await openCircuit(h);
  h.clock.advance(30_000);
  assert.is(h.policy.snapshot().state, "half_open");
  slow.resolve("late");
  assert.is(await inFlight, "late");
  // The late success neither closed the circuit nor used up the probe.
  assert.is(h.policy.snapshot().state, "half_open");
  assert.is(await h.ok(), "ok");
  assert.is(h.policy.snapshot().state, "closed");
});

opening.run();

// ---------------------------------------------------------------------------
const open = suite("policies: open and half-open");

open("open refuses at once without calling fn", async () => {
  const h = harness();
  await openCircuit(h);
  const before = h.calls.n;
  for (let i = 0; i < 5; i++) {
    const e = await h.ok();
    assertRefused(e);
    assert.is((e as Error).message, "circuit open");
  }
  assert.is(h.calls.n, before);
  const s = h.policy.snapshot();
  assert.is(s.totalRefused, 5);
  assert.is(s.totalCalls, 20);
});

open("still open at 29.999 s; half-open at 30 s with exactly one probe", async () => {
  const h = harness();
  await openCircuit(h);
  h.clock.advance(29_999);
  assertRefused(await h.ok());
  assert.is(h.policy.snapshot().state, "open");
  h.clock.advance(1);
  assert.is(h.policy.snapshot().state, "half_open");

  const probeResult = deferred<string>();
  let probeCalls = 0;
  const probe = h.policy.execute(() => {
    probeCalls += 1;
    return probeResult.promise;
  });
  const before = h.calls.n;
  const second = await h.ok();
  const third = await h.fail();
  assertRefused(second);
  assertRefused(third);
  assert.is(h.calls.n, before, "concurrent calls during the probe are not made");
  assert.is(probeCalls, 1);
  probeResult.resolve("probe-ok");
  assert.is(await probe, "probe-ok");
  assert.equal(h.changes, ["open", "half_open", "closed"]);
});

open("probe success closes and resets the window", async () => {
  const h = harness();
  await openCircuit(h);
  h.clock.advance(30_000);
  assert.is(await h.ok(), "ok");
  const s = h.policy.snapshot();
  assert.is(s.state, "closed");
  assert.is(s.windowCalls, 0);
  assert.is(s.windowFailures, 0);
  assert.is(s.openedAt, undefined);
  // A fresh window: 19 more failures do not reopen it.
  await times(19, () => h.fail());
  assert.is(h.policy.snapshot().state, "closed");
  await h.fail();
  assert.is(h.policy.snapshot().state, "open");
});

open("probe failure re-opens for another 30 s", async () => {
  const h = harness();
  await openCircuit(h);
  h.clock.advance(30_000);
  await h.fail(); // the probe
  let s = h.policy.snapshot();
  assert.is(s.state, "open");
  assert.is(s.openedAt, new Date(T0 + 30_000).toISOString());
  const before = h.calls.n;
  h.clock.advance(29_999);
  assertRefused(await h.ok());
  assert.is(h.calls.n, before);
  h.clock.advance(1);
  assert.is(await h.ok(), "ok"); // the next probe
  s = h.policy.snapshot();
  assert.is(s.state, "closed");
  assert.equal(h.changes, ["open", "half_open", "open", "half_open", "closed"]);
});

open("a timed-out probe re-opens", async () => {
  const h = harness({ timeoutMs: 20 });
  await openCircuit(h);
  h.clock.advance(30_000);
  const e = await h.policy.execute(() => new Promise<never>(() => {})).catch((x: unknown) => x);
  assert.is((e as DependencyUnavailableError).failureClass, "timeout");
  assert.is(h.policy.snapshot().state, "open");
});

open("a neutral probe (business rejection) closes: the dependency answered", async () => {
  const h = harness();
  await openCircuit(h);
  h.clock.advance(30_000);
  const rejection = Object.assign(new Error("invoice number already used"), { dependencyFailure: false });
  assert.is(await h.fail(rejection), rejection);
  assert.is(h.policy.snapshot().state, "closed");
});

open.run();

// ---------------------------------------------------------------------------
const counting = suite("policies: what counts");

counting("customer 4xx / business rejections do not count toward opening", async () => {
  const h = harness();
  const rejection = Object.assign(new Error("GW_REG_BUSINESS_NOT_FOUND"), { status: 404, dependencyFailure: false });
  for (let i = 0; i < 40; i++) assert.is(await h.fail(rejection), rejection, "rethrown unchanged");
  let s = h.policy.snapshot();
  assert.is(s.state, "closed");
  assert.is(s.windowCalls, 0);
  assert.is(s.totalCalls, 40);
  assert.is(s.totalFailures, 0);
  // Nor do they dilute real failures: 20 failures among 40 rejections open the circuit.
  await times(20, () => h.fail());
  s = h.policy.snapshot();
  assert.is(s.state, "open");
  assert.is(s.windowCalls, 20);
});

counting("DuplicateKeyError does not count", async () => {
  const h = harness({ dependency: "document-store" });
  const dup = new DuplicateKeyError("invoices", "_id");
  for (let i = 0; i < 40; i++) assert.is(await h.fail(dup), dup);
  const s = h.policy.snapshot();
  assert.is(s.state, "closed");
  assert.is(s.windowCalls, 0);
  assert.is(s.totalFailures, 0);
});

counting("neutral results do not count", async () => {
  const h = harness();
  for (let i = 0; i < 30; i++) {
    await h.policy.execute(async () => ({ status: 422 }), { classify: () => "neutral" });
  }
  assert.is(h.policy.snapshot().windowCalls, 0);
});

counting("timeout: DependencyUnavailableError 'timeout', counts, aborts the signal and tells onExpire (real 20 ms)", async () => {
  const h = harness({ timeoutMs: 20 });
  let seen: AbortSignal | undefined;
  let expired = 0;
  const started = Date.now();
  const e = await h.policy
    .execute((deadline) => {
      seen = deadline.signal;
      deadline.onExpire(() => expired++);
      return new Promise<never>(() => {});
    })
    .catch((x: unknown) => x);
  assert.ok(Date.now() - started < 1_000);
  assert.ok(isDependencyUnavailableError(e));
  const err = e as DependencyUnavailableError;
  assert.is(err.failureClass, "timeout");
  assert.is(err.message, "timed out after 20ms");
  assert.is(err.dependency, "regulator:TEST");
  assert.is(seen?.aborted, true);
  assert.is(expired, 1, "the work was told once");
  const s = h.policy.snapshot();
  assert.is(s.windowFailures, 1);
  assert.is(s.lastFailureClass, "timeout");
});

counting("a call that settles in time is never told to stop; a signal read after the deadline is already aborted", async () => {
  const h = harness({ timeoutMs: 20 });
  let expired = 0;
  let late: AbortSignal | undefined;
  assert.is(
    await h.policy.execute(async (deadline) => {
      deadline.onExpire(() => expired++);
      return "done";
    }),
    "done",
  );
  const e = await h.policy
    .execute(
      (deadline) =>
        new Promise<never>(() => {
          setTimeout(() => (late = deadline.signal), 60);
        }),
    )
    .catch((x: unknown) => x);
  assert.is((e as DependencyUnavailableError).failureClass, "timeout");
  await new Promise((r) => setTimeout(r, 80));
  assert.is(late?.aborted, true);
  assert.is(expired, 0, "the call that answered in time was not aborted");
});

counting("20 concurrent timeouts open the circuit", async () => {
  const h = harness({ timeoutMs: 20 });
  await Promise.all(Array.from({ length: 20 }, () => h.policy.execute(() => new Promise<never>(() => {})).catch(() => {})));
  assert.is(h.policy.snapshot().state, "open");
});

counting("fn's own errors are rethrown unchanged after being counted", async () => {
  const h = harness();
  const boom = new Error("socket hang up");
  assert.is(await h.fail(boom), boom);
  const s = h.policy.snapshot();
  assert.is(s.windowFailures, 1);
  assert.is(s.lastFailureClass, "transport");
});

counting("classifyError defaults", () => {
  assert.equal(classifyError(new DuplicateKeyError("c", "_id")), { verdict: "neutral" });
  assert.equal(classifyError(new DependencyUnavailableError("x", "down", "server_error")), {
    verdict: "failure",
    failureClass: "server_error",
  });
  const abort = Object.assign(new Error("aborted"), { name: "AbortError" });
  assert.equal(classifyError(abort), { verdict: "failure", failureClass: "timeout" });
  assert.equal(classifyError(new DOMException("t", "TimeoutError")), { verdict: "failure", failureClass: "timeout" });
  assert.equal(classifyError(Object.assign(new Error("401"), { failureClass: "credentials_rejected" })), {
    verdict: "failure",
    failureClass: "credentials_rejected",
  });
  assert.equal(classifyError(Object.assign(new Error("422"), { dependencyFailure: false })), { verdict: "neutral" });
  assert.equal(classifyError(Object.assign(new Error("x"), { dependencyFailure: true })), {
    verdict: "failure",
    failureClass: "transport",
  });
  assert.equal(classifyError(new Error("ECONNRESET")), { verdict: "failure", failureClass: "transport" });
  assert.equal(classifyError("weird"), { verdict: "failure", failureClass: "transport" });
});

counting("isFailure overrides the default; timeouts still count", async () => {
  const h = harness({ isFailure: (e) => (e as { code?: string }).code !== "NOT_MINE", timeoutMs: 20 });
  await times(25, () => h.fail(Object.assign(new Error("x"), { code: "NOT_MINE" })));
  assert.is(h.policy.snapshot().windowCalls, 0);
  await h.fail(new DuplicateKeyError("c", "_id")); // isFailure says true
  assert.is(h.policy.snapshot().windowFailures, 1);
  await h.policy.execute(() => new Promise<never>(() => {})).catch(() => {});
  assert.is(h.policy.snapshot().windowFailures, 2);
  assert.is(h.policy.classify(Object.assign(new Error("x"), { code: "NOT_MINE" })).verdict, "neutral");
});

counting.run();

// ---------------------------------------------------------------------------
const reporting = suite("policies: snapshot, observe, registry");

reporting("snapshot fields", async () => {
  const h = harness({ dependency: "coordination" });
  assert.equal(h.policy.snapshot(), {
    dependency: "coordination",
    state: "closed",
    windowCalls: 0,
    windowFailures: 0,
    failureRatio: 0,
    totalCalls: 0,
    totalFailures: 0,
    totalRefused: 0,
  });
  await times(3, () => h.ok());
  h.clock.advance(1_000);
  await h.fail(new DependencyUnavailableError("coordination", "ECONNREFUSED", "transport"));
  await h.fail(new DuplicateKeyError("c", "_id"));
  assert.equal(h.policy.snapshot(), {
    dependency: "coordination",
    state: "closed",
    windowCalls: 4,
    windowFailures: 1,
    failureRatio: 0.25,
    lastFailureClass: "transport",
    lastFailureAt: new Date(T0 + 1_000).toISOString(),
    lastSuccessAt: new Date(T0 + 1_000).toISOString(),
    totalCalls: 5,
    totalFailures: 1,
    totalRefused: 0,
  });
  // 16 more failures: 20 eligible calls, 17 failed → open; the other 4 and the next call are refused.
  await times(20, () => h.fail());
  h.clock.advance(500);
  await h.ok();
  const s = h.policy.snapshot();
  assert.is(s.state, "open");
  assert.is(s.openedAt, new Date(T0 + 1_000).toISOString());
  assert.is(s.windowCalls, 20); // the window stays visible while open
  assert.is(s.windowFailures, 17);
  assert.is(s.totalCalls, 21);
  assert.is(s.totalFailures, 17);
  assert.is(s.totalRefused, 5);
});

reporting("observe gets one report per call, refusals included", async () => {
  const h = harness();
  const reports: CallReport[] = [];
  const observe = (r: CallReport) => reports.push(r);
  await h.policy.execute(
    async () => {
      h.clock.advance(7);
      return 1;
    },
    { observe },
  );
  for (let i = 0; i < 20; i++) await h.policy.execute(async () => Promise.reject(new Error("x")), { observe }).catch(() => {});
  await h.policy.execute(async () => 1, { observe }).catch(() => {});
  await h.policy
    .execute(async () => 1, {
      observe: () => {
        throw new Error("a broken logger");
      },
    })
    .catch(() => {});
  assert.is(reports.length, 22);
  assert.equal(reports[0], { dependency: "regulator:TEST", outcome: "success", latencyMs: 7, circuitState: "closed" });
  // 1 success + 19 failures = 20 calls at 95 %: the 19th failure opens; the 20th is refused.
  assert.equal(reports[19], {
    dependency: "regulator:TEST",
    outcome: "failure",
    failureClass: "transport",
    latencyMs: 0,
    circuitState: "open",
  });
  assert.equal(reports[20], reports[21]);
  assert.equal(reports[21], {
    dependency: "regulator:TEST",
    outcome: "refused",
    failureClass: "circuit_open",
    latencyMs: 0,
    circuitState: "open",
  });
});

reporting("a throwing onStateChange does not break calls", async () => {
  const h = harness({
    onStateChange: () => {
      throw new Error("listener");
    },
  });
  await openCircuit(h);
  assertRefused(await h.ok());
});

reporting("thresholds are options", async () => {
  const h = harness({ minimumCalls: 4, failureRatio: 0.75, windowMs: 10_000, buckets: 10, halfOpenAfterMs: 5_000 });
  await h.ok();
  await times(2, () => h.fail());
  assert.is(h.policy.snapshot().state, "closed");
  await h.fail(); // 3 / 4 = 75 %
  assert.is(h.policy.snapshot().state, "open");
  h.clock.advance(5_000);
  assert.is(h.policy.snapshot().state, "half_open");
});

reporting("invalid options are refused at construction", () => {
  assert.throws(() => createDependencyPolicy({ dependency: "x", timeoutMs: 0 }), /timeoutMs/);
  assert.throws(() => createDependencyPolicy({ dependency: "", timeoutMs: 10 }), /dependency/);
  assert.throws(() => createDependencyPolicy({ dependency: "x", timeoutMs: 10, failureRatio: 0 }), /failureRatio/);
  assert.throws(() => createDependencyPolicy({ dependency: "x", timeoutMs: 10, minimumCalls: 0 }), /minimumCalls/);
});

reporting("registry: one policy per name, snapshots sorted by name", async () => {
  const clock = manualClock(T0);
  const changes: string[] = [];
  const registry = createPolicyRegistry({ clock, onStateChange: (s, d) => changes.push(`${d}:${s}`) });
  const live = registry.create({ dependency: "regulator:LIVE", timeoutMs: 1_000 });
  const test = registry.create({ dependency: "regulator:TEST", timeoutMs: 1_000 });
  registry.register(createDependencyPolicy({ dependency: "document-store", timeoutMs: 1_000, clock }));
  assert.is(registry.get("regulator:LIVE"), live);
  assert.is(registry.get("regulator:TEST"), test);
  assert.is(registry.get("nope"), undefined);
  assert.throws(() => registry.create({ dependency: "regulator:LIVE", timeoutMs: 5 }), /already registered/);
  assert.is(registry.register(live), live);
  assert.equal(registry.names(), ["document-store", "regulator:LIVE", "regulator:TEST"]);

  for (let i = 0; i < 20; i++) await live.execute(async () => Promise.reject(new Error("503"))).catch(() => {});
  const snaps = registry.snapshot();
  assert.equal(
    snaps.map((s) => [s.dependency, s.state]),
    [
      ["document-store", "closed"],
      ["regulator:LIVE", "open"],
      ["regulator:TEST", "closed"],
    ],
  );
  assert.equal(changes, ["regulator:LIVE:open"]);
  // The two regulator states have independent circuits.
  assert.is(await test.execute(async () => "fine"), "fine");
  clock.advance(30_000);
  assert.is(registry.get("regulator:LIVE")!.snapshot().state, "half_open");
});

reporting("executeNow: synchronous work through the same circuit, counts and reports; refused when open; only without a deadline", () => {
  const clock = manualClock(T0);
  const reports: CallReport[] = [];
  const policy = createDependencyPolicy({ dependency: "coordination", timeoutMs: Number.POSITIVE_INFINITY, clock });
  const observe = (r: CallReport) => reports.push(r);
  assert.is(policy.executeNow(() => 42, { observe }), 42);
  const dup = new DuplicateKeyError("c", "_id");
  let thrown: unknown;
  try {
    policy.executeNow(() => {
      throw dup;
    }, { observe });
  } catch (e) {
    thrown = e;
  }
  assert.is(thrown, dup, "fn's errors are rethrown unchanged");
  assert.equal(reports.map((r) => r.outcome), ["success", "neutral"]);
  assert.is(policy.executeNow(() => ({ status: 503 }), { classify: () => "failure", observe }).status, 503, "classify as execute's");
  for (let i = 0; i < 19; i++) {
    try {
      policy.executeNow(() => {
        throw _transportError();
      });
    } catch {
      // counted
    }
  }
  assert.is(policy.snapshot().state, "open");
  let calls = 0;
  try {
    policy.executeNow(() => ++calls, { observe });
  } catch (e) {
    assertRefused(e, "coordination");
  }
  assert.is(calls, 0, "refused without running fn");
  assert.is(reports.at(-1)!.outcome, "refused");
  const withDeadline = createDependencyPolicy({ dependency: "regulator:TEST", timeoutMs: 1_000, clock });
  assert.throws(() => withDeadline.executeNow(() => 1), /without a deadline/);
});

reporting.run();

// --- Internal helpers ---

function _transportError(): Error {
  return Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
}
