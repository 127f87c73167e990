/** After a payment: `lookup` of a decided payment's report, and `refund`, one per session (across processes with a store). */
import { randomBytes } from "node:crypto";
import type { PaymentReport } from "../../ports.ts";
import type { SandboxState } from "./state.ts";
import type { SandboxPayment } from "./types.ts";

export async function lookup(s: SandboxState, sessionId: string): Promise<PaymentReport | null> {
  const entry = s.payments.get(sessionId);
  if (entry?.decided) return { ...entry.report };
  if (!s.stored) return null;
  const doc = await s.stored.get(sessionId);
  return doc && s.clock() >= doc.decidedAt ? { ...doc.report } : null;
}

export async function refund(s: SandboxState, sessionId: string, amountKobo: number, reason: string): Promise<{ refundReference: string }> {
  const { stored } = s;
  const entry = s.payments.get(sessionId);
  const payment = stored ? await stored.get(sessionId) : entry;
  if (!payment) throw new Error("the sandbox has no payment for this session");
  if (payment.refund) return { refundReference: payment.refund.refundReference };
  if (payment.report.status !== "succeeded") throw new Error("only a succeeded payment can be refunded");
  if (!Number.isSafeInteger(amountKobo) || amountKobo <= 0 || amountKobo > payment.report.amountKobo)
    throw new RangeError("refund amount must be positive and at most the charged amount");
  let made: NonNullable<SandboxPayment["refund"]> = {
    refundReference: `SBR-${randomBytes(8).toString("hex").toUpperCase()}`,
    amountKobo,
    reason,
    refundedAt: new Date(s.clock()).toISOString(),
  };
  if (stored) {
    // One refund per session across processes: the first write wins, the others answer it.
    const winner = (await stored.findOneAndUpdate({ _id: sessionId, refund: null }, { $set: { refund: made } })) ?? (await stored.get(sessionId));
    if (!winner?.refund) throw new Error("the sandbox could not record the refund");
    made = winner.refund;
  }
  if (entry) entry.refund = made;
  return { refundReference: made.refundReference };
}
