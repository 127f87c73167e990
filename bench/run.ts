/**
 * `npm run bench`: Gatehouse against bare h3 and the Node gateways a platform team would otherwise
 * pick, in one run, with fixed load settings (STYLE.md habit 10; ARCHITECTURE.md §8: compare ratios
 * measured in one run, never absolute numbers across runs).
 *
 *   npm run bench                      everything at the fixed settings (-c 64 -d 10 -p 1), ~8 min
 *   npm run bench -- --quick           everything, small: ≤ 60 s (also `npm run bench --quick`)
 *   npm run bench -- --only ping,relay only these scenarios
 *   npm run bench -- --profile /tmp/p  every load server runs with --cpu-prof into /tmp/p/<server>/
 *
 * Scenarios, in order (docs/bench.md):
 * - `ping`, `health`, `relay` (bench/scenarios/load.ts): autocannon against the upstream, bare h3,
 *   fast-gateway, fastify + @fastify/http-proxy + @fastify/rate-limit, and the gateway, each in its
 *   own process (ping and relay also the gateway with its request log off: the log's cost);
 * - `stored` (bench/scenarios/stored.ts): Stored intake, then one processor draining a backlog, on
 *   the SQLite file;
 * - `sign-memory`, `sign-sqlite`, `sign-mongodb-redis` (bench/scenarios/sign.ts): billed signs into
 *   one wallet (`sign-sqlite`: the embedded default, a file, fsync on);
 * - `va-list` (bench/scenarios/virtual-accounts-100k.ts): virtual-account lists at 100 000 accounts;
 * - `invoices-list` (bench/scenarios/invoices-list.ts): `GET /invoices` with its filters;
 * - `console-pages` (bench/scenarios/console-pages.ts): every console screen at 100 000 invoices;
 * - `dashboard-pages` (bench/scenarios/dashboard-pages.ts): the dashboard's invoice screens at 100 000 invoices;
 * - `request-log-pages` (bench/scenarios/request-log-pages.ts): the dashboard's request-log pages at
 *   1 000 000 request-log records;
 * - opt-in, only when `--only` names them (they take many minutes): `sign-history`
 *   (bench/scenarios/sign-history.ts: RSS and live heap after 100 000 and 1 000 000 signs) and
 *   `start-ready` (bench/scenarios/start-ready.ts: `npm start` on a 1 GB database).
 *
 * Then one table (req/s, p50/p99, the server's CPU per request and RSS, ratio to bare h3 and to the
 * best peer), the goals of issue 12 and of the SQLite engine as measured (printed, never asserted), the JSON result and an SVG
 * chart, both in bench/results/<ISO timestamp>-<git short sha>.{json,svg}. The run fails (exit 1) when
 * a scenario saw a non-2xx answer or a connection error, completed nothing, or the gateway wrote
 * fewer request log lines than it answered requests.
 */
import { availableParallelism, cpus, loadavg } from "node:os";
import { pathToFileURL } from "node:url";
import { writeChart } from "./chart.ts";
import { envInt, evaluateGoals, formatReport, gitShortSha, writeReport, type Goal } from "./report.ts";
import { runLoadScenarios, LOAD_SCENARIOS } from "./scenarios/load.ts";
import { signScenarios } from "./scenarios/sign.ts";
import { stored } from "./scenarios/stored.ts";
import { vaListScenario } from "./scenarios/virtual-accounts-100k.ts";
import { evaluateEngineGoals } from "./engine-goals.ts";
import { invoicesListScenario } from "./scenarios/invoices-list.ts";
import { signHistoryScenario } from "./scenarios/sign-history.ts";
import { signHistorySeededScenario } from "./scenarios/sign-history-seeded.ts";
import { startReadyScenario } from "./scenarios/start-ready.ts";
import { consolePagesScenario } from "./scenarios/console-pages.ts";
import { dashboardPagesScenario } from "./scenarios/dashboard-pages.ts";
import { requestLogPagesScenario } from "./scenarios/request-log-pages.ts";

/** The fixed load settings; env overrides exist for quick looks only (and are recorded in the JSON). */
export const DEFAULT_SETTINGS: BenchSettings = {
  connections: 64,
  duration: 10,
  pipelining: 1,
  warmup: 1,
  workers: 1,
  quick: false,
};

/** `--quick`: every scenario, small, ≤ 60 s in all (a smoke check: figures are indicative only). */
export const QUICK_SETTINGS: BenchSettings = { ...DEFAULT_SETTINGS, duration: 1, warmup: 0.5, quick: true };

