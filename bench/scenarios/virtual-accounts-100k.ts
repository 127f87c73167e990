/**
 * Scenario "virtual-accounts-100k": one business with 100 000 virtual accounts, listed over real
 * HTTP through the full gateway with the spec's filters, on the embedded default store (an SQLite
 * file in a temporary folder; `memory`: SQLite in memory) and on the MongoDB-compatible server
 * (jongodb, or MONGODB_URI).
 *
 *   npx tsx bench/scenarios/virtual-accounts-100k.ts
 *   VA_BENCH_COUNT=1000000 VA_BENCH_STORES=sqlite npx tsx bench/scenarios/virtual-accounts-100k.ts
 *   VA_BENCH_COUNT=20000 VA_BENCH_STORES=mongodb npx tsx bench/scenarios/virtual-accounts-100k.ts
 *
 * env: VA_BENCH_COUNT (accounts on the embedded store, default 100000), VA_BENCH_MONGO_COUNT
 * (accounts on MongoDB, default min(VA_BENCH_COUNT, 20000): jongodb slows down with every document,
 * see docs/bench.md), VA_BENCH_REQUESTS / VA_BENCH_MONGO_REQUESTS (measured requests per query,
 * default 30 / 10), VA_BENCH_STORES (comma list of sqlite, memory, mongodb; default sqlite,mongodb),
 * VA_BENCH_SKIP (comma list: the queries whose name starts with one of them are not run, e.g. `search`),
 * VA_BENCH_FILE (the `sqlite` store's file, kept after the run with `<file>.seed.json`: what the
 * seeder counted and when; a later run with the same count reuses it instead of seeding again, its
 * gateway's clock started at the seeding instant so every expected total still holds),
 * VA_BENCH_CPU_PROF (a file: a CPU profile of the measured requests, for `npx tsx bench/profile-top.ts`).
 *
 * Seeding writes the accounts as the service stores them straight through the store's port (not
 * 100 000 HTTP calls, nor the service: 2 048 inserts in flight, so the file's commits gather many;
 * the list's totals are counted once at the first list, as for a database written before the
 * counters); for MongoDB into a
 * scratch SQLite store in memory whose documents are then copied with
 * insertMany (1000 per batch; jongodb's cost per write command grows with the collection, so
 * one insertOne per account is quadratic there). Accounts created over the last 30 days (one clock step per account), 60 % multi_use and
 * 40 % single_use (each expiring 1–23 h after its creation, so all but the last day's are expired),
 * 5 % toggled inactive, a tenth of the still-open single_use accounts consumed by a payment. No
 * expiry falls within the 20 minutes after seeding (those are moved just before it), so the counts
 * stay exact while the run lasts (90 minutes: a million accounts take minutes to seed).
 * The seeder counts each derived status, and every measured query's `meta.total` is checked
 * against those counts (a fast wrong answer measures nothing).
 *
 * Every query is first sent once (warm-up); then each query: 3 more warm-up requests, then VA_BENCH_REQUESTS sequential requests on one keep-alive
 * connection (a timed loop: latency of one request at a time, no queueing), p50/p99/mean/max in ms.
 * Results are printed as a table and written to bench/results/virtual-accounts-<ISO time>-<sha>.json.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { randomBytes, randomUUID } from "node:crypto";
import { MongoClient, type Document } from "mongodb";
import { Agent, request } from "undici";
import { createMongoDocumentStore } from "../../adapters/document-store/mongodb.ts";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import { createSandboxPaymentProcessor } from "../../adapters/payments/sandbox.ts";
import type { DocumentStore } from "../../adapters/ports.ts";
import { createWebhookOutbox } from "../../adapters/webhooks/outbox.ts";
import { composeGateway } from "../../boot/compose.ts";
import { createLogger } from "../../core/log.ts";
import { serveGateway } from "../../core/server.ts";
import { createCollectionsPlugin } from "../../plugins/collections/plugin.ts";
import { newReference } from "../../plugins/collections/shared/common.ts";
import { CURRENCY } from "../../plugins/collections/shared/money.ts";
import { NEVER, VIRTUAL_ACCOUNTS_COLLECTION, deriveStatus, openVirtualAccounts, type VirtualAccount } from "../../plugins/collections/virtual-accounts/account.ts";
import { health } from "../../plugins/health/plugin.ts";
import { BEARER_DEMO, testConfig } from "../../test/support/gateway.ts";
import { isMongoSkip, startMongoServer } from "../../test/support/mongo-server.ts";
import { RESULTS_DIR, gitShortSha } from "../report.ts";
import type { BenchScenario, ScenarioResult } from "../run.ts";
import { benchLimits } from "../servers/common.ts";
import { startCpuProfile } from "../cpu-profile.ts";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const BUSINESS = "demo";
const BULK_BATCH = 1000;

export interface QueryResult {
  name: string;
  path: string;
  total: number;
  items: number;
  requests: number;
  latencyMs: { p50: number; p99: number; mean: number; max: number };
  /** CPU of this process (gateway and client) per measured request, ms: steadier than latency on a loaded machine. */
  cpuMsPerRequest: number;
}

