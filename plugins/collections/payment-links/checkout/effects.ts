/**
 * A session's state changes and their effects, exactly once across duplicate processor reports and
 * processes:
 * - every state change is a compare-and-set on the session's current status, so only one report
 *   (or the abandonment sweep) moves a session out of `pending`;
 * - the effects of a final state are idempotent and re-driven on every later report and by the
 *   worker until done (`effectsPending`): the wallet credit is keyed by the session id (one credit
 *   document per session), the refund is idempotent per session at the processor, and the webhook
 *   enqueue is idempotent on `${eventType}:${sessionId}`; the payer's receipt of a successful
 *   session is claimed once on the session (receipt.ts).
 */
import { enqueueWebhookEvent } from "../../../../core/webhook-events.ts";
import type { CheckoutDeps } from "./deps.ts";
import { sendReceipt } from "./receipt.ts";
import { CHECKOUT_EVENTS, CHECKOUT_SOURCE, transactionView, type CheckoutSession, type FinalStatus, type SessionChange } from "./session.ts";
import { isBankTransfer } from "./transfer.ts";

/** Compare-and-set from the session's current status; null when another writer moved it first. */
export async function transition(deps: CheckoutDeps, s: CheckoutSession, set: SessionChange): Promise<CheckoutSession | null> {
  const updated = await deps.sessions.findOneAndUpdate(
    { _id: s._id, status: s.status },
    { $set: { ...set, effectsPending: true, updatedAt: deps.clock() } },
  );
  if (updated)
    deps.log.event("collections_checkout_state_changed", {
      sessionId: s._id,
      businessId: s.businessId,
      linkReference: s.linkReference,
      from: s.status,
      to: updated.status,
    });
  return updated;
}

/** Runs the idempotent effects of the session's state, then clears `effectsPending`. */
export async function runEffects(deps: CheckoutDeps, s: CheckoutSession): Promise<void> {
  if (s.status === "pending") return;
  if (s.status === "successful") await _credit(deps, s);
  const current = await _refund(deps, s);
  const eventType = CHECKOUT_EVENTS[current.status as FinalStatus];
  await enqueueWebhookEvent(deps.webhooks, deps.directory, "collections", {
    businessId: current.businessId,
    eventType,
    payload: { event_type: eventType, data: transactionView(current) },
    idempotencyKey: `${eventType}:${current._id}`,
  });
  await sendReceipt(deps, current);
  if (current.effectsPending)
    await deps.sessions.findOneAndUpdate({ _id: current._id, status: current.status, effectsPending: true }, { $set: { effectsPending: false } });
}

// --- Internal helpers ---

/** The wallet credit of a successful session (one per session id). */
async function _credit(deps: CheckoutDeps, s: CheckoutSession): Promise<void> {
  const { created } = await deps.wallet.credit(s.businessId, s.netKobo, {
    sourceType: CHECKOUT_SOURCE,
    sourceId: s._id,
    reference: s.reference,
    description: `Payment link ${s.linkReference} (${s.linkName})`,
  });
  if (created) deps.log.event("collections_wallet_credited", { businessId: s.businessId, sessionId: s._id, amountKobo: s.netKobo });
}

/** The refund of a refunded session not refunded yet; answers the session as it now stands. */
async function _refund(deps: CheckoutDeps, s: CheckoutSession): Promise<CheckoutSession> {
  if (s.status !== "refunded" || !s.refund || s.refund.refundReference !== null) return s;
  // A transfer is returned to its sender by the bank rail, not through the card processor; its
  // refund reference is derived from the session, so a re-run writes the same one.
  const { refundReference } = isBankTransfer(s)
    ? { refundReference: `PLR-${s.reference.replace(/^PLT-/, "")}` }
    : await deps.payments.refund(s._id, s.refund.amountKobo, s.refund.reason);
  return (
    (await deps.sessions.findOneAndUpdate(
      { _id: s._id, status: "refunded" },
      { $set: { "refund.refundReference": refundReference, updatedAt: deps.clock() } },
    )) ?? s
  );
}
