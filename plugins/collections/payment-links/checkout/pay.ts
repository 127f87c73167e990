/**
 * Starting a checkout: the session stored (or, for a resubmitted form, found by its one-time
 * token), then paid through the processor within the request's deadline; the payer is answered
 * the session's stored state.
 */
import { randomUUID } from "node:crypto";
import { isPaymentRefusedError, type PaymentReport } from "../../../../adapters/ports.ts";
import type { BusinessRecord } from "../../../../core/directory.ts";
import { describeError } from "../../../../core/log.ts";
import type { CheckoutInput } from "./form.ts";
import type { PaymentLink } from "../links/link.ts";
import { newReference } from "../../shared/common.ts";
import { CURRENCY, split } from "../../shared/money.ts";
import { DEADLINE_PASSED, within } from "./deadline.ts";
import type { CheckoutDeps } from "./deps.ts";
import { runEffects, transition } from "./effects.ts";
import type { CheckoutSession } from "./session.ts";
import { applyReport } from "./settle.ts";
import { BANK_TRANSFER, openTransfer } from "./transfer.ts";

/** Starts (or, for a resubmitted form, returns) a session and pays it. Answers its current state. */
export async function startCheckout(deps: CheckoutDeps, link: PaymentLink, business: BusinessRecord, input: CheckoutInput): Promise<CheckoutSession> {
  const { sessions } = deps;
  // A resubmitted form answers its session; one still pending is paid (again: once per session id),
  // or, paid by transfer, keeps its one account.
  const resume = (existing: CheckoutSession) =>
    existing.status !== "pending" ? existing : existing.paymentMethod === BANK_TRANSFER ? openTransfer(deps, existing, business) : pay(deps, existing, business);
  if (input.token) {
    const existing = await sessions.findOne({ linkId: link._id, formToken: input.token });
    if (existing) return resume(existing);
  }
  const session = _newSession(deps, link, business, input);
  try {
    await sessions.insert(session);
  } catch (e) {
    // The same form submitted twice at once: answer the session the other submission created.
    const existing = input.token ? await sessions.findOne({ linkId: link._id, formToken: input.token }) : null;
    if (existing) return resume(existing);
    throw e;
  }
  deps.log.event("collections_checkout_started", { sessionId: session._id, businessId: session.businessId, linkReference: link.reference });
  return resume(session);
}

/**
 * Asks the processor to pay a pending session and applies its answer; answers the stored state.
 * Also run for a resubmitted form whose session is still pending: the processor charges once per
 * session id (a repeated call returns the first outcome), so a session whose first submission
 * stored it but never reached the processor (a store hiccup, a gateway that died) is paid now, and
 * one whose report was not taken is settled now, instead of waiting to be abandoned.
 */
export async function pay(deps: CheckoutDeps, session: CheckoutSession, business: BusinessRecord): Promise<CheckoutSession> {
  const { log } = deps;
  log.event("collections_payment_requested", { sessionId: session._id, businessId: session.businessId });
  const paying = deps.payments.pay({
    sessionId: session._id,
    businessId: session.businessId,
    businessState: business.state,
    amountKobo: session.chargeKobo,
    currency: CURRENCY,
    customerEmail: session.customerEmail,
    ...(session.simulate ? { simulate: session.simulate } : {}),
  });
  let report: PaymentReport;
  try {
    report = await within(paying, deps.payTimeoutMs);
  } catch (e) {
    return _unpaid(deps, session, paying, e);
  }
  try {
    await applyReport(deps, report);
  } catch (e) {
    // The state change is stored before its effects; unfinished effects are re-driven by the
    // next report and by the worker. The customer sees the session's stored state.
    log.warn("collections_checkout_effects_deferred", { sessionId: session._id, error: describeError(e) });
  }
  return _stored(deps, session);
}

// --- Internal helpers ---

/** The processor gave no report in time: slow, unclear, or a definite refusal. */
async function _unpaid(deps: CheckoutDeps, session: CheckoutSession, paying: Promise<PaymentReport>, e: unknown): Promise<CheckoutSession> {
  const { log } = deps;
  if (e === DEADLINE_PASSED) {
    // The processor is slow: the session stays pending; its report settles it later, or the
    // sweep abandons it after 30 minutes.
    _settleInBackground(deps, paying, session._id);
    return _stored(deps, session);
  }
  if (!isPaymentRefusedError(e)) {
    // No definite answer (the processor unreachable, an unclear error): the payment may have
    // been taken. The session stays pending ("processing"): its report, a resubmission (which
    // asks again with the same session id) or the look-up before abandonment decides it.
    log.warn("collections_payment_outcome_unknown", { sessionId: session._id, error: describeError(e) });
    return _stored(deps, session);
  }
  log.warn("collections_payment_processor_refused", { sessionId: session._id, error: describeError(e) });
  const failed = await transition(deps, session, {
    status: "failed",
    failureReason: "The payment processor did not accept the payment.",
    completedAt: deps.clock(),
  });
  if (failed) await runEffects(deps, failed);
  return _stored(deps, session);
}

function _settleInBackground(deps: CheckoutDeps, paying: Promise<PaymentReport>, sessionId: string): void {
  paying
    .then((report) => applyReport(deps, report))
    .catch((e) => deps.log.warn("collections_payment_settlement_deferred", { sessionId, error: describeError(e) }));
}

async function _stored(deps: CheckoutDeps, session: CheckoutSession): Promise<CheckoutSession> {
  return (await deps.sessions.get(session._id)) ?? session;
}

function _newSession(deps: CheckoutDeps, link: PaymentLink, business: BusinessRecord, input: CheckoutInput): CheckoutSession {
  const now = deps.clock();
  const parts = split(input.amountKobo, link.feeBearer, deps.fee);
  return {
    _id: randomUUID(),
    businessId: link.businessId,
    linkId: link._id,
    linkReference: link.reference,
    sourceReference: link.sourceReference,
    linkName: link.linkName,
    reference: newReference("PLT-"),
    ...(input.token ? { formToken: input.token } : {}),
    amountKobo: parts.amountKobo,
    feeKobo: parts.feeKobo,
    chargeKobo: parts.chargeKobo,
    netKobo: parts.netKobo,
    feeBearer: link.feeBearer,
    fixedAmountKobo: link.amountKobo,
    currency: CURRENCY,
    status: "pending",
    customerEmail: input.email,
    paymentMethod: input.method === "bank_transfer" ? BANK_TRANSFER : deps.payments.kind,
    simulate: business.state === "TEST" && input.method !== "bank_transfer" ? input.outcome : null,
    processorReference: null,
    reportedAmountKobo: null,
    failureReason: null,
    refund: null,
    effectsPending: false,
    createdAt: now,
    expiresAt: now + deps.abandonAfterMs,
    paidAt: null,
    completedAt: null,
    updatedAt: now,
  };
}
