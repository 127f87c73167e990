/**
 * The delivery log: a business's (or every business's) messages with their recent attempts, filtered
 * by status, event type or endpoint, failed first for operators or newest first, cursor-paged; and
 * resend, one more attempt of a message now, idempotent on the caller's key (stored on the message:
 * the same key twice resends once).
 */
import type { Filter, SortSpec, WebhookDelivery, WebhookDeliveryFilter, WebhookDeliveryLog, WebhookResend } from "../../ports.ts";
import { toRecord, type OutboxDoc, type OutboxState } from "./state.ts";

export function createDeliveryLog(s: OutboxState): WebhookDeliveryLog {
  return {
    list: (filter) => _list(s, filter),
    get: async (webhookId, businessId) => {
      const doc = await _owned(s, webhookId, businessId);
      return doc ? toRecord(doc) : null;
    },
    resend: (webhookId, key, businessId) => _resend(s, webhookId, key, businessId),
  };
}

// --- Internal helpers ---

async function _list(s: OutboxState, f: WebhookDeliveryFilter): Promise<{ items: WebhookDelivery[]; nextCursor: string | null }> {
  const q: Filter = {};
  if (f.businessId !== undefined) q.businessId = f.businessId;
  if (f.status !== undefined) q.status = f.status;
  if (f.eventType !== undefined) q.eventType = f.eventType;
  if (f.endpointId !== undefined) q.endpointId = f.endpointId;
  // With a status filter the rank adds nothing (dead ones are all failed): newest first.
  const sort: SortSpec[] = f.failedFirst && f.status === undefined ? [{ field: "rank", direction: 1 }, { field: "createdAt", direction: -1 }] : [{ field: "createdAt", direction: -1 }];
  const limit = Math.max(1, Math.min(100, Math.floor(f.limit ?? 50)));
  const page = await s.coll.find(q, { sort, limit, cursor: f.cursor ?? null });
  return { items: page.items.map(toRecord), nextCursor: page.nextCursor };
}

/** The message, when it exists and (with `businessId`) belongs to that business. */
async function _owned(s: OutboxState, webhookId: string, businessId: string | undefined): Promise<OutboxDoc | null> {
  const doc = await s.coll.get(webhookId);
  return doc && (businessId === undefined || doc.businessId === businessId) ? doc : null;
}

async function _resend(s: OutboxState, webhookId: string, key: string, businessId: string | undefined): Promise<WebhookResend | null> {
  for (let tries = 0; tries < 5; tries++) {
    const doc = await _owned(s, webhookId, businessId);
    if (!doc) return null;
    if (doc.resendKey === key) return { delivery: toRecord(doc), resent: false, reason: "already_resent" };
    if (doc.status === "no_endpoint") return { delivery: toRecord(doc), resent: false, reason: "no_endpoint" };
    // A waiting message is brought forward (its schedule goes on); a finished one gets one manual attempt.
    const manual = doc.status !== "pending";
    const updated = await s.coll.findOneAndUpdate(
      { _id: doc._id, status: doc.status, attempts: doc.attempts, resendKey: doc.resendKey === undefined ? { $exists: false } : doc.resendKey },
      { $set: { status: "pending", nextAttemptAt: s.clock(), manual, resendKey: key } },
    );
    if (updated) {
      s.log.event("webhook_resend", { webhookId: doc._id, eventType: doc.eventType, businessId: doc.businessId, previousStatus: doc.status });
      return { delivery: toRecord(updated), resent: true, previousStatus: doc.status };
    }
  }
  throw new Error("the webhook message kept changing; resend again with the same key");
}
