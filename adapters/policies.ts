/**
 * Resilience policies: one per dependency (and per regulator state, e.g. "regulator:TEST"),
 * built once at boot and shared by every call to that dependency (ARCHITECTURE.md §5, spec §3.5).
 *
 * A policy is a timeout plus a circuit:
 *   closed    → open       at least `minimumCalls` (20) eligible calls in the sliding `windowMs` (30 s)
 *                          window and a failure ratio ≥ `failureRatio` (50 %)
 *   open      → half_open  after `halfOpenAfterMs` (30 s); until then every call is refused at once
 *                          (the function is never called) with DependencyUnavailableError "circuit_open"
 *   half_open → closed     the single probe call did not fail (window reset)
 *   half_open → open       the probe failed (open again for another 30 s)
 * While the probe is in flight, every other call is refused (not queued).
 *
 * Why the circuit is our own class and not cockatiel's CircuitBreakerPolicy (cockatiel 3.2.1):
 *   - CircuitBreakerPolicy reads `Date.now()` itself for `openedAt` and for the open → half-open check,
 *     so the 30 s timing cannot be driven by an injected clock (only by patching the global Date);
 *     a custom IBreaker only decides *when to open*, never when to half-open.
 *   - In half-open it makes concurrent callers *wait* for the probe and then run them, whereas §3.5
 *     admits exactly one probe and refuses the rest.
 *   - An error its filter does not handle, thrown by the probe, closes the circuit, and results can
 *     only be "handled" or not: there is no "neutral" outcome (neither success nor failure).
 * So `SlidingWindowCircuit` below is a small state machine over a bucketed sliding window that uses the
 * injected `Clock`.
 *
 * The deadline is our own too (`_withDeadline`): one timer per call, the caller answered at the
 * deadline even when the work ignores it (what cockatiel calls an aggressive timeout), and the work
 * told at the deadline so that work that listens stops: `fn` receives a `CallDeadline`, whose
 * `onExpire(abort)` is called then, and whose `signal` (an AbortSignal, built only when read: one
 * costs ~3 µs on Node 20, ~5 µs with a listener) is aborted then. It replaced cockatiel 3.2's
 * `timeout(ms, Aggressive)`, whose per-call bookkeeping (a derived AbortController, abort listeners,
 * `Promise.race`, event emitters, and an `abort()` on every return that builds a DOMException with
 * its stack) cost ~12 µs of CPU per call against ~1 µs, and ~14 % of the gateway's CPU on a relayed
 * regulator read (docs/bench.md, issue 12). No retry is composed in:
 * store writes and regulator calls are not all idempotent, so retrying is the caller's decision.
 *
 * Failure classification (spec §3.5 "failures that count"), see `classifyError`:
 *   failure  timeouts, transport errors, 5xx, rejected deployment-owned credentials, invalid dependency
 *            contracts: a DependencyUnavailableError, an AbortError/TimeoutError, any error carrying a
 *            string `failureClass` or `dependencyFailure: true`, and any unknown error ("transport").
 *   neutral  customer 4xx and business rejections (errors carrying `dependencyFailure: false`) and
 *            DuplicateKeyError. Neutral calls are not "eligible calls": they count neither toward the
 *            20-call minimum nor toward the ratio, so a flood of customer mistakes can neither open the
 *            circuit nor dilute a real outage into staying closed. As the half-open probe, a neutral
 *            outcome closes the circuit: the dependency answered coherently, which is what the probe asks.
 * Results are successes unless `execute(fn, { classify })` says otherwise (e.g. a 5xx response object).
 */
import {
  DependencyUnavailableError,
  isDependencyUnavailableError,
  isDuplicateKeyError,
  isInvalidQueryError,
  type CircuitState,
  type DependencyHealth,
  type DependencySnapshot,
} from "./ports.ts";

export type { CircuitState, DependencySnapshot };

// ---------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** How one call counted: "neutral" calls are not eligible (neither success nor failure). */
export type CallVerdict = "success" | "failure" | "neutral";

/**
 * Normalized failure class. The port's classes plus "credentials_rejected"; errors from other
 * adapters may carry further strings, which are reported as they are.
 */
