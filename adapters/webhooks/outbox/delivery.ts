/**
 * Delivery passes: claim due messages with a lease (so no two workers run the same attempt), make
 * one attempt each, and record its outcome (delivered, retry later, dead) with a compare-and-set on
 * the lease.
 */
import { performance } from "node:perf_hooks";
import { describeError } from "../../../core/log.ts";
import type { Lease, WebhookAttempt } from "../../ports.ts";
import { postWebhook } from "./post.ts";
import { jittered } from "./schedule.ts";
import { dispatcher, type OutboxDoc, type OutboxState } from "./state.ts";

/** Most attempts one pass makes (a pass always ends, even when messages keep arriving). */
const MAX_ATTEMPTS_PER_PASS = 1000;

/** One pass over the messages due at its start, `concurrency` lanes at a time; resolves with the attempts made. */
export async function deliveryPass(s: OutboxState, keepGoing: () => boolean): Promise<number> {
  const dueBy = s.clock();
  let attempts = 0;
  let budget = MAX_ATTEMPTS_PER_PASS;
  const lane = async (): Promise<void> => {
    while (budget > 0 && keepGoing()) {
      budget--;
      const claimed = await s.coll.claim({ status: "pending", nextAttemptAt: { $lte: dueBy } }, s.owner, s.leaseMs, [
        { field: "nextAttemptAt", direction: 1 },
      ]);
      if (!claimed) return;
      attempts++;
      await _attempt(s, claimed);
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: s.concurrency }, lane));
  const failure = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failure) throw failure.reason;
  return attempts;
}

// --- Internal helpers ---

async function _attempt(s: OutboxState, doc: OutboxDoc & { lease: Lease }): Promise<void> {
  const { log } = s;
  const attemptNo = doc.attempts + 1;
  const fields = { webhookId: doc._id, eventType: doc.eventType, businessId: doc.businessId };
  const target = await _target(s, doc);
  if (typeof target === "string") {
    // The endpoint was disabled or removed since the event: no attempt, the message waits dead (resend sends it).
    await _write(s, doc, { status: "dead", deadAt: s.clock(), nextAttemptAt: null, lastError: target, rank: 0, manual: false });
    log.warn("webhook_dead_lettered", { ...fields, attempts: doc.attempts, lastStatusCode: doc.lastStatusCode, lastError: target });
    return;
  }
  const started = performance.now();
  const result = await postWebhook(dispatcher(s), target.url, target.secrets, doc._id, doc.body, s.clock, s.timeoutMs, s.hop?.forUrl(target.url));
  const latencyMs = Math.round(performance.now() - started);
  const now = s.clock();
  const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  const manual = doc.manual === true;
  const retryDelay = ok || manual ? undefined : s.schedule[attemptNo - 1];
  const outcome = ok ? "delivered" : retryDelay === undefined ? "dead" : "retry";
  const entry: WebhookAttempt = { at: now, statusCode: result.statusCode, durationMs: latencyMs, error: ok ? null : result.error, ...(manual ? { manual: true } : {}) };
  const set: Record<string, unknown> = {
    attempts: attemptNo,
    lastAttemptAt: now,
    lastStatusCode: result.statusCode,
    lastError: entry.error,
    endpointUrl: target.url,
    attemptLog: [...(doc.attemptLog ?? []), entry].slice(-s.maxAttemptsKept),
    rank: ok ? 1 : 0,
    manual: false,
  };
  if (outcome === "delivered") Object.assign(set, { status: "delivered", deliveredAt: now, deadAt: null, nextAttemptAt: null });
  else if (outcome === "dead") Object.assign(set, { status: "dead", deadAt: now, nextAttemptAt: null });
  else set.nextAttemptAt = now + jittered(retryDelay!, s.jitter);

  log.event("webhook_delivery_attempt", { ...fields, attempt: attemptNo, statusCode: result.statusCode, latencyMs, outcome, ...(ok ? {} : { error: result.error }) });
  if (!(await _write(s, doc, set))) {
    // Our lease expired and another worker took the message over; it will record its own attempt.
    log.warn("webhook_lease_lost", { ...fields, attempt: attemptNo, outcome });
    return;
  }
  if (outcome === "dead") log.warn("webhook_dead_lettered", { ...fields, attempts: attemptNo, lastStatusCode: result.statusCode, lastError: result.error });
  if (doc.endpointId && s.endpoints) {
    await s.endpoints.attempted(doc.endpointId, ok, now, entry.error).catch((e: unknown) => log.warn("webhook_endpoint_outcome_not_recorded", { ...fields, error: describeError(e) }));
  }
}

/** Where and with which secrets this attempt goes, or why none is made. */
async function _target(s: OutboxState, doc: OutboxDoc): Promise<{ url: string; secrets: string[] } | "invalid_endpoint" | "endpoint_disabled" | "endpoint_removed"> {
  if (!doc.endpointId) return doc.endpointUrl && doc.secret ? { url: doc.endpointUrl, secrets: [doc.secret] } : "invalid_endpoint";
  if (!s.endpoints) return "invalid_endpoint";
  const e = await s.endpoints.resolve(doc.endpointId);
  if (!e) return "endpoint_removed";
  // A disabled endpoint gets no scheduled attempt; a person's resend or test event is still made.
  if (!e.enabled && doc.manual !== true) return "endpoint_disabled";
  return e.secrets.length > 0 ? { url: e.url, secrets: e.secrets } : "invalid_endpoint";
}

/** Records the attempt with a compare-and-set on our lease, and drops the lease. */
async function _write(s: OutboxState, doc: OutboxDoc & { lease: Lease }, set: Record<string, unknown>): Promise<boolean> {
  const written = await s.coll.findOneAndUpdate({ _id: doc._id, "lease.owner": s.owner, "lease.until": doc.lease.until }, { $set: set, $unset: ["lease"] });
  return written !== null;
}
