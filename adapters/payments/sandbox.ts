/**
 * The sandbox payment processor: the PaymentProcessor the checkout of TEST businesses settles in
 * (DECISIONS.md "Checkout"). It behaves like a real processor where the plugin must cope with it:
 *
 * - `pay` charges once per sessionId: a repeated call returns the first outcome and charges nothing.
 *   The outcome is the request's `simulate` value: "success" (default), "failure" (declined) or
 *   "duplicate_report" (succeeds, and every listener receives the same report twice, concurrently,
 *   as real processors redeliver notifications).
 * - Every outcome is also delivered to each `onReport` listener, asynchronously (not awaited by
 *   `pay`), after `delayReportMs` (0 = on the next tick). `pay` resolves with the report after the
 *   same delay, so a slow processor can be simulated. `idle()` waits for every delivery so far.
 * - A listener call that throws gets the report again after each delay of `redeliverAfterMs`, until
 *   one succeeds, as real processors retry a notification that was not taken (the gateway runs with
 *   PROCESSOR_REDELIVERY_MS; the default is no retry). `idle()` does not wait for these.
 * - `lookup` answers the report of a decided payment (after the same delay as `pay`), else null.
 * - `refund` is idempotent per sessionId: the second call returns the first refund reference.
 * - LIVE businesses are refused (`SandboxLiveBusinessError`): the sandbox never takes real money.
 * - Processor references are kept: `payment(sessionId)` and `payments()` answer what was charged,
 *   reported and refunded; `redeliver(sessionId, n)` re-sends a stored report (a processor's
 *   notification retry).
 *
 * Without a store, state is in process memory. Given a document store (`store`, as the gateway and
 * the worker run it), each payment is also a document of `sandbox_payments` keyed by the session id,
 * so "once per session", `lookup` and `refund` hold across every process on that store, as they do
 * at a real processor: a resubmission answered by another gateway gets the first charge's outcome,
 * and a worker's sweep can look up or refund a payment another process took. Listeners, their
 * redeliveries and the processing delay stay with the process that took the payment. The sandbox is
 * a simulator, not a ledger (the checkout session and the wallet are the system of record).
 */
import { randomBytes } from "node:crypto";
import {
  isDuplicateKeyError,
  PaymentRefusedError,
  type Collection,
  type Doc,
  type DocumentStore,
  type PaymentProcessor,
  type PaymentReport,
  type PaymentRequest,
} from "../ports.ts";

const PROCESSOR_KIND = "sandbox";

export interface SandboxPaymentProcessorOptions {
  /** Epoch milliseconds for `reportedAt`. Default Date.now. */
  clock?: () => number;
  /** Delay before `pay` resolves and listeners receive the report. Default 0. */
  delayReportMs?: number;
  /** Delays of the redeliveries of a report a listener threw on (one delay per retry). Default none. */
  redeliverAfterMs?: readonly number[];
  /** Keeps the payments in this store too, shared by every process on it (default: process memory only). */
  store?: DocumentStore;
}

/** The sandbox's payments when it has a store: one document per session id. */
export const SANDBOX_PAYMENTS_COLLECTION = "sandbox_payments";

interface PaymentDoc extends Doc {
  request: PaymentRequest;
  report: PaymentReport;
  /** When the simulated processing ends (epoch ms): `lookup` answers the report from then on. */
  decidedAt: number;
  refund: SandboxPayment["refund"];
}

/** How a processor retries a notification that was not taken: after 1 s, 5 s, 30 s, 2 min, 10 min. */
export const PROCESSOR_REDELIVERY_MS: readonly number[] = [1_000, 5_000, 30_000, 120_000, 600_000];

export interface SandboxPayment {
  request: PaymentRequest;
  report: PaymentReport;
  /** How many times the report was handed to listeners (per listener). */
  deliveries: number;
  /** The payment is decided (the processing delay has passed): `lookup` answers its report. */
  decided: boolean;
  refund: { refundReference: string; amountKobo: number; reason: string; refundedAt: string } | null;
}