export type FailureClass = DependencyUnavailableError["failureClass"] | "credentials_rejected";

export type ErrorClassification =
  | { verdict: "failure"; failureClass: FailureClass | (string & {}) }
  | { verdict: "success" | "neutral" };

/** What `classify` may say about a result; a bare "failure" is reported as "server_error". */
export type ResultVerdict = CallVerdict | { verdict: "failure"; failureClass: FailureClass | (string & {}) };

export interface CircuitThresholds {
  /** Eligible calls needed in the window before the circuit may open. Default 20. */
  minimumCalls?: number;
  /** Failure ratio (0 < r ≤ 1) at or above which the circuit opens. Default 0.5. */
  failureRatio?: number;
  /** Sliding window length. Default 30_000 ms. */
  windowMs?: number;
  /** Buckets in the window (granularity windowMs / buckets). Default 30 (1 s each). */
  buckets?: number;
  /** Time spent open before one probe is admitted. Default 30_000 ms. */
  halfOpenAfterMs?: number;
}

export interface DependencyPolicyOptions extends CircuitThresholds {
  /** Name in logs and /health/dependencies: "document-store", "coordination", "regulator:LIVE". */
  dependency: string;
  /** Per-call deadline. */
  timeoutMs: number;
  clock?: Clock;
  /** Overrides which thrown errors count: true → failure, false → neutral. Timeouts always count. */
  isFailure?: (error: unknown) => boolean;
  onStateChange?: (state: CircuitState, dependency: string) => void;
}

/** Reported once per `execute`, after its outcome is known (refusals included). */
export interface CallReport {
  dependency: string;
  outcome: CallVerdict | "refused";
  failureClass?: string;
  latencyMs: number;
  /** Circuit state right after the call was recorded. */
  circuitState: CircuitState;
}

export interface ExecuteOptions<T> {
  /** How a returned value counts (default "success"): e.g. a 5xx response → "failure". */
  classify?: (result: T) => ResultVerdict;
  /** Observer for `gateway_dependency_call` logging; exceptions it throws are ignored. */
  observe?: (report: CallReport) => void;
}


/** What the work under `execute` gets: its call's deadline. */
export interface CallDeadline {
  /** Aborted when the deadline passes (never, without a deadline). Built on first read: prefer onExpire. */
  readonly signal: AbortSignal;
  /** `abort` runs when the deadline passes (at once if it has). One listener: a later call replaces it. */
  onExpire(abort: () => void): void;
}

export interface DependencyPolicy {
  readonly dependency: string;
  readonly timeoutMs: number;
  /**
   * Runs `fn` through the circuit and the timeout. Refused → DependencyUnavailableError("circuit_open");
   * deadline passed → DependencyUnavailableError("timed out after Nms", "timeout"). Any other error
   * `fn` throws is rethrown unchanged after being counted.
   */
  execute<T>(fn: (deadline: CallDeadline) => Promise<T>, opts?: ExecuteOptions<T>): Promise<T>;
  /**
   * `execute` for work that completes synchronously (the in-process fast path of the embedded
   * stores): the same circuit, counting and report, with no promise. Only for a policy without a
   * deadline (timeoutMs Infinity): synchronous work cannot be interrupted, so a deadline could not
   * be kept; a policy with one throws a RangeError.
   */
  executeNow<T>(fn: () => T, opts?: ExecuteOptions<T>): T;
  /** How this policy counts a thrown error (the default `classifyError`, or `isFailure` when given). */
  classify(error: unknown): ErrorClassification;
  snapshot(): DependencySnapshot;
}

export interface PolicyRegistry extends DependencyHealth {
  /** Creates a policy (registry defaults filled in) and registers it. */
  create(options: DependencyPolicyOptions): DependencyPolicy;
  /** Registers a policy built elsewhere; a second policy under the same name is a wiring error. */
  register(policy: DependencyPolicy): DependencyPolicy;
  get(dependency: string): DependencyPolicy | undefined;
  names(): string[];
  /** Every policy's snapshot, sorted by dependency name (for /health/dependencies). */
  snapshot(): DependencySnapshot[];
}