export interface StoreResult {
  store: string;
  accounts: number;
  seedSeconds: number;
  seedPerSecond: number;
  counts: Record<string, number>;
  queries: QueryResult[];
}

/** `sqlite`: the embedded default, a file; `memory`: SQLite in memory; `mongodb`: jongodb or MONGODB_URI. */
export type VaBenchStore = "sqlite" | "memory" | "mongodb";

export const VA_BENCH_STORES: readonly VaBenchStore[] = ["sqlite", "memory", "mongodb"];

export interface VirtualAccountsBenchOptions {
  count: number;
  mongoCount: number;
  requests: number;
  mongoRequests: number;
  stores: VaBenchStore[];
  /** The `sqlite` store's file, kept and reused (VA_BENCH_FILE); a temporary folder when absent. */
  keptFile?: string;
  /** Writes a CPU profile of the measured requests there (VA_BENCH_CPU_PROF). */
  cpuProfile?: string;
  progress?: (line: string) => void;
}

/** Runs the scenario on each store in turn; never leaves a server or a jongodb process behind. */
export async function runVirtualAccountsBench(options: VirtualAccountsBenchOptions): Promise<StoreResult[]> {
  const progress = options.progress ?? (() => {});
  const out: StoreResult[] = [];
  for (const kind of options.stores) {
    if (kind === "sqlite" || kind === "memory") {
      const keptFile = kind === "sqlite" ? options.keptFile : undefined;
      const dir = kind === "sqlite" && !keptFile ? mkdtempSync(join(tmpdir(), "gatehouse-va-bench-")) : null;
      const kept = keptFile ? _keptSeed(keptFile, options.count) : null;
      if (keptFile && !kept) for (const f of [keptFile, `${keptFile}-wal`, `${keptFile}-shm`, `${keptFile}.seed.json`]) rmSync(f, { force: true });
      const file = keptFile ?? (dir ? join(dir, "gatehouse.sqlite") : ":memory:");
      const store = await createSqliteDocumentStore({ file });
      try {
        const label = kind === "sqlite" ? "sqlite (file)" : "sqlite (memory)";
        out.push(await _runOnStore(label, store, options.count, options.requests, null, progress, kept, keptFile, options.cpuProfile));
      } finally {
        await store.close();
        if (dir) rmSync(dir, { recursive: true, force: true });
      }
    } else {
      const server = await startMongoServer();
      if (isMongoSkip(server)) {
        progress(`mongodb: skipped (${server.skip})`);
        continue;
      }
      const dbName = server.dbName();
      const client = new MongoClient(server.uri);
      try {
        await client.connect();
        const store = await createMongoDocumentStore({ uri: server.uri, dbName });
        const raw = client.db(dbName).collection<Document>(VIRTUAL_ACCOUNTS_COLLECTION);
        // jongodb's cost per write grows with the collection (see docs/bench.md): the accounts are
        // built by the service on a scratch embedded store, then copied with insertMany.
        const bulk = async (docs: VirtualAccount[]) => {
          await openVirtualAccounts(store).count({}); // the adapter creates the indexes first
          for (let i = 0; i < docs.length; i += BULK_BATCH) {
            await raw.insertMany(
              docs.slice(i, i + BULK_BATCH).map((d) => ({ ...d, _gh_rev: randomBytes(8).toString("hex") }) as unknown as Document),
              { ordered: false },
            );
            if ((i / BULK_BATCH) % 5 === 4) progress(`  … ${(i + BULK_BATCH).toLocaleString("en-US")} copied`);
          }
        };
        const label = server.owned ? "mongodb (jongodb)" : "mongodb (MONGODB_URI)";
        out.push(await _runOnStore(label, store, options.mongoCount, options.mongoRequests, bulk, progress));
      } finally {
        await client.close();
        await server.stop();
      }
    }
  }
  return out;
}

