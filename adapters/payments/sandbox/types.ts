/** The sandbox payment processor's public types and its refusal of LIVE businesses. */
import { PaymentRefusedError, type DocumentStore, type PaymentProcessor, type PaymentReport, type PaymentRequest } from "../../ports.ts";

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
