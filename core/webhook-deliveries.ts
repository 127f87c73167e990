/**
 * The delivery log's actions as every caller makes them (the Admin API, the operator console, the
 * merchant dashboard): one service, one audit entry. A resend is idempotent on the caller's key
 * (the outbox's delivery log keeps the last key per message); it is audited once, under an id
 * derived from the message and the key, so a retried call does not append twice.
 */
import type { Collection, WebhookDelivery, WebhookDeliveryLog, WebhookResend } from "../adapters/ports.ts";
import { appendAudit, type AuditDoc } from "./directory/store.ts";

/** Who resends: "operator:<credential id>" or "user:<user id>", and the request. */
export interface DeliveryActor {
  actor: string;
  requestId: string | null;
}

/** A webhook-id as the outbox makes them. */
export const WEBHOOK_ID_PATTERN = /^msg_[0-9a-f]{24}$/;

/**
 * Resends one delivery (of `businessId`'s when given: another business's id answers null, as an
 * unknown one does) and audits it when something was resent.
 */
export async function resendDelivery(
  log: WebhookDeliveryLog,
  audit: Collection<AuditDoc>,
  by: DeliveryActor,
  webhookId: string,
  idempotencyKey: string,
  businessId: string | undefined,
  nowMs: number,
): Promise<WebhookResend | null> {
  if (!WEBHOOK_ID_PATTERN.test(webhookId)) return null;
  const r = await log.resend(webhookId, idempotencyKey, businessId);
  if (r?.resent) {
    await appendAudit(
      audit,
      {
        _id: `webhook-resend:${webhookId}:${idempotencyKey}`,
        actor: by.actor,
        requestId: by.requestId,
        action: "webhook_delivery.resend",
        target: { type: "webhook_delivery", id: webhookId },
        changes: { businessId: r.delivery.businessId, eventType: r.delivery.eventType, previousStatus: r.previousStatus ?? null },
      },
      nowMs,
    );
  }
  return r;
}

/** A delivery as a list shows it: everything but the body. */
export function deliverySummary(d: WebhookDelivery): Omit<WebhookDelivery, "body"> {
  const { body: _body, ...rest } = d;
  return rest;
}
