/**
 * `npm run bench`: autocannon in-process against three servers started in this same process, one
 * after the other, with fixed load settings (STYLE.md habit 10), so a run compares the gateway
 * pipeline with bare h3 under identical conditions (ARCHITECTURE.md §8: compare ratios measured in
 * one run, never absolute numbers across runs).
 *
 *   npm run bench                                      64 connections, 10 s, pipelining 1
 *   BENCH_DURATION=2 BENCH_CONNECTIONS=16 npm run bench   a quick look
 *
 * Each scenario: start its server, check one request answers 200 with the expected body, warm up
 * (~1 s, discarded), measure, close. Then a table and the gateway/bare ratios are printed and the
 * JSON result is written to bench/results/<ISO timestamp>-<git short sha>.json. The run fails
 * (exit 1) if any scenario saw a non-2xx answer or a connection error: a bench of 401s or 429s
 * measures nothing.
 */
import { request } from "node:http";
import { availableParallelism, cpus, loadavg } from "node:os";
import { pathToFileURL } from "node:url";
import autocannon from "autocannon";
import { envInt, formatReport, gitShortSha, summarizeCannon, writeReport } from "./report.ts";
import { bareH3 } from "./scenarios/bare-h3.ts";
import { gatewayHealth } from "./scenarios/gateway-health.ts";
import { gatewayPipeline } from "./scenarios/gateway-pipeline.ts";
import { signScenarios } from "./scenarios/sign.ts";
import { stored } from "./scenarios/stored.ts";

/** The fixed load settings; env overrides exist for quick runs only (and are recorded in the JSON). */
export const DEFAULT_SETTINGS: BenchSettings = {
  connections: 64,
  duration: 10,
  pipelining: 1,
  warmup: 1,
  workers: 1,
};

/** The scenarios, in the order they run. The first is the baseline the ratios divide by. */
export const SCENARIOS: readonly BenchScenario[] = [bareH3, gatewayPipeline, gatewayHealth, stored, ...signScenarios()];
export const BASELINE = bareH3.name;
export const SUBJECT = gatewayPipeline.name;

export interface BenchSettings {
  /** Concurrent keep-alive connections. */
  connections: number;
  /** Measured seconds per scenario. */
  duration: number;
  /** Requests in flight per connection. */
  pipelining: number;
  /** Warm-up seconds per scenario (same load, discarded). */
  warmup: number;
  /**
   * autocannon worker threads firing the load (0 = on the main thread, next to the server). With
   * one worker the client runs on the second core and the server keeps the main thread, as when
   * autocannon runs in its own process; both stay in this one process.
   */
  workers: number;
}

export interface BenchTarget {
  /** Full URL of the measured endpoint (the server listens on a free loopback port). */
  url: string;
  /** Headers every request carries (host, x-api-key). */
  headers: Record<string, string>;
  /** The body the pre-flight request must get back. */
  expectBody: string;
  close(): Promise<void>;
}

export interface BenchScenario {
  name: string;
  description: string;
  /** An autocannon GET scenario: the server autocannon fires at with the fixed settings. */
  start?(): Promise<BenchTarget>;
  /** Or: autocannon-driven with per-request bodies or background work, under the shared settings. */
  measure?(settings: BenchSettings, progress: (line: string) => void): Promise<ScenarioResult>;
  /** Or: the scenario runs its own load (its size fixed by the scenario) and reports one result. */
  drive?(progress: (line: string) => void): Promise<DrivenResult>;
}

export interface DrivenResult {
  result: ScenarioResult;
  /** Lines printed under the table (figures the table has no column for). */
  notes: string[];
  problems: string[];
  /** Kept in the JSON report. */
  extra?: unknown;
}

