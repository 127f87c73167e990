/** The resilience policies' types: clock, verdicts, thresholds, options, call reports, the policy and the registry. */
import type { CircuitState, DependencyHealth, DependencySnapshot, DependencyUnavailableError } from "../ports.ts";

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
