/**
 * The alert engine's worker: flushes every `flushMs` and, without an injected clock, refreshes the
 * request path's coarse clock every 250 ms. Stopping flushes once more and gives deliveries in
 * progress a bounded wait.
 */
import { COARSE_CLOCK_MS, type AlertEngineState } from "./state.ts";
import { flush } from "./thresholds.ts";
import type { AlertWorker } from "./types.ts";

export function createAlertWorker(s: AlertEngineState): AlertWorker {
  return {
    name: "alert-thresholds",
    async start() {
      if (s.timer) return;
      s.timer = setInterval(() => void flush(s), s.flushMs);
      s.timer.unref();
      if (!s.o.clock) {
        s.coarse = Date.now();
        s.coarseTimer = setInterval(() => (s.coarse = Date.now()), COARSE_CLOCK_MS);
        s.coarseTimer.unref();
      }
    },
    async stop() {
      stopTimers(s);
      await flush(s).catch(() => undefined);
      // Deliveries in progress get a bounded wait (5 attempts with backoff can take a while).
      await Promise.race([s.queue.onIdle(), new Promise((r) => setTimeout(r, 5_000).unref())]);
    },
  };
}

/** Clears the worker's timers (the request path's clock is read each time again). */
export function stopTimers(s: AlertEngineState): void {
  if (s.timer) clearInterval(s.timer);
  if (s.coarseTimer) clearInterval(s.coarseTimer);
  s.timer = s.coarseTimer = s.coarse = null;
}
