/**
 * The alert engine: the AlertChannel port (adapters/ports.ts) on the coordination store (shared
 * thresholds and cooldowns), the document store (the dead-letter stream), the log (always) and an
 * optional chat webhook (./webhook.ts). Spec §6 "alert signals".
 *
 * Sustained failure, per dependency + operation:
 *   fires      5 consecutive failures, or ≥ 20 calls in the last 5 minutes with a failure ratio > 20 %
 *   cooldown   one notification per 15 minutes while the incident lasts (the others are counted)
 *   recovery   5 consecutive successes close an open incident with ONE recovery notification; the
 *              next failure after it is a new incident (its own notification, its own window)
 * Immediate signals (`raise`): no threshold; deduplicated per (signal, dependency, operation id) by
 * the same 15-minute cooldown; the occurrences in between are counted into the next notification.
 *
 * Cost on the request path: `observeCall` updates in-process counters (two Map lookups, a few
 * increments, no allocation, no await) and reads a clock the worker refreshes every 250 ms (minute
 * buckets need no finer time; a clock read costs more than the rest here); `raise` checks an
 * in-process cooldown first. Every `flushMs` the worker flushes the
 * counters of the keys that moved to the coordination store in one batch of counter updates (shared
 * gauges with a ttl), then evaluates each key on the shared totals, so N processes share one
 * threshold. Shared keys, `<prefix><dependency>|<operation>|…`:
 *   g<gen>|m<minute>|c, |f   calls and failures per minute of the current incident generation
 *   cf, cs                   consecutive failures / successes (a batch with a success resets cf)
 *   gen                      generation: +1 at every recovery (the window starts empty again)
 *   g<gen>|cooldown          lease: the process that takes it sends the notification
 *   g<gen>|incident          lease owned by "open" while an incident is notified; the process whose
 *                            release succeeds sends the recovery notification (exactly one)
 * When the coordination store cannot answer, the engine decides on this process's own counters
 * (a Redis outage must still be alerted), and immediate signals are sent without the shared cooldown.
 */
import { randomUUID } from "node:crypto";
import PQueue from "p-queue";
import { describeError, type Logger } from "../../core/log.ts";
import type {
  Alert,
  AlertChannel,
  AlertChannelStatus,
  AlertSignal,
  CoordinationStore,
  DeadLetter,
  DependencyObservation,
  Doc,
  DocumentStore,
  Filter,
} from "../ports.ts";
import { buildAlert, isImmediateSignal, type AlertFields } from "./context.ts";
import { createWebhookChannel, type WebhookChannel, type WebhookChannelOptions } from "./webhook.ts";

export interface AlertThresholds {
  consecutiveFailures: number;
  windowMs: number;
  minimumCalls: number;
  /** The window fires above this ratio (0.2: more than 20 %). */
  failureRatio: number;
  cooldownMs: number;
  recoverySuccesses: number;
}

export const ALERT_THRESHOLDS: AlertThresholds = {
  consecutiveFailures: 5,
  windowMs: 5 * 60_000,
  minimumCalls: 20,
  failureRatio: 0.2,
  cooldownMs: 15 * 60_000,
  recoverySuccesses: 5,
};

export const DEAD_LETTERS_COLLECTION = "alert_dead_letters";

export interface AlertEngineOptions {
  /** Shown in every alert ("production", "staging", "demo"). */
  environment: string;
  coordination: CoordinationStore;
  store: DocumentStore;
  log: Logger;
  /** Epoch milliseconds. Default Date.now. */
  clock?: () => number;
  webhook?: WebhookChannelOptions | null;
  thresholds?: Partial<AlertThresholds>;
  /** How often the worker flushes and evaluates. Default 1000 ms. */
  flushMs?: number;
  /** Base of runbook links. Default "docs/operations.md". */
  runbookBase?: string;
  /** Prefix of the shared keys. Default "alerts:". */
  keyPrefix?: string;
  /** Called for every alert sent and every dead letter (metrics). */
  onAlert?: (alert: Alert) => void;
  onDeadLetter?: (alert: Alert) => void;
}

export interface AlertEngine extends AlertChannel {
  /** Flushes every `flushMs` while started. */
  readonly worker: { name: string; start(): Promise<void>; stop(): Promise<void> };
}

