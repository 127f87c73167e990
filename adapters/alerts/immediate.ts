/**
 * Immediate signals (`raise`): no threshold; deduplicated per (signal, dependency, operation id) by
 * the cooldown, first in process, then shared through the coordination store; the occurrences in
 * between are counted into the next notification.
 */
import { describeError } from "../../core/log.ts";
import type { AlertSignal } from "../ports.ts";
import { isImmediateSignal } from "./context.ts";
import { sendAlert } from "./delivery.ts";
import { sharedCooldown } from "./shared.ts";
import { MAX_IMMEDIATE_KEYS, type AlertEngineState, type ImmediateEntry } from "./state.ts";

export function raiseSignal(s: AlertEngineState, sig: AlertSignal): void {
  try {
    if (!isImmediateSignal(sig.signal)) return;
    const now = s.clock();
    const key = `${sig.signal}|${sig.dependency ?? ""}|${sig.operationId ?? ""}`;
    let e = s.immediate.get(key);
    if (e === undefined) {
      if (s.immediate.size >= MAX_IMMEDIATE_KEYS) sweepImmediate(s, now);
      e = { firstAt: now, lastAt: now, count: 0, cooldownUntil: 0, requestIds: [] };
      if (s.immediate.size < MAX_IMMEDIATE_KEYS) s.immediate.set(key, e);
    }
    e.count++;
    e.lastAt = now;
    if (sig.requestId !== undefined && e.requestIds.length < 3) e.requestIds.push(sig.requestId);
    if (now < e.cooldownUntil) {
      s.counts.suppressed++;
      return;
    }
    e.cooldownUntil = now + s.t.cooldownMs;
    const entry = e;
    void sharedCooldown(s, `${s.prefix}im|${key}`)
      .then((mine) => _notify(s, sig, entry, mine))
      .catch((err: unknown) => s.log.warn("alert_raise_failed", { error: describeError(err) }));
  } catch (err) {
    s.log.warn("alert_raise_failed", { error: describeError(err) });
  }
}

/** Forgets the keys whose cooldown is over and that have nothing left to report. */
export function sweepImmediate(s: AlertEngineState, now: number): void {
  for (const [key, e] of s.immediate) if (e.cooldownUntil <= now && e.count === 0) s.immediate.delete(key);
}

// --- Internal helpers ---

/** Sends the signal with the occurrences counted since the last notification (when this process took the cooldown). */
function _notify(s: AlertEngineState, sig: AlertSignal, entry: ImmediateEntry, mine: boolean): void {
  if (!mine) {
    s.counts.suppressed++;
    return;
  }
  const first = entry.firstAt;
  const count = entry.count;
  const requestIds = entry.requestIds;
  entry.count = 0;
  entry.requestIds = [];
  entry.firstAt = s.clock();
  sendAlert(s, {
    kind: "immediate",
    signal: sig.signal,
    firstOccurrence: first,
    lastOccurrence: entry.lastAt,
    count: Math.max(count, sig.count ?? 0),
    dependency: sig.dependency,
    operation: sig.operation,
    failureClass: sig.failureClass,
    requestIds,
    operationId: sig.operationId,
    providerId: sig.providerId,
    code: sig.code,
  });
}
