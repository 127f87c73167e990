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
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Agent, request } from "undici";
import {
  isDuplicateKeyError,
  type Doc,
  type DocumentStore,
  type Filter,
  type Lease,
  type WebhookEndpoint,
  type WebhookMessage,
  type WebhookOutbox,
} from "../ports.ts";
import { createLogger, describeError, type Logger } from "../../core/log.ts";
import { webhookHeaders } from "./signature.ts";

/** The outbox's default collection. */
export const OUTBOX_COLLECTION = "webhook_outbox";

export type WebhookStatus = "pending" | "delivered" | "dead" | "no_endpoint";

/** What operators see of one message (never the endpoint secret). Times are epoch milliseconds. */
export interface WebhookRecord {
  webhookId: string;
  businessId: string;
  eventType: string;
  idempotencyKey: string;
  status: WebhookStatus;
  endpointUrl: string | null;
  /** The exact JSON body sent on every attempt. */
  body: string;
  /** Attempts made so far. */
  attempts: number;
  createdAt: number;
  /** When the next attempt is due (pending only). */
  nextAttemptAt: number | null;
  lastAttemptAt: number | null;
  /** HTTP status of the last attempt, null when it got no answer. */
  lastStatusCode: number | null;
  /** "http_<status>", "timeout" or an error class ("ECONNREFUSED"); null after success. */
  lastError: string | null;
  deliveredAt: number | null;
  deadAt: number | null;
}

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
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * 30 s, 1 min, 2, 4, 8, 16, 32 min, then hourly: 29 retries (30 attempts), 23 h 3 min 30 s in total.
 */
export const DEFAULT_WEBHOOK_SCHEDULE: readonly number[] = Object.freeze(_defaultSchedule());

/** Most attempts one pass makes (a pass always ends, even when messages keep arriving). */
const MAX_ATTEMPTS_PER_PASS = 1000;
const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = "Gatehouse-Webhooks/1.0";