export interface SandboxPaymentProcessor extends PaymentProcessor {
  /** What the sandbox knows about one session's payment, or null. */
  payment(sessionId: string): SandboxPayment | null;
  payments(): SandboxPayment[];
  /** Hands the session's report to every listener `times` more times, concurrently (a processor's redelivery). */
  redeliver(sessionId: string, times?: number): void;
  /** Resolves when every report scheduled so far has been handed to every listener. */
  idle(): Promise<void>;
  /** Listener calls that threw (the sandbox does not retry them). */
  listenerFailures(): number;
  /** Cancels scheduled deliveries (tests, shutdown): their `pay` calls reject. */
  dispose(): void;
  /** `dispose()`, as a port the gateway closes on shutdown. */
  close(): Promise<void>;
}

/** Thrown by `pay` for a LIVE business: the sandbox is for TEST businesses only. */
export class SandboxLiveBusinessError extends PaymentRefusedError {
  readonly isSandboxLiveBusinessError = true;
  constructor() {
    super("the sandbox payment processor accepts TEST businesses only");
    this.name = "SandboxLiveBusinessError";
  }
}

export function isSandboxLiveBusinessError(e: unknown): e is SandboxLiveBusinessError {
  return typeof e === "object" && e !== null && (e as { isSandboxLiveBusinessError?: unknown }).isSandboxLiveBusinessError === true;
}

