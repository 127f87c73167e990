/**
 * Scenarios "sign-memory", "sign-sqlite", "sign-mongodb-redis": billed Pass-through signing as a new
 * user runs it (issue 11). Every part is its own process, as after `npm start`:
 *
 * - the regulator simulator (`adapters/regulator/simulator/main.ts`) in its own process (the
 *   processes: bench/scenarios/sign-process.ts; the load: sign-gateway.ts);
 * - the gateway as `npm run build` compiles it (scripts/build.ts, into bench/.build/gatehouse/) and
 *   `npm run start:dist` runs it: plain node with the load servers' node flags, as a deployment runs
 *   it and as every other bench server runs (bench/build.ts); under the tsx loader as `npm start`
 *   runs it, with its ~35–45 MiB more RSS, with BENCH_TSX=1 or a CPU profile. It runs the demo
 *   config with the store of the variant, the simulator switched off in-process and the regulator's
 *   base URLs pointed at the simulator process, log level `info` (one JSON line per request, as in
 *   production), and the admission and sign quota limits raised far above the load (a bench of 429s
 *   measures nothing). It listens for the inspector on a free loopback port, through which the bench
 *   asks for a full garbage collection after the run;
 * - for `sign-mongodb-redis`, a private redis-server and the MongoDB-wire server (jongodb, or
 *   MONGODB_URI / REDIS_URL when set) as the scale-out config has them.
 *
 * Then `taxpayer@demo.ng` is onboarded through the gateway, the demo wallet is topped up to cover the
 * run, WARMUP signs are sent (discarded), and COUNT signs go from `connections` concurrent
 * connections, each request with its own IRN and idempotency key, into the one wallet of `demo`.
 * Reported: signs/s over the whole run, p50/p99 latency, the throughput of the first and of the last
 * tenth (at most 10 000 signs each) and their ratio (last / first: 1.00 means the cost of a sign did
 * not grow with the wallet's history), the gateway's RSS (VmRSS) after the run plus its peak (VmHWM)
 * and its V8 heap (used / total), then RSS and the live heap after a full collection: right after a
 * burst RSS follows how far V8 let its heap grow (±100 MiB between identical runs); the live heap is
 * what the process keeps, stable from run to run. Every answer must be 201, and the wallet must have
 * given exactly one fee per 201 (nothing lost, nothing charged twice); otherwise the scenario reports
 * a problem (a fee held by an error answer after the debit is reported as such).
 *
 * Also reported: the CPU time (user + system, every thread) the gateway and the simulator spent per
 * measured sign, from /proc: unlike signs/s it barely moves when other work shares the machine.
 *
 *   npx tsx bench/scenarios/sign.ts                 every variant (as `npm run bench` does)
 *   npx tsx bench/scenarios/sign.ts memory          one variant (memory | sqlite | mongodb-redis)
 *
 * env: BENCH_SIGN_COUNT (default 100000), BENCH_SIGN_WARMUP (default 2000), BENCH_SIGN_MONGO_COUNT
 * (sign-mongodb-redis; default 1000 on jongodb, whose inserts slow down with every document stored
 * — docs/bench.md —, BENCH_SIGN_COUNT when MONGODB_URI names a real server), BENCH_SIGN_STORES (comma
 * list, default "memory,sqlite,mongodb-redis"), BENCH_CONNECTIONS (default 64), BENCH_SIGN_CPU_PROF=<dir>
 * (the gateway runs under tsx with `--cpu-prof` and writes its profile there), BENCH_SIGN_NODE_ARGS
 * (more node flags for the gateway, space-separated, e.g. `--max-semi-space-size=4`), BENCH_TSX=1
 * (the gateway under the tsx loader, as `npm start` runs it), BENCH_NODE_FLAGS (bench/build.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { collectGarbage, processCpuMs, processRss, threadCpuMs, threadCpuSplit } from "../processes.ts";
import { envInt } from "../report.ts";
import type { BenchScenario, ScenarioOutcome, ScenarioResult } from "../run.ts";
import { creditDemo, demoBalanceKobo, FEE_KOBO, gatewayHeap, loadSigns, onboardDemo, signInvoiceFactory, type SignLoadResult } from "./sign-gateway.ts";
import { SIGN_STORES, startSignGateway, type SignGateway, type SignStore } from "./sign-process.ts";

export { SIGN_STORES, type SignStore } from "./sign-process.ts";

export interface SignBenchOptions {
  store: SignStore;
  /** Measured signs (default 100 000). */
  count: number;
  /** Signs sent before the measurement (discarded; default 2 000). */
  warmup: number;
  connections: number;
  /** Run the gateway with `--cpu-prof` into this folder. */
  cpuProfDir?: string;
  /** More node flags for the gateway process. */
  nodeArgs?: string[];
  progress?: (line: string) => void;
}