/**
 * The `va-list` scenario of `npm run bench`: the embedded store with VA_BENCH_COUNT accounts (100 000;
 * 10 000 under --quick), every query of this runner; the table row is the default list (newest
 * first, limit 1000), the notes give every query.
 */
export const vaListScenario: BenchScenario = {
  names: ["va-list"],
  async run({ env, progress }) {
    const count = _int(env.VA_BENCH_COUNT, 100_000);
    const requests = _int(env.VA_BENCH_REQUESTS, 30);
    const kept = env.VA_BENCH_FILE ? { keptFile: env.VA_BENCH_FILE } : {};
    const [store] = await runVirtualAccountsBench({ count, mongoCount: 0, requests, mongoRequests: 0, stores: ["sqlite"], progress, ...kept });
    const list = store!.queries[0]!;
    const worst = store!.queries.reduce((a, q) => (q.latencyMs.p99 > a.latencyMs.p99 ? q : a));
    const l = list.latencyMs;
    const result: ScenarioResult = {
      name: "va-list/gateway",
      scenario: "va-list",
      server: "gateway",
      role: "subject",
      description: `GET /api/v1/virtual-account (newest first, limit 1000) over ${count} accounts, one request at a time`,
      path: "/api/v1/virtual-account",
      requestsPerSec: 1000 / l.mean,
      latency: { mean: l.mean, p50: l.p50, p90: Number.NaN, p99: l.p99, max: l.max },
      requests: list.requests,
      status2xx: list.requests,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
      seconds: (l.mean * list.requests) / 1000,
      extra: { accounts: count, worstP99Ms: Math.round(worst.latencyMs.p99 * 10) / 10 },
    };
    const notes = store!.queries.map(
      (q) => `va-list: ${q.name}: p50 ${q.latencyMs.p50.toFixed(1)} ms, p99 ${q.latencyMs.p99.toFixed(1)} ms (total ${q.total}, ${q.items} items)`,
    );
    return { results: [result], notes, problems: [], extra: store };
  },
};

// --- Internal helpers ---

interface _Seeded {
  counts: Record<"active" | "inactive" | "expired" | "single_use" | "multi_use", number>;
  /** A name fragment matching ~1 % of the accounts, and one matching a single account. */
  rareName: string;
  rareCount: number;
  sample: VirtualAccount;
  /** When the seeder derived the statuses it counted (the gateway's clock starts there). */
  now: number;
  /** Bounds of a 3-day creation window (whole UTC days) and how many accounts it holds. */
  window: { start: string; end: string; count: number };
  windowActive: number;
  seconds: number;
  /** The stored documents, when asked to collect them (bulk copy). */
  docs: VirtualAccount[];
}

/**
 * Seeds `count` accounts (as the service stores them, straight into `store`, or — with `bulk` — into a scratch
 * embedded store whose documents `bulk` then copies), serves the gateway on `store` and measures.
 */