/** Sizes of the driven scenarios under `--quick` (an explicitly set env variable still wins). */
export const QUICK_ENV: Readonly<Record<string, string>> = {
  BENCH_SIGN_COUNT: "300",
  BENCH_SIGN_WARMUP: "100",
  BENCH_SIGN_MONGO_COUNT: "30",
  BENCH_STORED_BACKLOG: "100",
  VA_BENCH_COUNT: "10000",
  VA_BENCH_REQUESTS: "5",
  INVOICES_BENCH_COUNT: "5000",
  INVOICES_BENCH_REQUESTS: "5",
  CONSOLE_BENCH_INVOICES: "5000",
  CONSOLE_BENCH_FROZEN: "500",
  CONSOLE_BENCH_LETTERS: "500",
  CONSOLE_BENCH_REQUESTS: "5",
  REQLOG_BENCH_ROWS: "10000",
  REQLOG_BENCH_REQUESTS: "5",
  BENCH_SIGN_HISTORY: "300,600",
  START_READY_MB: "16",
  START_READY_RUNS: "1",
};

export interface BenchSettings {
  /** Concurrent keep-alive connections. */
  connections: number;
  /** Measured seconds per load row. */
  duration: number;
  /** Requests in flight per connection. */
  pipelining: number;
  /** Warm-up seconds per row (same load, discarded). */
  warmup: number;
  /** autocannon worker threads for the scenarios whose server runs inside the bench process (stored intake). */
  workers: number;
  /** The ≤ 60 s smoke run. */
  quick: boolean;
}

/** How a row's server takes part in the comparison. */
export type ServerRole = "ceiling" | "baseline" | "peer" | "subject";

export interface ScenarioResult {
  /** `<scenario>/<server>`: the row's name. */
  name: string;
  scenario: string;
  server: string;
  role: ServerRole;
  description: string;
  path: string;
  /** Answered requests per second over the measured seconds (signs/s for sign-*). */
  requestsPerSec: number;
  /** Latency in milliseconds. */
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
  requests: number;
  status2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
  /** The server process's RSS right after the row (MiB), where it runs in its own process. */
  rssMiB?: number;
  /** The server process's CPU time (user + system, all threads) per answered request, µs. */
  cpuUsPerRequest?: number;
  /** Further figures (printed under the table). */
  extra?: Record<string, number>;
}

export interface ScenarioOutcome {
  results: ScenarioResult[];
  notes: string[];
  problems: string[];
  /** Kept in the JSON report under the scenario's name. */
  extra?: unknown;
}

export interface ScenarioContext {
  settings: BenchSettings;
  /** The environment the scenario reads its sizes from (QUICK_ENV applied under --quick). */
  env: Record<string, string | undefined>;
  /** Only these scenario names (load rows filter on it too). */
  only?: readonly string[];
  cpuProfDir?: string;
  progress: (line: string) => void;
}

export interface BenchScenario {
  /** Names `--only` matches (a unit may run several scenarios, as the load unit does). */
  names: readonly string[];
  /** Runs only when `--only` names it (a scenario of many minutes). */
  optIn?: boolean;
  run(ctx: ScenarioContext): Promise<ScenarioOutcome>;
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
  /** The goals of issue 12, as measured in this run. */
  goals: Goal[];
  /** The SQLite engine's goals (bench/engine-goals.ts), as measured in this run. */
  engineGoals: Goal[];
  /** Why the run failed (non-2xx, errors, nothing measured, missing log lines); empty when it passed. */
  problems: string[];
  notes: string[];
  extras: Record<string, unknown>;
}

export interface RunBenchOptions {
  settings?: Partial<BenchSettings>;
  scenarios?: readonly BenchScenario[];
  only?: readonly string[];
  env?: Record<string, string | undefined>;
  cpuProfDir?: string;
  /** One line per step (the CLI prints them; tests leave it out). */
  progress?: (line: string) => void;
}

/** The load unit: ping, health and relay against every server. */
export const loadScenario: BenchScenario = {
  names: LOAD_SCENARIOS.map((s) => s.name),
  run: (ctx) => runLoadScenarios(ctx.settings, { only: ctx.only, cpuProfDir: ctx.cpuProfDir, progress: ctx.progress }),
};

/** Every scenario, in the order it runs. */
export function benchScenarios(env: Record<string, string | undefined> = process.env): BenchScenario[] {
  return [
    loadScenario,
    stored,
    ...signScenarios(env),
    vaListScenario,
    invoicesListScenario,
    consolePagesScenario,
    dashboardPagesScenario,
    requestLogPagesScenario,
    signHistoryScenario,
    signHistorySeededScenario,
    startReadyScenario,
  ];
}

/** True when `--quick` was given (as an argument, or as npm's `npm run bench --quick` → npm_config_quick). */
export function isQuick(argv: readonly string[], env: Record<string, string | undefined>): boolean {
  return argv.includes("--quick") || (env.npm_config_quick !== undefined && env.npm_config_quick !== "" && env.npm_config_quick !== "false");
}

