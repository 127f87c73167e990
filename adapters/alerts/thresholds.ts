/**
 * Sustained-failure evaluation, run by the worker every `flushMs`: each key that moved (or has an
 * open incident) adds its batch to the shared counters and is evaluated on the shared totals (this
 * process's own when the store cannot answer). Recovery is checked first; then whether the key fires.
 */
import { describeError } from "../../core/log.ts";
import { sendAlert } from "./delivery.ts";
import { sweepImmediate } from "./immediate.ts";
import { baseKey, sharedCooldown, sharedView } from "./shared.ts";
import { BUCKET_MS, GEN_TTL_MS, type AlertEngineState, type Batch, type Tracker, type View } from "./state.ts";
import { localView, resetWindow, takeBatch } from "./tracker.ts";

/** One flush at a time: a call during a flush shares it. */
export function flush(s: AlertEngineState): Promise<void> {
  s.flushing ??= _flush(s).finally(() => {
    s.flushing = null;
  });
  return s.flushing;
}

// --- Internal helpers ---

async function _flush(s: AlertEngineState): Promise<void> {
  const due: Tracker[] = [];
  for (const byOp of s.trackers.values()) for (const k of byOp.values()) if (k.pCalls > 0 || k.incident) due.push(k);
  await Promise.all(due.map((k) => _evaluate(s, k).catch((e) => s.log.warn("alert_evaluation_failed", { error: describeError(e) }))));
  sweepImmediate(s, s.clock());
}

async function _evaluate(s: AlertEngineState, k: Tracker): Promise<void> {
  const { t } = s;
  const now = s.clock();
  const batch = takeBatch(k);
  let view: View;
  try {
    view = await sharedView(s, k, batch, now);
  } catch {
    view = localView(k, now, s.buckets);
  }
  // Recovery first: 5 consecutive successes end an open incident, even while the window's ratio
  // still holds old failures (the next generation's window starts empty).
  if (k.incident && view.consecutiveSuccesses >= t.recoverySuccesses) return _recover(s, k, view, now);
  const fires =
    view.consecutiveFailures >= t.consecutiveFailures ||
    (view.windowCalls >= t.minimumCalls && view.windowFailures / view.windowCalls > t.failureRatio);
  if (fires) return _fire(s, k, view, batch, now);
}

/** Ends the incident; the process whose release of the incident lease succeeds sends the one recovery notification. */
async function _recover(s: AlertEngineState, k: Tracker, view: View, now: number): Promise<void> {
  const base = baseKey(s, k);
  let mine: boolean;
  try {
    mine = await s.coordination.releaseLease(`${base}|g${k.gen}|incident`, "open");
    if (mine) k.gen = await s.coordination.adjustInFlight(`${base}|gen`, 1, GEN_TTL_MS);
  } catch {
    mine = true; // the shared store cannot say: this process's own view decides
  }
  k.incident = false;
  k.cooldownUntil = 0;
  resetWindow(k);
  const failures = view.windowFailures;
  const first = k.firstFailureAt ?? now;
  k.firstFailureAt = null;
  k.requestIds = [];
  if (!mine) return;
  sendAlert(s, {
    kind: "recovered",
    signal: "dependency_recovered",
    firstOccurrence: first,
    lastOccurrence: k.lastSuccessAt ?? now,
    count: failures,
    dependency: k.dependency,
    operation: k.operation,
  });
}

/** An incident (new or going on): notified once per cooldown, by the process that takes the shared cooldown. */
async function _fire(s: AlertEngineState, k: Tracker, view: View, batch: Batch, now: number): Promise<void> {
  k.incident = true;
  if (now < k.cooldownUntil) {
    if (batch.failures > 0) s.counts.suppressed++;
    return;
  }
  const base = baseKey(s, k);
  const mine = await sharedCooldown(s, `${base}|g${k.gen}|cooldown`);
  if (!mine) {
    s.counts.suppressed++;
    k.cooldownUntil = now + Math.min(s.t.cooldownMs, BUCKET_MS);
    return;
  }
  k.cooldownUntil = now + s.t.cooldownMs;
  await s.coordination.acquireLease(`${base}|g${k.gen}|incident`, "open", GEN_TTL_MS).catch(() => false);
  sendAlert(s, {
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
}
