/**
 * Scenario "request-log-pages": the dashboard's request-log pages rendered over real HTTP through
 * the full gateway, on the embedded default (an SQLite file in a temporary folder) holding
 * REQLOG_BENCH_ROWS request-log records (default 1 000 000) of the demo business over the last 7
 * days, plus a tenth as many of another business. Goal: p99 ≤ 50 ms per page.
 *
 *   npm run bench -- --only request-log-pages
 *
 * Seeding goes straight into the store's request-log collection, 5 000 records per insertMany (one
 * statement each). The mix: 90 % 2xx, 8 % 4xx (404 and 401), 2 % 5xx; eight routes and unmatched
 * paths. Each page: 3 warm-up requests, then REQLOG_BENCH_REQUESTS (default 30) sequential requests
 * on one keep-alive connection with the demo owner's session (password and TOTP sign-in).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import type { DocumentStore } from "../../adapters/ports.ts";
import { composeGateway } from "../../boot/compose.ts";
import { createLogger } from "../../core/log.ts";
import { openRequestLogCollection, type RequestLogEntry } from "../../core/request-log/entry.ts";
import { serveGateway } from "../../core/server.ts";
import { DEMO_OWNER } from "../../plugins/dashboard/demo-owner.ts";
import { testConfig } from "../../test/support/gateway.ts";
import { envInt } from "../report.ts";
import { measurePage, pageNotes, signInDashboard, worstPageResult, type PageResult } from "../page-timing.ts";
import type { BenchScenario } from "../run.ts";
import { benchLimits } from "../servers/common.ts";

const BATCH = 5_000;
const HOST = "passthrough.demo.localhost";
const ROUTES = ["/invoices", "/invoices/:irn", "/invoices/:irn/transmit", "/sub-businesses", "/sub-businesses/:id", "/wallet", "/resources/currencies", "/invoices/validate"];

export const requestLogPagesScenario: BenchScenario = {
  names: ["request-log-pages"],
  async run({ env, progress }) {
    const rows = envInt(env.REQLOG_BENCH_ROWS, 1_000_000, 1_000, "REQLOG_BENCH_ROWS");
    const requests = envInt(env.REQLOG_BENCH_REQUESTS, 30, 1, "REQLOG_BENCH_REQUESTS");
    const r = await _run(rows, requests, progress);
    const result = worstPageResult("request-log-pages", `dashboard request-log pages over ${rows} records, one request at a time`, r.pages, requests, { rows, seedSeconds: r.seedSeconds });
    const notes = [`request-log-pages: seeded ${rows} records (+${Math.floor(rows / 10)} of another business) in ${r.seedSeconds} s`, ...pageNotes("request-log-pages", r.pages)];
    return { results: [result], notes, problems: r.problems, extra: r };
  },
};

// --- Internal helpers ---

async function _run(rows: number, requests: number, progress: (line: string) => void): Promise<{ seedSeconds: number; pages: PageResult[]; problems: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-reqlog-bench-"));
  const store = await createSqliteDocumentStore({ file: join(dir, "gatehouse.sqlite") });
  try {
    const started = performance.now();
    const known = await _seed(store, rows, Date.now(), progress);
    const seedSeconds = Math.round((performance.now() - started) / 100) / 10;
    progress(`request-log-pages: seeded ${rows} records in ${seedSeconds} s`);
    const config = testConfig({ log: { level: "silent", format: "json" }, limits: benchLimits(), stored: { processor: { enabled: false } } });
    const log = createLogger({ level: "silent", sink: () => {} });
    const gateway = await composeGateway(config, { log, ports: { documentStore: store } });
    const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
    const agent = new Agent({ connections: 1 });
    try {
      const cookie = await signInDashboard(server.url, agent, HOST, DEMO_OWNER);
      const first = await _get(server.url, agent, cookie, "/dashboard/requests");
      const next = /href="([^"]+)" rel="next"/.exec(first.body)?.[1]?.replace(/&amp;/g, "&");
      // Each page with the status it must answer (a request ID of this business redirects to its page;
      // another business's is not found).
      const pages: Array<[string, number]> = [
        ["/dashboard/requests", 200],
        ...(next ? [[next, 200] as [string, number]] : []),
        ["/dashboard/requests?status=5xx", 200],
        ["/dashboard/requests?status=404", 200],
        ["/dashboard/requests?code=GW_API_KEY_INVALID", 200],
        ["/dashboard/requests?route=%2Finvoices%2F%3Airn%2Ftransmit", 200],
        ["/dashboard/requests?route=unmatched", 200],
        ["/dashboard/requests?status=5xx&route=%2Fwallet", 200],
        [`/dashboard/requests?requestId=${known.mine}`, 303],
        [`/dashboard/requests/${known.mine}`, 200],
        [`/dashboard/requests/${known.other}`, 404],
      ];
      const results: PageResult[] = [];
      const problems: string[] = [];
      for (const [path, status] of pages) {
        const r = await measurePage({ base: server.url, agent, headers: { host: HOST, cookie }, expected: status }, path, requests).catch((e: Error) => (problems.push(`request-log-pages: ${e.message}`), null));
        if (r) results.push(r);
      }
      return { seedSeconds, pages: results, problems };
    } finally {
      await agent.close();
      await server.drain("bench");
    }
  } finally {
    await store.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `rows` records of business demo spread over the last 7 days, and a tenth as many of another; returns an ID of each. */