export type PolicyRegistryDefaults = Pick<DependencyPolicyOptions, "clock" | "isFailure" | "onStateChange"> &
  CircuitThresholds;

export const CIRCUIT_DEFAULTS = {
  minimumCalls: 20,
  failureRatio: 0.5,
  windowMs: 30_000,
  buckets: 30,
  halfOpenAfterMs: 30_000,
} as const satisfies Required<CircuitThresholds>;

// ---------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------

/**
 * Default classification of a thrown error (spec §3.5):
 * - DuplicateKeyError → neutral (the store answered; the clash is a value for the caller)
 * - DependencyUnavailableError → failure with its failureClass
 * - AbortError / TimeoutError (DOMException from fetch, AbortSignal.timeout) → failure "timeout"
 * - `dependencyFailure: false` → neutral (customer 4xx, business rejection)
 * - a string `failureClass` or `dependencyFailure: true` → failure (class defaults to "transport")
 * - anything else → failure "transport"
 */
export function classifyError(error: unknown): ErrorClassification {
  if (isDuplicateKeyError(error) || isInvalidQueryError(error)) return { verdict: "neutral" };
  if (isDependencyUnavailableError(error)) return { verdict: "failure", failureClass: error.failureClass };
  if (typeof error === "object" && error !== null) {
    const e = error as { name?: unknown; failureClass?: unknown; dependencyFailure?: unknown };
    if (e.dependencyFailure === false) return { verdict: "neutral" };
    if (typeof e.failureClass === "string" && e.failureClass !== "") {
      return { verdict: "failure", failureClass: e.failureClass };
    }
    if (e.name === "AbortError" || e.name === "TimeoutError") return { verdict: "failure", failureClass: "timeout" };
  }
  return { verdict: "failure", failureClass: "transport" };
}

// ---------------------------------------------------------------------------
// Circuit state machine
// ---------------------------------------------------------------------------

/** A permission to make one call, tied to the circuit state it was granted in. */
export interface Admission {
  readonly epoch: number;
  readonly probe: boolean;
}

/**
 * The §3.5 circuit over a bucketed sliding window, timed by the injected clock. Not a policy by itself:
 * `admit()` before a call (null = refuse), `record()` after it.
 */
export class SlidingWindowCircuit {
  private readonly minimumCalls: number;
  private readonly failureRatio: number;
  private readonly halfOpenAfterMs: number;
  private readonly bucketMs: number;
  private readonly ring: { index: number; calls: number; failures: number }[];
  private innerState: CircuitState = "closed";
  private epoch = 0;
  private probeInFlight = false;
  private openedAtMs = 0;
  /** Bucket index of the last failure recorded (the window holds none once it is a window behind). */
  private lastFailureIndex = -Infinity;
  /** The admission of every call while closed in this epoch (shared: admissions are read-only). */
  private closedAdmission: Admission = { epoch: 0, probe: false };

  constructor(
    private readonly clock: Clock,
    thresholds: CircuitThresholds = {},
    private readonly onTransition: (state: CircuitState) => void = () => {},
  ) {
    const t = { ...CIRCUIT_DEFAULTS, ..._defined(thresholds) };
    _check(Number.isInteger(t.minimumCalls) && t.minimumCalls >= 1, "minimumCalls must be an integer ≥ 1");
    _check(t.failureRatio > 0 && t.failureRatio <= 1, "failureRatio must be in (0, 1]");
    _check(Number.isInteger(t.buckets) && t.buckets >= 1, "buckets must be an integer ≥ 1");
    _check(Number.isFinite(t.windowMs) && t.windowMs >= t.buckets, "windowMs must be finite and ≥ buckets");
    _check(Number.isFinite(t.halfOpenAfterMs) && t.halfOpenAfterMs >= 0, "halfOpenAfterMs must be finite and ≥ 0");
    this.minimumCalls = t.minimumCalls;
    this.failureRatio = t.failureRatio;
    this.halfOpenAfterMs = t.halfOpenAfterMs;
    this.bucketMs = t.windowMs / t.buckets;
    this.ring = Array.from({ length: t.buckets }, () => ({ index: -1, calls: 0, failures: 0 }));
  }

