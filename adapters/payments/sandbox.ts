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
 *
 * The parts, under ./sandbox/: types, state (scheduling and delivery to listeners), pay, refund
 * (with `lookup`).
 */

import { pay } from "./sandbox/pay.ts";
import { lookup, refund } from "./sandbox/refund.ts";
import { createSandboxState, deliver, dispose } from "./sandbox/state.ts";
import type { SandboxPaymentProcessor, SandboxPaymentProcessorOptions } from "./sandbox/types.ts";

export {
  PROCESSOR_REDELIVERY_MS,
  SANDBOX_PAYMENTS_COLLECTION,
  SandboxLiveBusinessError,
  isSandboxLiveBusinessError,
  type SandboxPayment,
  type SandboxPaymentProcessor,
  type SandboxPaymentProcessorOptions,
} from "./sandbox/types.ts";

const PROCESSOR_KIND = "sandbox";

export function createSandboxPaymentProcessor(options: SandboxPaymentProcessorOptions = {}): SandboxPaymentProcessor {
  const s = createSandboxState(options);
  return {
    kind: PROCESSOR_KIND,
    pay: (request) => pay(s, request),
    onReport(listener) {
      s.listeners.push(listener);
    },
    lookup: (sessionId) => lookup(s, sessionId),
    refund: (sessionId, amountKobo, reason) => refund(s, sessionId, amountKobo, reason),
    redeliver(sessionId, times = 1) {
      const entry = s.payments.get(sessionId);
      if (!entry) throw new Error("the sandbox has no payment for this session");
      deliver(s, entry, Math.max(1, Math.floor(times)));
    },
    payment: (sessionId) => {
      const entry = s.payments.get(sessionId);
      return entry ? structuredClone(entry) : null;
    },
    payments: () => [...s.payments.values()].map((e) => structuredClone(e)),
    async idle() {
      while (s.inFlight.size > 0) await Promise.allSettled([...s.inFlight]);
    },
    listenerFailures: () => s.failures,
    dispose: () => dispose(s),
    async close() {
      dispose(s);
    },
  };
}
