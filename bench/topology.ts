/**
 * `npm run bench:topology`: capacity of the scale-out topology on this machine (issue 15,
 * docs/deployment.md "Capacity"). The topology of the topology test, started here: Redis, the
 * MongoDB-wire server, the regulator simulator, two gateway processes (`npm start`'s entry) and
 * nginx running deploy/nginx.conf — twice: one nginx with both gateways as upstreams, one with the
 * first gateway only. Through each, at the fixed load settings of `npm run bench`:
 *
 *   sign    billed Pass-through signs (`POST /api/v1/invoice/sign`, a new invoice, key and IRN per
 *           request): debit, regulator sign, settlement — the hot path of the wallet
 *   intake  Stored intakes (202, a new invoice per request); no worker runs, so this is the
 *           gateway and the store, not the processor
 *
 * Measured in one run, 1 gateway then 2 gateways for each, so the ratio is the figure to read
 * (ARCHITECTURE.md §8: absolute numbers drift ±30 % between runs on these shared machines). The
 * load runs on this process's main thread; every server is its own process.
 *
 *   npm run bench:topology
 *   BENCH_DURATION=5 BENCH_CONNECTIONS=32 npm run bench:topology     a quicker look
 *
 * Needs redis-server, nginx and the MongoDB-wire server (as the topology test does). The JSON
 * result goes to bench/results/<timestamp>-<sha>-topology.json. Exit 1 on any non-2xx answer or
 * connection error (a bench of refusals measures nothing).
 */