export function createSandboxPaymentProcessor(options: SandboxPaymentProcessorOptions = {}): SandboxPaymentProcessor {
  const clock = options.clock ?? Date.now;
  const delay = Math.max(0, options.delayReportMs ?? 0);
  const payments = new Map<string, SandboxPayment>();
  /** First call per session: the promise every repeated call returns. */
  const charging = new Map<string, Promise<PaymentReport>>();
  const listeners: Array<(report: PaymentReport) => Promise<void>> = [];
  const inFlight = new Set<Promise<void>>();
  /** Scheduled work: its timer and how to give up on it (dispose). */
  const timers = new Map<NodeJS.Timeout, (e: Error) => void>();
  let failures = 0;

  const stored: Collection<PaymentDoc> | null = options.store ? options.store.collection<PaymentDoc>(SANDBOX_PAYMENTS_COLLECTION) : null;

  const laterBy = <T>(ms: number, fn: () => T | Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        Promise.resolve().then(fn).then(resolve, reject);
      }, ms);
      timers.set(timer, reject);
    });
  const later = <T>(fn: () => T | Promise<T>): Promise<T> => laterBy(delay, fn);

  /**
   * The store path of `pay`: the first process to write the session's payment charges it; any other
   * call (another process, a retry after a lost answer) answers that payment's report once its
   * processing time has passed. A store failure rejects with the store's error: the outcome is
   * unknown to the caller, never a refusal.
   */
  const payStored = async (collection: Collection<PaymentDoc>, request: PaymentRequest, report: PaymentReport, times: number): Promise<PaymentReport> => {
    const doc: PaymentDoc = { _id: request.sessionId, request: { ...request }, report, decidedAt: clock() + delay, refund: null };
    let first = doc;
    try {
      await collection.insert(doc);
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
      const existing = await collection.get(request.sessionId);
      if (!existing) throw e;
      first = existing;
    }
    const entry: SandboxPayment = { request: first.request, report: first.report, deliveries: 0, decided: false, refund: first.refund };
    payments.set(request.sessionId, entry);
    if (first === doc) deliver(entry, times);
    return laterBy(Math.max(0, first.decidedAt - clock()), () => {
      entry.decided = true;
      return { ...entry.report };
    });
  };

  const redeliverAfter = options.redeliverAfterMs ?? [];
  /** Hands `report` to `listener`; when it throws, again after the next redelivery delay. */
  const handOver = async (listener: (report: PaymentReport) => Promise<void>, report: PaymentReport, retries: number): Promise<void> => {
    try {
      await listener(report);
    } catch {
      failures++;
      const wait = redeliverAfter[retries];
      if (wait === undefined) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        void handOver(listener, { ...report }, retries + 1);
      }, wait);
      timer.unref();
      timers.set(timer, () => {});
    }
  };
  const deliver = (entry: SandboxPayment, times: number): void => {
    const run = later(async () => {
      const copies = Array.from({ length: times }, () => ({ ...entry.report }));
      entry.deliveries += times;
      await Promise.all(listeners.flatMap((listener) => copies.map((report) => handOver(listener, report, 0))));
    }).catch(() => {});
    inFlight.add(run);
    void run.finally(() => inFlight.delete(run));
  };

  const dispose = (): void => {
    for (const [timer, reject] of timers) {
      clearTimeout(timer);
      reject(new Error("the sandbox payment processor was disposed"));
    }
    timers.clear();
  };

  return {
    kind: PROCESSOR_KIND,

    pay(request: PaymentRequest): Promise<PaymentReport> {
      const earlier = charging.get(request.sessionId);
      if (earlier) return earlier;
      if (request.businessState !== "TEST") return Promise.reject(new SandboxLiveBusinessError());
      if (!Number.isSafeInteger(request.amountKobo) || request.amountKobo <= 0)
        return Promise.reject(new PaymentRefusedError("amountKobo must be a positive integer"));
      const simulate = request.simulate ?? "success";
      const report: PaymentReport = {
        sessionId: request.sessionId,
        processorReference: `SBX-${randomBytes(8).toString("hex").toUpperCase()}`,
        status: simulate === "failure" ? "failed" : "succeeded",
        amountKobo: request.amountKobo,
        reportedAt: new Date(clock()).toISOString(),
        ...(simulate === "failure" ? { failureReason: "Declined by the sandbox (simulated failure)." } : {}),
      };
      const times = simulate === "duplicate_report" ? 2 : 1;
      if (stored) {
        const outcome = payStored(stored, request, report, times);
        charging.set(request.sessionId, outcome);
        outcome.catch(() => charging.delete(request.sessionId)); // a failed attempt may be made again
        return outcome;
      }
      const entry: SandboxPayment = { request: { ...request }, report, deliveries: 0, decided: false, refund: null };
      payments.set(request.sessionId, entry);
      deliver(entry, times);
      const outcome = later(() => {
        entry.decided = true;
        return { ...report };
      });
      charging.set(request.sessionId, outcome);
      return outcome;
    },

    onReport(listener) {
      listeners.push(listener);
    },

    async lookup(sessionId) {
      const entry = payments.get(sessionId);
      if (entry?.decided) return { ...entry.report };
      if (!stored) return null;
      const doc = await stored.get(sessionId);
      return doc && clock() >= doc.decidedAt ? { ...doc.report } : null;
    },

    async refund(sessionId, amountKobo, reason) {
      const entry = payments.get(sessionId);
      const payment = stored ? await stored.get(sessionId) : entry;
      if (!payment) throw new Error("the sandbox has no payment for this session");
      if (payment.refund) return { refundReference: payment.refund.refundReference };
      if (payment.report.status !== "succeeded") throw new Error("only a succeeded payment can be refunded");
      if (!Number.isSafeInteger(amountKobo) || amountKobo <= 0 || amountKobo > payment.report.amountKobo)
        throw new RangeError("refund amount must be positive and at most the charged amount");
      let refund: NonNullable<SandboxPayment["refund"]> = {
        refundReference: `SBR-${randomBytes(8).toString("hex").toUpperCase()}`,
        amountKobo,
        reason,
        refundedAt: new Date(clock()).toISOString(),
      };
      if (stored) {
        // One refund per session across processes: the first write wins, the others answer it.
        const winner = (await stored.findOneAndUpdate({ _id: sessionId, refund: null }, { $set: { refund } })) ?? (await stored.get(sessionId));
        if (!winner?.refund) throw new Error("the sandbox could not record the refund");
        refund = winner.refund;
      }
      if (entry) entry.refund = refund;
      return { refundReference: refund.refundReference };
    },

    redeliver(sessionId, times = 1) {
      const entry = payments.get(sessionId);
      if (!entry) throw new Error("the sandbox has no payment for this session");
      deliver(entry, Math.max(1, Math.floor(times)));
    },

    payment: (sessionId) => {
      const entry = payments.get(sessionId);
      return entry ? structuredClone(entry) : null;
    },
    payments: () => [...payments.values()].map((e) => structuredClone(e)),
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    listenerFailures: () => failures,
    dispose,
    async close() {
      dispose();
    },
  };
}
