/** The webhook delivery port (re-exported by adapters/ports.ts). */

export interface WebhookEndpoint {
  url: string;
  /** "whsec_<base64>" (Standard Webhooks) or any secret string; used for HMAC-SHA256. */
  secret: string;
}

export interface WebhookMessage {
  /** Owning business (collections) or top-level business (invoice gateway). */
  businessId: string;
  /** Event name, e.g. "CHECKOUT_COMPLETED", "IN_FLOW_SUCCESS_EVENT", "invoice.signed". */
  eventType: string;
  /** The JSON body sent as-is (collections: `{ event_type, data }`; invoice: `{ type, data }`). */
  payload: Record<string, unknown>;
  /**
   * Deduplication key: enqueueing the same key twice (per business) stores one message
   * (exactly-once enqueue from a retried settlement). The stored message's own id, not this key,
   * is the `webhook-id` header, identical on every retry.
   */
  idempotencyKey: string;
}

export interface WebhookOutbox {
  /** Durably records the message for delivery; returns its webhook-id. Idempotent on idempotencyKey. */
  enqueue(message: WebhookMessage, endpoint: WebhookEndpoint | null): Promise<{ webhookId: string; created: boolean }>;
}
