/**
 * Scenario "sign-history" (opt-in: `npm run bench -- --only sign-history`; ~10 minutes at the
 * default marks): does the gateway's memory grow with its history? One compiled gateway on the
 * embedded default (the SQLite file, every acknowledgement after its commit's fsync), billed
 * Pass-through signs from 64 connections (BENCH_CONNECTIONS) into one wallet, in stages up to each
 * mark of BENCH_SIGN_HISTORY (default "100000,1000000" measured signs, after BENCH_SIGN_WARMUP,
 * default 2 000). At each mark: the stage's signs/s and p99, the gateway's RSS, then RSS and the
 * live heap after a full collection (through the inspector). Every 201 must have taken one fee.
 *
 * Goal (docs/bench.md "SQLite engine"): RSS ≤ 150 MiB after 1 000 000 signs, and within +10 % of
 * its value after 100 000 (the sign records kept 30 days live in the database, not in the heap).
 *
 *   npm run bench -- --only sign-history
 *   BENCH_SIGN_HISTORY=20000,200000 npm run bench -- --only sign-history
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectGarbage, processRss } from "../processes.ts";
import { envInt } from "../report.ts";
import type { BenchScenario, ScenarioOutcome, ScenarioResult } from "../run.ts";
import { creditDemo, demoBalanceKobo, FEE_KOBO, gatewayHeap, loadSigns, onboardDemo, signInvoiceFactory } from "./sign-gateway.ts";
import { startSignGateway } from "./sign-process.ts";

export interface HistoryMark {
  /** Measured signs so far. */
  signs: number;
  /** The stage that ended at this mark: signs/s and latency (ms). */
  signsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  rssMiB: number;
  gcRssMiB: number;
  liveHeapMiB: number;
}

export const signHistoryScenario: BenchScenario = {
  names: ["sign-history"],
  optIn: true,
  async run({ env, progress }) {
    const marks = (env.BENCH_SIGN_HISTORY ?? "100000,1000000").split(",").map((m) => envInt(m.trim(), 0, 10, "BENCH_SIGN_HISTORY"));
    if (marks.some((m, i) => i > 0 && m <= marks[i - 1]!)) throw new Error("bench: BENCH_SIGN_HISTORY must be increasing");
    const warmup = envInt(env.BENCH_SIGN_WARMUP, 2_000, 0, "BENCH_SIGN_WARMUP");
    const connections = envInt(env.BENCH_CONNECTIONS, 64, 1, "BENCH_CONNECTIONS");
    return _outcome(await runSignHistory(marks, warmup, connections, progress));
  },
};

/** Runs the stages; returns one entry per mark and the problems seen (non-2xx, errors, a wrong wallet). */
export async function runSignHistory(marks: readonly number[], warmup: number, connections: number, progress: (line: string) => void): Promise<{ marks: HistoryMark[]; problems: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-sign-history-"));
  const running = await startSignGateway({ store: "sqlite", dir }).catch((e: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  });
  try {
    const { url, child, output } = running.gateway;
    const total = marks[marks.length - 1]!;
    const sub = await onboardDemo(url);
    await creditDemo(url, ((total + warmup) * FEE_KOBO) / 100);
    const invoices = signInvoiceFactory(sub);
    const problems: string[] = [];
    if (warmup > 0) await loadSigns(url, invoices, warmup, connections);
    const before = await demoBalanceKobo(url);
    const out: HistoryMark[] = [];
    let done = 0;
    let ok = 0;
    for (const mark of marks) {
      progress(`sign-history: signs ${done} → ${mark} (-c ${connections}, SQLite file, gateway pid ${child.pid})`);
      const run = await loadSigns(url, invoices, mark - done, connections);
      if (run.non2xx > 0 || run.errors > 0) problems.push(`sign-history: ${run.non2xx} non-2xx (first ${run.firstBad}) and ${run.errors} errors before ${mark}`);
      ok += run.status2xx;
      done = mark;
      const rss = processRss(child.pid!).rssMiB;
      await collectGarbage(output);
      const heap = await gatewayHeap(url);
      const m: HistoryMark = {
        signs: mark,
        signsPerSec: run.status2xx / run.seconds,
        p50Ms: run.latency.p50,
        p99Ms: run.latency.p99,
        rssMiB: rss,
        gcRssMiB: processRss(child.pid!).rssMiB,
        liveHeapMiB: heap.usedMiB,
      };
      out.push(m);
      progress(formatHistoryMark(m)); // each mark as it is reached: a long run stopped early keeps them
    }
    const fees = (before - (await demoBalanceKobo(url))) / FEE_KOBO;
    if (fees !== ok) problems.push(`sign-history: the wallet took ${fees} fees for ${ok} signed invoices`);
    return { marks: out, problems };
  } finally {
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One line per mark. */
export function formatHistoryMark(m: HistoryMark): string {
  return (
    `sign-history: after ${m.signs.toLocaleString("en-US")} signs (SQLite file): stage ${Math.round(m.signsPerSec).toLocaleString("en-US")} signs/s, ` +
    `p50 ${m.p50Ms} ms, p99 ${m.p99Ms} ms; RSS ${m.rssMiB.toFixed(0)} MiB, after a full GC ${m.gcRssMiB.toFixed(0)} MiB (live heap ${m.liveHeapMiB.toFixed(0)} MiB)`
  );
}

// --- Internal helpers ---

function _outcome(r: { marks: HistoryMark[]; problems: string[] }): ScenarioOutcome {
  const results: ScenarioResult[] = r.marks.map((m) => ({
    name: `sign-history/gateway@${m.signs}`,
    scenario: "sign-history",
    server: `gateway@${m.signs}`,
    role: "subject",
    description: `billed signs on the SQLite file, the stage ending at ${m.signs} signs`,
    path: "/api/v1/invoice/sign",
    requestsPerSec: m.signsPerSec,
    latency: { mean: Number.NaN, p50: m.p50Ms, p90: Number.NaN, p99: m.p99Ms, max: Number.NaN },
    requests: m.signs,
    status2xx: m.signs,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    seconds: 0,
    rssMiB: m.rssMiB,
    extra: { signs: m.signs, gcRssMiB: Math.round(m.gcRssMiB), liveHeapMiB: Math.round(m.liveHeapMiB) },
  }));
  return { results, notes: r.marks.map(formatHistoryMark), problems: r.problems, extra: r.marks };
}