async function _runOnStore(
  name: string,
  store: DocumentStore,
  count: number,
  requests: number,
  bulk: ((docs: VirtualAccount[]) => Promise<void>) | null,
  progress: (line: string) => void,
  kept: _Seeded | null = null,
  keptFile?: string,
  cpuProfile?: string,
): Promise<StoreResult> {
  const seeded = kept ?? (await _seedStore(name, store, count, bulk, progress));
  if (kept) progress(`${name}: reusing ${count.toLocaleString("en-US")} accounts seeded ${new Date(kept.now).toISOString()} in ${keptFile}`);
  else if (keptFile) writeFileSync(`${keptFile}.seed.json`, JSON.stringify({ count, seeded: { ...seeded, docs: [] } }));
  // A reused file: the gateway's time starts at the seeding instant (no expiry falls within 90 minutes of it).
  const offset = kept ? Date.now() - kept.now : 0;
  const clock = () => Date.now() - offset;

  const config = testConfig({
    log: { level: "silent", format: "json" },
    limits: benchLimits(),
  });
  const log = createLogger({ level: "silent", sink: () => {} });
  const payments = createSandboxPaymentProcessor();
  const gateway = await composeGateway(config, {
    log,
    plugins: [health, createCollectionsPlugin({ clock })],
    ports: { documentStore: store, webhooks: createWebhookOutbox({ store }), payments },
  });
  const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
  const agent = new Agent({ connections: 1, pipelining: 1, keepAliveTimeout: 30_000 });
  const c = seeded.counts;
  const s = seeded.sample;
  const deepPage = Math.max(1, Math.floor((count * 0.95) / 50));
  const queries: Array<{ name: string; path: string; expectTotal: number }> = [
    { name: "default (limit 1000, newest first)", path: "", expectTotal: count },
    { name: "limit=50", path: "?limit=50", expectTotal: count },
    { name: "status=active", path: "?status=active&limit=50", expectTotal: c.active },
    { name: "status=expired", path: "?status=expired&limit=50", expectTotal: c.expired },
    { name: "status=inactive", path: "?status=inactive&limit=50", expectTotal: c.inactive },
    { name: "accountType=single_use", path: "?accountType=single_use&limit=50", expectTotal: c.single_use },
    { name: "search (name fragment)", path: `?search=${encodeURIComponent(seeded.rareName)}&limit=50`, expectTotal: seeded.rareCount },
    { name: "search (account number)", path: `?search=${s.accountNumber}&limit=50`, expectTotal: -1 },
    { name: "date range (3 days)", path: `?startDate=${seeded.window.start}&endDate=${seeded.window.end}&limit=50`, expectTotal: seeded.window.count },
    {
      name: "status=active + date range + ASC",
      path: `?status=active&startDate=${seeded.window.start}&endDate=${seeded.window.end}&sort=ASC&limit=50`,
      expectTotal: seeded.windowActive,
    },
    { name: `deep page (page=${deepPage}, limit 50)`, path: `?limit=50&page=${deepPage}`, expectTotal: count },
    { name: "reference (exact)", path: `?reference=${s.reference}`, expectTotal: 1 },
    { name: "find?reference=", path: `/find?reference=${s.reference}`, expectTotal: -2 },
  ];
  const results: QueryResult[] = [];
  const profiler = await startCpuProfile(cpuProfile, 200);
  try {
    const skipped = (process.env.VA_BENCH_SKIP ?? "").split(",").map((w) => w.trim()).filter((w) => w !== "");
    const active = queries.filter((q) => !skipped.some((w) => q.name.startsWith(w)));
    // Every query once before any is measured: the first one measured would otherwise also pay for
    // compiling the gateway's list path (JIT) and reading the file's pages from disk.
    for (const q of active) await _requester(server.url, agent, q)();
    for (const q of active) {
      const one = _requester(server.url, agent, q);
      for (let i = 0; i < 3; i++) await one();
      const times: number[] = [];
      const cpu = process.cpuUsage();
      let last: Awaited<ReturnType<typeof one>> | null = null;
      for (let i = 0; i < requests; i++) {
        last = await one();
        times.push(last.ms);
      }
      const body = JSON.parse(last!.text) as { data: unknown; meta?: { total: number } };
      const total = body.meta?.total ?? 1;
      if (q.expectTotal >= 0 && total !== q.expectTotal) throw new Error(`bench: ${q.name}: meta.total ${total}, expected ${q.expectTotal}`);
      if (q.expectTotal === -1 && total < 1) throw new Error(`bench: ${q.name}: nothing found`);
      const items = Array.isArray(body.data) ? (body.data as unknown[]).length : 1;
      const used = process.cpuUsage(cpu);
      const cpuMsPerRequest = (used.user + used.system) / 1000 / requests;
      results.push({ name: q.name, path: q.path, total, items, requests, latencyMs: _stats(times), cpuMsPerRequest });
      const r = results[results.length - 1]!;
      progress(`${name}: ${q.name}: p50 ${r.latencyMs.p50.toFixed(1)} ms, p99 ${r.latencyMs.p99.toFixed(1)} ms, CPU ${cpuMsPerRequest.toFixed(2)} ms per request (total ${total}, ${items} items)`);
    }
  } finally {
    await profiler?.stop();
    await agent.close();
    await server.drain("bench");
    payments.dispose();
  }
  return {
    store: name,
    accounts: count,
    seedSeconds: seeded.seconds,
    seedPerSecond: count / seeded.seconds,
    counts: { ...c },
    queries: results,
  };
}