export interface SignBenchSettings {
  count: number;
  /** Measured signs of sign-mongodb-redis. */
  mongoCount: number;
  warmup: number;
  connections: number;
  stores: SignStore[];
  cpuProfDir?: string;
  nodeArgs: string[];
}

export interface SignBenchResult {
  store: SignStore;
  count: number;
  connections: number;
  seconds: number;
  signsPerSec: number;
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
  /** Signs per second of the first and of the last `window` signs, and last / first. */
  window: number;
  firstPerSec: number;
  lastPerSec: number;
  lastVsFirst: number;
  status2xx: number;
  non2xx: number;
  errors: number;
  /** Gateway RSS before the measured signs (after start-up, onboarding and warm-up), after them (VmRSS) and its peak (VmHWM), MiB. */
  rssBeforeMiB: number;
  rssMiB: number;
  peakRssMiB: number;
  /** The main thread's V8 heap right after the run (the gateway's /metrics): used (live and not yet collected) and total (what V8 holds). */
  heapUsedMiB: number;
  heapTotalMiB: number;
  /** After the run and a full garbage collection (through the inspector): RSS, and the heap still used (live data). */
  gcRssMiB: number;
  liveHeapMiB: number;
  /** CPU time (user + system, all threads) per measured sign: the gateway process and the simulator process, µs. */
  gatewayCpuUs: number;
  /** The gateway's CPU per sign by thread: "main" (the HTTP thread), then each other thread name (the writer thread, libuv, V8). */
  gatewayThreadCpuUs: Record<string, number>;
  simulatorCpuUs: number;
  /** Fees the measured signs took from the wallet. */
  feesTaken: number;
  /** One fee per 201, plus at most one per error answer (a fee held for an outcome the gateway could not confirm); never more. */
  walletExact: boolean;
  problems: string[];
}


/** The sign settings from the environment (defaults: 100 000 signs, 2 000 warm-up, 64 connections). */
export function signBenchSettings(env: Record<string, string | undefined> = process.env): SignBenchSettings {
  const stores = (env.BENCH_SIGN_STORES ?? SIGN_STORES.join(","))
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const s of stores) if (!SIGN_STORES.includes(s as SignStore)) throw new Error(`bench: BENCH_SIGN_STORES: unknown store "${s}"`);
  const count = envInt(env.BENCH_SIGN_COUNT, 100_000, 10, "BENCH_SIGN_COUNT");
  return {
    count,
    mongoCount: envInt(env.BENCH_SIGN_MONGO_COUNT, env.MONGODB_URI ? count : Math.min(count, 1_000), 10, "BENCH_SIGN_MONGO_COUNT"),
    warmup: envInt(env.BENCH_SIGN_WARMUP, 2_000, 0, "BENCH_SIGN_WARMUP"),
    connections: envInt(env.BENCH_CONNECTIONS, 64, 1, "BENCH_CONNECTIONS"),
    stores: stores as SignStore[],
    ...(env.BENCH_SIGN_CPU_PROF ? { cpuProfDir: env.BENCH_SIGN_CPU_PROF } : {}),
    nodeArgs: (env.BENCH_SIGN_NODE_ARGS ?? "").split(" ").filter(Boolean),
  };
}

/** The options of one variant's run under `settings` (sign-mongodb-redis: its own count, a tenth of the warm-up at most). */
export function signRunOptions(store: SignStore, settings: SignBenchSettings): SignBenchOptions {
  const mongo = store === "mongodb-redis";
  const count = mongo ? settings.mongoCount : settings.count;
  return {
    store,
    count,
    warmup: mongo ? Math.min(settings.warmup, Math.ceil(count / 10)) : settings.warmup,
    connections: settings.connections,
    ...(settings.cpuProfDir ? { cpuProfDir: settings.cpuProfDir } : {}),
    nodeArgs: settings.nodeArgs,
  };
}

/**
 * The sign scenarios for `npm run bench`, one per variant of BENCH_SIGN_STORES; the other settings
 * are read from the environment when a scenario runs.
 */
