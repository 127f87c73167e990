/**
 * The spec §3.5 circuit, one per dependency:
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
 * So `SlidingWindowCircuit` is a small state machine over a bucketed sliding window that uses the
 * injected `Clock`.
 */
import type { CircuitState } from "../ports.ts";
import { checkOption, definedOptions } from "./options.ts";
import { CIRCUIT_DEFAULTS, type CallVerdict, type CircuitThresholds, type Clock } from "./types.ts";

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
    const t = { ...CIRCUIT_DEFAULTS, ...definedOptions(thresholds) };
    checkOption(Number.isInteger(t.minimumCalls) && t.minimumCalls >= 1, "minimumCalls must be an integer ≥ 1");
    checkOption(t.failureRatio > 0 && t.failureRatio <= 1, "failureRatio must be in (0, 1]");
    checkOption(Number.isInteger(t.buckets) && t.buckets >= 1, "buckets must be an integer ≥ 1");
    checkOption(Number.isFinite(t.windowMs) && t.windowMs >= t.buckets, "windowMs must be finite and ≥ buckets");
    checkOption(Number.isFinite(t.halfOpenAfterMs) && t.halfOpenAfterMs >= 0, "halfOpenAfterMs must be finite and ≥ 0");
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
