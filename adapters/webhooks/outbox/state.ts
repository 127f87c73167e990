/**
 * The outbox's stored message and the state its parts share: resolved options, the collection,
 * the HTTP connection pool (made on first use) and the worker's timer.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { Agent } from "undici";
import type { HopMarker } from "../../../core/http/hop.ts";
import { createLogger, type Logger } from "../../../core/log.ts";
import type { Collection, Doc, Lease, WebhookAttempt, WebhookEndpointSource } from "../../ports.ts";
import { DEFAULT_WEBHOOK_SCHEDULE, validSchedule } from "./schedule.ts";
import { OUTBOX_COLLECTION, type WebhookOutboxOptions, type WebhookRecord, type WebhookStatus } from "./types.ts";

export interface OutboxFields {
  businessId: string;
  eventType: string;
  idempotencyKey: string;
  status: WebhookStatus;
  /** The directory endpoint ("" when the message names none: a bare endpoint, or no endpoint). */
  endpointId: string;
  endpointUrl: string | null;
  /**
   * A bare endpoint's signing secret (never leaves the outbox); null for a directory endpoint, whose
   * current secrets are read at every attempt.
   */
  secret: string | null;
  body: string;
  attempts: number;
  createdAt: number;
  nextAttemptAt: number | null;
  lastAttemptAt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: number | null;
  deadAt: number | null;
  /** The most recent attempts, oldest first (at most `maxAttemptsKept`). */
  attemptLog?: WebhookAttempt[];
  /** 0: failed (dead, or waiting after a failed attempt); 1: otherwise. Sorts failed ones first. */
  rank?: number;
  /** The next attempt is a resend or a test event: one attempt, no retry schedule after it. */
  manual?: boolean;
  /** The idempotency key of the last resend (a double submit resends once). */
  resendKey?: string | null;
}

export interface OutboxDoc extends Doc, OutboxFields {
  lease?: Lease;
}

export interface OutboxState {
  readonly clock: () => number;
  readonly log: Logger;
  /** This worker's lease owner id. */
  readonly owner: string;
  readonly schedule: number[];
  readonly timeoutMs: number;
  readonly concurrency: number;
  readonly pollMs: number;
  readonly jitter: number;
  readonly leaseMs: number;
  readonly coll: Collection<OutboxDoc>;
  /** The deployment's hop markers (none: attempts carry no X-Service-Gateway-Hop). */
  readonly hop: HopMarker | null;
  /** The directory's endpoints (current URL and secrets at attempt time; outcomes for auto-disable). */
  endpoints: WebhookEndpointSource | null;
  readonly maxAttemptsKept: number;
  agent: Agent | null;
  running: boolean;
  timer: NodeJS.Timeout | null;
  /** The worker's pass in progress. */
  current: Promise<void> | null;
}

export function createOutboxState(options: WebhookOutboxOptions): OutboxState {
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const schedule = validSchedule(options.schedule ?? DEFAULT_WEBHOOK_SCHEDULE);
  const timeoutMs = _positive(options.timeoutMs ?? 5000, "timeoutMs");
  return {
    clock: options.clock ?? Date.now,
    log: options.log ?? createLogger({ level: "silent" }),
    owner,
    schedule,
    timeoutMs,
    concurrency: Math.floor(_positive(options.concurrency ?? 4, "concurrency")),
    pollMs: _positive(options.pollMs ?? 1000, "pollMs"),
    jitter: Math.min(0.5, Math.max(0, options.jitter ?? 0.1)),
    leaseMs: Math.max(options.leaseMs ?? timeoutMs + 30_000, timeoutMs + 1000),
    coll: options.store.collection<OutboxDoc>(options.collection ?? OUTBOX_COLLECTION, {
      indexes: OUTBOX_INDEXES,
    }),
    hop: options.hopMarker ?? null,
    endpoints: options.endpoints ?? null,
    maxAttemptsKept: Math.max(1, Math.floor(options.maxAttemptsKept ?? 20)),
    agent: null,
    running: false,
    timer: null,
    current: null,
  };
}

/** The connection pool of the attempts, made on first use (closed when the worker stops). */
export function dispatcher(s: OutboxState): Agent {
  return (s.agent ??= new Agent({
    connect: { timeout: Math.min(s.timeoutMs, 5000) },
    headersTimeout: s.timeoutMs,
    bodyTimeout: s.timeoutMs,
    connections: 16,
  }));
}

/**
 * The outbox's indexes: one message per (business, key, endpoint); the worker's due scan; and one
 * for each delivery-log query (per business or across them; failed first or newest first; by
 * status, event type or endpoint).
 */
const OUTBOX_INDEXES = [
  { fields: ["businessId", "idempotencyKey", "endpointId"], unique: true },
  { fields: ["status", "nextAttemptAt"] },
  { fields: ["businessId", "status", "createdAt"] },
  { fields: ["businessId", "rank", "createdAt"] },
  { fields: ["businessId", "eventType", "createdAt"] },
  { fields: ["businessId", "endpointId", "createdAt"] },
  { fields: ["businessId", "createdAt"] },
  { fields: ["rank", "createdAt"] },
  { fields: ["status", "createdAt"] },
  { fields: ["eventType", "createdAt"] },
  { fields: ["endpointId", "createdAt"] },
  { fields: ["createdAt"] },
];

/** What operators see of a stored message (never the secret). */
export function toRecord(doc: OutboxDoc): WebhookRecord {
  return {
    webhookId: doc._id,
    businessId: doc.businessId,
    eventType: doc.eventType,
    idempotencyKey: doc.idempotencyKey,
    endpointId: doc.endpointId ? doc.endpointId : null,
    status: doc.status,
    endpointUrl: doc.endpointUrl,
    body: doc.body,
    attempts: doc.attempts,
    createdAt: doc.createdAt,
    nextAttemptAt: doc.nextAttemptAt,
    lastAttemptAt: doc.lastAttemptAt,
    lastStatusCode: doc.lastStatusCode,
    lastError: doc.lastError,
    deliveredAt: doc.deliveredAt,
    deadAt: doc.deadAt,
    attemptLog: doc.attemptLog ?? [],
    failed: isFailed(doc),
  };
}

/** Dead, or waiting after a failed attempt. */
export function isFailed(doc: Pick<OutboxFields, "status" | "lastError">): boolean {
  return doc.status === "dead" || (doc.status === "pending" && doc.lastError !== null);
}

// --- Internal helpers ---

function _positive(n: number, name: string): number {
  if (typeof n !== "number" || !Number.isFinite(n) || n <= 0) throw new TypeError(`${name} must be a positive number`);
  return n;
}
