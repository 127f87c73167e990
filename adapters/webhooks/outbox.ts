/**
 * The durable webhook outbox (DECISIONS.md "Webhooks (both services)", ARCHITECTURE.md §5–§6,
 * docs/webhooks.md): the WebhookOutbox port on the DocumentStore, plus the delivery worker.
 *
 * - Enqueue: one document per message in collection `webhook_outbox`, with a unique index on
 *   (businessId, idempotencyKey). A duplicate enqueue (a retried settlement) hits the index and answers
 *   the stored message's webhookId with created=false: exactly-once enqueue, across processes too.
 *   The body is `JSON.stringify(payload)`, computed once here and stored: every attempt sends the very
 *   same bytes. The webhookId (`msg_<random>`) is the `webhook-id` header of every attempt.
 *   A message whose endpoint is null is stored as `no_endpoint` (visible to operators, never sent);
 *   one whose endpoint is unusable (not an http(s) URL, empty secret) is stored dead at once.
 * - Delivery: `deliverDue()` claims due messages (status `pending`, nextAttemptAt ≤ the pass's start
 *   time) with a lease (`claim`, leaseMs > timeoutMs), so two workers — in one process or many —
 *   never run the same attempt concurrently. Each attempt POSTs the stored body with
 *   `content-type: application/json` and fresh `webhook-timestamp` / `webhook-signature` headers,
 *   bounded by `timeoutMs`. A 2xx marks it delivered; any other status, a network error or a timeout
 *   schedules the next attempt `schedule[n]` later (shortened by up to `jitter` of itself, so the total
 *   never exceeds the schedule's sum); after the last entry it is dead (`webhook_dead_lettered`, warn).
 *   The result is written with a compare-and-set on the lease, then the lease is dropped.
 * - At least once: a crash between the receiver's 2xx and our write re-sends the message after the
 *   lease expires, with the same webhook-id; receivers dedupe by it.
 * - Logs: `webhook_delivery_attempt` (webhookId, eventType, businessId, attempt, statusCode, latencyMs,
 *   outcome, error class). Never the payload, the endpoint secret, the idempotency key or a response body;
 *   `lastError` holds a status (`http_500`) or an error class (`timeout`, `ECONNREFUSED`), nothing else.
 *
 * The parts, under ./outbox/: types, state (stored message, shared state), enqueue, delivery
 * (passes and attempts), post (one HTTP attempt), schedule (retry delays), worker.
 */
import type { Filter, WebhookEndpoint, WebhookMessage } from "../ports.ts";
import { deliveryPass } from "./outbox/delivery.ts";
import { enqueueWebhook } from "./outbox/enqueue.ts";
import { createDeliveryLog } from "./outbox/log.ts";
import { createOutboxState, toRecord, type OutboxState } from "./outbox/state.ts";
import type { DocumentStoreWebhookOutbox, WebhookListFilter, WebhookOutboxOptions, WebhookRecord } from "./outbox/types.ts";
import { createDeliveryWorker } from "./outbox/worker.ts";

export { DEFAULT_WEBHOOK_SCHEDULE } from "./outbox/schedule.ts";
export {
  OUTBOX_COLLECTION,
  type DocumentStoreWebhookOutbox,
  type WebhookDeliveryWorker,
  type WebhookListFilter,
  type WebhookOutboxOptions,
  type WebhookRecord,
  type WebhookStatus,
} from "./outbox/types.ts";

export function createWebhookOutbox(options: WebhookOutboxOptions): DocumentStoreWebhookOutbox {
  const s = createOutboxState(options);
  return {
    enqueue: (message: WebhookMessage, endpoint: WebhookEndpoint | null) => enqueueWebhook(s, message, endpoint),
    deliverDue: () => deliveryPass(s, () => true),
    worker: createDeliveryWorker(s),
    list: (filter?: WebhookListFilter) => _list(s, filter),
    get: (webhookId: string) => _get(s, webhookId),
    deliveries: createDeliveryLog(s),
    useEndpoints(source) {
      s.endpoints = source;
    },
  };
}

// --- Internal helpers ---

async function _list(s: OutboxState, filter: WebhookListFilter = {}): Promise<WebhookRecord[]> {
  const q: Filter = {};
  if (filter.businessId !== undefined) q.businessId = filter.businessId;
  if (filter.status !== undefined) q.status = filter.status;
  if (filter.eventType !== undefined) q.eventType = filter.eventType;
  const limit = Math.max(1, Math.min(1000, Math.floor(filter.limit ?? 100)));
  const page = await s.coll.find(q, { sort: [{ field: "createdAt", direction: -1 }], limit });
  return page.items.map(toRecord);
}

async function _get(s: OutboxState, webhookId: string): Promise<WebhookRecord | null> {
  const doc = await s.coll.get(webhookId);
  return doc ? toRecord(doc) : null;
}