  /** Current state; an open circuit whose wait is over becomes half-open here. */
  get state(): CircuitState {
    if (this.innerState === "open" && this.clock.now() - this.openedAtMs >= this.halfOpenAfterMs) {
      this.transition("half_open");
    }
    return this.innerState;
  }

  /** Epoch ms of the last opening, while open or half-open. */
  get openedAt(): number | undefined {
    return this.innerState === "closed" ? undefined : this.openedAtMs;
  }

  /** Eligible calls and failures in the window ending now. */
  window(): { calls: number; failures: number } {
    const current = Math.floor(this.clock.now() / this.bucketMs);
    let calls = 0;
    let failures = 0;
    for (const b of this.ring) {
      if (b.index > current - this.ring.length && b.index <= current) {
        calls += b.calls;
        failures += b.failures;
      }
    }
    return { calls, failures };
  }

  /** Null when the call must be refused (open, or half-open with the probe already out). */
  admit(): Admission | null {
    const state = this.state;
    if (state === "closed") return this.closedAdmission;
    if (state === "open" || this.probeInFlight) return null;
    this.probeInFlight = true;
    return { epoch: this.epoch, probe: true };
  }

  /** Records how an admitted call went. Outcomes of calls admitted under an earlier state are ignored. */
  record(admission: Admission, verdict: CallVerdict): void {
    if (admission.epoch !== this.epoch) return;
    if (admission.probe) {
      this.probeInFlight = false;
      this.transition(verdict === "failure" ? "open" : "closed");
      return;
    }
    if (verdict === "neutral") return;
    const index = Math.floor(this.clock.now() / this.bucketMs);
    const bucket = this.ring[((index % this.ring.length) + this.ring.length) % this.ring.length]!;
    if (bucket.index !== index) {
      bucket.index = index;
      bucket.calls = 0;
      bucket.failures = 0;
    }
    bucket.calls += 1;
    if (verdict === "failure") {
      bucket.failures += 1;
      this.lastFailureIndex = index;
    }
    // Without a failure in the window the ratio is 0 and cannot reach failureRatio (> 0): the
    // window is summed only when one could (most calls succeed, and this runs on every call).
    if (this.lastFailureIndex <= index - this.ring.length) return;
    const { calls, failures } = this.window();
    if (calls >= this.minimumCalls && failures >= this.failureRatio * calls) this.transition("open");
  }

  private transition(next: CircuitState): void {
    this.innerState = next;
    this.epoch += 1;
    this.closedAdmission = { epoch: this.epoch, probe: false };
    this.probeInFlight = false;
    if (next === "open") this.openedAtMs = this.clock.now();
    if (next === "closed") {
      this.lastFailureIndex = -Infinity;
      for (const b of this.ring) {
        b.index = -1;
        b.calls = 0;
        b.failures = 0;
      }
    }
    this.onTransition(next);
  }
}

// ---------------------------------------------------------------------------
// Policy
// ---------------------------------------------------------------------------

/** The deadline of a policy without one: never expires. */
const NO_DEADLINE: CallDeadline = { signal: new AbortController().signal, onExpire() {} };

