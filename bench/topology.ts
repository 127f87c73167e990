/**
 * `npm run bench:topology`: capacity of the scale-out topology on this machine (issue 15,
 * docs/deployment.md "Capacity"). The topology of the topology test, started here: Redis, the
 * MongoDB-wire server, the regulator simulator, gateway processes (`npm start`'s entry) and nginx
 * running deploy/nginx.conf in front of them. Through nginx, at the fixed load settings of
 * `npm run bench`:
 *
 *   sign    billed Pass-through signs (`POST /api/v1/invoice/sign`, a new invoice, key and IRN per
 *           request): debit, regulator sign, settlement — the hot path of the wallet
 *   intake  Stored intakes (202, a new invoice per request); no worker runs, so this is the
 *           gateway and the store, not the processor
 *
 * Each is measured with 1 gateway and with 2, in one run, in the order 1, 2, 2, 1 (the two passes
 * of each are averaged: a drift of the shared machine cancels out of the ratio), each pass on a
 * fresh topology (the MongoDB-wire server slows down with every document it holds). The ratio is
 * the figure to read (ARCHITECTURE.md §8: absolute numbers drift ±30 % between runs on these shared
 * machines). The load runs on this process's main thread; every server is its own process.
 *
 *   npm run bench:topology
 *   BENCH_DURATION=5 BENCH_CONNECTIONS=16 npm run bench:topology     other settings
 *
 * Then the cost of one operation, counted rather than timed: a gateway composed in this process on
 * a topology's Redis and store, through counting wrappers of the ports, signs and takes in 100
 * invoices, then its workers process what it took in (to signed); the calls per operation to the
 * document store (reads, writes) and to Redis are printed, with the CPU each process spent per
 * answer during the timed passes. They are the basis of the paper extrapolation in docs/deployment.md.
 *
 * Needs redis-server, nginx and the MongoDB-wire server (as the topology test does). The JSON
 * result goes to bench/results/<timestamp>-<sha>-topology.json. Exit 1 on any non-2xx answer or
 * connection error (a bench of refusals measures nothing).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import autocannon from "autocannon";
import { request } from "undici";
import type { DocumentStore } from "../adapters/ports.ts";
import { STORED_COLLECTIONS, type InvoiceDoc } from "../plugins/stored-processing/store.ts";
import { composeGateway } from "../boot/compose.ts";
import { openCoordination, openDocumentStore } from "../boot/open-ports.ts";
import { createLogger } from "../core/log.ts";
import { ADMIN_KEY, DEMO_KEY, PASSTHROUGH, STORED, STORED_BUSINESS, STORED_KEY } from "../test/support/gateway.ts";
import { isTopologySkip, SCALE_OUT_EDGE, startTopology, type Topology } from "../test/support/topology.ts";
import { DEMO, demoInvoice, STORED_DEMO, storedDemoInvoice } from "../test/adapters/regulator/simulator/simulator-helpers.ts";
import { gitShortSha, RESULTS_DIR, summarizeCannon } from "./report.ts";
import { benchSettings, type BenchSettings, type ScenarioResult } from "./run.ts";
import { benchLimits } from "./servers/common.ts";

const SIGN_PATH = "/api/v1/invoice/sign";
/** Operations the per-operation cost is averaged over. */
const COST_SAMPLE = 100;

export interface OperationCost {
  storeReads: number;
  storeWrites: number;
  coordination: number;
  /** Calls per operation by `collection.method` / `coordination.method`. */
  calls: Record<string, number>;
}

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
  /** Calls per operation to the document store and to the coordination store (Redis), by method. */
  /** `processing`: the processor's work per Stored invoice taken in (to signed), polling included. */
  costs: { sign: OperationCost; intake: OperationCost; processing: OperationCost };
  problems: string[];
}

