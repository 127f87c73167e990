/**
 * The last hour of this process's traffic, per minute, for the overview's charts: requests and
 * answers with a public error code, read from the request histogram the gateway already keeps in
 * memory (core/metrics.ts) — nothing is added to the request path. A worker samples the totals
 * every `sampleMs`; each minute's figure is the difference between the last totals seen in it and
 * in the minute before. Per process: behind a load balancer each process draws its own share.
 */
import type { GatewayMetrics } from "../../core/metrics.ts";
import type { Worker } from "../../core/plugin.ts";

export const HISTORY_MINUTES = 60;

export interface MinutePoint {
  /** Epoch ms of the minute's start. */
  at: number;
  requests: number;
  errors: number;
}

export interface TrafficHistory {
  /** Reads the totals now (the worker calls it; a page calls it before drawing). */
  sample(): Promise<void>;
  /** The last HISTORY_MINUTES minutes, oldest first (the current minute last). */
  minutes(): MinutePoint[];
  readonly worker: Worker;
}

export function createTrafficHistory(metrics: GatewayMetrics, now: () => number, sampleMs = 15_000): TrafficHistory {
  // minute index → the totals last seen during that minute.
  const seen = new Map<number, { requests: number; errors: number }>();
  let timer: NodeJS.Timeout | null = null;
  const sample = async () => {
    const totals = await _totals(metrics);
    const minute = Math.floor(now() / 60_000);
    seen.set(minute, totals);
    for (const m of seen.keys()) if (m < minute - HISTORY_MINUTES - 1) seen.delete(m);
  };
  return {
    sample,
    minutes() {
      const current = Math.floor(now() / 60_000);
      const out: MinutePoint[] = [];
      let before = _latestAtOrBefore(seen, current - HISTORY_MINUTES);
      for (let m = current - HISTORY_MINUTES + 1; m <= current; m++) {
        const at = seen.get(m) ?? before;
        // The totals start at zero with the process: the first minute's baseline is zero.
        out.push({ at: m * 60_000, requests: at ? at.requests - (before?.requests ?? 0) : 0, errors: at ? at.errors - (before?.errors ?? 0) : 0 });
        before = at;
      }
      return out;
    },
    worker: {
      name: "console-traffic",
      async start() {
        await sample();
        timer = setInterval(() => void sample().catch(() => undefined), sampleMs);
        timer.unref();
      },
      async stop() {
        if (timer) clearInterval(timer);
        timer = null;
      },
    },
  };
}

// --- Internal helpers ---

async function _totals(metrics: GatewayMetrics): Promise<{ requests: number; errors: number }> {
  const m = await metrics.requests.get();
  let requests = 0;
  let errors = 0;
  for (const s of m.values) {
    if (!s.metricName.endsWith("_count")) continue;
    requests += s.value;
    if (s.labels.code !== "OK") errors += s.value;
  }
  return { requests, errors };
}

function _latestAtOrBefore(seen: Map<number, { requests: number; errors: number }>, minute: number): { requests: number; errors: number } | undefined {
  let best = -Infinity;
  for (const m of seen.keys()) if (m <= minute && m > best) best = m;
  return best === -Infinity ? undefined : seen.get(best);
}
