/**
 * The SQLite engine's goals (docs/bench.md "SQLite engine"), judged from the rows of one bench run
 * and printed under the table beside issue 12's (never asserted). A goal whose scenario did not
 * run is left out; one measured below the size it is stated at says so.
 */
import type { Goal } from "./report.ts";
import type { ScenarioResult } from "./run.ts";

export const ENGINE_GOALS = {
  /** Billed Pass-through signs on the SQLite file, fsync on, 64 connections. */
  signsPerSec: 3_000,
  signP99Ms: 50,
  /** The file (fsync on) against the in-memory store in the same run: CPU per sign, at most this ratio. */
  durabilityCpuRatio: 1.1,
  /** Stored intake (202) and one processor draining to signed. */
  intakePerSec: 3_000,
  intakeP99Ms: 50,
  processorPerSec: 500,
  /** RSS (after a full collection) after 1 000 000 signs, and its growth since 100 000. */
  rssMiB: 150,
  rssGrowth: 0.1,
  /** Every list query at 1 000 000 documents. */
  queryP99Ms: 20,
  /** `npm start` to listening with a 1 GB database. */
  readyMs: 3_000,
} as const;

export function evaluateEngineGoals(rows: readonly ScenarioResult[]): Goal[] {
  const goals: Goal[] = [];
  const G = ENGINE_GOALS;
  const sign = rows.find((r) => r.scenario === "sign-sqlite");
  if (sign) {
    goals.push({
      name: "billed signs on the SQLite file (fsync on)",
      measured: `${_n(sign.requestsPerSec)} signs/s, p99 ${sign.latency.p99} ms`,
      target: `≥ ${_n(G.signsPerSec)} signs/s, p99 ≤ ${G.signP99Ms} ms at 64 connections`,
      met: sign.requestsPerSec >= G.signsPerSec && sign.latency.p99 <= G.signP99Ms,
    });
  }
  const memory = rows.find((r) => r.scenario === "sign-memory");
  const durability = sign && memory ? _durability(sign, memory) : undefined;
  if (durability) goals.push(durability);
  const stored = rows.find((r) => r.scenario === "stored");
  if (stored) {
    const drain = stored.extra?.processorInvoicesPerSec ?? Number.NaN;
    goals.push({
      name: "Stored intake and one processor (SQLite file)",
      measured: `intake ${_n(stored.requestsPerSec)}/s, p99 ${stored.latency.p99} ms; processor ${_n(drain)} invoices/s`,
      target: `intake ≥ ${_n(G.intakePerSec)}/s, p99 ≤ ${G.intakeP99Ms} ms; processor ≥ ${G.processorPerSec}/s`,
      met: stored.requestsPerSec >= G.intakePerSec && stored.latency.p99 <= G.intakeP99Ms && drain >= G.processorPerSec,
    });
  }
  // Signs through HTTP all the way (sign-history), or a seeded history and the last signs through HTTP (sign-history-seeded).
  const marks = rows.filter((r) => (r.scenario === "sign-history" || r.scenario === "sign-history-seeded") && r.extra?.gcRssMiB !== undefined);
  if (marks.length > 0) {
    const last = marks[marks.length - 1]!;
    const first = marks[0]!;
    const growth = last.extra!.gcRssMiB! / first.extra!.gcRssMiB! - 1;
    goals.push({
      name: `gateway RSS after ${_n(last.extra!.signs!)} signs`,
      measured: marks.map((m) => `${_n(m.extra!.signs!)}: ${m.extra!.gcRssMiB} MiB (live heap ${m.extra!.liveHeapMiB} MiB)`).join(", ") + ` (+${(growth * 100).toFixed(0)} %)`,
      target: `≤ ${G.rssMiB} MiB after a full GC, ≤ +${G.rssGrowth * 100} % from the first mark${last.extra!.signs! < 1_000_000 ? " (at 1 000 000 signs; this run had fewer)" : ""}`,
      met: last.extra!.gcRssMiB! <= G.rssMiB && growth <= G.rssGrowth,
    });
  }
  for (const [scenario, size, what] of [["va-list", "accounts", "virtual-account list"], ["invoices-list", "invoices", "GET /invoices"]] as const) {
    const row = rows.find((r) => r.scenario === scenario);
    if (!row) continue;
    const n = row.extra?.[size] ?? 0;
    goals.push({
      name: `${what} at ${_n(n)} ${size}, every query`,
      measured: `worst query p99 ${(row.extra?.worstP99Ms ?? Number.NaN).toFixed(1)} ms`,
      target: `p99 ≤ ${G.queryP99Ms} ms${n < 1_000_000 ? " (at 1 000 000; this run had fewer)" : ""}`,
      met: (row.extra?.worstP99Ms ?? Number.POSITIVE_INFINITY) <= G.queryP99Ms,
    });
  }
  const ready = rows.find((r) => r.scenario === "start-ready");
  if (ready) {
    const mb = ready.extra?.databaseMiB ?? 0;
    goals.push({
      name: `npm start on a ${_n(mb)} MiB database`,
      measured: `listening after ${ready.extra?.worstReadyMs} ms (worst run; on an empty database ${ready.extra?.emptyWorstReadyMs} ms)`,
      target: `≤ ${G.readyMs} ms${mb < 1000 ? " (at 1 GB; this run had less)" : ""}`,
      met: (ready.extra?.worstReadyMs ?? Number.POSITIVE_INFINITY) <= G.readyMs,
    });
  }
  return goals;
}

// --- Internal helpers ---

/**
 * "No regression for durability": the billed sign on the file (WAL, fsync per commit) against the
 * same sign on SQLite in memory, run one after the other in this run. CPU per sign is compared,
 * each divided by the simulator's CPU per sign in its own leg (the same work in both, so the ratio
 * carries the machine's speed as it moved between the legs).
 */
function _durability(file: ScenarioResult, memory: ScenarioResult): Goal | undefined {
  const cpu = (r: ScenarioResult) => {
    const [own, simulator] = [r.cpuUsPerRequest ?? 0, r.extra?.simulatorCpuUs ?? 0];
    return own > 0 && simulator > 0 ? own / simulator : Number.NaN;
  };
  const ratio = cpu(file) / cpu(memory);
  if (!Number.isFinite(ratio)) return undefined;
  return {
    name: "durability's cost per billed sign (file, fsync on, against SQLite in memory)",
    measured: `${ratio.toFixed(2)}× the CPU per sign (${_n(file.cpuUsPerRequest!)} against ${_n(memory.cpuUsPerRequest!)} µs; ${_n(file.requestsPerSec)} against ${_n(memory.requestsPerSec)} signs/s)`,
    target: `≤ ${ENGINE_GOALS.durabilityCpuRatio}× (CPU per sign, each leg divided by its simulator's)`,
    met: ratio <= ENGINE_GOALS.durabilityCpuRatio,
  };
}

function _n(x: number): string {
  return Number.isFinite(x) ? Math.round(x).toLocaleString("en-US") : "n/a";
}