export function signScenarios(env: Record<string, string | undefined> = process.env): BenchScenario[] {
  return signBenchSettings(env).stores.map((store) => ({
    names: [`sign-${store}`],
    run: async (ctx) => _outcome(await runSignBench({ ...signRunOptions(store, signBenchSettings(ctx.env)), progress: ctx.progress })),
  }));
}

/** Starts the processes, signs, measures, stops everything and removes what it created. */
export async function runSignBench(options: SignBenchOptions): Promise<SignBenchResult> {
  const progress = options.progress ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), `gatehouse-sign-bench-${options.store}-`));
  let running: SignGateway | null = null;
  try {
    running = await startSignGateway({ store: options.store, dir, cpuProfDir: options.cpuProfDir, nodeArgs: options.nodeArgs });
    const { gateway: gw, simulator: sim } = running;
    progress(`sign-${options.store}: gateway pid ${gw.child.pid} at ${gw.url}, simulator at ${sim.url}`);

    const sub = await onboardDemo(gw.url);
    await creditDemo(gw.url, ((options.count + options.warmup) * FEE_KOBO) / 100);
    const invoices = signInvoiceFactory(sub);
    if (options.warmup > 0) {
      progress(`sign-${options.store}: warm-up ${options.warmup} signs`);
      const w = await loadSigns(gw.url, invoices, options.warmup, options.connections);
      if (w.non2xx > 0 || w.errors > 0) throw new Error(`bench: sign-${options.store} warm-up saw ${w.non2xx} non-2xx (${w.firstBad}) and ${w.errors} errors`);
    }
    const before = await demoBalanceKobo(gw.url);
    progress(`sign-${options.store}: measuring ${options.count} signs (-c ${options.connections})`);
    const rssBefore = processRss(gw.child.pid!).rssMiB;
    const cpuBefore = [processCpuMs(gw.child.pid!), processCpuMs(sim.child.pid!)] as const;
    const threadsBefore = threadCpuMs(gw.child.pid!);
    const run = await loadSigns(gw.url, invoices, options.count, options.connections);
    const threadSplit = threadCpuSplit(gw.child.pid!, threadsBefore, threadCpuMs(gw.child.pid!));
    const cpuUs = (before: number, pid: number) => ((processCpuMs(pid) - before) * 1000) / options.count;
    const gatewayCpuUs = cpuUs(cpuBefore[0], gw.child.pid!);
    const simulatorCpuUs = cpuUs(cpuBefore[1], sim.child.pid!);
    const rss = processRss(gw.child.pid!);
    const heap = await gatewayHeap(gw.url);
    const after = await demoBalanceKobo(gw.url);
    // What the process keeps: RSS and the live heap after a full collection (right after a burst,
    // RSS follows how far V8 let the heap grow, which moves by ±100 MiB between identical runs).
    await collectGarbage(gw.output);
    const collected = processRss(gw.child.pid!).rssMiB;
    const collectedHeap = await gatewayHeap(gw.url);

    const { window, firstPerSec, lastPerSec } = _windows(run, options.count);
    const problems: string[] = [];
    const name = `sign-${options.store}`;
    if (run.non2xx > 0) problems.push(`${name}: ${run.non2xx} non-2xx responses (first: ${run.firstBad})`);
    if (run.errors > 0) problems.push(`${name}: ${run.errors} connection errors`);
    // Every 201 is one fee; an error answer after the debit (an outcome the gateway could not
    // confirm) holds its fee until the merchant's same-key retry settles it: counted apart.
    const feesTaken = (before - after) / FEE_KOBO;
    const walletExact = feesTaken === run.status2xx || (feesTaken > run.status2xx && feesTaken <= run.status2xx + run.non2xx);
    if (feesTaken !== run.status2xx) {
      problems.push(`${name}: the wallet took ${feesTaken} fees for ${run.status2xx} signed invoices${walletExact ? ` (${feesTaken - run.status2xx} held by error answers)` : " (WRONG)"}`);
    }
    return {
      store: options.store,
      count: options.count,
      connections: options.connections,
      seconds: run.seconds,
      signsPerSec: run.status2xx / run.seconds,
      latency: run.latency,
      window,
      firstPerSec,
      lastPerSec,
      lastVsFirst: lastPerSec / firstPerSec,
      status2xx: run.status2xx,
      non2xx: run.non2xx,
      errors: run.errors,
      rssBeforeMiB: rssBefore,
      rssMiB: rss.rssMiB,
      peakRssMiB: rss.peakMiB,
      heapUsedMiB: heap.usedMiB,
      heapTotalMiB: heap.totalMiB,
      gcRssMiB: collected,
      liveHeapMiB: collectedHeap.usedMiB,
      gatewayCpuUs,
      gatewayThreadCpuUs: Object.fromEntries([...threadSplit].filter(([, ms]) => ms > 0).map(([k, ms]) => [k, (ms * 1000) / options.count])),
      simulatorCpuUs,
      walletExact,
      feesTaken,
      problems,
    };
  } finally {
    await running?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One line per result, for the report printed under the bench table. */
export function formatSignResult(r: SignBenchResult): string {
  const f = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString("en-US") : "n/a");
  return (
    `sign-${r.store}: ${f(r.signsPerSec)} signs/s over ${r.count.toLocaleString("en-US")} (p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms), ` +
    `first ${r.window.toLocaleString("en-US")} ${f(r.firstPerSec)}/s, last ${f(r.lastPerSec)}/s, last/first ${Number.isFinite(r.lastVsFirst) ? r.lastVsFirst.toFixed(2) : "n/a"}, ` +
    `gateway RSS ${r.rssBeforeMiB.toFixed(0)} → ${r.rssMiB.toFixed(0)} MiB (peak ${r.peakRssMiB.toFixed(0)} MiB; heap used ${f(r.heapUsedMiB)} of ${f(r.heapTotalMiB)} MiB), ` +
    `after a full GC ${r.gcRssMiB.toFixed(0)} MiB (live heap ${f(r.liveHeapMiB)} MiB), ` +
    `CPU per sign: gateway ${r.gatewayCpuUs.toFixed(0)} µs (${Object.entries(r.gatewayThreadCpuUs).map(([k, us]) => `${k} ${us.toFixed(0)}`).join(", ")}), simulator ${r.simulatorCpuUs.toFixed(0)} µs, ` +
    `wallet ${r.walletExact ? (r.feesTaken === r.status2xx ? "exact" : `exact (${r.feesTaken - r.status2xx} fees held)`) : "WRONG"}`
  );
}