export interface ScenarioResult {
  name: string;
  description: string;
  path: string;
  /** Mean requests per second over the measured seconds. */
  requestsPerSec: number;
  /** Latency in milliseconds. */
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
  requests: number;
  status2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Measured seconds (autocannon's own figure). */
  seconds: number;
  /** Further figures of a measured scenario (printed under the table). */
  extra?: Record<string, number>;
}

export interface BenchReport {
  startedAt: string;
  sha: string;
  node: string;
  cpu: string;
  cores: number;
  /** 1/5/15-minute load averages before and after the run: a busy machine explains a drifting run. */
  loadavg: { start: number[]; end: number[] };
  settings: BenchSettings;
  scenarios: ScenarioResult[];
  /** gateway-pipeline / bare-h3, from this run only. */
  ratios: { requestsPerSec: number; p99: number; baseline: string; subject: string };
  /** Why the run failed (non-2xx, errors, nothing measured); empty when it passed. */
  problems: string[];
  /** Driven scenarios' own lines and figures. */
  notes: string[];
  extras: Record<string, unknown>;
}

export interface RunBenchOptions {
  settings?: Partial<BenchSettings>;
  scenarios?: readonly BenchScenario[];
  /** One line per step (the CLI prints them; tests leave it out). */
  progress?: (line: string) => void;
}

/** The fixed settings with the BENCH_* overrides applied. */
export function benchSettings(env: Record<string, string | undefined> = process.env): BenchSettings {
  return {
    connections: envInt(env.BENCH_CONNECTIONS, DEFAULT_SETTINGS.connections, 1, "BENCH_CONNECTIONS"),
    duration: envInt(env.BENCH_DURATION, DEFAULT_SETTINGS.duration, 1, "BENCH_DURATION"),
    pipelining: envInt(env.BENCH_PIPELINING, DEFAULT_SETTINGS.pipelining, 1, "BENCH_PIPELINING"),
    warmup: envInt(env.BENCH_WARMUP, DEFAULT_SETTINGS.warmup, 0, "BENCH_WARMUP"),
    workers: envInt(env.BENCH_WORKERS, DEFAULT_SETTINGS.workers, 0, "BENCH_WORKERS"),
  };
}

/**
 * Runs every scenario in order, each started and closed on its own. A scenario whose pre-flight
 * request fails throws (nothing was measured); problems seen under load are returned in `problems`.
 */
export async function runBench(options: RunBenchOptions = {}): Promise<BenchReport> {
  const settings: BenchSettings = { ...DEFAULT_SETTINGS, ...options.settings };
  const scenarios = options.scenarios ?? SCENARIOS;
  const progress = options.progress ?? (() => {});
  const startedAt = new Date().toISOString();
  const loadStart = loadavg();
  const results: ScenarioResult[] = [];
  const problems: string[] = [];
  const notes: string[] = [];
  const extras: Record<string, unknown> = {};

  for (const scenario of scenarios) {
    if (scenario.measure) {
      const result = await scenario.measure(settings, progress);
      results.push(result);
      problems.push(..._problemsOf(result));
      continue;
    }
    if (scenario.drive) {
      const driven = await scenario.drive(progress);
      results.push(driven.result);
      notes.push(...driven.notes);
      problems.push(...driven.problems);
      if (driven.extra !== undefined) extras[scenario.name] = driven.extra;
      continue;
    }
    const target = await scenario.start!();
    try {
      await _preflight(scenario.name, target);
      if (settings.warmup > 0) {
        progress(`${scenario.name}: warm-up ${settings.warmup} s`);
        await _cannon(target, settings, settings.warmup);
      }
      progress(`${scenario.name}: measuring ${settings.duration} s (-c ${settings.connections} -p ${settings.pipelining})`);
      const raw = await _cannon(target, settings, settings.duration);
      const result = summarizeCannon(scenario, new URL(target.url).pathname, raw);
      results.push(result);
      problems.push(..._problemsOf(result));
    } finally {
      await target.close();
    }
  }

  const base = results.find((r) => r.name === BASELINE);
  const subject = results.find((r) => r.name === SUBJECT);
  const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b ? a / b : Number.NaN);
  return {
    startedAt,
    sha: gitShortSha(),
    node: process.version,
    cpu: cpus()[0]?.model ?? "unknown",
    cores: availableParallelism(),
    loadavg: { start: _round2(loadStart), end: _round2(loadavg()) },
    settings,
    scenarios: results,
    ratios: {
      requestsPerSec: ratio(subject?.requestsPerSec, base?.requestsPerSec),
      p99: ratio(subject?.latency.p99, base?.latency.p99),
      baseline: BASELINE,
      subject: SUBJECT,
    },
    problems,
    notes,
    extras,
  };
}

// --- Internal helpers ---

function _cannon(target: BenchTarget, settings: BenchSettings, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: target.url,
    headers: target.headers,
    connections: settings.connections,
    pipelining: settings.pipelining,
    duration: seconds,
    ...(settings.workers > 0 ? { workers: settings.workers } : {}),
  });
}

/** A bench of 401s, 429s or dropped connections measures nothing. */
function _problemsOf(r: ScenarioResult): string[] {
  const out: string[] = [];
  if (r.requests === 0) out.push(`${r.name}: no request completed`);
  if (r.non2xx > 0) out.push(`${r.name}: ${r.non2xx} non-2xx responses`);
  if (r.errors > 0) out.push(`${r.name}: ${r.errors} connection errors (${r.timeouts} timeouts)`);
  return out;
}

/** One request before the load: a scenario answering 401/429 or the wrong body stops the run here. */
function _preflight(name: string, target: BenchTarget): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(target.url, { method: "GET", headers: target.headers, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => {
        if (res.statusCode === 200 && body === target.expectBody) resolve();
        else reject(new Error(`bench: ${name} pre-flight answered ${res.statusCode}: ${body.slice(0, 300)}`));
      });
    });
    req.on("error", reject);
    req.end();
  });
}

function _round2(values: number[]): number[] {
  return values.map((v) => Math.round(v * 100) / 100);
}

async function _main(): Promise<void> {
  const settings = benchSettings();
  const out = (line: string) => process.stdout.write(line + "\n");
  out(
    `gatehouse bench: -c ${settings.connections} -d ${settings.duration} -p ${settings.pipelining}` +
      ` (warm-up ${settings.warmup} s, ${settings.workers === 0 ? "load on the main thread" : `${settings.workers} load worker thread(s)`})`,
  );
  const report = await runBench({ settings, progress: (line) => out(`  ${line}`) });
  out("");
  out(formatReport(report));
  const file = writeReport(report);
  out(`\nresult written to ${file}`);
  if (report.problems.length > 0) {
    process.stderr.write(`bench failed:\n${report.problems.map((p) => `  - ${p}`).join("\n")}\n`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  _main().catch((e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  });
}
