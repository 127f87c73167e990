/**
 * Delivery passes: claim due messages with a lease (so no two workers run the same attempt), make
 * one attempt each, and record its outcome (delivered, retry later, dead) with a compare-and-set on
 * the lease.
 */
import { performance } from "node:perf_hooks";
import type { Lease } from "../../ports.ts";
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
  const started = performance.now();
  const result =
    doc.endpointUrl && doc.secret
      ? await postWebhook(dispatcher(s), doc.endpointUrl, doc.secret, doc._id, doc.body, s.clock, s.timeoutMs, s.hop?.forUrl(doc.endpointUrl))
      : { statusCode: null, error: "invalid_endpoint" };
  const latencyMs = Math.round(performance.now() - started);
  const now = s.clock();
  const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  const retryDelay = ok ? undefined : s.schedule[attemptNo - 1];
  const outcome = ok ? "delivered" : retryDelay === undefined ? "dead" : "retry";
  const set: Record<string, unknown> = {
    attempts: attemptNo,
    lastAttemptAt: now,
    lastStatusCode: result.statusCode,
    lastError: ok ? null : result.error,
  };
  if (outcome === "delivered") Object.assign(set, { status: "delivered", deliveredAt: now, nextAttemptAt: null });
  else if (outcome === "dead") Object.assign(set, { status: "dead", deadAt: now, nextAttemptAt: null });
  else set.nextAttemptAt = now + jittered(retryDelay!, s.jitter);

  const fields = { webhookId: doc._id, eventType: doc.eventType, businessId: doc.businessId };
  log.event("webhook_delivery_attempt", {
    ...fields,
    attempt: attemptNo,
    statusCode: result.statusCode,
    latencyMs,
    outcome,
    ...(ok ? {} : { error: result.error }),
  });
  const written = await s.coll.findOneAndUpdate(
    { _id: doc._id, "lease.owner": s.owner, "lease.until": doc.lease.until },
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
}
