/**
 * The request path of sustained-failure alerts: `observeCall` updates this process's counters for a
 * dependency + operation (two Map lookups, a few increments, no allocation, no await), and the
 * helpers the flush uses to take a batch and to read the local window.
 */
import { BUCKET_MS, type AlertEngineState, type Batch, type Bucket, type Tracker, type View } from "./state.ts";

export function observeCall(
  s: AlertEngineState,
  dependency: string,
  operation: string,
  failed: boolean,
  detail?: { failureClass?: string; requestId?: string },
): void {
  let byOp = s.trackers.get(dependency);
  if (byOp === undefined) {
    byOp = new Map();
    s.trackers.set(dependency, byOp);
  }
  let k = byOp.get(operation);
  if (k === undefined) {
    k = _tracker(dependency, operation, s.buckets);
    byOp.set(operation, k);
  }
  const now = s.callClock();
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

/** The batch since the last flush, taken (the counters start over). */
export function takeBatch(k: Tracker): Batch {
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

/** This process's own view of a key (when the coordination store cannot answer). */
export function localView(k: Tracker, now: number, buckets: number): View {
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

/** Empties the local window (a new incident generation). */
export function resetWindow(k: Tracker): void {
  for (const b of k.ring) {
    b.minute = -1;
    b.calls = 0;
    b.failures = 0;
  }
}

// --- Internal helpers ---

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
