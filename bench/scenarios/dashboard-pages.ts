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
import type { DocumentStore } from "../../adapters/ports.ts";
import { hashPassword } from "../../plugins/dashboard/passwords.ts";
import { createUserStore } from "../../plugins/dashboard/users.ts";
import { openStoredInvoices, type InvoiceDoc } from "../../plugins/invoice/stored-invoices.ts";
import { envInt } from "../report.ts";
import { pageNotes, runPageBench, signInDashboard, worstPageResult } from "../page-timing.ts";
import type { BenchScenario } from "../run.ts";
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

function _run(count: number, logRows: number, requests: number, progress: (line: string) => void) {
  return runPageBench({
    scenario: "dashboard-pages",
    host: "localhost",
    requests,
    progress,
    async seed(store) {
      await seedBenchInvoices(store, count, Math.max(1, Math.floor(count / 10)), Date.now(), progress);
      const newest = await _newestWithUuid(store);
      if (logRows > 0) await seedRequestLog(store, logRows, Date.now(), progress);
      await createUserStore(store, Date.now).create({ businessId: "demo", email: USER.email, name: "Bench owner", role: "owner", status: "active", password: await hashPassword(USER.password), invitedBy: null, totpSecret: USER.totpSecret });
      return { seeded: `${count} invoices and ${logRows} request-log records`, known: newest };
    },
    signIn: (base, agent) => signInDashboard(base, agent, "localhost", USER),
    async pages(newest) {
      const from = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
      return [
        "/dashboard/invoices",
        "/dashboard/invoices?status=frozen",
        "/dashboard/invoices?subBusinessId=sub-3",
        `/dashboard/invoices?direction=outbound&createdFrom=${from}`,
        `/dashboard/invoices/${newest}`,
        "/dashboard/inbound",
        "/dashboard/keys",
        "/dashboard/requests",
      ];
    },
  });
}

/** The newest seeded invoice again under a UUID id (invoice ids are UUIDs; the seeding's are not). */
async function _newestWithUuid(store: DocumentStore): Promise<string> {
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

