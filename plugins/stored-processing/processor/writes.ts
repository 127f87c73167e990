/**
 * The processor's writes to an invoice, each a compare-and-set on `rev` while it still holds the
 * lease: one write, a write that records a regulator outcome (retried), and the pass's last write
 * (the lease released, the invoice due again when it has work), with the webhooks it recorded.
 */
import { describeError } from "../../../core/log.ts";
import { retryOutcomeWrite } from "../../../core/outcome-write.ts";
import type { InvoiceDoc, InvoiceEvent, InvoiceStatus, LastError } from "../../invoice/stored-invoices.ts";
import type { Pass, ProcessorOptions, StepResult, Written } from "./types.ts";

/** base × 2^(n−1), capped, jittered down by up to half. */
export function backoff(o: Pick<ProcessorOptions, "backoffBaseMs" | "backoffMaxMs">, n: number): number {
  const raw = Math.min(o.backoffMaxMs, o.backoffBaseMs * 2 ** Math.min(Math.max(n, 1) - 1, 30));
  return Math.max(1, Math.round(raw * (0.5 + 0.5 * Math.random())));
}

/** The status fields of moving through `statuses` now (history appended). */
export function statusFields(d: InvoiceDoc, ...statuses: readonly InvoiceStatus[]): Partial<InvoiceDoc> {
  const at = new Date().toISOString();
  return { status: statuses[statuses.length - 1]!, statusHistory: [...d.statusHistory, ...statuses.map((s) => ({ status: s, at }))] };
}

export function lastErrorOf(code: string, regulatorMessage?: string): LastError {
  return { code, at: new Date().toISOString(), ...(regulatorMessage ? { regulatorMessage } : {}) };
}

/**
 * One compare-and-set on the invoice, still holding the lease. "changed": someone else (a transmit
 * or cancel request) wrote first; `p.cur` is the fresh document and the pass re-evaluates it.
 * Unless the write says otherwise (the pass's last write does), the invoice is due again when the
 * lease ends: that is when another processor may take it over, and it keeps the invoices in hand
 * out of the front of the claims' `dueAt` order (a claim skips leased invoices one by one).
 */
export async function write(p: Pass, set: Partial<InvoiceDoc>, events: InvoiceEvent[] = [], unset: string[] = []): Promise<Written> {
  const { rt } = p;
  const d = p.cur;
  const next: Record<string, unknown> = { dueAt: p.lease.until, ...set, rev: d.rev + 1, updatedAt: new Date().toISOString() };
  next.events = p.flushed ? events : [...d.events, ...events];
  const counting = p.worked && !p.counted;
  if (counting) next.attempts = d.attempts + 1;
  let updated: InvoiceDoc | null;
  try {
    updated = await rt.invoices.findOneAndUpdate(
      { _id: d._id, rev: d.rev, "lease.owner": rt.owner, "lease.until": p.lease.until },
      unset.length > 0 ? { $set: next, $unset: unset } : { $set: next },
    );
  } catch (e) {
    rt.o.log.warn("stored_processor_write_failed", { invoiceId: d._id, error: describeError(e) });
    p.outage = true;
    return "failed";
  }
  if (updated) {
    p.cur = updated;
    if (p.flushed) p.flushed = events.length === 0;
    if (counting) p.counted = true;
    return "ok";
  }
  const fresh = await rt.invoices.get(d._id).catch(() => null);
  if (!fresh || fresh.lease?.owner !== rt.owner || fresh.lease.until !== p.lease.until) {
    rt.o.log.warn("stored_processor_lease_lost", { invoiceId: d._id });
    return "lost";
  }
  p.cur = fresh;
  p.flushed = false;
  return "changed";
}

/** A write that records a regulator outcome: retried, because losing it freezes the invoice. */
export function record(p: Pass, set: Partial<InvoiceDoc>, events: InvoiceEvent[] = []): Promise<Written> {
  return _retried(p, () => write(p, set, events));
}

/**
 * The pass's last write when it records a regulator outcome (a transmission's): retried as
 * record() is. Lost, it would leave the dispatch mark in place, and the next pass would freeze an
 * invoice whose outcome was known.
 */
export function finishOutcome(p: Pass, set: Partial<InvoiceDoc>, events: InvoiceEvent[], dueAt: number | null): Promise<StepResult> {
  return _retried(p, () => finish(p, set, events, dueAt));
}

/**
 * The pass's last write: the lease is released and the invoice is due again at `dueAt` (null:
 * idle), earlier when a settlement or webhooks are still owed. Webhooks this write records are
 * enqueued right after it; once they are, a compare-and-set clears them.
 */
export async function finish(p: Pass, set: Partial<InvoiceDoc>, events: InvoiceEvent[], dueAt: number | null, unset: string[] = []): Promise<StepResult> {
  let wanted = dueAt;
  const earliest = (due: number | null, t: number) => (due === null ? t : Math.min(due, t));
  const retryAt = Date.now() + backoff(p.rt.o, p.cur.outages + 1);
  if ((set.settle ?? p.cur.settle) === true) wanted = earliest(wanted, p.settleFailed ? retryAt : Date.now());
  const eventsLeft = events.length > 0 || (!p.flushed && p.cur.events.length > 0);
  const w = await write(p, { ...set, dueAt: eventsLeft ? earliest(wanted, retryAt) : wanted }, events, [...unset, "lease"]);
  if (w !== "ok") return w;
  if (events.length > 0) await _flushAfter(p, wanted);
  return "done";
}

// --- Internal helpers ---

/**
 * `once` again while the store does not answer it (core/outcome-write.ts): a compare-and-set on the
 * same revision, so a try that landed unanswered makes the next one find the invoice moved on
 * ("changed" or "lost"), never apply twice.
 */
async function _retried<R extends StepResult>(p: Pass, once: () => Promise<R>): Promise<R> {
  const result = await retryOutcomeWrite(once, (r) => r === "failed");
  if (result === "failed")
    p.rt.o.alerts?.raise({ signal: "post_sign_state_missing", dependency: "documentStore", operation: "stored_invoices.findOneAndUpdate", operationId: p.cur.operationId });
  return result;
}

/** Enqueues the webhooks on the invoice; once they are, clears them (unless someone wrote since). */
async function _flushAfter(p: Pass, dueAt: number | null): Promise<void> {
  const d = p.cur;
  const { o } = p.rt;
  try {
    await o.webhooks.enqueue(d, d.events);
  } catch (e) {
    o.log.warn("stored_webhook_enqueue_failed", { invoiceId: d._id, error: describeError(e) });
    return;
  }
  await p.rt.invoices.findOneAndUpdate({ _id: d._id, rev: d.rev }, { $set: { events: [], dueAt, rev: d.rev + 1 } }).catch(() => null);
}
