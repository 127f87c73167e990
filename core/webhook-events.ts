/**
 * Sending an event to a business's webhook endpoints (the directory's, core/directory/webhook-service.ts):
 * one outbox message per enabled endpoint receiving the event's service, each named by endpoint id
 * (the outbox signs at attempt time with the endpoint's current secrets); with no endpoint, one
 * `no_endpoint` message records the event. And the test event an endpoint can be sent on request.
 */
import type { WebhookOutbox, WebhookMessage } from "../adapters/ports.ts";
import type { TenantDirectory, WebhookService } from "./directory.ts";

/** The event type of a test event (body `{ type, data: { endpointId, sentAt } }`). */
export const TEST_EVENT_TYPE = "webhook.test";

/** Enqueues `message` for every enabled endpoint of its business receiving `service` events. */
export async function enqueueWebhookEvent(outbox: WebhookOutbox, directory: TenantDirectory, service: WebhookService, message: WebhookMessage): Promise<void> {
  const targets = directory.webhooks.targets(message.businessId, service);
  if (targets.length === 0) {
    await outbox.enqueue(message, null);
    return;
  }
  for (const t of targets) await outbox.enqueue(message, { id: t.id, url: t.url });
}

/**
 * Enqueues a signed test event to one endpoint of the business: one attempt, not retried, made
 * also when the endpoint is disabled (testing a fixed receiver before enabling it again is the point).
 * Idempotent on `key`: a double submit sends one. Null when the business has no such endpoint.
 */
export async function sendTestEvent(
  outbox: WebhookOutbox,
  directory: TenantDirectory,
  businessId: string,
  endpointId: string,
  key: string,
  nowMs: number,
): Promise<{ webhookId: string; created: boolean } | null> {
  const endpoint = await directory.webhooks.get(businessId, endpointId);
  if (!endpoint) return null;
  const sentAt = new Date(nowMs).toISOString();
  return outbox.enqueue(
    { businessId, eventType: TEST_EVENT_TYPE, payload: { type: TEST_EVENT_TYPE, data: { endpointId, sentAt } }, idempotencyKey: `test:${key}`, manual: true },
    { id: endpoint.id, url: endpoint.url },
  );
}