// --- Internal helpers ---

/** Signs/s of the first and of the last tenth of the run (at most 10 000 signs each). */
function _windows(run: SignLoadResult, count: number): { window: number; firstPerSec: number; lastPerSec: number } {
  const window = Math.min(10_000, Math.floor(count / 10));
  const t = run.completedAt;
  const n = t.length;
  const firstPerSec = n >= window && window > 0 ? (window / (t[window - 1]! - run.startedAt)) * 1000 : Number.NaN;
  const lastPerSec = n >= 2 * window && window > 0 ? (window / (t[n - 1]! - t[n - window - 1]!)) * 1000 : Number.NaN;
  return { window, firstPerSec, lastPerSec };
}

function _outcome(r: SignBenchResult): ScenarioOutcome {
  const result: ScenarioResult = {
    name: `sign-${r.store}/gateway`,
    scenario: `sign-${r.store}`,
    server: "gateway",
    role: "subject",
    rssMiB: r.rssMiB,
    description: `billed Pass-through signs into one wallet (${r.store})`,
    path: "/api/v1/invoice/sign",
    requestsPerSec: r.signsPerSec,
    latency: r.latency,
    requests: r.status2xx + r.non2xx,
    status2xx: r.status2xx,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: 0,
    seconds: r.seconds,
    cpuUsPerRequest: r.gatewayCpuUs,
    extra: { simulatorCpuUs: r.simulatorCpuUs },
  };
  return { results: [result], notes: [formatSignResult(r)], problems: r.problems, extra: r };
}

async function _main(): Promise<void> {
  const settings = signBenchSettings();
  const only = process.argv[2];
  const stores = only ? [only as SignStore] : settings.stores;
  const out = (line: string) => process.stdout.write(line + "\n");
  let failed = false;
  for (const store of stores) {
    if (!SIGN_STORES.includes(store)) throw new Error(`unknown store ${store}`);
    const r = await runSignBench({ ...signRunOptions(store, settings), progress: (l) => out(`  ${l}`) });
    out(formatSignResult(r));
    for (const p of r.problems) out(`  problem: ${p}`);
    failed ||= r.problems.length > 0;
  }
  if (failed) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  _main().catch((e: unknown) => {
    process.stderr.write(`sign bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  });
}