import { writeFileSync, mkdirSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import autocannon from "autocannon";
import { request } from "undici";
import { ADMIN_KEY, DEMO_KEY, PASSTHROUGH, STORED } from "../test/support/gateway.ts";
import { startNginx, isNginxSkip, type NginxHandle } from "../test/support/nginx.ts";
import { freePort } from "../test/support/ports.ts";
import { isTopologySkip, startTopology, type Topology } from "../test/support/topology.ts";
import { DEMO, demoInvoice } from "../test/simulator/simulator-helpers.ts";
import { gitShortSha, RESULTS_DIR, summarizeCannon } from "./report.ts";
import { benchSettings, type BenchSettings, type ScenarioResult } from "./run.ts";
import { BENCH_LIMIT } from "./scenarios/gateway-pipeline.ts";
import { intakeTemplate } from "./scenarios/stored.ts";

const SIGN_PATH = "/api/v1/invoice/sign";

export interface TopologyBenchReport {
  startedAt: string;
  sha: string;
  node: string;
  cpu: string;
  cores: number;
  loadavg: { start: number[]; end: number[] };
  settings: BenchSettings;
  scenarios: ScenarioResult[];
  /** 2 gateways / 1 gateway, requests per second, from this run. */
  ratios: { sign: number; intake: number };
  problems: string[];
}

export async function runTopologyBench(settings: BenchSettings, progress: (line: string) => void): Promise<TopologyBenchReport> {
  const startedAt = new Date().toISOString();
  const loadStart = loadavg();
  const topo = await startTopology({ name: "bench", gateways: 2, workers: 0, logLevel: "error", patch: _benchLimits });
  if (isTopologySkip(topo)) throw new Error(`bench topology: ${topo.skip}`);
  let single: NginxHandle | null = null;
  try {
    const edge = await startNginx(topo.config, { upstreams: [topo.gateways[0]!.address!], edgeSecret: topo.edgeSecret, port: await freePort() });
    if (isNginxSkip(edge)) throw new Error(edge.skip);
    single = edge;
    await _prepare(topo);
    const edges = [
      { label: "1-gateway", url: single.url },
      { label: "2-gateways", url: topo.url },
    ];
    const scenarios: ScenarioResult[] = [];
    for (const kind of ["sign", "intake"] as const)
      for (const e of edges) {
        const name = `${kind}-${e.label}`;
        const run = (seconds: number) => _cannon(e.url, kind, settings, seconds);
        if (settings.warmup > 0) {
          progress(`${name}: warm-up ${settings.warmup} s`);
          await run(settings.warmup);
        }
        progress(`${name}: measuring ${settings.duration} s (-c ${settings.connections} -p ${settings.pipelining}) through nginx`);
        scenarios.push(summarizeCannon({ name, description: _describe(kind, e.label) }, SIGN_PATH, await run(settings.duration)));
      }
    const rps = (name: string) => scenarios.find((s) => s.name === name)?.requestsPerSec ?? Number.NaN;
    const problems = scenarios.flatMap((r) => [
      ...(r.requests === 0 ? [`${r.name}: no request completed`] : []),
      ...(r.non2xx > 0 ? [`${r.name}: ${r.non2xx} non-2xx responses`] : []),
      ...(r.errors > 0 ? [`${r.name}: ${r.errors} connection errors (${r.timeouts} timeouts)`] : []),
    ]);
    return {
      startedAt,
      sha: gitShortSha(),
      node: process.version,
      cpu: cpus()[0]?.model ?? "unknown",
      cores: availableParallelism(),
      loadavg: { start: _round2(loadStart), end: _round2(loadavg()) },
      settings,
      scenarios,
      ratios: { sign: rps("sign-2-gateways") / rps("sign-1-gateway"), intake: rps("intake-2-gateways") / rps("intake-1-gateway") },
      problems,
    };
  } finally {
    await single?.stop();
    await topo.close();
  }
}

export function formatTopologyReport(r: TopologyBenchReport): string {
  const header = ["scenario", "req/s (mean)", "p50 ms", "p99 ms", "non-2xx", "errors"];
  const rows = r.scenarios.map((s) => [s.name, Math.round(s.requestsPerSec).toLocaleString("en-US"), String(s.latency.p50), String(s.latency.p99), String(s.non2xx), String(s.errors)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  const f = (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : "n/a");
  return [
    `commit ${r.sha}, node ${r.node}, ${r.cores} cores, -c ${r.settings.connections} -d ${r.settings.duration} -p ${r.settings.pipelining}, through nginx`,
    `load average (1/5/15 min): ${r.loadavg.start.join(" ")} before, ${r.loadavg.end.join(" ")} after`,
    "",
    line(header),
    line(widths.map((w) => "-".repeat(w))),
    ...rows.map(line),
    "",
    `ratio 2 gateways / 1 gateway: signs/s ${f(r.ratios.sign)}, intakes/s ${f(r.ratios.intake)} (same run; compare ratios, not absolute numbers)`,
  ].join("\n");
}

// --- Internal helpers ---

function _describe(kind: "sign" | "intake", label: string): string {
  const what = kind === "sign" ? "billed Pass-through signs (a new invoice per request)" : "Stored intakes (202, a new invoice per request)";
  return `${what} through nginx to ${label.replace("-", " ")}, Redis + MongoDB-wire server`;
}

function _benchLimits(raw: Record<string, any>): void {
  raw.limits = {
    admission: { perClient: BENCH_LIMIT, windowSeconds: 1 },
    quotas: {
      sign: { limit: BENCH_LIMIT, windowSeconds: 60 },
      management: { limit: BENCH_LIMIT, windowSeconds: 60 },
      default: { limit: BENCH_LIMIT, windowSeconds: 60 },
    },
  };
}

/** The represented business both domains use, and a wallet that covers every sign of the run. */
async function _prepare(topo: Topology): Promise<void> {
  const call = async (path: string, host: string, headers: Record<string, string>, body: unknown) => {
    const res = await request(topo.url + path, { method: "POST", headers: { host, "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`bench topology: ${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  };
  await call("/sub-businesses", PASSTHROUGH, { "x-api-key": DEMO_KEY, "x-idempotency-key": "bench-topology-onboard" }, { regulatorCredentials: { email: DEMO.email, password: DEMO.password } });
  await call("/admin/wallets/demo/credits", PASSTHROUGH, { "x-admin-api-key": ADMIN_KEY }, { amount: 50_000_000, reference: "bench-topology-top-up" });
}

const RUN_ID = Math.random().toString(36).slice(2, 8).toUpperCase();
let _next = 0;

/** autocannon at the fixed settings; every request is a new invoice (own key, own reference / IRN). */
function _cannon(url: string, kind: "sign" | "intake", settings: BenchSettings, seconds: number): Promise<autocannon.Result> {
  const base =
    kind === "sign"
      ? { host: PASSTHROUGH, "x-api-key": DEMO_KEY, "x-sub-business-id": DEMO.businessId, "x-attempt-number": "1", "content-type": "application/json" }
      : { host: STORED, "x-api-key": DEMO_KEY, "x-sub-business-id": DEMO.businessId, "content-type": "application/json" };
  return autocannon({
    url,
    connections: settings.connections,
    pipelining: settings.pipelining,
    duration: seconds,
    requests: [
      {
        method: "POST",
        path: SIGN_PATH,
        setupRequest(req) {
          const ref = `T${RUN_ID}${(_next++).toString(36).toUpperCase()}`;
          const body = kind === "sign" ? JSON.stringify(demoInvoice(ref)) : intakeTemplate(ref);
          return { ...req, headers: { ...base, "x-idempotency-key": `bench-${ref}` }, body };
        },
      },
    ],
  });
}

function _round2(values: number[]): number[] {
  return values.map((v) => Math.round(v * 100) / 100);
}

async function _main(): Promise<void> {
  // The load runs on this thread: every server is its own process.
  const settings = { ...benchSettings(), workers: 0 };
  const out = (line: string) => process.stdout.write(line + "\n");
  out(`gatehouse bench topology: -c ${settings.connections} -d ${settings.duration} -p ${settings.pipelining} (warm-up ${settings.warmup} s)`);
  const report = await runTopologyBench(settings, (line) => out(`  ${line}`));
  out("");
  out(formatTopologyReport(report));
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${report.startedAt.replace(/:/g, "-")}-${report.sha}-topology.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
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