/** Seeds the store (see `_runOnStore`), reporting how long it took. */
async function _seedStore(
  name: string,
  store: DocumentStore,
  count: number,
  bulk: ((docs: VirtualAccount[]) => Promise<void>) | null,
  progress: (line: string) => void,
): Promise<_Seeded> {
  progress(`${name}: seeding ${count.toLocaleString("en-US")} accounts${bulk ? " (built here, copied with insertMany)" : " (straight through the store)"}`);
  const scratch = bulk ? await createSqliteDocumentStore({ file: ":memory:" }) : null;
  const seeded = await _seed(scratch ?? store, count, 64, progress, bulk !== null);
  if (bulk) {
    const t = performance.now();
    await bulk(seeded.docs);
    await scratch!.close();
    seeded.seconds += (performance.now() - t) / 1000;
    seeded.docs = [];
  }
  progress(`${name}: seeded in ${seeded.seconds.toFixed(1)} s (${Math.round(count / seeded.seconds).toLocaleString("en-US")}/s)`);
  return seeded;
}

/**
 * One timed request of a query: its latency and its body text (any answer but 200 throws). The
 * caller parses only the body it checks: the client shares the gateway's heap, and parsing every
 * 600 KB page of 1 000 accounts left garbage the gateway's collections paid for in later requests.
 */
function _requester(base: string, agent: Agent, q: { name: string; path: string }) {
  const url = `${base}/api/v1/virtual-account${q.path}`;
  return async () => {
    const t = performance.now();
    const res = await request(url, { dispatcher: agent, headers: { host: "localhost", authorization: `Bearer ${BEARER_DEMO}`, accept: "application/json" } });
    const text = await res.body.text();
    const ms = performance.now() - t;
    if (res.statusCode !== 200) throw new Error(`bench: ${q.name} answered ${res.statusCode}: ${text.slice(0, 300)}`);
    return { ms, text };
  };
}

/** The seed of a kept file (VA_BENCH_FILE), when it holds `count` accounts. */
function _keptSeed(file: string, count: number): _Seeded | null {
  if (!existsSync(file) || !existsSync(`${file}.seed.json`)) return null;
  const seed = JSON.parse(readFileSync(`${file}.seed.json`, "utf8")) as { count: number; seeded: _Seeded };
  return seed.count === count ? seed.seeded : null;
}

async function _seed(store: DocumentStore, count: number, concurrency: number, progress: (line: string) => void, collect: boolean): Promise<_Seeded> {
  const realNow = Date.now();
  const start = realNow - 30 * DAY;
  const step = Math.max(1, Math.floor((30 * DAY - HOUR) / count));
  const accounts = openVirtualAccounts(store);
  const counts = { active: 0, inactive: 0, expired: 0, single_use: 0, multi_use: 0 };
  const windowStartMs = Date.UTC(new Date(start).getUTCFullYear(), new Date(start).getUTCMonth(), new Date(start).getUTCDate()) + 10 * DAY;
  const windowEndMs = windowStartMs + 3 * DAY - 1;
  let windowCount = 0;
  let windowActive = 0;
  let rareCount = 0;
  let sample: VirtualAccount | null = null;
  const docs: VirtualAccount[] = [];
  const t0 = performance.now();
  let lastReport = t0;
  const batch = concurrency * 32;
  for (let from = 0; from < count; from += batch) {
    const built: VirtualAccount[] = [];
    for (let i = from; i < Math.min(count, from + batch); i++) {
      const doc = _seedAccount(i, start + i * step, realNow);
      built.push(doc);
      const status = deriveStatus(doc, realNow);
      counts[status]++;
      counts[doc.accountType]++;
      if (doc.createdAt >= windowStartMs && doc.createdAt <= windowEndMs) {
        windowCount++;
        if (status === "active") windowActive++;
      }
      if (doc.accountName.includes("Customer 0042")) rareCount++;
      if (i === Math.floor(count / 2)) sample = doc;
    }
    // One batch in flight: the store gathers its inserts into few commits.
    await Promise.all(built.map((d) => accounts.insert(d)));
    if (collect) docs.push(...built);
    if (performance.now() - lastReport > 5000) {
      lastReport = performance.now();
      progress(`  … ${(from + built.length).toLocaleString("en-US")} accounts`);
    }
  }
  return {
    counts,
    rareName: "customer 0042",
    rareCount,
    sample: sample!,
    now: realNow,
    window: { start: new Date(windowStartMs).toISOString().slice(0, 10), end: new Date(windowEndMs).toISOString().slice(0, 10), count: windowCount },
    windowActive,
    seconds: (performance.now() - t0) / 1000,
    docs,
  };
}

/**
 * Account `i` as the service stores it after its life so far (createVirtualAccountService's
 * creation, then toggle-status or a payment): 40 % single_use expiring 1–23 h after creation, 5 %
 * toggled inactive, a tenth of the still-open single_use accounts consumed.
 */
