/**
 * The bench report: the table, the ratios and the goals printed at the end of `npm run bench`, and
 * the JSON file written to bench/results/ (gitignored), named `<ISO timestamp>-<git short sha>.json`
 * with the timestamp's colons replaced by dashes.
 *
 * Ratios are taken within one scenario of one run: `vs bare` divides a row's req/s by bare h3's on
 * the same scenario, `vs peer` by the best peer's (fast-gateway or fastify, whichever answered more).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type autocannon from "autocannon";
import type { BenchReport, ScenarioResult, ServerRole } from "./run.ts";

export const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));

/** The goals of issue 12 (docs/bench.md "Goals"). */
export const GOALS = {
  /** Full pipeline on an authenticated route, req/s against bare h3 on the same route. */
  pingVsBare: 0.8,
  /** …and its p99 at most this multiple of bare h3's. */
  pingP99VsBare: 2,
  /** Relayed regulator read, req/s against the better peer (its p99 no worse than that peer's). */
  relayVsPeer: 1.5,
  /** Gateway RSS after each load scenario. */
  rssMiB: 120,
  /** Virtual-account list at 100 000 accounts. */
  vaListP99Ms: 50,
} as const;

export interface Goal {
  name: string;
  /** What was measured, in words ("0.62x bare-h3 (23 456 vs 37 800 req/s)"). */
  measured: string;
  target: string;
  met: boolean;
}

/** The row's baseline (bare-h3 on the same scenario), if the run has one. */
export function baselineOf(rows: readonly ScenarioResult[], row: ScenarioResult): ScenarioResult | undefined {
  return rows.find((r) => r.scenario === row.scenario && r.role === "baseline");
}

/** The best peer (most req/s) on the row's scenario, if the run has one. */
export function bestPeerOf(rows: readonly ScenarioResult[], row: ScenarioResult): ScenarioResult | undefined {
  let best: ScenarioResult | undefined;
  for (const r of rows) if (r.scenario === row.scenario && r.role === "peer" && (!best || r.requestsPerSec > best.requestsPerSec)) best = r;
  return best;
}

/** The goals as this run measured them (a goal whose rows did not run is left out). */
export function evaluateGoals(rows: readonly ScenarioResult[]): Goal[] {
  const goals: Goal[] = [];
  const gw = (scenario: string) => rows.find((r) => r.scenario === scenario && r.server === "gateway" && r.role === "subject");
  const ping = gw("ping");
  const bare = ping && baselineOf(rows, ping);
  if (ping && bare) {
    const ratio = ping.requestsPerSec / bare.requestsPerSec;
    const p99 = ping.latency.p99 / Math.max(bare.latency.p99, 1);
    goals.push({
      name: "ping: full pipeline vs bare h3",
      measured: `${_x(ratio)} req/s (${_thousands(ping.requestsPerSec)} vs ${_thousands(bare.requestsPerSec)}), p99 ${ping.latency.p99} vs ${bare.latency.p99} ms (${_x(p99)})`,
      target: `≥ ${_x(GOALS.pingVsBare)} req/s, p99 ≤ ${_x(GOALS.pingP99VsBare)}`,
      met: ratio >= GOALS.pingVsBare && p99 <= GOALS.pingP99VsBare,
    });
  }
  const relay = gw("relay");
  const peer = relay && bestPeerOf(rows, relay);
  if (relay && peer) {
    const ratio = relay.requestsPerSec / peer.requestsPerSec;
    goals.push({
      name: `relay: gateway vs the better peer (${peer.server})`,
      measured: `${_x(ratio)} req/s (${_thousands(relay.requestsPerSec)} vs ${_thousands(peer.requestsPerSec)}), p99 ${relay.latency.p99} vs ${peer.latency.p99} ms`,
      target: `≥ ${_x(GOALS.relayVsPeer)} req/s, p99 ≤ the peer's`,
      met: ratio >= GOALS.relayVsPeer && relay.latency.p99 <= peer.latency.p99,
    });
  }
  const rss = rows.filter((r) => r.server === "gateway" && r.role === "subject" && r.rssMiB !== undefined && ["ping", "health", "relay"].includes(r.scenario));
  if (rss.length > 0) {
    goals.push({
      name: "gateway RSS after each load scenario",
      measured: rss.map((r) => `${r.scenario} ${r.rssMiB!.toFixed(0)} MiB`).join(", "),
      target: `≤ ${GOALS.rssMiB} MiB`,
      met: rss.every((r) => r.rssMiB! <= GOALS.rssMiB),
    });
  }
  const va = rows.find((r) => r.scenario === "va-list");
  if (va) {
    const accounts = va.extra?.accounts ?? 0;
    goals.push({
      name: `virtual-account list at ${_thousands(accounts)} accounts`,
      measured: `p99 ${va.latency.p99.toFixed(1)} ms (worst query p99 ${(va.extra?.worstP99Ms ?? Number.NaN).toFixed(1)} ms)`,
      target: `p99 ≤ ${GOALS.vaListP99Ms} ms${accounts < 100_000 ? " (at 100 000 accounts; this run had fewer)" : ""}`,
      met: va.latency.p99 <= GOALS.vaListP99Ms,
    });
  }
  return goals;
}

