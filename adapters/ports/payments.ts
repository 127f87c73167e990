/** The payment processor port (re-exported by adapters/ports.ts). */

export interface PaymentRequest {
  /** The checkout session paying (the processor's idempotency key: one payment per session). */
  sessionId: string;
  businessId: string;
  businessState: "TEST" | "LIVE";
  /** Integer kobo. */
  amountKobo: number;
  currency: "NGN";
  customerEmail: string;
  /** Sandbox only: force an outcome ("success" default, "failure", or "duplicate_report"). */
  simulate?: "success" | "failure" | "duplicate_report";
}

export interface PaymentReport {
  sessionId: string;
  processorReference: string;
  status: "succeeded" | "failed";
  amountKobo: number;
  reportedAt: string;
  failureReason?: string;
}

/**
 * A processor's definite "no" to `pay`: nothing was charged (declined before charging, a business or
 * amount it does not serve). Any other rejection of `pay` leaves the outcome unknown: the payment may
 * have been taken, so the session stays pending until a report, a resubmission or `lookup` decides.
 */
export class PaymentRefusedError extends Error {
  readonly isPaymentRefusedError = true;
  constructor(message: string) {
    super(message);
    this.name = "PaymentRefusedError";
  }
}

export function isPaymentRefusedError(e: unknown): e is PaymentRefusedError {
  return typeof e === "object" && e !== null && (e as { isPaymentRefusedError?: unknown }).isPaymentRefusedError === true;
}

export interface PaymentProcessor {
  readonly kind: string;
  /**
   * Charges once per sessionId (a repeated call returns the first outcome). The outcome is also
   * delivered to every `onReport` listener — possibly more than once, as real processors do.
   * Rejects with PaymentRefusedError when it charged nothing for sure; any other rejection is an
   * unknown outcome.
   */
  pay(request: PaymentRequest): Promise<PaymentReport>;
  onReport(listener: (report: PaymentReport) => Promise<void>): void;
  /**
   * What the processor knows of the session's payment (a processor's "verify by reference"): its
   * report once the payment is decided, or null when it has none (never asked, or still processing).
   * Asked before a session is abandoned, so a payment whose every notification was lost is settled.
   */
  lookup(sessionId: string): Promise<PaymentReport | null>;
  /** Refunds a settled or mismatched payment; idempotent per sessionId. */
  refund(sessionId: string, amountKobo: number, reason: string): Promise<{ refundReference: string }>;
}
