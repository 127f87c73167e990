/**
 * Scenario "dashboard-pages": the merchant dashboard's invoice screens rendered over real HTTP
 * through the full gateway, on the embedded default (an SQLite file in a temporary folder) holding
 * DASHBOARD_BENCH_INVOICES Stored invoices of the signed-in user's business (default 100 000,
 * seeded as the console-pages scenario seeds them, plus one invoice with a UUID id for the invoice
 * page), and DASHBOARD_BENCH_LOG_ROWS request-log records of that business (default 1 000 000, seeded
 * as the request-log-pages scenario seeds them; 0 for none): issue 28's "100 000 invoices and
 * 1 000 000 request-log rows". Goal: p99 ≤ 50 ms per page.
 *
 *   npm run bench -- --only dashboard-pages
 *
 * Each page: 3 warm-up requests, then DASHBOARD_BENCH_REQUESTS (default 30) sequential requests on
 * one keep-alive connection with a signed-in owner's cookie (password, then a TOTP code), timed and
 * with this process's CPU per request (gateway and client: steadier than wall time when other work
 * shares the cores); a page that does not answer 200 is a problem.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import { composeGateway } from "../../boot/compose.ts";
import { createLogger } from "../../core/log.ts";
import { serveGateway } from "../../core/server.ts";
import { hashPassword } from "../../plugins/dashboard/passwords.ts";
import { createUserStore } from "../../plugins/dashboard/users.ts";
import { openStoredInvoices, type InvoiceDoc } from "../../plugins/invoice/stored-invoices.ts";
import { testConfig } from "../../test/support/gateway.ts";
import { envInt } from "../report.ts";
import { measurePage, pageNotes, signInDashboard, worstPageResult, type PageResult } from "../page-timing.ts";
import type { BenchScenario } from "../run.ts";
import { benchLimits } from "../servers/common.ts";
import { seedBenchInvoices } from "./console-pages.ts";
import { seedRequestLog } from "./request-log-pages.ts";

const USER = { email: "bench-owner@example.test", password: "bench password 0001", totpSecret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP" };

export const dashboardPagesScenario: BenchScenario = {
  names: ["dashboard-pages"],
  async run({ env, progress }) {
    const invoices = envInt(env.DASHBOARD_BENCH_INVOICES, 100_000, 100, "DASHBOARD_BENCH_INVOICES");
    const requests = envInt(env.DASHBOARD_BENCH_REQUESTS, 30, 1, "DASHBOARD_BENCH_REQUESTS");
    const logRows = envInt(env.DASHBOARD_BENCH_LOG_ROWS, 1_000_000, 0, "DASHBOARD_BENCH_LOG_ROWS");
    const r = await _run(invoices, logRows, requests, progress);
    const result = worstPageResult("dashboard-pages", `dashboard screens over ${invoices} Stored invoices and ${logRows} request-log records, one request at a time`, r.pages, requests, { invoices, logRows, seedSeconds: r.seedSeconds });
    const notes = pageNotes("dashboard-pages", r.pages);
    return { results: [result], notes, problems: r.problems, extra: r };
  },
};

// --- Internal helpers ---

async function _run(count: number, logRows: number, requests: number, progress: (line: string) => void): Promise<{ seedSeconds: number; pages: PageResult[]; problems: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-dashboard-bench-"));
  const store = await createSqliteDocumentStore({ file: join(dir, "gatehouse.sqlite") });
  try {
    const started = performance.now();
    await seedBenchInvoices(store, count, Math.max(1, Math.floor(count / 10)), Date.now(), progress);
    const newest = await _newestWithUuid(store);
    if (logRows > 0) await seedRequestLog(store, logRows, Date.now(), progress);
    await createUserStore(store, Date.now).create({ businessId: "demo", email: USER.email, name: "Bench owner", role: "owner", status: "active", password: await hashPassword(USER.password), invitedBy: null, totpSecret: USER.totpSecret });
    const seedSeconds = Math.round((performance.now() - started) / 100) / 10;
    progress(`dashboard-pages: seeded ${count} invoices and ${logRows} request-log records in ${seedSeconds} s`);
    const config = testConfig({ log: { level: "silent", format: "json" }, limits: benchLimits(), stored: { processor: { enabled: false } } });
    const log = createLogger({ level: "silent", sink: () => {} });
    const gateway = await composeGateway(config, { log, ports: { documentStore: store } });
    const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
    const agent = new Agent({ connections: 1 });
    try {
      const cookie = await signInDashboard(server.url, agent, "localhost", USER);
      const from = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
      const pages = [
        "/dashboard/invoices",
        "/dashboard/invoices?status=frozen",
        "/dashboard/invoices?subBusinessId=sub-3",
        `/dashboard/invoices?direction=outbound&createdFrom=${from}`,
        `/dashboard/invoices/${newest}`,
        "/dashboard/inbound",
        "/dashboard/keys",
        "/dashboard/requests",
      ];
      const results: PageResult[] = [];
      const problems: string[] = [];
      for (const path of pages) {
        const r = await measurePage({ base: server.url, agent, headers: { host: "localhost", cookie } }, path, requests).catch((e: Error) => (problems.push(`dashboard-pages: ${e.message}`), null));
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

/** The newest seeded invoice again under a UUID id (invoice ids are UUIDs; the seeding's are not). */
async function _newestWithUuid(store: Awaited<ReturnType<typeof createSqliteDocumentStore>>): Promise<string> {
  const invoices = openStoredInvoices(store);
  const newest = (await invoices.find({ businessId: "demo" }, { sort: [{ field: "createdAtMs", direction: -1 }], limit: 1 })).items[0]!;
  const at = new Date().toISOString();
  const doc: InvoiceDoc = {
    ...newest,
    _id: randomUUID(),
    irn: `DASH1-94ND90NR-20240611`,
    status: "transmitted",
    statusHistory: [{ status: "pending", at }, { status: "validated", at }, { status: "signing", at }, { status: "signed", at }, { status: "transmitting", at }, { status: "transmitted", at }],
    lastError: null,
    createdAtMs: Date.now(),
  };
  await invoices.insert(doc);
  return doc._id;
}

