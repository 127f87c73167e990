/**
 * The sandbox's state and its scheduling: the payments this process knows, the listeners, the
 * timers of delayed work (all cancelled by `dispose`), and the delivery of reports to listeners
 * with redelivery of the ones a listener threw on.
 */
import type { Collection, Doc, PaymentReport, PaymentRequest } from "../../ports.ts";
import { SANDBOX_PAYMENTS_COLLECTION, type SandboxPayment, type SandboxPaymentProcessorOptions } from "./types.ts";

/** One payment in the store (when the sandbox has one), keyed by session id. */
export interface PaymentDoc extends Doc {
  request: PaymentRequest;
  report: PaymentReport;
  /** When the simulated processing ends (epoch ms): `lookup` answers the report from then on. */
  decidedAt: number;
  refund: SandboxPayment["refund"];
}

export type ReportListener = (report: PaymentReport) => Promise<void>;

export interface SandboxState {
  readonly clock: () => number;
  /** The processing delay of every payment. */
  readonly delay: number;
  readonly redeliverAfter: readonly number[];
  readonly payments: Map<string, SandboxPayment>;
  /** First call per session: the promise every repeated call returns. */
  readonly charging: Map<string, Promise<PaymentReport>>;
  readonly listeners: ReportListener[];
  /** Deliveries in progress (what `idle` waits for). */
  readonly inFlight: Set<Promise<void>>;
  /** Scheduled work: its timer and how to give up on it (dispose). */
  readonly timers: Map<NodeJS.Timeout, (e: Error) => void>;
  readonly stored: Collection<PaymentDoc> | null;
  failures: number;
}

export function createSandboxState(options: SandboxPaymentProcessorOptions): SandboxState {
  return {
    clock: options.clock ?? Date.now,
    delay: Math.max(0, options.delayReportMs ?? 0),
    redeliverAfter: options.redeliverAfterMs ?? [],
    payments: new Map(),
    charging: new Map(),
    listeners: [],
    inFlight: new Set(),
    timers: new Map(),
    stored: options.store ? options.store.collection<PaymentDoc>(SANDBOX_PAYMENTS_COLLECTION) : null,
    failures: 0,
  };
}

/** `fn` after `ms`, unless disposed first (then the promise rejects). */
export function laterBy<T>(s: SandboxState, ms: number, fn: () => T | Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      s.timers.delete(timer);
      Promise.resolve().then(fn).then(resolve, reject);
    }, ms);
    s.timers.set(timer, reject);
  });
}

/** `fn` after the processing delay. */
export function later<T>(s: SandboxState, fn: () => T | Promise<T>): Promise<T> {
  return laterBy(s, s.delay, fn);
}

/** Hands the payment's report to every listener `times` times, concurrently, after the processing delay. */
export function deliver(s: SandboxState, entry: SandboxPayment, times: number): void {
  const run = later(s, async () => {
    const copies = Array.from({ length: times }, () => ({ ...entry.report }));
    entry.deliveries += times;
    await Promise.all(s.listeners.flatMap((listener) => copies.map((report) => _handOver(s, listener, report, 0))));
  }).catch(() => {});
  s.inFlight.add(run);
  void run.finally(() => s.inFlight.delete(run));
}

/** Cancels every scheduled piece of work; the promises waiting on them reject. */
export function dispose(s: SandboxState): void {
  for (const [timer, reject] of s.timers) {
    clearTimeout(timer);
    reject(new Error("the sandbox payment processor was disposed"));
  }
  s.timers.clear();
}

// --- Internal helpers ---

/** Hands `report` to `listener`; when it throws, again after the next redelivery delay. */
async function _handOver(s: SandboxState, listener: ReportListener, report: PaymentReport, retries: number): Promise<void> {
  try {
    await listener(report);
  } catch {
    s.failures++;
    const wait = s.redeliverAfter[retries];
    if (wait === undefined) return;
    const timer = setTimeout(() => {
      s.timers.delete(timer);
      void _handOver(s, listener, { ...report }, retries + 1);
    }, wait);
    timer.unref();
    s.timers.set(timer, () => {});
  }
}