/** The settings: fixed (or quick), with the BENCH_* overrides applied. */
export function benchSettings(env: Record<string, string | undefined> = process.env, quick = false): BenchSettings {
  const base = quick ? QUICK_SETTINGS : DEFAULT_SETTINGS;
  return {
    connections: envInt(env.BENCH_CONNECTIONS, base.connections, 1, "BENCH_CONNECTIONS"),
    duration: envNumber(env.BENCH_DURATION, base.duration, "BENCH_DURATION"),
    pipelining: envInt(env.BENCH_PIPELINING, base.pipelining, 1, "BENCH_PIPELINING"),
    warmup: envNumber(env.BENCH_WARMUP, base.warmup, "BENCH_WARMUP", 0),
    workers: envInt(env.BENCH_WORKERS, base.workers, 0, "BENCH_WORKERS"),
    quick,
  };
}

/** The environment the scenarios read, with QUICK_ENV filled in under --quick. */
export function scenarioEnv(env: Record<string, string | undefined>, quick: boolean): Record<string, string | undefined> {
  return quick ? { ...QUICK_ENV, ...env } : env;
}

/**
 * Runs every scenario in order. A scenario whose pre-flight fails throws (nothing was measured);
 * problems seen under load are returned in `problems`.
 */
export async function runBench(options: RunBenchOptions = {}): Promise<BenchReport> {
  const settings: BenchSettings = { ...DEFAULT_SETTINGS, ...options.settings };
  const env = scenarioEnv(options.env ?? process.env, settings.quick);
  const scenarios = options.scenarios ?? benchScenarios(env);
  const progress = options.progress ?? (() => {});
  const startedAt = new Date().toISOString();
  const loadStart = loadavg();
  const report: Omit<BenchReport, "goals" | "engineGoals" | "loadavg"> = {
    startedAt,
    sha: gitShortSha(),
    node: process.version,
    cpu: cpus()[0]?.model ?? "unknown",
    cores: availableParallelism(),
    settings,
    scenarios: [],
    problems: [],
    notes: [],
    extras: {},
  };
  for (const scenario of scenarios) {
    const named = options.only !== undefined && scenario.names.some((n) => options.only!.includes(n));
    if ((options.only || scenario.optIn) && !named) continue;
    const began = performance.now();
    const outcome = await scenario.run({ settings, env, only: options.only, cpuProfDir: options.cpuProfDir, progress });
    progress(`${scenario.names.join(", ")}: done in ${((performance.now() - began) / 1000).toFixed(1)} s`);
    report.scenarios.push(...outcome.results);
    report.notes.push(...outcome.notes);
    report.problems.push(...outcome.problems);
    if (outcome.extra !== undefined) report.extras[scenario.names.join(",")] = outcome.extra;
  }
  return { ...report, loadavg: { start: _round2(loadStart), end: _round2(loadavg()) }, goals: evaluateGoals(report.scenarios), engineGoals: evaluateEngineGoals(report.scenarios) };
}

/** A number setting from the environment (fractional seconds allowed), at least `min`. */
export function envNumber(raw: string | undefined, fallback: number, name: string, min = 0.1): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`bench: ${name} must be a number >= ${min} (got "${raw}")`);
  return n;
}

// --- Internal helpers ---

function _round2(values: number[]): number[] {
  return values.map((v) => Math.round(v * 100) / 100);
}

function _argValue(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  if (i >= 0) return argv[i + 1];
  return argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

async function _main(): Promise<void> {
  const argv = process.argv.slice(2);
  const quick = isQuick(argv, process.env);
  const settings = benchSettings(process.env, quick);
  const only = _argValue(argv, "--only")?.split(",").map((s) => s.trim()).filter(Boolean);
  const cpuProfDir = _argValue(argv, "--profile");
  const out = (line: string) => process.stdout.write(line + "\n");
  const started = performance.now();
  out(
    `gatehouse bench${quick ? " --quick" : ""}: -c ${settings.connections} -d ${settings.duration} -p ${settings.pipelining}` +
      ` (warm-up ${settings.warmup} s)${only ? `, only ${only.join(", ")}` : ""}; load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`,
  );
  const report = await runBench({ settings, only, cpuProfDir, progress: (line) => out(`  ${line}`) });
  out("");
  out(formatReport(report));
  const file = writeReport(report);
  const chart = writeChart(report, file.replace(/\.json$/, ".svg"));
  out(`\nresult written to ${file}\nchart drawn in ${chart}\n(${((performance.now() - started) / 1000).toFixed(1)} s)`);
  if (cpuProfDir) out(`CPU profiles in ${cpuProfDir}/<server>/ (npx tsx bench/profile-top.ts <file>)`);
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