export function createWebhookOutbox(options: WebhookOutboxOptions): DocumentStoreWebhookOutbox {
  const clock = options.clock ?? Date.now;
  const log = options.log ?? createLogger({ level: "silent" });
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const schedule = _validSchedule(options.schedule ?? DEFAULT_WEBHOOK_SCHEDULE);
  const timeoutMs = _positive(options.timeoutMs ?? 5000, "timeoutMs");
  const concurrency = Math.floor(_positive(options.concurrency ?? 4, "concurrency"));
  const pollMs = _positive(options.pollMs ?? 1000, "pollMs");
  const jitter = Math.min(0.5, Math.max(0, options.jitter ?? 0.1));
  const leaseMs = Math.max(options.leaseMs ?? timeoutMs + 30_000, timeoutMs + 1000);
  const coll = options.store.collection<_OutboxDoc>(options.collection ?? OUTBOX_COLLECTION, {
    indexes: [
      { fields: ["businessId", "idempotencyKey"], unique: true },
      { fields: ["status", "nextAttemptAt"] },
      { fields: ["businessId", "status", "createdAt"] },
    ],
  });

  let agent: Agent | null = null;
  const dispatcher = (): Agent =>
    (agent ??= new Agent({
      connect: { timeout: Math.min(timeoutMs, 5000) },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connections: 16,
    }));

  const attempt = async (doc: _OutboxDoc & { lease: Lease }): Promise<void> => {
    const attemptNo = doc.attempts + 1;
    const started = performance.now();
    const result =
      doc.endpointUrl && doc.secret
        ? await _post(dispatcher(), doc.endpointUrl, doc.secret, doc._id, doc.body, clock, timeoutMs)
        : { statusCode: null, error: "invalid_endpoint" };
    const latencyMs = Math.round(performance.now() - started);
    const now = clock();
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const retryDelay = ok ? undefined : schedule[attemptNo - 1];
    const outcome = ok ? "delivered" : retryDelay === undefined ? "dead" : "retry";
    const set: Record<string, unknown> = {
      attempts: attemptNo,
      lastAttemptAt: now,
      lastStatusCode: result.statusCode,
      lastError: ok ? null : result.error,
    };
    if (outcome === "delivered") Object.assign(set, { status: "delivered", deliveredAt: now, nextAttemptAt: null });
    else if (outcome === "dead") Object.assign(set, { status: "dead", deadAt: now, nextAttemptAt: null });
    else set.nextAttemptAt = now + _jittered(retryDelay!, jitter);

    const fields = { webhookId: doc._id, eventType: doc.eventType, businessId: doc.businessId };
    log.event("webhook_delivery_attempt", {
      ...fields,
      attempt: attemptNo,
      statusCode: result.statusCode,
      latencyMs,
      outcome,
      ...(ok ? {} : { error: result.error }),
    });
    const written = await coll.findOneAndUpdate(
      { _id: doc._id, "lease.owner": owner, "lease.until": doc.lease.until },
      { $set: set, $unset: ["lease"] },
    );
    if (!written) {
      // Our lease expired and another worker took the message over; it will record its own attempt.
      log.warn("webhook_lease_lost", { ...fields, attempt: attemptNo, outcome });
      return;
    }
    if (outcome === "dead") {
      log.warn("webhook_dead_lettered", { ...fields, attempts: attemptNo, lastStatusCode: result.statusCode, lastError: result.error });
    }
  };

  const pass = async (keepGoing: () => boolean): Promise<number> => {
    const dueBy = clock();
    let attempts = 0;
    let budget = MAX_ATTEMPTS_PER_PASS;
    const lane = async (): Promise<void> => {
      while (budget > 0 && keepGoing()) {
        budget--;
        const claimed = await coll.claim({ status: "pending", nextAttemptAt: { $lte: dueBy } }, owner, leaseMs, [
          { field: "nextAttemptAt", direction: 1 },
        ]);
        if (!claimed) return;
        attempts++;
        await attempt(claimed);
      }
    };
    const settled = await Promise.allSettled(Array.from({ length: concurrency }, lane));
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failure) throw failure.reason;
    return attempts;
  };

  // --- worker ---
  let running = false;
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<void> | null = null;
  const tick = (): void => {
    timer = null;
    if (!running) return;
    current = pass(() => running)
      .then(
        () => undefined,
        (e: unknown) => log.warn("webhook_delivery_pass_failed", { error: describeError(e) }),
      )
      .finally(() => {
        current = null;
        if (running) {
          timer = setTimeout(tick, pollMs);
          timer.unref();
        }
      });
  };
  const worker: WebhookDeliveryWorker = {
    name: "webhook-delivery",
    start(): void {
      if (running) return;
      running = true;
      timer = setTimeout(tick, 0);
      timer.unref();
    },
    async stop(): Promise<void> {
      running = false;
      if (timer) clearTimeout(timer);
      timer = null;
      while (current) await current;
      const a = agent;
      agent = null;
      if (a) await a.close();
    },
  };

  return {
    async enqueue(message: WebhookMessage, endpoint: WebhookEndpoint | null): Promise<{ webhookId: string; created: boolean }> {
      _validateMessage(message);
      const body = JSON.stringify(message.payload);
      const now = clock();
      const usable = endpoint === null || _usableEndpoint(endpoint);
      const status: WebhookStatus = endpoint === null ? "no_endpoint" : usable ? "pending" : "dead";
      const base: _OutboxFields = {
        businessId: message.businessId,
        eventType: message.eventType,
        idempotencyKey: message.idempotencyKey,
        status,
        endpointUrl: endpoint && typeof endpoint.url === "string" ? endpoint.url : null,
        secret: endpoint && usable ? endpoint.secret : null,
        body,
        attempts: 0,
        createdAt: now,
        nextAttemptAt: status === "pending" ? now : null,
        lastAttemptAt: null,
        lastStatusCode: null,
        lastError: status === "dead" ? "invalid_endpoint" : null,
        deliveredAt: null,
        deadAt: status === "dead" ? now : null,
      };
      for (let tries = 0; tries < 3; tries++) {
        const webhookId = _newWebhookId();
        try {
          await coll.insert({ _id: webhookId, ...base });
        } catch (e) {
          if (!isDuplicateKeyError(e)) throw e;
          const existing = await coll.findOne({ businessId: message.businessId, idempotencyKey: message.idempotencyKey });
          if (existing) return { webhookId: existing._id, created: false };
          continue; // an _id clash, or the holder of the key vanished: a fresh id
        }
        const fields = { webhookId, eventType: message.eventType, businessId: message.businessId, status };
        log.event("webhook_enqueued", fields);
        if (status === "dead") log.warn("webhook_dead_lettered", { ...fields, attempts: 0, lastStatusCode: null, lastError: "invalid_endpoint" });
        return { webhookId, created: true };
      }
      throw new Error("could not store the webhook message (repeated key clashes)");
    },

    deliverDue: () => pass(() => true),

    worker,

    async list(filter: WebhookListFilter = {}): Promise<WebhookRecord[]> {
      const q: Filter = {};
      if (filter.businessId !== undefined) q.businessId = filter.businessId;
      if (filter.status !== undefined) q.status = filter.status;
      if (filter.eventType !== undefined) q.eventType = filter.eventType;
      const limit = Math.max(1, Math.min(1000, Math.floor(filter.limit ?? 100)));
      const page = await coll.find(q, { sort: [{ field: "createdAt", direction: -1 }], limit });
      return page.items.map(_toRecord);
    },

    async get(webhookId: string): Promise<WebhookRecord | null> {
      const doc = await coll.get(webhookId);
      return doc ? _toRecord(doc) : null;
    },
  };
}