/** Minute buckets of the window. */
const BUCKET_MS = 60_000;
/** Entries of the immediate-signal cooldown map kept at most (beyond it, signals go out undeduplicated). */
const MAX_IMMEDIATE_KEYS = 10_000;
const STREAK_TTL_MS = 60 * 60_000;
const GEN_TTL_MS = 7 * 24 * 60 * 60_000;
const RESET = -(2 ** 40);
/** How often the worker refreshes the request path's clock. */
const COARSE_CLOCK_MS = 250;

export function createAlertEngine(o: AlertEngineOptions): AlertEngine {
  const { coordination, log } = o;
  const clock = o.clock ?? Date.now;
  const t: AlertThresholds = { ...ALERT_THRESHOLDS, ...o.thresholds };
  const prefix = o.keyPrefix ?? "alerts:";
  const runbookBase = o.runbookBase ?? "docs/operations.md";
  const flushMs = o.flushMs ?? 1_000;
  const buckets = Math.max(1, Math.ceil(t.windowMs / BUCKET_MS));
  const webhook: WebhookChannel | null = o.webhook ? createWebhookChannel(o.webhook) : null;
  const letters = o.store.collection<LetterDoc>(DEAD_LETTERS_COLLECTION, { indexes: [{ fields: ["deadAtMs"] }, { fields: ["status", "deadAtMs"] }] });
  const queue = new PQueue({ concurrency: 2 });

  const trackers = new Map<string, Map<string, Tracker>>();
  const immediate = new Map<string, ImmediateEntry>();
  const counts = { sent: 0, suppressed: 0, deliveryFailures: 0 };
  let lastDelivery: AlertChannelStatus["webhook"]["lastDelivery"] = null;
  let timer: NodeJS.Timeout | null = null;
  let flushing: Promise<void> | null = null;
  // The request path's clock: refreshed by the worker while it runs, else read each time.
  let coarse: number | null = null;
  let coarseTimer: NodeJS.Timeout | null = null;
  const callClock = o.clock ?? (() => coarse ?? Date.now());

  // -------------------------------------------------------------------------
  // Request path
  // -------------------------------------------------------------------------

  function observeCall(dependency: string, operation: string, failed: boolean, detail?: { failureClass?: string; requestId?: string }): void {
    let byOp = trackers.get(dependency);
    if (byOp === undefined) {
      byOp = new Map();
      trackers.set(dependency, byOp);
    }
    let k = byOp.get(operation);
    if (k === undefined) {
      k = _tracker(dependency, operation, buckets);
      byOp.set(operation, k);
    }
    const now = callClock();
    const b = _bucket(k, now);
    b.calls++;
    k.pCalls++;
    if (failed) {
      b.failures++;
      k.pFailures++;
      k.pTrailingFailures++;
      k.pTrailingSuccesses = 0;
      k.pSawFailure = true;
      k.consecutiveFailures++;
      k.consecutiveSuccesses = 0;
      k.lastFailureAt = now;
      k.firstFailureAt ??= now;
      if (detail?.failureClass !== undefined) k.lastFailureClass = detail.failureClass;
      if (detail?.requestId !== undefined) {
        k.requestIds.push(detail.requestId);
        if (k.requestIds.length > 3) k.requestIds.shift();
      }
    } else {
      k.pSuccesses++;
      k.pTrailingSuccesses++;
      k.pTrailingFailures = 0;
      k.pSawSuccess = true;
      k.consecutiveSuccesses++;
      k.consecutiveFailures = 0;
      k.lastSuccessAt = now;
    }
  }

  function raise(s: AlertSignal): void {
    try {
      if (!isImmediateSignal(s.signal)) return;
      const now = clock();
      const key = `${s.signal}|${s.dependency ?? ""}|${s.operationId ?? ""}`;
      let e = immediate.get(key);
      if (e === undefined) {
        if (immediate.size >= MAX_IMMEDIATE_KEYS) _sweepImmediate(now);
        e = { firstAt: now, lastAt: now, count: 0, cooldownUntil: 0, requestIds: [] };
        if (immediate.size < MAX_IMMEDIATE_KEYS) immediate.set(key, e);
      }
      e.count++;
      e.lastAt = now;
      if (s.requestId !== undefined && e.requestIds.length < 3) e.requestIds.push(s.requestId);
      if (now < e.cooldownUntil) {
        counts.suppressed++;
        return;
      }
      e.cooldownUntil = now + t.cooldownMs;
      const entry = e;
      void _sharedCooldown(`${prefix}im|${key}`).then((mine) => {
        if (!mine) {
          counts.suppressed++;
          return;
        }
        const first = entry.firstAt;
        const count = entry.count;
        const requestIds = entry.requestIds;
        entry.count = 0;
        entry.requestIds = [];
        entry.firstAt = clock();
        _send({
          kind: "immediate",
          signal: s.signal,
          firstOccurrence: first,
          lastOccurrence: entry.lastAt,
          count: Math.max(count, s.count ?? 0),
          dependency: s.dependency,
          operation: s.operation,
          failureClass: s.failureClass,
          requestIds,
          operationId: s.operationId,
          providerId: s.providerId,
          code: s.code,
        });
      }).catch((e: unknown) => log.warn("alert_raise_failed", { error: describeError(e) }));
    } catch (e) {
      log.warn("alert_raise_failed", { error: describeError(e) });
    }
  }

  // -------------------------------------------------------------------------
  // Flush and evaluation
  // -------------------------------------------------------------------------

  function flush(): Promise<void> {
    flushing ??= _flush().finally(() => {
      flushing = null;
    });
    return flushing;
  }

  async function _flush(): Promise<void> {
    const due: Tracker[] = [];
    for (const byOp of trackers.values()) for (const k of byOp.values()) if (k.pCalls > 0 || k.incident) due.push(k);
    await Promise.all(due.map((k) => _evaluate(k).catch((e) => log.warn("alert_evaluation_failed", { error: describeError(e) }))));
    _sweepImmediate(clock());
  }

  async function _evaluate(k: Tracker): Promise<void> {
    const now = clock();
    const batch = _takeBatch(k);
    let view: View;
    try {
      view = await _shared(k, batch, now);
    } catch {
      view = _local(k, now);
    }
    // Recovery first: 5 consecutive successes end an open incident, even while the window's ratio
    // still holds old failures (the next generation's window starts empty).
    if (k.incident && view.consecutiveSuccesses >= t.recoverySuccesses) {
      const base = _base(k);
      let mine: boolean;
      try {
        mine = await coordination.releaseLease(`${base}|g${k.gen}|incident`, "open");
        if (mine) k.gen = await coordination.adjustInFlight(`${base}|gen`, 1, GEN_TTL_MS);
      } catch {
        mine = true; // the shared store cannot say: this process's own view decides
      }
      k.incident = false;
      k.cooldownUntil = 0;
      _resetWindow(k);
      const failures = view.windowFailures;
      const first = k.firstFailureAt ?? now;
      k.firstFailureAt = null;
      k.requestIds = [];
      if (!mine) return;
      _send({
        kind: "recovered",
        signal: "dependency_recovered",
        firstOccurrence: first,
        lastOccurrence: k.lastSuccessAt ?? now,
        count: failures,
        dependency: k.dependency,
        operation: k.operation,
      });
      return;
    }

    const fires =
      view.consecutiveFailures >= t.consecutiveFailures ||
      (view.windowCalls >= t.minimumCalls && view.windowFailures / view.windowCalls > t.failureRatio);
    if (fires) {
      k.incident = true;
      if (now < k.cooldownUntil) {
        if (batch.failures > 0) counts.suppressed++;
        return;
      }
      const base = _base(k);
      const mine = await _sharedCooldown(`${base}|g${k.gen}|cooldown`);
      if (!mine) {
        counts.suppressed++;
        k.cooldownUntil = now + Math.min(t.cooldownMs, BUCKET_MS);
        return;
      }
      k.cooldownUntil = now + t.cooldownMs;
      await coordination.acquireLease(`${base}|g${k.gen}|incident`, "open", GEN_TTL_MS).catch(() => false);
      _send({
        kind: "sustained_failure",
        signal: "dependency_sustained_failure",
        firstOccurrence: k.firstFailureAt ?? now,
        lastOccurrence: k.lastFailureAt ?? now,
        count: view.windowFailures,
        ratio: view.windowCalls > 0 ? view.windowFailures / view.windowCalls : undefined,
        dependency: k.dependency,
        operation: k.operation,
        failureClass: k.lastFailureClass ?? undefined,
        requestIds: k.requestIds,
      });
      return;
    }
  }

  /** The batch since the last flush, taken (the counters start over). */
  function _takeBatch(k: Tracker): Batch {
    const b: Batch = {
      calls: k.pCalls,
      failures: k.pFailures,
      successes: k.pSuccesses,
      trailingFailures: k.pTrailingFailures,
      trailingSuccesses: k.pTrailingSuccesses,
      sawSuccess: k.pSawSuccess,
      sawFailure: k.pSawFailure,
    };
    k.pCalls = k.pFailures = k.pSuccesses = k.pTrailingFailures = k.pTrailingSuccesses = 0;
    k.pSawSuccess = k.pSawFailure = false;
    return b;
  }

  /** Adds the batch to the shared counters and reads the shared view (one batch of counter updates). */
  async function _shared(k: Tracker, b: Batch, now: number): Promise<View> {
    const base = _base(k);
    const minute = Math.floor(now / BUCKET_MS);
    const windowTtl = t.windowMs + BUCKET_MS;
    const add = (key: string, delta: number, ttl: number) => coordination.adjustInFlight(key, delta, ttl);
    const streak = async (key: string, reset: boolean, trailing: number, total: number) => {
      if (!reset) return add(key, total, STREAK_TTL_MS);
      await add(key, RESET, STREAK_TTL_MS);
      return add(key, trailing, STREAK_TTL_MS);
    };
    const windowReads: Promise<number>[] = [];
    for (let i = 0; i < buckets; i++) {
      const m = minute - i;
      windowReads.push(add(`${base}|g${k.gen}|m${m}|c`, i === 0 ? b.calls : 0, windowTtl));
      windowReads.push(add(`${base}|g${k.gen}|m${m}|f`, i === 0 ? b.failures : 0, windowTtl));
    }
    const [cf, cs, gen, ...window] = await Promise.all([
      streak(`${base}|cf`, b.sawSuccess, b.trailingFailures, b.failures),
      streak(`${base}|cs`, b.sawFailure, b.trailingSuccesses, b.successes),
      add(`${base}|gen`, 0, GEN_TTL_MS),
      ...windowReads,
    ]);
    let calls = 0;
    let failures = 0;
    for (let i = 0; i < window.length; i += 2) {
      calls += window[i]!;
      failures += window[i + 1]!;
    }
    if (gen !== k.gen) {
      // Another process recovered this key: a new generation (its window starts empty).
      k.gen = gen;
      k.incident = false;
      k.cooldownUntil = 0;
    }
    return { consecutiveFailures: cf, consecutiveSuccesses: cs, windowCalls: calls, windowFailures: failures };
  }

  function _local(k: Tracker, now: number): View {
    const minute = Math.floor(now / BUCKET_MS);
    let calls = 0;
    let failures = 0;
    for (const b of k.ring) {
      if (b.minute > minute - buckets && b.minute <= minute) {
        calls += b.calls;
        failures += b.failures;
      }
    }
    return { consecutiveFailures: k.consecutiveFailures, consecutiveSuccesses: k.consecutiveSuccesses, windowCalls: calls, windowFailures: failures };
  }

  /** True when this process takes the shared cooldown (or the store cannot say: then it sends). */
  async function _sharedCooldown(key: string): Promise<boolean> {
    try {
      return await coordination.acquireLease(key, randomUUID(), t.cooldownMs);
    } catch {
      return true;
    }
  }

  function _base(k: Tracker): string {
    return (k.base ??= `${prefix}${k.dependency}|${k.operation}`);
  }

  function _sweepImmediate(now: number): void {
    for (const [key, e] of immediate) if (e.cooldownUntil <= now && e.count === 0) immediate.delete(key);
  }

  // -------------------------------------------------------------------------
  // Delivery
  // -------------------------------------------------------------------------

  type SendFields = Omit<AlertFields, "id" | "environment" | "runbookBase" | "firstOccurrence" | "lastOccurrence"> & {
    firstOccurrence: number;
    lastOccurrence: number;
  };

  function _send(f: SendFields): void {
    const alert = buildAlert({ ...f, id: randomUUID(), environment: o.environment, runbookBase });
    counts.sent++;
    const fields = alert as unknown as Record<string, unknown>;
    if (alert.kind === "recovered") log.event("gateway_alert", fields);
    else if (alert.severity === "critical") log.error("gateway_alert", fields);
    else log.warn("gateway_alert", fields);
    try {
      o.onAlert?.(alert);
    } catch {
      // metrics must not break delivery
    }
    if (!webhook) return;
    void queue.add(async () => {
      const r = await webhook.deliver(alert);
      lastDelivery = { at: new Date(clock()).toISOString(), outcome: r.ok ? "delivered" : "failed", alertId: alert.id };
      if (r.ok) return;
      counts.deliveryFailures++;
      log.error("chat_alert_delivery_failed", {
        alertId: alert.id,
        signal: alert.signal,
        attempts: r.attempts,
        failureClass: r.failureClass,
        upstreamStatus: r.upstreamStatus,
      });
      await _deadLetter(alert, r.attempts, { failureClass: r.failureClass, upstreamStatus: r.upstreamStatus });
    });
  }

  async function _deadLetter(alert: Alert, attempts: number, lastFailure: DeadLetter["lastFailure"]): Promise<void> {
    const at = clock();
    try {
      await letters.insert({ _id: alert.id, alert, status: "dead", attempts, lastFailure, deadAt: new Date(at).toISOString(), deadAtMs: at, replayedAt: null });
      try {
        o.onDeadLetter?.(alert);
      } catch {
        // metrics must not break delivery
      }
    } catch (e) {
      log.error("chat_alert_dead_letter_unwritable", { alertId: alert.id, signal: alert.signal, error: describeError(e) });
    }
  }

  async function deadLetters(q: { limit: number; cursor?: string | null; status?: "dead" | "replayed" }) {
    const filter: Filter = q.status ? { status: q.status } : {};
    const page = await letters.find(filter, { sort: [{ field: "deadAtMs", direction: -1 }], limit: q.limit, cursor: q.cursor ?? null });
    return { items: page.items.map(_letterView), nextCursor: page.nextCursor };
  }

  async function replay(id: string): Promise<{ letter: DeadLetter; delivered: boolean } | null> {
    const doc = await letters.get(id);
    if (!doc) return null;
    if (doc.status === "replayed") return { letter: _letterView(doc), delivered: true };
    const r = webhook ? await webhook.attempt(doc.alert) : ({ ok: false, failureClass: "not_configured", upstreamStatus: null } as const);
    lastDelivery = { at: new Date(clock()).toISOString(), outcome: r.ok ? "delivered" : "failed", alertId: doc.alert.id };
    const updated = r.ok
      ? await letters.findOneAndUpdate({ _id: id, status: "dead" }, { $set: { status: "replayed", replayedAt: new Date(clock()).toISOString() }, $inc: { attempts: 1 } })
      : await letters.findOneAndUpdate(
          { _id: id, status: "dead" },
          { $set: { lastFailure: { failureClass: r.failureClass, upstreamStatus: r.upstreamStatus } }, $inc: { attempts: 1 } },
        );
    const now = updated ?? (await letters.get(id));
    if (!now) return null;
    log.event("chat_alert_replayed", { alertId: id, delivered: r.ok, ...(r.ok ? {} : { failureClass: r.failureClass }) });
    return { letter: _letterView(now), delivered: r.ok || now.status === "replayed" };
  }

  async function status(): Promise<AlertChannelStatus> {
    let dead: number | null = null;
    try {
      dead = await letters.count({ status: "dead" });
    } catch {
      dead = null;
    }
    const failing = lastDelivery?.outcome === "failed";
    return {
      status: dead === null ? "unknown" : failing ? "unhealthy" : "healthy",
      channels: webhook ? ["log", "webhook"] : ["log"],
      webhook: { configured: webhook !== null, lastDelivery, pending: queue.size + queue.pending },
      deadLetters: dead,
      ...counts,
    };
  }

  function observations(): DependencyObservation[] {
    const out: DependencyObservation[] = [];
    for (const byOp of trackers.values())
      for (const k of byOp.values())
        out.push({
          dependency: k.dependency,
          operation: k.operation,
          lastSuccessAt: k.lastSuccessAt === null ? null : new Date(k.lastSuccessAt).toISOString(),
          lastFailureAt: k.lastFailureAt === null ? null : new Date(k.lastFailureAt).toISOString(),
          lastFailureClass: k.lastFailureClass,
          consecutiveFailures: k.consecutiveFailures,
          incident: k.incident,
        });
    return out;
  }

  async function drain(): Promise<void> {
    await queue.onIdle();
  }

  const engine: AlertEngine = {
    observeCall,
    raise,
    deadLetters,
    replay,
    status,
    observations,
    flush,
    drain,
    async close() {
      if (timer) clearInterval(timer);
      if (coarseTimer) clearInterval(coarseTimer);
      timer = coarseTimer = coarse = null;
    },
    worker: {
      name: "alert-thresholds",
      async start() {
        if (timer) return;
        timer = setInterval(() => void flush(), flushMs);
        timer.unref();
        if (!o.clock) {
          coarse = Date.now();
          coarseTimer = setInterval(() => (coarse = Date.now()), COARSE_CLOCK_MS);
          coarseTimer.unref();
        }
      },
      async stop() {
        if (timer) clearInterval(timer);
        if (coarseTimer) clearInterval(coarseTimer);
        timer = coarseTimer = coarse = null;
        await flush().catch(() => undefined);
        // Deliveries in progress get a bounded wait (5 attempts with backoff can take a while).
        await Promise.race([queue.onIdle(), new Promise((r) => setTimeout(r, 5_000).unref())]);
      },
    },
  };
  return engine;
}