export async function runTopologyBench(settings: BenchSettings, progress: (line: string) => void): Promise<TopologyBenchReport> {
  const startedAt = new Date().toISOString();
  const loadStart = loadavg();
  // A-B-B-A: 1 gateway, 2, 2, 1 — a drift of the shared machine during the run cancels out of the
  // ratio. Every pass gets a fresh topology: the MongoDB-wire server slows down with every document
  // it holds (docs/bench.md), so each pass starts from the same empty store.
  const passes: ScenarioResult[] = [];
  for (const kind of ["sign", "intake"] as const)
    for (const gateways of [1, 2, 2, 1]) {
      const name = `${kind}-${gateways === 1 ? "1-gateway" : `${gateways}-gateways`}`;
      await _withTopology(gateways, async (topo) => {
        const run = (seconds: number) => _cannon(topo.url, kind, settings, seconds);
        if (settings.warmup > 0) {
          progress(`${name}: warm-up ${settings.warmup} s`);
          await run(settings.warmup);
        }
        progress(`${name}: measuring ${settings.duration} s (-c ${settings.connections} -p ${settings.pipelining}) through nginx`);
        const cpuBefore = _cpuOfChildren();
        const selfBefore = process.cpuUsage();
        const raw = await run(settings.duration);
        const pass = summarizeCannon({ name, scenario: kind, server: `${gateways}-gateway`, role: "subject", description: _describe(kind, gateways) }, SIGN_PATH, raw);
        const self = process.cpuUsage(selfBefore);
        pass.extra = { ..._cpuPerRequest(cpuBefore, _cpuOfChildren(), pass.status2xx, self.user + self.system), ..._refusals(raw) };
        progress(`${name}: ${Math.round(pass.requestsPerSec)} req/s, p99 ${pass.latency.p99} ms; CPU µs per answer ${JSON.stringify(pass.extra)}`);
        passes.push(pass);
      });
    }
  const scenarios = [...new Set(passes.map((p) => p.name))].map((name) => _merge(passes.filter((p) => p.name === name)));
  progress(`per-operation cost: ${COST_SAMPLE} signs, ${COST_SAMPLE} intakes and their processing, through counting ports`);
  const costs = await _withTopology(1, _costs);
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
    costs,
    problems,
  };
}

/** A fresh topology with `gateways` gateways behind nginx, the demo business onboarded and its wallet topped up. */
async function _withTopology<T>(gateways: number, use: (topo: Topology) => Promise<T>): Promise<T> {
  const topo = await startTopology({ name: "bench", gateways, workers: 0, logLevel: "error", patch: _benchLimits });
  if (isTopologySkip(topo)) throw new Error(`bench topology: ${topo.skip}`);
  try {
    await _prepare(topo);
    return await use(topo);
  } finally {
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
    "",
    ...r.scenarios
      .filter((x) => Object.keys(x.extra ?? {}).some((k) => k.startsWith("status")))
      .map((x) => `${x.name} non-2xx: ${Object.entries(x.extra!).filter(([k]) => k.startsWith("status")).map(([k, v]) => `${k.slice("status".length)} ×${v}`).join(", ")}`),
    "CPU per 2xx answer (µs, all processes of a role, mean of the two passes):",
    ...r.scenarios.map(
      (x) =>
        `  ${x.name}: ${Object.entries(x.extra ?? {})
          .filter(([k]) => k.startsWith("cpuUs_"))
          .map(([k, v]) => `${k.slice("cpuUs_".length)} ${v}`)
          .join(", ")}`,
    ),
    "",
    ...(["sign", "intake", "processing"] as const).map((k) => {
      const c = r.costs[k];
      const top = Object.entries(c.calls)
        .map(([name, n]) => `${name} ${n}`)
        .join(", ");
      return `per ${k === "processing" ? "Stored invoice processed (to signed)" : k}: ${c.storeReads} store reads, ${c.storeWrites} store writes, ${c.coordination} Redis calls (${top})`;
    }),
  ].join("\n");
}

// --- Internal helpers ---

function _describe(kind: "sign" | "intake", gateways: number): string {
  const what = kind === "sign" ? "billed Pass-through signs (a new invoice per request)" : "Stored intakes (202, a new invoice per request)";
  return `${what} through nginx to ${gateways} gateway process${gateways === 1 ? "" : "es"}, Redis + MongoDB-wire server (fresh per pass)`;
}

function _benchLimits(raw: Record<string, any>): void {
  raw.limits = benchLimits();
}

/** The represented business on both demo domains, and wallets that cover every sign and intake of the run. */
async function _prepare(topo: Topology): Promise<void> {
  const call = async (path: string, host: string, headers: Record<string, string>, body: unknown) => {
    const res = await request(topo.url + path, { method: "POST", headers: { host, "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`bench topology: ${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  };
  await call("/sub-businesses", PASSTHROUGH, { "x-api-key": DEMO_KEY, "x-idempotency-key": "bench-topology-onboard" }, { regulatorCredentials: { email: DEMO.email, password: DEMO.password } });
  await call("/admin/wallets/demo/credits", PASSTHROUGH, { "x-admin-api-key": ADMIN_KEY }, { amount: 50_000_000, reference: "bench-topology-top-up" });
  // The Stored demo host belongs to its own business, which represents its own taxpayer (a taxpayer is
  // represented under one top-level business).
  await call("/sub-businesses", STORED, { "x-api-key": STORED_KEY, "x-idempotency-key": "bench-topology-onboard-stored" }, { regulatorCredentials: { email: STORED_DEMO.email, password: STORED_DEMO.password } });
  await call(`/admin/wallets/${STORED_BUSINESS}/credits`, PASSTHROUGH, { "x-admin-api-key": ADMIN_KEY }, { amount: 50_000_000, reference: "bench-topology-top-up-stored" });
}

const RUN_ID = Math.random().toString(36).slice(2, 8).toUpperCase();
let _next = 0;

/** autocannon at the fixed settings; every request is a new invoice (own key, own reference / IRN). */
function _cannon(url: string, kind: "sign" | "intake", settings: BenchSettings, seconds: number): Promise<autocannon.Result> {
  const base = _headers(kind);
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
          const body = kind === "sign" ? JSON.stringify(demoInvoice(ref)) : _storedIntake(ref);
          return { ...req, headers: { ...base, "x-idempotency-key": `bench-${ref}` }, body };
        },
      },
    ],
  });
}