// --- Internal helpers ---

interface _OutboxFields {
  businessId: string;
  eventType: string;
  idempotencyKey: string;
  status: WebhookStatus;
  endpointUrl: string | null;
  /** The endpoint's signing secret; never leaves this module. */
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
}

interface _OutboxDoc extends Doc, _OutboxFields {
  lease?: Lease;
}

interface _AttemptResult {
  statusCode: number | null;
  error: string;
}

function _defaultSchedule(): number[] {
  const out: number[] = [];
  let total = 0;
  for (let delay = 30_000; ; delay *= 2) {
    const step = Math.min(delay, HOUR);
    if (total + step > DAY) return out;
    out.push(step);
    total += step;
  }
}

function _validSchedule(schedule: readonly number[]): number[] {
  if (!Array.isArray(schedule)) throw new TypeError("schedule must be an array of delays in milliseconds");
  for (const d of schedule) {
    if (typeof d !== "number" || !Number.isFinite(d) || d < 1) throw new TypeError("every schedule delay must be a number ≥ 1 ms");
  }
  return [...schedule];
}

function _positive(n: number, name: string): number {
  if (typeof n !== "number" || !Number.isFinite(n) || n <= 0) throw new TypeError(`${name} must be a positive number`);
  return n;
}

/** Shortened by a random share of up to `jitter`; never below 1 ms (a pass never retries what it just tried). */
function _jittered(delay: number, jitter: number): number {
  return Math.max(1, Math.round(delay * (1 - jitter * Math.random())));
}

function _newWebhookId(): string {
  return `msg_${randomBytes(12).toString("hex")}`;
}

function _validateMessage(m: WebhookMessage): void {
  for (const f of ["businessId", "eventType", "idempotencyKey"] as const) {
    if (typeof m?.[f] !== "string" || m[f] === "") throw new TypeError(`webhook message ${f} must be a non-empty string`);
  }
  if (typeof m.payload !== "object" || m.payload === null || Array.isArray(m.payload)) {
    throw new TypeError("webhook message payload must be a JSON object");
  }
}

function _usableEndpoint(e: WebhookEndpoint): boolean {
  if (typeof e !== "object" || e === null || typeof e.secret !== "string" || e.secret === "" || typeof e.url !== "string") return false;
  try {
    const u = new URL(e.url);
    return u.protocol === "https:" || u.protocol === "http:";
  } catch {
    return false;
  }
}

async function _post(
  dispatcher: Agent,
  url: string,
  secret: string,
  webhookId: string,
  body: string,
  clock: () => number,
  timeoutMs: number,
): Promise<_AttemptResult> {
  const timestamp = Math.floor(clock() / 1000);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await request(url, {
      method: "POST",
      dispatcher,
      signal,
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        ...webhookHeaders(secret, webhookId, timestamp, body),
      },
      body,
    });
    // The answer's body is never read into memory or recorded: drain a little, then drop it.
    await res.body.dump({ limit: MAX_RESPONSE_BYTES }).catch(() => {});
    return { statusCode: res.statusCode, error: `http_${res.statusCode}` };
  } catch (e) {
    return { statusCode: null, error: _errorClass(e, signal) };
  }
}

function _errorClass(e: unknown, signal: AbortSignal): string {
  if (signal.aborted) return "timeout";
  const err = e as { name?: unknown; code?: unknown; cause?: { code?: unknown } } | null;
  const code = typeof err?.code === "string" ? err.code : typeof err?.cause?.code === "string" ? err.cause.code : undefined;
  if (code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") return "timeout";
  if (code && /^[A-Z0-9_]{2,40}$/.test(code)) return code;
  const name = typeof err?.name === "string" && /^[A-Za-z0-9_]{1,60}$/.test(err.name) ? err.name : "Error";
  return name === "TimeoutError" ? "timeout" : name;
}

function _toRecord(doc: _OutboxDoc): WebhookRecord {
  return {
    webhookId: doc._id,
    businessId: doc.businessId,
    eventType: doc.eventType,
    idempotencyKey: doc.idempotencyKey,
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
  };
}