// --- Internal helpers ---

interface Bucket {
  minute: number;
  calls: number;
  failures: number;
}

interface Tracker {
  dependency: string;
  operation: string;
  base: string | undefined;
  ring: Bucket[];
  // since the last flush
  pCalls: number;
  pFailures: number;
  pSuccesses: number;
  pTrailingFailures: number;
  pTrailingSuccesses: number;
  pSawSuccess: boolean;
  pSawFailure: boolean;
  // this process's running view
  consecutiveFailures: number;
  consecutiveSuccesses: number;
  firstFailureAt: number | null;
  lastFailureAt: number | null;
  lastSuccessAt: number | null;
  lastFailureClass: string | null;
  requestIds: string[];
  gen: number;
  incident: boolean;
  cooldownUntil: number;
}

interface Batch {
  calls: number;
  failures: number;
  successes: number;
  trailingFailures: number;
  trailingSuccesses: number;
  sawSuccess: boolean;
  sawFailure: boolean;
}

interface View {
  consecutiveFailures: number;
  consecutiveSuccesses: number;
  windowCalls: number;
  windowFailures: number;
}

interface ImmediateEntry {
  firstAt: number;
  lastAt: number;
  count: number;
  cooldownUntil: number;
  requestIds: string[];
}

interface LetterDoc extends Doc {
  alert: Alert;
  status: "dead" | "replayed";
  attempts: number;
  lastFailure: DeadLetter["lastFailure"];
  deadAt: string;
  deadAtMs: number;
  replayedAt: string | null;
}

