/**
 * A dependency's resilience policy: a deadline plus the §3.5 circuit, built once at boot and shared
 * by every call to that dependency. Each call is admitted (or refused), run, counted by its verdict,
 * and reported to the caller's observer (the `gateway_dependency_call` log).
 */
import { DependencyUnavailableError, type DependencySnapshot } from "../ports.ts";
import { SlidingWindowCircuit, type Admission } from "./circuit.ts";
import { classifyError, resultVerdict } from "./classification.ts";
import { DEADLINE_PASSED, NO_DEADLINE, withDeadline } from "./deadline.ts";
import { checkOption } from "./options.ts";
import {
  systemClock,
  type CallDeadline,
  type CallReport,
  type CallVerdict,
  type Clock,
  type DependencyPolicy,
  type DependencyPolicyOptions,
  type ErrorClassification,
  type ExecuteOptions,
} from "./types.ts";

export function createDependencyPolicy(options: DependencyPolicyOptions): DependencyPolicy {
  const { dependency, timeoutMs, isFailure, onStateChange } = options;
  const clock = options.clock ?? systemClock;
  checkOption(typeof dependency === "string" && dependency !== "", "dependency must be a non-empty string");
  checkOption(timeoutMs > 0, `timeoutMs of ${dependency} must be a positive number (Infinity: no deadline)`);

  const circuit = new SlidingWindowCircuit(clock, options, (state) => {
    if (!onStateChange) return;
    try {
      onStateChange(state, dependency);
    } catch {
      // A listener must not break the dependency's calls.
    }
  });
  const s: _PolicyState = {
    dependency,
    timeoutMs,
    // Infinity means no deadline: in-process implementations (memory coordination, the embedded
    // store) cannot hang on a network, and a deadline costs a timer and an AbortController per call
    // on the hot path. The circuit still counts their outcomes.
    deadline: Number.isFinite(timeoutMs),
    clock,
    isFailure,
    circuit,
    totals: { calls: 0, failures: 0, refused: 0 },
    lastFailureClass: undefined,
    lastFailureAt: undefined,
    lastSuccessAt: undefined,
  };
  return {
    dependency,
    timeoutMs,
    execute: (fn, opts) => _execute(s, fn, opts),
    executeNow: (fn, opts) => _executeNow(s, fn, opts),
    classify: (error) => _classify(s, error),
    snapshot: () => _snapshot(s),
  };
}

// --- Internal helpers ---

/** One policy's state: its circuit and the totals its snapshot reports. */
interface _PolicyState {
  readonly dependency: string;
  readonly timeoutMs: number;
  /** False for timeoutMs Infinity: calls run without a timer. */
  readonly deadline: boolean;
  readonly clock: Clock;
  readonly isFailure: ((error: unknown) => boolean) | undefined;
  readonly circuit: SlidingWindowCircuit;
  readonly totals: { calls: number; failures: number; refused: number };
  lastFailureClass: string | undefined;
  lastFailureAt: number | undefined;
  lastSuccessAt: number | undefined;
}

type _Observe = ExecuteOptions<never>["observe"];

async function _execute<T>(s: _PolicyState, fn: (deadline: CallDeadline) => Promise<T>, opts?: ExecuteOptions<T>): Promise<T> {
  const startedAt = s.clock.now();
  const admission = _admit(s, opts?.observe, startedAt);
  let result: T;
  try {
    result = s.deadline ? await withDeadline(fn, s.timeoutMs) : await fn(NO_DEADLINE);
  } catch (error) {
    // The deadline passed: a timeout (fn's own settling afterwards, an AbortError, is ignored).
    if (error === DEADLINE_PASSED) {
      _settle(s, admission, "failure", "timeout");
      _report(s, opts?.observe, startedAt, "failure", "timeout");
      throw new DependencyUnavailableError(s.dependency, `timed out after ${s.timeoutMs}ms`, "timeout");
    }
    _failed(s, admission, opts?.observe, startedAt, error);
    throw error;
  }
  return _succeeded(s, admission, opts, startedAt, result);
}