export function createDependencyPolicy(options: DependencyPolicyOptions): DependencyPolicy {
  const { dependency, timeoutMs, isFailure, onStateChange } = options;
  const clock = options.clock ?? systemClock;
  _check(typeof dependency === "string" && dependency !== "", "dependency must be a non-empty string");
  _check(timeoutMs > 0, `timeoutMs of ${dependency} must be a positive number (Infinity: no deadline)`);

  const circuit = new SlidingWindowCircuit(clock, options, (state) => {
    if (!onStateChange) return;
    try {
      onStateChange(state, dependency);
    } catch {
      // A listener must not break the dependency's calls.
    }
  });
  // Infinity means no deadline: in-process implementations (memory coordination, the embedded
  // store) cannot hang on a network, and a deadline costs a timer and an AbortController per call
  // on the hot path. The circuit still counts their outcomes.
  const deadline = Number.isFinite(timeoutMs);
  const totals = { calls: 0, failures: 0, refused: 0 };
  let lastFailureClass: string | undefined;
  let lastFailureAt: number | undefined;
  let lastSuccessAt: number | undefined;

  function classify(error: unknown): ErrorClassification {
    if (!isFailure) return classifyError(error);
    if (!isFailure(error)) return { verdict: "neutral" };
    const byDefault = classifyError(error);
    return { verdict: "failure", failureClass: byDefault.verdict === "failure" ? byDefault.failureClass : "transport" };
  }

  function settle(admission: Admission, verdict: CallVerdict, failureClass: string | undefined): void {
    const now = clock.now();
    if (verdict === "failure") {
      totals.failures += 1;
      lastFailureClass = failureClass;
      lastFailureAt = now;
    } else {
      lastSuccessAt = now;
    }
    circuit.record(admission, verdict);
  }

  /** Hands one call's report to `observe` (when given); what the observer throws is ignored. */
  function report(
    observe: ((report: CallReport) => void) | undefined,
    startedAt: number,
    outcome: CallReport["outcome"],
    failureClass?: string,
  ): void {
    if (!observe) return;
    try {
      const latencyMs = Math.max(0, clock.now() - startedAt);
      const circuitState = circuit.state;
      observe(
        failureClass === undefined
          ? { dependency, outcome, latencyMs, circuitState }
          : { dependency, outcome, failureClass, latencyMs, circuitState },
      );
    } catch {
      // Logging must not change the call's outcome.
    }
  }

  /** Admits one call (or refuses it: reported, DependencyUnavailableError "circuit_open"). */
  function admit(observe: ExecuteOptions<never>["observe"], startedAt: number): Admission {
    const admission = circuit.admit();
    if (!admission) {
      totals.refused += 1;
      report(observe, startedAt, "refused", "circuit_open");
      throw new DependencyUnavailableError(dependency, "circuit open", "circuit_open");
    }
    totals.calls += 1;
    return admission;
  }

  /** Counts and reports an error `fn` threw (the caller rethrows it). */
  function failed(admission: Admission, observe: ExecuteOptions<never>["observe"], startedAt: number, error: unknown): void {
    const c = classify(error);
    const failureClass = c.verdict === "failure" ? c.failureClass : undefined;
    settle(admission, c.verdict, failureClass);
    report(observe, startedAt, c.verdict, failureClass);
  }

  /** Counts and reports a result (`classify` may call it a failure). */
  function succeeded<T>(admission: Admission, opts: ExecuteOptions<T> | undefined, startedAt: number, result: T): T {
    const v = _resultVerdict(opts?.classify, result);
    settle(admission, v.verdict, v.failureClass);
    report(opts?.observe, startedAt, v.verdict, v.failureClass);
    return result;
  }

  async function execute<T>(fn: (deadline: CallDeadline) => Promise<T>, opts?: ExecuteOptions<T>): Promise<T> {
    const startedAt = clock.now();
    const admission = admit(opts?.observe, startedAt);
    let result: T;
    try {
      result = deadline ? await _withDeadline(fn, timeoutMs) : await fn(NO_DEADLINE);
    } catch (error) {
      // The deadline passed: a timeout (fn's own settling afterwards, an AbortError, is ignored).
      if (error === DEADLINE_PASSED) {
        settle(admission, "failure", "timeout");
        report(opts?.observe, startedAt, "failure", "timeout");
        throw new DependencyUnavailableError(dependency, `timed out after ${timeoutMs}ms`, "timeout");
      }
      failed(admission, opts?.observe, startedAt, error);
      throw error;
    }
    return succeeded(admission, opts, startedAt, result);
  }

  function executeNow<T>(fn: () => T, opts?: ExecuteOptions<T>): T {
    if (deadline) throw new RangeError(`[policies] executeNow needs a policy without a deadline (${dependency} has ${timeoutMs} ms)`);
    const startedAt = clock.now();
    const admission = admit(opts?.observe, startedAt);
    let result: T;
    try {
      result = fn();
    } catch (error) {
      failed(admission, opts?.observe, startedAt, error);
      throw error;
    }
    return succeeded(admission, opts, startedAt, result);
  }

  function snapshot(): DependencySnapshot {
    const state = circuit.state;
    const { calls, failures } = circuit.window();
    const openedAt = circuit.openedAt;
    return {
      dependency,
      state,
      windowCalls: calls,
      windowFailures: failures,
      failureRatio: calls === 0 ? 0 : failures / calls,
      ...(openedAt === undefined ? {} : { openedAt: new Date(openedAt).toISOString() }),
      ...(lastFailureClass === undefined ? {} : { lastFailureClass }),
      ...(lastFailureAt === undefined ? {} : { lastFailureAt: new Date(lastFailureAt).toISOString() }),
      ...(lastSuccessAt === undefined ? {} : { lastSuccessAt: new Date(lastSuccessAt).toISOString() }),
      totalCalls: totals.calls,
      totalFailures: totals.failures,
      totalRefused: totals.refused,
    };
  }

  return { dependency, timeoutMs, execute, executeNow, classify, snapshot };
}