/** The table, one row per (scenario, server), then the goals and the scenarios' own lines. */
export function formatReport(report: BenchReport): string {
  const rows = report.scenarios;
  const header = ["scenario", "server", "req/s", "p50 ms", "p99 ms", "CPU µs/req", "RSS MiB", "vs bare", "vs peer", "non-2xx", "errors"];
  const lines = rows.map((s) => {
    const bare = baselineOf(rows, s);
    const peer = bestPeerOf(rows, s);
    return [
      s.scenario,
      s.server,
      _thousands(s.requestsPerSec),
      _ms(s.latency.p50),
      _ms(s.latency.p99),
      s.cpuUsPerRequest === undefined || !Number.isFinite(s.cpuUsPerRequest) ? "-" : s.cpuUsPerRequest.toFixed(0),
      s.rssMiB === undefined ? "-" : s.rssMiB.toFixed(0),
      bare && bare.requestsPerSec > 0 ? _x(s.requestsPerSec / bare.requestsPerSec) : "-",
      peer && peer.requestsPerSec > 0 ? _x(s.requestsPerSec / peer.requestsPerSec) : "-",
      String(s.non2xx),
      String(s.errors),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  const s = report.settings;
  return [
    `commit ${report.sha}, node ${report.node}, ${report.cores} cores, -c ${s.connections} -d ${s.duration} -p ${s.pipelining}${s.quick ? " (--quick: indicative only)" : ""}`,
    `load average (1/5/15 min): ${report.loadavg.start.join(" ")} before, ${report.loadavg.end.join(" ")} after`,
    "",
    line(header),
    line(widths.map((w) => "-".repeat(w))),
    ...lines.map(line),
    ...rows.filter((x) => x.extra).map((x) => `${x.name}: ${Object.entries(x.extra!).map(([k, v]) => `${k} ${v}`).join(", ")}`),
    "",
    "goals (issue 12; same run, compare ratios, not absolute numbers):",
    ...report.goals.map(_goalLine),
    ...((report.engineGoals ?? []).length > 0 ? ["", "goals of the SQLite engine (docs/bench.md):", ...report.engineGoals.map(_goalLine)] : []),
    ...(report.notes.length > 0 ? ["", ...report.notes] : []),
  ].join("\n");
}

/** An autocannon result as a scenario's row (scenarios that drive autocannon themselves use it). */
export function summarizeCannon(
  meta: { name: string; scenario: string; server: string; role: ServerRole; description: string },
  path: string,
  r: autocannon.Result,
): ScenarioResult {
  return {
    ...meta,
    path,
    requestsPerSec: r.duration > 0 ? r.requests.total / r.duration : 0,
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

function _goalLine(g: Goal): string {
  return `  ${g.met ? "met    " : "NOT met"}  ${g.name}: ${g.measured}; goal ${g.target}`;
}

/** autocannon reports latency percentiles in whole milliseconds: no invented decimals. */
function _ms(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

function _thousands(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

function _x(n: number): string {
  return Number.isFinite(n) ? `${n.toFixed(2)}x` : "n/a";
}
