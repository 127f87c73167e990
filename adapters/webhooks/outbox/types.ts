/** The webhook outbox's public types: options, the operator's view of a message, and the outbox with its worker. */
import type { HopMarker } from "../../../core/http/hop.ts";
import type { Logger } from "../../../core/log.ts";
import type { DocumentStore, WebhookDelivery, WebhookDeliveryLog, WebhookDeliveryStatus, WebhookEndpointSource, WebhookOutbox } from "../../ports.ts";

/** The outbox's default collection. */
export const OUTBOX_COLLECTION = "webhook_outbox";

export type WebhookStatus = WebhookDeliveryStatus;

/** What operators see of one message (never the endpoint secret): the port's delivery record. */
export type WebhookRecord = WebhookDelivery;

export interface WebhookListFilter {
  businessId?: string;
  status?: WebhookStatus;
  eventType?: string;
  /** Newest first; default 100, at most 1000. */
  limit?: number;
}

export interface WebhookOutboxOptions {
  store: DocumentStore;
  log?: Logger;
  /** Epoch milliseconds. Default Date.now. Give the store the same clock (leases use the store's). */
  clock?: () => number;
  /** This worker's lease owner id. Default `<hostname>:<pid>:<random>`. */
  owner?: string;
  /** Delays (ms) before the 2nd, 3rd, … attempt; its length is the number of retries. Default DEFAULT_WEBHOOK_SCHEDULE. */
  schedule?: readonly number[];
  /** Deadline of one attempt (connect, headers and body). Default 5000 ms. */
  timeoutMs?: number;
  /** Attempts run in parallel by one pass. Default 4. */
  concurrency?: number;
  /** Pause between worker passes. Default 1000 ms. */
  pollMs?: number;
  /** Each retry delay is shortened by a random share of up to this fraction (0..0.5). Default 0.1. */
  jitter?: number;
  /** Lease on a claimed message. Default timeoutMs + 30 000 ms (always more than timeoutMs). */
  leaseMs?: number;
  /** Collection name. Default "webhook_outbox". */
  collection?: string;
  /** The deployment's hop markers: each attempt carries the one for its endpoint's host (X-Service-Gateway-Hop). */
  hopMarker?: HopMarker;
  /** The directory's endpoints: messages naming an endpoint id are sent with its current URL and secrets. */
  endpoints?: WebhookEndpointSource;
  /** Attempts kept in each message's log (the most recent). Default 20. */
  maxAttemptsKept?: number;
}

export interface WebhookDeliveryWorker {
  name: "webhook-delivery";
  start(): void;
  /** Stops polling, waits for the pass in progress, closes idle connections. */
  stop(): Promise<void>;
}

export interface DocumentStoreWebhookOutbox extends WebhookOutbox {
  /** One pass over the due messages; resolves with the number of attempts it made. */
  deliverDue(): Promise<number>;
  worker: WebhookDeliveryWorker;
  list(filter?: WebhookListFilter): Promise<WebhookRecord[]>;
  get(webhookId: string): Promise<WebhookRecord | null>;
  readonly deliveries: WebhookDeliveryLog;
}
