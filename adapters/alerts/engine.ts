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
 *
 * The parts: state (shared state and data types), tracker (request path), shared (coordination
 * keys), thresholds (flush and evaluation), immediate (`raise`), delivery (log, webhook, dead
 * letter), dead-letters (list, replay), status, worker; types holds the public types.
 */
import { listDeadLetters, replayDeadLetter } from "./dead-letters.ts";
import { raiseSignal } from "./immediate.ts";
import { createAlertState } from "./state.ts";
import { channelStatus, observations } from "./status.ts";
import { flush } from "./thresholds.ts";
import { observeCall } from "./tracker.ts";
import { createAlertWorker, stopTimers } from "./worker.ts";
import type { AlertEngine, AlertEngineOptions } from "./types.ts";

export { ALERT_THRESHOLDS, DEAD_LETTERS_COLLECTION, type AlertEngine, type AlertEngineOptions, type AlertThresholds, type AlertWorker } from "./types.ts";

export function createAlertEngine(o: AlertEngineOptions): AlertEngine {
  const s = createAlertState(o);
  return {
    observeCall: (dependency, operation, failed, detail) => observeCall(s, dependency, operation, failed, detail),
    raise: (signal) => raiseSignal(s, signal),
    deadLetters: (q) => listDeadLetters(s, q),
    replay: (id) => replayDeadLetter(s, id),
    status: () => channelStatus(s),
    observations: () => observations(s),
    flush: () => flush(s),
    drain: async () => {
      await s.queue.onIdle();
    },
    async close() {
      stopTimers(s);
    },
    worker: createAlertWorker(s),
  };
}
