/**
 * Scenario "request-log-pages": the dashboard's request-log pages rendered over real HTTP through
 * the full gateway, on the embedded default (an SQLite file in a temporary folder) holding
 * REQLOG_BENCH_ROWS request-log records (default 1 000 000) of the demo business over the last 7
 * days, plus a tenth as many of another business. Goal: p99 ≤ 50 ms per page.
 *
 *   npm run bench -- --only request-log-pages
 *
 * Seeding goes straight into the store as the writer stores records (core/request-log/group.ts): the
 * records of each second (the writer's default flush) become that flush's groups, 5 000 records per
 * insertMany. 1 100 000 records over 7 days is ~1.8 requests a second, so most groups hold one or
 * two requests: the case with the most documents per request. The mix: 90 % 2xx, 8 % 4xx (404 and
 * 401), 2 % 5xx; eight routes and unmatched paths. Each page: 3 warm-up requests, then REQLOG_BENCH_REQUESTS (default 30) sequential requests
 * on one keep-alive connection with the demo owner's session (password and TOTP sign-in).
 */
import { v7 } from "uuid";
import type { DocumentStore } from "../../adapters/ports.ts";
import type { PendingRequest } from "../../core/request-log/entry.ts";
import { groupRequests, openRequestLogGroups } from "../../core/request-log/group.ts";
import { DEMO_OWNER } from "../../plugins/dashboard/demo-owner.ts";
import { envInt } from "../report.ts";
import { pageNotes, runPageBench, signInDashboard, worstPageResult } from "../page-timing.ts";
import type { BenchScenario } from "../run.ts";

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

function _run(rows: number, requests: number, progress: (line: string) => void) {
  return runPageBench({
    scenario: "request-log-pages",
    host: HOST,
    requests,
    progress,
    seed: async (store) => ({ seeded: `${rows} records`, known: await seedRequestLog(store, rows, Date.now(), progress) }),
    signIn: (base, agent) => signInDashboard(base, agent, HOST, DEMO_OWNER),
    async pages(known, get) {
      const next = /href="([^"]+)" rel="next"/.exec(await get("/dashboard/requests"))?.[1]?.replace(/&amp;/g, "&");
      // Each page with the status it must answer (a request ID of this business redirects to its page;
      // another business's is not found).
      return [
        "/dashboard/requests",
        ...(next ? [next] : []),
        "/dashboard/requests?status=5xx",
        "/dashboard/requests?status=404",
        "/dashboard/requests?code=GW_API_KEY_INVALID",
        "/dashboard/requests?route=%2Finvoices%2F%3Airn%2Ftransmit",
        "/dashboard/requests?route=unmatched",
        "/dashboard/requests?status=5xx&route=%2Fwallet",
        "/dashboard/requests?status=503&route=%2Fsub-businesses",
        [`/dashboard/requests?requestId=${known.mine}`, 303],
        `/dashboard/requests/${known.mine}`,
        [`/dashboard/requests/${known.other}`, 404],
      ] as const;
    },
  });
}

/**
 * `rows` records of business demo spread over the last 7 days, and a tenth as many of another, as
 * the writer stores them; returns an ID of each (the dashboard-pages scenario seeds its log so too).
 */
export async function seedRequestLog(store: DocumentStore, rows: number, now: number, progress: (line: string) => void): Promise<{ mine: string; other: string }> {
  const groups = openRequestLogGroups(store);
  const total = rows + Math.floor(rows / 10);
  const step = Math.max(1, Math.floor((7 * 86_400_000 - 60_000) / total));
  const start = now - 7 * 86_400_000 + 60_000;
  const ids: string[] = [];
  let flush: PendingRequest[] = [];
  let batch: PendingRequest[][] = [];
  let batched = 0;
  const write = async () => {
    await groups.insertMany(batch.flatMap((f) => groupRequests(f, 7 * 86_400_000, 500)));
    batch = [];
    batched = 0;
  };
  for (let i = 0; i < total; i++) {
    const p = _pending(i, start + i * step, i % 11 === 10 ? "other-biz" : "demo");
    ids.push(p.requestId);
    // One flush a second, as the writer's default timer.
    if (flush.length > 0 && Math.floor(p.at / 1_000) !== Math.floor(flush[0]!.at / 1_000)) {
      batch.push(flush);
      batched += flush.length;
      flush = [];
      if (batched >= BATCH) await write();
    }
    flush.push(p);
    if (i % 200_000 === 199_999) progress(`request-log-pages: … ${i + 1} records`);
  }
  batch.push(flush);
  await write();
  const lastOther = total - 1 - ((total - 1 - 10) % 11);
  const mine = lastOther === total - 1 ? total - 2 : total - 1;
  return { mine: ids[mine]!, other: ids[lastOther]! };
}

function _pending(i: number, at: number, businessId: string): PendingRequest {
  const r = i % 100;
  const status = r < 90 ? 200 : r < 95 ? 404 : r < 98 ? 401 : 503;
  const unmatched = status === 404 && i % 2 === 0;
  const route = unmatched ? null : ROUTES[i % ROUTES.length]!;
  const code = status === 200 ? null : status === 404 ? (unmatched ? "GW_ROUTE_NOT_FOUND" : "GW_OPERATION_NOT_FOUND") : status === 401 ? "GW_API_KEY_INVALID" : "GW_UPSTREAM_UNAVAILABLE";
  const durationMs = (i % 500) / 10;
  return {
    requestId: v7({ msecs: Math.floor(at - durationMs) }),
    businessId,
    at,
    method: route === "/invoices/:irn/transmit" ? "POST" : "GET",
    route,
    path: unmatched ? `/nope/${i}` : (route ?? "/").replace(":irn", `INV${i}-94ND90NR-20240611`).replace(":id", `sub-${i % 50}`),
    search: i % 7 === 0 ? "?limit=20" : "",
    status,
    code,
    durationMs,
    host: HOST,
    credentialId: status === 401 ? null : "demo-primary",
  };
}