// ---------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------

export function createPolicyRegistry(defaults: PolicyRegistryDefaults = {}): PolicyRegistry {
  const policies = new Map<string, DependencyPolicy>();

  function register(policy: DependencyPolicy): DependencyPolicy {
    const existing = policies.get(policy.dependency);
    if (existing && existing !== policy) {
      throw new Error(`[policies] a policy for "${policy.dependency}" is already registered`);
    }
    policies.set(policy.dependency, policy);
    return policy;
  }

  return {
    create: (options) =>
      register(createDependencyPolicy({ ..._defined(defaults), ..._defined(options) } as DependencyPolicyOptions)),
    register,
    get: (dependency) => policies.get(dependency),
    names: () => [...policies.keys()].sort(),
    snapshot: () => [...policies.keys()].sort().map((name) => policies.get(name)!.snapshot()),
  };
}

// --- Internal helpers ---

const SUCCESS: { readonly verdict: "success" } = { verdict: "success" };

function _resultVerdict<T>(
  classify: ((result: T) => ResultVerdict) | undefined,
  result: T,
): { verdict: CallVerdict; failureClass?: string } {
  if (!classify) return SUCCESS;
  const v = classify(result);
  if (typeof v === "object") return { verdict: "failure", failureClass: v.failureClass };
  return v === "failure" ? { verdict: "failure", failureClass: "server_error" } : { verdict: v };
}

/** What `_withDeadline` rejects with when the deadline passes first (never seen outside `execute`). */
const DEADLINE_PASSED: unique symbol = Symbol("deadline passed");

/** One call's deadline: expires once, telling the work (its `onExpire` listener, its signal if built). */
class _Deadline implements CallDeadline {
  #controller: AbortController | null = null;
  #listener: (() => void) | null = null;
  #expired = false;

  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.#expired) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  onExpire(abort: () => void): void {
    if (this.#expired) abort();
    else this.#listener = abort;
  }

  expire(): void {
    this.#expired = true;
    this.#controller?.abort();
    const listener = this.#listener;
    this.#listener = null;
    listener?.();
  }
}

/**
 * `fn(deadline)`, or a rejection with DEADLINE_PASSED at `ms` if it has not settled by then; the
 * deadline expires then (after the rejection, so the deadline always wins over the error that work
 * honouring it throws). Nothing happens to the work when `fn` settles in time.
 */
function _withDeadline<T>(fn: (deadline: CallDeadline) => Promise<T>, ms: number): Promise<T> {
  const deadline = new _Deadline();
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(DEADLINE_PASSED);
      deadline.expire();
    }, ms);
    const settle = <A>(done: (a: A) => void) => (a: A) => {
      clearTimeout(timer);
      done(a);
    };
    let work: Promise<T>;
    try {
      work = fn(deadline);
    } catch (error) {
      settle(reject)(error);
      return;
    }
    Promise.resolve(work).then(settle(resolve), settle(reject));
  });
}

function _check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new RangeError(`[policies] ${message}`);
}

/** Drops keys whose value is undefined, so spreading options never erases a default. */
function _defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
