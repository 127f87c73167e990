/**
 * Scenario "invoices-list": `GET /invoices` (the merchant's Stored invoices) and `GET /admin/invoices`
 * with their filters, over real HTTP through the full gateway, on the embedded default (an SQLite
 * file in a temporary folder) holding INVOICES_BENCH_COUNT invoices (default 100 000; the goal is
 * stated at 1 000 000).
 *
 *   npm run bench -- --only invoices-list
 *   INVOICES_BENCH_COUNT=1000000 npm run bench -- --only invoices-list
 *
 * Seeding goes straight into the store (not over HTTP): the Stored invoices collection as the
 * product declares it (openStoredInvoices), 1 000 inserts in flight per batch so the writer commits
 * them together. Invoices of business `demo` over the last 90 days (one clock step each), 20
 * sub-businesses, 95 % outbound (60 % transmitted, 30 % signed, the rest pending, rejected,
 * cancelled and 0.5 % frozen) and 5 % inbound (`received`), each with the demo invoice document
 * (~2 KB). Every query is first sent 4 times (warm-up); then each query: 3 more warm-up requests and INVOICES_BENCH_REQUESTS (default 30) sequential
 * requests on one keep-alive connection; p50/p99 in ms. A page must hold as many invoices as the
 * seeder counted for its filter (up to the page size): a fast wrong answer measures nothing.
 * Each query also reports the garbage collections of the process during its measured requests;
 * INVOICES_BENCH_CPU_PROF=<file.cpuprofile> writes a CPU profile of the measured requests
 * (`npx tsx bench/profile-top.ts <file>`).
 *
 * INVOICES_BENCH_FILE=<path> keeps the seeded database there (with `<path>.seed.json`: the count,
 * the seeding instant and what it counted) and a later run with the same count reuses it instead of
 * seeding again: a million invoices take 10–18 minutes to seed, the queries one. The queries are
 * then dated from the seeding instant, so they find what the seeder counted.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PerformanceObserver } from "node:perf_hooks";
import { Agent, request } from "undici";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import { composeGateway } from "../../boot/compose.ts";
import { createLogger } from "../../core/log.ts";
import { serveGateway } from "../../core/server.ts";
import { openStoredInvoices, type InvoiceDoc, type InvoiceStatus } from "../../plugins/invoice/stored-invoices.ts";
import { demoInvoice } from "../../test/adapters/regulator/simulator/simulator-helpers.ts";
import { ADMIN_KEY, STORED, STORED_BUSINESS, STORED_KEY, testConfig } from "../../test/support/gateway.ts";
import { envInt } from "../report.ts";
import type { BenchScenario, ScenarioResult } from "../run.ts";
import { benchLimits } from "../servers/common.ts";
import { startCpuProfile } from "../cpu-profile.ts";

const DAY = 86_400_000;
const SPAN_DAYS = 90;
const SUBS = 20;
const BATCH = 1000;
const PAGE = 50;

export interface InvoiceQueryResult {
  name: string;
  path: string;
  items: number;
  latencyMs: { p50: number; p99: number; mean: number; max: number };
  /** Garbage collections of this process (gateway and client) during the measured requests. */
  gc: { count: number; totalMs: number; maxMs: number };
}

export const invoicesListScenario: BenchScenario = {
  names: ["invoices-list"],
  async run({ env, progress }) {
    const count = envInt(env.INVOICES_BENCH_COUNT, 100_000, 100, "INVOICES_BENCH_COUNT");
    const requests = envInt(env.INVOICES_BENCH_REQUESTS, 30, 1, "INVOICES_BENCH_REQUESTS");
    const r = await runInvoicesListBench(count, requests, progress, env.INVOICES_BENCH_FILE);
    const worst = r.queries.reduce((a, q) => (q.latencyMs.p99 > a.latencyMs.p99 ? q : a));
    const first = r.queries[0]!.latencyMs;
    const result: ScenarioResult = {
      name: "invoices-list/gateway",
      scenario: "invoices-list",
      server: "gateway",
      role: "subject",
      description: `GET /invoices (newest 50) over ${count} Stored invoices on the SQLite file, one request at a time`,
      path: "/invoices",
      requestsPerSec: 1000 / first.mean,
      latency: { mean: first.mean, p50: first.p50, p90: Number.NaN, p99: first.p99, max: first.max },
      requests,
      status2xx: requests,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
      seconds: (first.mean * requests) / 1000,
      extra: { invoices: count, seedSeconds: r.seedSeconds, worstP99Ms: Math.round(worst.latencyMs.p99 * 10) / 10 },
    };
    const notes = r.queries.map(
      (q) =>
        `invoices-list: ${q.name}: p50 ${q.latencyMs.p50.toFixed(1)} ms, p99 ${q.latencyMs.p99.toFixed(1)} ms, max ${q.latencyMs.max.toFixed(1)} ms (${q.items} items; ` +
        `GC ${q.gc.count}× ${q.gc.totalMs.toFixed(1)} ms, longest ${q.gc.maxMs.toFixed(1)} ms)`,
    );
    return { results: [result], notes, problems: r.problems, extra: r };
  },
};

