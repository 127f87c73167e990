/**
 * The last hour of this process's traffic, per minute, for the overview's charts: requests and
 * answers with a public error code (the request histogram), and signs (the wallet's new sign-fee
 * debits, Pass-through and Stored alike, with their reversals), read from the counters the gateway
 * already keeps in memory (core/metrics.ts) — nothing is added to the request path. A worker samples
 * the totals every `sampleMs`; each minute's figure is the difference between the last totals seen
 * in it and in the minute before. Per process: behind a load balancer each process draws its own
 * share. The Stored backlog (invoices with work due, and frozen ones) is a shared figure: the worker
 * reads it once a minute (two indexed counts) and keeps the last hour in memory.
 */
import type { GatewayMetrics } from "../../core/metrics.ts";
import type { Worker } from "../../core/plugin.ts";

export const HISTORY_MINUTES = 60;

export interface MinutePoint {
  /** Epoch ms of the minute's start. */
  at: number;
  requests: number;
  errors: number;
  /** New sign-fee debits (each billed sign attempt). */
  signs: number;
  /** Sign fees given back (the regulator refused, or was not called). */
  reversals: number;
  /** Stored invoices with work due at the minute's last reading; null when none was taken. */
  backlog: number | null;
  /** Frozen Stored invoices at the minute's last reading; null when none was taken. */
  frozen: number | null;
}

/** Reads the Stored backlog (the worker calls it once a minute). */
export type BacklogReader = () => Promise<{ waiting: number; frozen: number }>;

export interface TrafficHistory {
  /** Reads the totals now (the worker calls it; a page calls it before drawing). */
  sample(): Promise<void>;
  /** The last HISTORY_MINUTES minutes, oldest first (the current minute last). */
  minutes(): MinutePoint[];
  readonly worker: Worker;
}

export function createTrafficHistory(metrics: GatewayMetrics, now: () => number, sampleMs = 15_000, backlog?: BacklogReader): TrafficHistory {
  // minute index → the totals last seen during that minute; the backlog read in that minute.
  const seen = new Map<number, _Totals>();
  const backlogs = new Map<number, { waiting: number; frozen: number }>();
  let timer: NodeJS.Timeout | null = null;
  const sample = async () => {
    const totals = await _totals(metrics);
    const minute = Math.floor(now() / 60_000);
    seen.set(minute, totals);
    for (const m of seen.keys()) if (m < minute - HISTORY_MINUTES - 1) seen.delete(m);
  };
  const sampleBacklog = async () => {
    const minute = Math.floor(now() / 60_000);
    if (!backlog || backlogs.has(minute)) return;
    backlogs.set(minute, await backlog());
    for (const m of backlogs.keys()) if (m <= minute - HISTORY_MINUTES) backlogs.delete(m);
  };
  const tick = () => Promise.all([sample(), sampleBacklog().catch(() => undefined)]);
  return {
    sample,
    minutes() {
      const current = Math.floor(now() / 60_000);
      const out: MinutePoint[] = [];
      let before = _latestAtOrBefore(seen, current - HISTORY_MINUTES);
      for (let m = current - HISTORY_MINUTES + 1; m <= current; m++) {
        const at = seen.get(m) ?? before;
        // The totals start at zero with the process: the first minute's baseline is zero.
        const diff = (k: keyof _Totals) => (at ? at[k] - (before?.[k] ?? 0) : 0);
        const b = backlogs.get(m);
        out.push({ at: m * 60_000, requests: diff("requests"), errors: diff("errors"), signs: diff("signs"), reversals: diff("reversals"), backlog: b?.waiting ?? null, frozen: b?.frozen ?? null });
        before = at;
      }
      return out;
    },
    worker: {
      name: "console-traffic",
      async start() {
        await tick();
        timer = setInterval(() => void tick().catch(() => undefined), sampleMs);
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

interface _Totals {
  requests: number;
  errors: number;
  signs: number;
  reversals: number;
}

async function _totals(metrics: GatewayMetrics): Promise<_Totals> {
  // The histogram's counts only: its get() writes every bucket of every series (milliseconds).
  const wallet = await metrics.walletMovements.get();
  let requests = 0;
  let errors = 0;
  for (const s of metrics.requests.counts()) {
    requests += s.count;
    if (s.labels.code !== "OK") errors += s.count;
  }
  const moved = (type: string) => wallet.values.filter((s) => s.labels.type === type).reduce((a, s) => a + s.value, 0);
  return { requests, errors, signs: moved("debit"), reversals: moved("reversal") };
}

function _latestAtOrBefore(seen: Map<number, _Totals>, minute: number): _Totals | undefined {
  let best = -Infinity;
  for (const m of seen.keys()) if (m <= minute && m > best) best = m;
  return best === -Infinity ? undefined : seen.get(best);
}