async function _seed(store: DocumentStore, rows: number, now: number, progress: (line: string) => void): Promise<{ mine: string; other: string }> {
  const log = openRequestLogCollection(store);
  const total = rows + Math.floor(rows / 10);
  const step = Math.max(1, Math.floor((7 * 86_400_000 - 60_000) / total));
  const start = now - 7 * 86_400_000 + 60_000;
  for (let b = 0; b < total; b += BATCH) {
    const batch: RequestLogEntry[] = [];
    for (let i = b; i < Math.min(total, b + BATCH); i++) batch.push(_entry(i, start + i * step, i % 11 === 10 ? "other-biz" : "demo"));
    await log.insertMany(batch);
    if ((b / BATCH) % 40 === 39) progress(`request-log-pages: … ${b + BATCH} records`);
  }
  const lastOther = total - 1 - ((total - 1 - 10) % 11);
  const mine = lastOther === total - 1 ? total - 2 : total - 1;
  return { mine: _id(mine), other: _id(lastOther) };
}

function _id(i: number): string {
  return `00000000-0000-4000-8000-${i.toString(16).padStart(12, "0")}`;
}

function _entry(i: number, at: number, businessId: string): RequestLogEntry {
  const r = i % 100;
  const status = r < 90 ? 200 : r < 95 ? 404 : r < 98 ? 401 : 503;
  const unmatched = status === 404 && i % 2 === 0;
  const route = unmatched ? null : ROUTES[i % ROUTES.length]!;
  const code = status === 200 ? null : status === 404 ? (unmatched ? "GW_ROUTE_NOT_FOUND" : "GW_OPERATION_NOT_FOUND") : status === 401 ? "GW_API_KEY_INVALID" : "GW_UPSTREAM_UNAVAILABLE";
  return {
    _id: _id(i),
    businessId,
    at,
    method: route === "/invoices/:irn/transmit" ? "POST" : "GET",
    route,
    path: unmatched ? `/nope/${i}` : (route ?? "/").replace(":irn", `INV${i}-94ND90NR-20240611`).replace(":id", `sub-${i % 50}`),
    query: i % 7 === 0 ? "?limit=20" : null,
    status,
    statusClass: `${Math.floor(status / 100)}xx`,
    code,
    durationMs: (i % 500) / 10,
    host: HOST,
    credentialId: status === 401 ? null : "demo-primary",
    expiresAt: at + 7 * 86_400_000,
  };
}

async function _get(base: string, agent: Agent, cookie: string, path: string): Promise<{ status: number; body: string }> {
  const res = await request(base + path, { headers: { host: HOST, cookie }, dispatcher: agent });
  return { status: res.statusCode, body: await res.body.text() };
}

