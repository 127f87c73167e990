/** The webhook delivery port (re-exported by adapters/ports.ts). */

export interface WebhookEndpoint {
  /**
   * The directory's endpoint id. With an id the outbox stores no secret: every attempt reads the
   * endpoint's current URL and signing secrets (rotation, edits and disabling apply to waiting
   * messages). Without one (tools, tests) the given url and secret are stored with the message.
   */
  id?: string;
  url: string;
  /** "whsec_<base64>" (Standard Webhooks) or any secret string; used for HMAC-SHA256. Unused with an id. */
  secret?: string;
}

export interface WebhookMessage {
  /** Owning business (collections) or top-level business (invoice gateway). */
  businessId: string;
  /** Event name, e.g. "CHECKOUT_COMPLETED", "IN_FLOW_SUCCESS_EVENT", "invoice.signed". */
  eventType: string;
  /** The JSON body sent as-is (collections: `{ event_type, data }`; invoice: `{ type, data }`). */
  payload: Record<string, unknown>;
  /**
   * Deduplication key: enqueueing the same key twice (per business and endpoint) stores one message
   * (exactly-once enqueue from a retried settlement). The stored message's own id, not this key,
   * is the `webhook-id` header, identical on every retry.
   */
  idempotencyKey: string;
  /**
   * A one-off attempt asked for by a person (a test event): made even when the endpoint is disabled,
   * and not retried on the schedule when it fails.
   */
  manual?: boolean;
}

export interface WebhookOutbox {
  /** Durably records the message for delivery; returns its webhook-id. Idempotent on idempotencyKey. */
  enqueue(message: WebhookMessage, endpoint: WebhookEndpoint | null): Promise<{ webhookId: string; created: boolean }>;
  /** The delivery log and its operator actions (absent on outboxes that keep none). */
  readonly deliveries?: WebhookDeliveryLog;
  /**
   * Where messages naming an endpoint id read its URL and secrets at attempt time: the composition
   * root hands the directory's endpoints to the outbox, also to one built outside it (tests).
   */
  useEndpoints?(source: WebhookEndpointSource): void;
}

/** What an attempt is signed with and sent to: the endpoint as it is now. */
export interface WebhookEndpointState {
  url: string;
  enabled: boolean;
  /** Every secret to sign with, newest first (two during a rotation's overlap). */
  secrets: string[];
}

/**
 * Where the outbox reads an endpoint's current state at attempt time and reports each attempt's
 * outcome (the directory's webhook endpoints: rotation, editing, auto-disable).
 */
export interface WebhookEndpointSource {
  /** The endpoint now; null when it no longer exists. */
  resolve(endpointId: string): Promise<WebhookEndpointState | null>;
  /** One attempt's outcome (ok: a 2xx arrived); failing continuously long enough disables the endpoint. */
  attempted(endpointId: string, ok: boolean, atMs: number, error: string | null): Promise<void>;
}

export type WebhookDeliveryStatus = "pending" | "delivered" | "dead" | "no_endpoint";

/** One attempt of a delivery (the log keeps the most recent ones). */
export interface WebhookAttempt {
  /** Epoch ms. */
  at: number;
  /** HTTP status of the answer, null when none arrived. */
  statusCode: number | null;
  durationMs: number;
  /** null after a 2xx; else "http_<status>", "timeout" or an error class ("ECONNREFUSED"). */
  error: string | null;
  /** Made by a resend or a test event rather than the retry schedule. */
  manual?: boolean;
}

/** One message of the delivery log (never the endpoint secret). Times are epoch ms. */
export interface WebhookDelivery {
  webhookId: string;
  businessId: string;
  eventType: string;
  idempotencyKey: string;
  /** The directory endpoint it goes to (null: an endpoint given without an id, or none). */
  endpointId: string | null;
  status: WebhookDeliveryStatus;
  endpointUrl: string | null;
  body: string;
  attempts: number;
  createdAt: number;
  nextAttemptAt: number | null;
  lastAttemptAt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: number | null;
  deadAt: number | null;
  /** The most recent attempts, oldest first (bounded). */
  attemptLog: WebhookAttempt[];
  /** Failed (dead, or waiting after a failed attempt): listed first for operators. */
  failed: boolean;
}

export interface WebhookDeliveryFilter {
  businessId?: string;
  status?: WebhookDeliveryStatus;
  eventType?: string;
  endpointId?: string;
  /** Failed ones first (then newest first). Default false: newest first. */
  failedFirst?: boolean;
  /** Default 50, at most 100. */
  limit?: number;
  cursor?: string | null;
}

/** The outcome of a resend: `resent` false when the same idempotency key already resent it. */
export interface WebhookResend {
  delivery: WebhookDelivery;
  resent: boolean;
  /** Why nothing was resent: this key already resent it, or the message has no endpoint. */
  reason?: "already_resent" | "no_endpoint";
  /** The message's status before this resend (when resent). */
  previousStatus?: WebhookDeliveryStatus;
}

export interface WebhookDeliveryLog {
  list(filter: WebhookDeliveryFilter): Promise<{ items: WebhookDelivery[]; nextCursor: string | null }>;
  /** One delivery; with `businessId`, null unless it belongs to that business. */
  get(webhookId: string, businessId?: string): Promise<WebhookDelivery | null>;
  /**
   * Makes one more attempt of a delivered or dead message now (a waiting one is brought forward).
   * Idempotent on `idempotencyKey`: the same key twice resends once. Null when not found (or another
   * business's).
   */
  resend(webhookId: string, idempotencyKey: string, businessId?: string): Promise<WebhookResend | null>;
}