function _seedAccount(i: number, createdAt: number, realNow: number): VirtualAccount {
  const single = i % 5 < 2;
  let expiresAtMs = single ? createdAt + HOUR + (i % 23) * HOUR : null;
  // No expiry during the run (the counts must stay true while it lasts): move those back.
  if (expiresAtMs !== null && expiresAtMs > realNow - 60_000 && expiresAtMs < realNow + 90 * 60_000) expiresAtMs = realNow - 2 * 60_000;
  const consumed = single && i % 20 !== 7 && i % 10 === 0 && expiresAtMs! > realNow;
  return {
    _id: randomUUID(),
    businessId: BUSINESS,
    reference: newReference("VA-"),
    sourceReference: `bench-${i}`,
    accountNumber: String(1_000_000_000 + i),
    accountName: `Customer ${String(i).padStart(6, "0")} ${i % 7 === 0 ? "Ventures" : "Stores"}`,
    accountType: single ? "single_use" : "multi_use",
    amountKobo: i % 3 === 0 ? 500_000 : null,
    currency: CURRENCY,
    enabled: i % 20 !== 7,
    consumed,
    consumedBySessionId: consumed ? `bench-session-${i}` : null,
    consumedAt: consumed ? createdAt : null,
    expiresAtMs,
    openUntil: consumed ? 0 : single ? expiresAtMs! : NEVER,
    createdAt,
    updatedAt: createdAt,
  };
}

function _stats(times: number[]): QueryResult["latencyMs"] {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return {
    p50: at(50),
    p99: at(99),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    max: sorted[sorted.length - 1]!,
  };
}

function _table(results: StoreResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(
      `${r.store}: ${r.accounts.toLocaleString("en-US")} accounts seeded in ${r.seedSeconds.toFixed(1)} s (${Math.round(r.seedPerSecond).toLocaleString("en-US")}/s); ` +
        `active ${r.counts.active}, inactive ${r.counts.inactive}, expired ${r.counts.expired}`,
    );
    const header = ["query", "total", "items", "p50 ms", "p99 ms", "mean ms", "max ms", "CPU ms/req"];
    const rows = r.queries.map((q) => [
      q.name,
      String(q.total),
      String(q.items),
      q.latencyMs.p50.toFixed(1),
      q.latencyMs.p99.toFixed(1),
      q.latencyMs.mean.toFixed(1),
      q.latencyMs.max.toFixed(1),
      q.cpuMsPerRequest.toFixed(2),
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
    lines.push(line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line), "");
  }
  return lines.join("\n");
}

function _int(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`bench: expected a positive integer, got "${raw}"`);
  return n;
}

async function _main(): Promise<void> {
  const count = _int(process.env.VA_BENCH_COUNT, 100_000);
  const options: VirtualAccountsBenchOptions = {
    count,
    mongoCount: _int(process.env.VA_BENCH_MONGO_COUNT, Math.min(count, 20_000)),
    requests: _int(process.env.VA_BENCH_REQUESTS, 30),
    mongoRequests: _int(process.env.VA_BENCH_MONGO_REQUESTS, 10),
    stores: (process.env.VA_BENCH_STORES ?? "sqlite,mongodb").split(",").map((x) => x.trim()) as VaBenchStore[],
    ...(process.env.VA_BENCH_FILE ? { keptFile: process.env.VA_BENCH_FILE } : {}),
    ...(process.env.VA_BENCH_CPU_PROF ? { cpuProfile: process.env.VA_BENCH_CPU_PROF } : {}),
    progress: (line) => process.stdout.write(`  ${line}\n`),
  };
  for (const s of options.stores) if (!VA_BENCH_STORES.includes(s)) throw new Error(`bench: unknown store "${s}"`);
  const startedAt = new Date().toISOString();
  process.stdout.write(`virtual-accounts-100k: ${options.stores.join(" + ")}, ${options.requests} requests per query\n`);
  const results = await runVirtualAccountsBench(options);
  process.stdout.write("\n" + _table(results));
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `virtual-accounts-${startedAt.replaceAll(":", "-")}-${gitShortSha()}.json`);
  writeFileSync(file, JSON.stringify({ scenario: "virtual-accounts-100k", startedAt, node: process.version, options: { ...options, progress: undefined }, results }, null, 2) + "\n");
  process.stdout.write(`result written to ${file}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  _main().catch((e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  });
}
