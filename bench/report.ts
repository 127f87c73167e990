/**
 * The bench report: the table and ratio lines printed at the end of `npm run bench`, and the JSON
 * file written to bench/results/ (gitignored), named `<ISO timestamp>-<git short sha>.json` with
 * the timestamp's colons replaced by dashes.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type autocannon from "autocannon";
import type { BenchReport, BenchScenario, ScenarioResult } from "./run.ts";

export const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));

/** The table, one row per scenario, then the gateway/bare ratio line. */
export function formatReport(report: BenchReport): string {
  const base = report.scenarios.find((s) => s.name === report.ratios.baseline);
  const header = ["scenario", "req/s (mean)", "p50 ms", "p99 ms", "non-2xx", "errors", "req/s vs bare"];
  const rows = report.scenarios.map((s) => [
    s.name,
    _thousands(s.requestsPerSec),
    _ms(s.latency.p50),
    _ms(s.latency.p99),
    String(s.non2xx),
    String(s.errors),
    base && base.requestsPerSec > 0 ? `${(s.requestsPerSec / base.requestsPerSec).toFixed(2)}x` : "-",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  const s = report.settings;
  return [
    `commit ${report.sha}, node ${report.node}, ${report.cores} cores, -c ${s.connections} -d ${s.duration} -p ${s.pipelining}, workers ${s.workers}`,
    `load average (1/5/15 min): ${report.loadavg.start.join(" ")} before, ${report.loadavg.end.join(" ")} after`,
    "",
    line(header),
    line(widths.map((w) => "-".repeat(w))),
    ...rows.map(line),
    ...report.scenarios.filter((x) => x.extra).map((x) => `${x.name}: ${Object.entries(x.extra!).map(([k, v]) => `${k} ${v}`).join(", ")}`),
    "",
    formatRatioLine(report),
    ...(report.notes.length > 0 ? ["", ...report.notes] : []),
  ].join("\n");
}

/** "ratio gateway/bare: req/s 0.41x, p99 2.30x (same run; compare ratios, not absolute numbers)". */
export function formatRatioLine(report: BenchReport): string {
  const r = report.ratios;
  const f = (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : "n/a");
  return `ratio gateway/bare (${r.subject} / ${r.baseline}): req/s ${f(r.requestsPerSec)}, p99 ${f(r.p99)} (same run; compare ratios, not absolute numbers)`;
}

/** An autocannon result as a scenario's row (measured scenarios use it too). */
export function summarizeCannon(scenario: Pick<BenchScenario, "name" | "description">, path: string, r: autocannon.Result): ScenarioResult {
  return {
    name: scenario.name,
    description: scenario.description,
    path,
    requestsPerSec: r.requests.mean,
    latency: { mean: r.latency.mean, p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
    requests: r.requests.total,
    status2xx: r["2xx"],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    seconds: r.duration,
  };
}

/** Writes the JSON result; returns the file's path. */
export function writeReport(report: BenchReport, dir: string = RESULTS_DIR): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${report.startedAt.replaceAll(":", "-")}-${report.sha}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
  return file;
}

/** `git rev-parse --short HEAD`, or "nogit" outside a repository (or without git). */
export function gitShortSha(): string {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: fileURLToPath(new URL(".", import.meta.url)),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return /^[0-9a-f]{4,40}$/.test(sha) ? sha : "nogit";
  } catch {
    return "nogit";
  }
}

/** An integer setting from the environment (BENCH_*): `fallback` when unset, an error below `min`. */
export function envInt(raw: string | undefined, fallback: number, min: number, name: string): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`bench: ${name} must be an integer >= ${min} (got "${raw}")`);
  return n;
}

// --- Internal helpers ---

/** autocannon reports latency percentiles in whole milliseconds: no invented decimals. */
function _ms(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

function _thousands(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}