function _tracker(dependency: string, operation: string, buckets: number): Tracker {
  return {
    dependency,
    operation,
    base: undefined,
    ring: Array.from({ length: buckets }, () => ({ minute: -1, calls: 0, failures: 0 })),
    pCalls: 0,
    pFailures: 0,
    pSuccesses: 0,
    pTrailingFailures: 0,
    pTrailingSuccesses: 0,
    pSawSuccess: false,
    pSawFailure: false,
    consecutiveFailures: 0,
    consecutiveSuccesses: 0,
    firstFailureAt: null,
    lastFailureAt: null,
    lastSuccessAt: null,
    lastFailureClass: null,
    requestIds: [],
    gen: 0,
    incident: false,
    cooldownUntil: 0,
  };
}

function _bucket(k: Tracker, now: number): Bucket {
  const minute = Math.floor(now / BUCKET_MS);
  const b = k.ring[minute % k.ring.length]!;
  if (b.minute !== minute) {
    b.minute = minute;
    b.calls = 0;
    b.failures = 0;
  }
  return b;
}

function _resetWindow(k: Tracker): void {
  for (const b of k.ring) {
    b.minute = -1;
    b.calls = 0;
    b.failures = 0;
  }
}

function _letterView(d: LetterDoc): DeadLetter {
  return { id: d._id, alert: d.alert, status: d.status, attempts: d.attempts, lastFailure: d.lastFailure, deadAt: d.deadAt, replayedAt: d.replayedAt };
}