/**
 * Calls per sign and per intake, counted at the ports of a gateway composed in this process on the
 * topology's Redis and store (the production composition; only the ports are wrapped). Warmed up
 * first (caches filled), so the figures are the steady state.
 */
async function _costs(topo: Topology): Promise<{ sign: OperationCost; intake: OperationCost; processing: OperationCost }> {
  const counts = new Map<string, number>();
  const gateway = await composeGateway(topo.config, {
    log: createLogger({ level: "silent", sink: () => {} }),
    ports: { documentStore: _countingStore(await openDocumentStore(topo.config), counts), coordination: _counting(await openCoordination(topo.config), "coordination", counts) },
    regulatorBaseUrls: { TEST: topo.simulatorUrl, LIVE: topo.simulatorUrl },
  });
  const edge = { [SCALE_OUT_EDGE.secretHeader]: topo.edgeSecret, [SCALE_OUT_EDGE.clientAddressHeader]: "127.0.0.1" };
  const send = async (kind: "sign" | "intake", ref: string) => {
    const host = kind === "sign" ? PASSTHROUGH : STORED;
    const res = await gateway.fetch(
      new Request(`http://${host}${SIGN_PATH}`, {
        method: "POST",
        headers: { ..._headers(kind), ...edge, "x-idempotency-key": `cost-${ref}` },
        body: kind === "sign" ? JSON.stringify(demoInvoice(ref)) : _storedIntake(ref),
      }),
    );
    if (res.status >= 300) throw new Error(`bench topology: a ${kind} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    await res.arrayBuffer();
  };
  const method = (k: string) => k.slice(k.lastIndexOf(".") + 1);
  /** The calls counted since `counts.clear()`, per operation. */
  const costOf = (operations: number): OperationCost => {
    const per = (n: number) => Math.round((n / operations) * 100) / 100;
    const calls = Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => [k, per(n)]));
    const sum = (pick: (name: string) => boolean) => per([...counts].filter(([k]) => pick(k)).reduce((a, [, n]) => a + n, 0));
    return {
      storeReads: sum((k) => !k.startsWith("coordination.") && READS.has(method(k))),
      storeWrites: sum((k) => !k.startsWith("coordination.") && !READS.has(method(k))),
      coordination: sum((k) => k.startsWith("coordination.")),
      calls,
    };
  };
  const measure = async (kind: "sign" | "intake"): Promise<OperationCost> => {
    for (let i = 0; i < 10; i++) await send(kind, `W${kind[0]!.toUpperCase()}${RUN_ID}${i}`);
    counts.clear();
    for (let i = 0; i < COST_SAMPLE; i++) await send(kind, `C${kind[0]!.toUpperCase()}${RUN_ID}${i}`);
    return costOf(COST_SAMPLE);
  };
  /** The background work of the invoices taken in: this gateway's workers (the processor among them) sign them all. */
  const processing = async (): Promise<OperationCost> => {
    const invoices = topo.store.collection<InvoiceDoc>(STORED_COLLECTIONS.invoices);
    const total = await invoices.count({});
    counts.clear();
    await gateway.startWorkers();
    const deadline = Date.now() + 300_000;
    while ((await invoices.count({ status: "signed" })) < total) {
      if (Date.now() > deadline) throw new Error("bench topology: the processor did not sign the invoices taken in");
      await new Promise((r) => setTimeout(r, 100));
    }
    return costOf(total);
  };
  try {
    const sign = await measure("sign");
    const intake = await measure("intake");
    return { sign, intake, processing: await processing() };
  } finally {
    await gateway.close();
  }
}

const READS = new Set(["get", "findOne", "find", "count"]);

/** Counts every call of every method of `target` as `<name>.<method>`. */
function _counting<T extends object>(target: T, name: string, counts: Map<string, number>): T {
  return new Proxy(target, {
    get(t, prop, receiver) {
      const value = Reflect.get(t, prop, receiver) as unknown;
      if (typeof value !== "function" || prop === "close" || prop === "ping" || prop === "collection") return value;
      return (...args: unknown[]) => {
        counts.set(`${name}.${String(prop)}`, (counts.get(`${name}.${String(prop)}`) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(t, args);
      };
    },
  });
}

/** A Stored intake body: the Stored demo taxpayer's invoice, its IRN built by the gateway from `invoice_reference`. */
function _storedIntake(reference: string): string {
  const doc = storedDemoInvoice(reference);
  delete doc.business_id;
  delete doc.irn;
  doc.invoice_reference = reference;
  return JSON.stringify(doc);
}

/** A document store whose collections count their calls as `<collection>.<method>`. */
function _countingStore(store: DocumentStore, counts: Map<string, number>): DocumentStore {
  return new Proxy(store, {
    get(t, prop, receiver) {
      if (prop !== "collection") return Reflect.get(t, prop, receiver);
      return (name: string, spec?: unknown) => _counting((t.collection as (n: string, s?: unknown) => object)(name, spec), name, counts);
    },
  });
}

function _headers(kind: "sign" | "intake"): Record<string, string> {
  return kind === "sign"
    ? { host: PASSTHROUGH, "x-api-key": DEMO_KEY, "x-sub-business-id": DEMO.businessId, "x-attempt-number": "1", "content-type": "application/json" }
    : { host: STORED, "x-api-key": STORED_KEY, "x-sub-business-id": STORED_DEMO.businessId, "content-type": "application/json" };
}

/** CPU time (clock ticks) of every process this process started, by role: gateway, simulator, jongodb, redis, nginx. */
function _cpuOfChildren(): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    let cmdline: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ");
    } catch {
      continue; // gone meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[1]) !== process.pid) continue; // ppid
    const role = / core\/main\.ts/.test(cmdline)
      ? "gateway"
      : /simulator\/main\.ts/.test(cmdline)
        ? "simulator"
        : /jongodb/.test(cmdline)
          ? "jongodb"
          : /redis-server/.test(cmdline)
            ? "redis"
            : /nginx/.test(cmdline)
              ? "nginx"
              : "other";
    if (role !== "other") ticks.set(role, (ticks.get(role) ?? 0) + Number(fields[11]) + Number(fields[12])); // utime + stime
  }
  return ticks;
}

/** CPU microseconds per 2xx answer by role between two readings (clock ticks of 10 ms), and of the load generator (this process). */
function _cpuPerRequest(before: Map<string, number>, after: Map<string, number>, answers: number, loadUs: number): Record<string, number> {
  const per = (us: number) => (answers > 0 ? Math.round(us / answers) : 0);
  const out: Record<string, number> = {};
  for (const [role, t] of [...after].sort(([a], [b]) => a.localeCompare(b))) out[`cpuUs_${role}`] = per((t - (before.get(role) ?? 0)) * 10_000);
  out.cpuUs_load = per(loadUs);
  return out;
}

/** How many answers of each non-2xx status a pass got (`status503: 12`): what a failed bench refused. */
function _refusals(raw: autocannon.Result): Record<string, number> {
  const stats = ((raw as { statusCodeStats?: Record<string, { count?: number }> }).statusCodeStats ?? {}) as Record<string, { count?: number }>;
  return Object.fromEntries(Object.entries(stats).filter(([code]) => !code.startsWith("2")).map(([code, st]) => [`status${code}`, st.count ?? 0]));
}

/** Two passes of one scenario as one row: requests and answers summed, rates and latencies averaged. */
function _merge(passes: ScenarioResult[]): ScenarioResult {
  const mean = (f: (p: ScenarioResult) => number) => Math.round((passes.reduce((a, p) => a + f(p), 0) / passes.length) * 10) / 10;
  const sum = (f: (p: ScenarioResult) => number) => passes.reduce((a, p) => a + f(p), 0);
  const first = passes[0]!;
  return {
    ...first,
    requestsPerSec: mean((p) => p.requestsPerSec),
    latency: { mean: mean((p) => p.latency.mean), p50: mean((p) => p.latency.p50), p90: mean((p) => p.latency.p90), p99: mean((p) => p.latency.p99), max: Math.max(...passes.map((p) => p.latency.max)) },
    requests: sum((p) => p.requests),
    status2xx: sum((p) => p.status2xx),
    non2xx: sum((p) => p.non2xx),
    errors: sum((p) => p.errors),
    timeouts: sum((p) => p.timeouts),
    seconds: sum((p) => p.seconds),
    extra: {
      ...Object.fromEntries(passes.map((p, i) => [`pass${i + 1}ReqPerSec`, Math.round(p.requestsPerSec)])),
      ...Object.fromEntries(
        [...new Set(passes.flatMap((p) => Object.keys(p.extra ?? {})))].map((k) => [k, k.startsWith("status") ? sum((p) => p.extra?.[k] ?? 0) : Math.round(mean((p) => p.extra?.[k] ?? 0))]),
      ),
    },
  };
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