export async function runInvoicesListBench(
  count: number,
  requests: number,
  progress: (line: string) => void,
  keptFile?: string,
): Promise<{ seedSeconds: number; queries: InvoiceQueryResult[]; problems: string[] }> {
  const dir = keptFile ? null : mkdtempSync(join(tmpdir(), "gatehouse-invoices-bench-"));
  const file = keptFile ?? join(dir!, "gatehouse.sqlite");
  const kept = keptFile ? _keptSeed(keptFile, count) : null;
  if (keptFile && !kept) for (const f of [keptFile, `${keptFile}-wal`, `${keptFile}-shm`, `${keptFile}.seed.json`]) rmSync(f, { force: true });
  const store = await createSqliteDocumentStore({ file });
  try {
    const started = performance.now();
    const now = kept?.now ?? Date.now();
    const counts = kept?.counts ?? (await _seed(store, count, now, progress));
    const seedSeconds = Math.round((performance.now() - started) / 100) / 10;
    if (kept) progress(`invoices-list: reusing ${count} invoices seeded ${new Date(now).toISOString()} in ${file}`);
    else progress(`invoices-list: seeded ${count} invoices in ${seedSeconds} s`);
    if (keptFile && !kept) writeFileSync(`${keptFile}.seed.json`, JSON.stringify({ count, now, counts }));
    const config = testConfig({ log: { level: "silent", format: "json" }, limits: benchLimits(), stored: { processor: { enabled: false } } });
    const log = createLogger({ level: "silent", sink: () => {} });
    const gateway = await composeGateway(config, { log, ports: { documentStore: store } });
    const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
    const agent = new Agent({ connections: 1 });
    const profiler = await startCpuProfile(process.env.INVOICES_BENCH_CPU_PROF, 200);
    try {
      const queries: InvoiceQueryResult[] = [];
      const problems: string[] = [];
      // Every query once before any is measured: the first one measured would otherwise also pay
      // for compiling the gateway's list path (JIT), which a serving gateway did long ago.
      for (const q of _queries(now, counts)) await _measure(server.url, agent, q, 1);
      for (const q of _queries(now, counts)) {
        const r = await _measure(server.url, agent, q, requests);
        if (r.items !== Math.min(PAGE, q.expected)) problems.push(`invoices-list: ${q.name}: ${r.items} items, expected ${Math.min(PAGE, q.expected)}`);
        progress(`invoices-list: ${q.name}: p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms, max ${r.latencyMs.max} ms; GC ${r.gc.count}× ${r.gc.totalMs.toFixed(1)} ms (longest ${r.gc.maxMs.toFixed(1)})`);
        queries.push(r);
      }
      return { seedSeconds, queries, problems };
    } finally {
      await profiler?.stop();
      await agent.close();
      await server.drain("bench");
    }
  } finally {
    await store.close().catch(() => {});
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

// --- Internal helpers ---

/** The seed kept beside `file` by an earlier run with the same count, or null. */
function _keptSeed(file: string, count: number): { now: number; counts: _Counts } | null {
  if (!existsSync(file) || !existsSync(`${file}.seed.json`)) return null;
  const seed = JSON.parse(readFileSync(`${file}.seed.json`, "utf8")) as { count: number; now: number; counts: _Counts };
  return seed.count === count ? { now: seed.now, counts: seed.counts } : null;
}

interface _Counts {
  byStatus: Record<string, number>;
  sub7: number;
  inbound: number;
  /** Invoices created on day 30 before now (UTC calendar day). */
  day30: number;
  combined: number;
  total: number;
}

interface _Query {
  name: string;
  path: string;
  admin: boolean;
  expected: number;
}

function _status(i: number): { status: InvoiceStatus; direction: "outbound" | "inbound" } {
  const r = i % 1000;
  if (r < 50) return { status: "received", direction: "inbound" };
  if (r < 55) return { status: "frozen", direction: "outbound" };
  if (r < 75) return { status: "pending", direction: "outbound" };
  if (r < 95) return { status: "rejected", direction: "outbound" };
  if (r < 110) return { status: "cancelled", direction: "outbound" };
  if (r < 410) return { status: "signed", direction: "outbound" };
  return { status: "transmitted", direction: "outbound" };
}

async function _seed(store: Awaited<ReturnType<typeof createSqliteDocumentStore>>, count: number, now: number, progress: (line: string) => void): Promise<_Counts> {
  const invoices = openStoredInvoices(store);
  const document = demoInvoice("BENCHDOC");
  const step = Math.floor((SPAN_DAYS * DAY) / count);
  const from = now - SPAN_DAYS * DAY;
  const day30 = _dayStart(now - 30 * DAY);
  const counts: _Counts = { byStatus: {}, sub7: 0, inbound: 0, day30: 0, combined: 0, total: count };
  for (let b = 0; b < count; b += BATCH) {
    const batch: Array<Promise<unknown>> = [];
    for (let i = b; i < Math.min(count, b + BATCH); i++) {
      const createdAtMs = from + i * step;
      const { status, direction } = _status(i);
      const sub = `sub-${String(i % SUBS).padStart(2, "0")}`;
      counts.byStatus[status] = (counts.byStatus[status] ?? 0) + 1;
      if (sub === "sub-07") counts.sub7++;
      if (direction === "inbound") counts.inbound++;
      const onDay30 = createdAtMs >= day30 && createdAtMs < day30 + DAY;
      if (onDay30) counts.day30++;
      if (onDay30 && sub === "sub-07" && status === "transmitted") counts.combined++;
      batch.push(invoices.insert(_invoice(i, createdAtMs, status, direction, sub, document)));
    }
    await Promise.all(batch);
    if ((b / BATCH) % 100 === 99) progress(`invoices-list: … ${b + BATCH} invoices`);
  }
  return counts;
}

function _invoice(i: number, createdAtMs: number, status: InvoiceStatus, direction: "outbound" | "inbound", sub: string, document: Record<string, unknown>): InvoiceDoc {
  const at = new Date(createdAtMs).toISOString();
  const irn = `BENCH${i.toString(36).toUpperCase()}-94ND90NR-20240611`;
  return {
    _id: `inv-${String(i).padStart(8, "0")}`,
    businessId: STORED_BUSINESS,
    state: "TEST",
    domain: direction === "outbound" ? STORED : null,
    subBusinessId: sub,
    direction,
    irn,
    status,
    statusHistory: [{ status, at }],
    attempts: 1,
    budgetLeft: 3,
    budget: 3,
    lastError: null,
    operationId: `op-${i}`,
    createdAt: at,
    updatedAt: at,
    createdAtMs,
    document: { ...document, irn },
    feeKobo: 5000,
    rev: 1,
    dueAt: null,
    step: "done",
    signAttempt: 1,
    outages: 0,
    billDoubt: false,
    settle: false,
    reverseFor: null,
    events: [],
  } as InvoiceDoc;
}

function _queries(now: number, c: _Counts): _Query[] {
  const day = new Date(_dayStart(now - 30 * DAY)).toISOString().slice(0, 10);
  const m = (name: string, path: string, expected: number, admin = false): _Query => ({ name, path, expected, admin });
  return [
    m("newest 50", "/invoices", c.total),
    m("status=signed", "/invoices?status=signed", c.byStatus.signed ?? 0),
    m("status=frozen (0.5 %)", "/invoices?status=frozen", c.byStatus.frozen ?? 0),
    m("subBusinessId (1 of 20)", "/invoices?subBusinessId=sub-07", c.sub7),
    m("direction=inbound (5 %)", "/invoices?direction=inbound", c.inbound),
    m("one day, 30 days ago", `/invoices?createdFrom=${day}&createdTo=${day}`, c.day30),
    m("one day + subBusinessId + status=transmitted", `/invoices?createdFrom=${day}&createdTo=${day}&subBusinessId=sub-07&status=transmitted`, c.combined),
    m("operator: every business, newest 50", "/admin/invoices", c.total, true),
    m("operator: status=frozen", "/admin/invoices?status=frozen", c.byStatus.frozen ?? 0, true),
  ];
}

async function _measure(base: string, agent: Agent, q: _Query, requests: number): Promise<InvoiceQueryResult> {
  const headers = q.admin ? { host: STORED, "x-admin-api-key": ADMIN_KEY } : { host: STORED, "x-api-key": STORED_KEY };
  const once = async (): Promise<{ ms: number; items: number }> => {
    const t = performance.now();
    const res = await request(base + q.path, { headers, dispatcher: agent });
    const body = (await res.body.json()) as { data?: unknown[] };
    const ms = performance.now() - t;
    if (res.statusCode !== 200) throw new Error(`bench invoices-list: ${q.path} answered ${res.statusCode}: ${JSON.stringify(body).slice(0, 300)}`);
    return { ms, items: body.data?.length ?? 0 };
  };
  for (let i = 0; i < 3; i++) await once();
  const times: number[] = [];
  let items = 0;
  const gc = { count: 0, totalMs: 0, maxMs: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.count++;
      gc.totalMs += e.duration;
      gc.maxMs = Math.max(gc.maxMs, e.duration);
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  for (let i = 0; i < requests; i++) {
    const r = await once();
    times.push(r.ms);
    items = r.items;
  }
  await new Promise((resolve) => setImmediate(resolve)); // the observer's last entries
  observer.disconnect();
  times.sort((a, b) => a - b);
  const at = (p: number) => Math.round(times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)]! * 10) / 10;
  const mean = Math.round((times.reduce((a, b) => a + b, 0) / times.length) * 10) / 10;
  return { name: q.name, path: q.path, items, latencyMs: { p50: at(0.5), p99: at(0.99), mean, max: at(1) }, gc };
}

function _dayStart(ms: number): number {
  return ms - (ms % DAY);
}
