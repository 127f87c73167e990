/**
 * What a processor's report does to a session: the one rule table of the checkout, pure (the
 * caller applies the change by compare-and-set). A failure fails a pending session only; a payment
 * settles a pending session whose amounts match, and is refunded when they do not or when the
 * session had already failed or been abandoned; a session that succeeded or was refunded stays.
 */
import type { PaymentReport } from "../../../../adapters/ports.ts";
import type { CheckoutSession, SessionChange } from "./session.ts";

/** The state change a report causes, or null when it causes none. */
export function decideReport(s: CheckoutSession, report: PaymentReport, now: number): SessionChange | null {
  const reportedAt = Date.parse(report.reportedAt);
  const at = Number.isFinite(reportedAt) ? reportedAt : now;
  if (report.status === "failed") {
    if (s.status !== "pending") return null;
    return {
      status: "failed",
      processorReference: report.processorReference,
      failureReason: report.failureReason ?? "The payment was declined.",
      completedAt: now,
    };
  }
  if (s.status === "successful" || s.status === "refunded") return null;
  const paid = { processorReference: report.processorReference, reportedAmountKobo: report.amountKobo, paidAt: at, completedAt: now };
  if (s.status === "failed" || s.status === "abandoned") {
    return {
      status: "refunded",
      ...paid,
      refund: { amountKobo: report.amountKobo, reason: `payment reported after the session was ${s.status}`, refundReference: null },
    };
  }
  const mismatch = report.amountKobo !== s.chargeKobo || (s.fixedAmountKobo !== null && s.amountKobo !== s.fixedAmountKobo);
  if (mismatch) {
    return {
      status: "refunded",
      ...paid,
      failureReason: "The amount paid does not match the payment link's fixed amount.",
      refund: { amountKobo: report.amountKobo, reason: "amount does not match the link's fixed amount", refundReference: null },
    };
  }
  return { status: "successful", ...paid };
}