function _executeNow<T>(s: _PolicyState, fn: () => T, opts?: ExecuteOptions<T>): T {
  if (s.deadline) throw new RangeError(`[policies] executeNow needs a policy without a deadline (${s.dependency} has ${s.timeoutMs} ms)`);
  const startedAt = s.clock.now();
  const admission = _admit(s, opts?.observe, startedAt);
  let result: T;
  try {
    result = fn();
  } catch (error) {
    _failed(s, admission, opts?.observe, startedAt, error);
    throw error;
  }
  return _succeeded(s, admission, opts, startedAt, result);
}

function _classify(s: _PolicyState, error: unknown): ErrorClassification {
  if (!s.isFailure) return classifyError(error);
  if (!s.isFailure(error)) return { verdict: "neutral" };
  const byDefault = classifyError(error);
  return { verdict: "failure", failureClass: byDefault.verdict === "failure" ? byDefault.failureClass : "transport" };
}

function _settle(s: _PolicyState, admission: Admission, verdict: CallVerdict, failureClass: string | undefined): void {
  const now = s.clock.now();
  if (verdict === "failure") {
    s.totals.failures += 1;
    s.lastFailureClass = failureClass;
    s.lastFailureAt = now;
  } else {
    s.lastSuccessAt = now;
  }
  s.circuit.record(admission, verdict);
}

/** Hands one call's report to `observe` (when given); what the observer throws is ignored. */
function _report(s: _PolicyState, observe: _Observe, startedAt: number, outcome: CallReport["outcome"], failureClass?: string): void {
  if (!observe) return;
  try {
    const latencyMs = Math.max(0, s.clock.now() - startedAt);
    const circuitState = s.circuit.state;
    const dependency = s.dependency;
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
function _admit(s: _PolicyState, observe: _Observe, startedAt: number): Admission {
  const admission = s.circuit.admit();
  if (!admission) {
    s.totals.refused += 1;
    _report(s, observe, startedAt, "refused", "circuit_open");
    throw new DependencyUnavailableError(s.dependency, "circuit open", "circuit_open");
  }
  s.totals.calls += 1;
  return admission;
}

/** Counts and reports an error `fn` threw (the caller rethrows it). */
function _failed(s: _PolicyState, admission: Admission, observe: _Observe, startedAt: number, error: unknown): void {
  const c = _classify(s, error);
  const failureClass = c.verdict === "failure" ? c.failureClass : undefined;
  _settle(s, admission, c.verdict, failureClass);
  _report(s, observe, startedAt, c.verdict, failureClass);
}

/** Counts and reports a result (`classify` may call it a failure). */
function _succeeded<T>(s: _PolicyState, admission: Admission, opts: ExecuteOptions<T> | undefined, startedAt: number, result: T): T {
  const v = resultVerdict(opts?.classify, result);
  _settle(s, admission, v.verdict, v.failureClass);
  _report(s, opts?.observe, startedAt, v.verdict, v.failureClass);
  return result;
}

function _snapshot(s: _PolicyState): DependencySnapshot {
  const state = s.circuit.state;
  const { calls, failures } = s.circuit.window();
  const openedAt = s.circuit.openedAt;
  const { lastFailureClass, lastFailureAt, lastSuccessAt } = s;
  return {
    dependency: s.dependency,
    state,
    windowCalls: calls,
    windowFailures: failures,
    failureRatio: calls === 0 ? 0 : failures / calls,
    ...(openedAt === undefined ? {} : { openedAt: new Date(openedAt).toISOString() }),
    ...(lastFailureClass === undefined ? {} : { lastFailureClass }),
    ...(lastFailureAt === undefined ? {} : { lastFailureAt: new Date(lastFailureAt).toISOString() }),
    ...(lastSuccessAt === undefined ? {} : { lastSuccessAt: new Date(lastSuccessAt).toISOString() }),
    totalCalls: s.totals.calls,
    totalFailures: s.totals.failures,
    totalRefused: s.totals.refused,
  };
}
