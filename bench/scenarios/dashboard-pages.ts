/**
 * Scenario "dashboard-pages": the merchant dashboard's invoice screens rendered over real HTTP
 * through the full gateway, on the embedded default (an SQLite file in a temporary folder) holding
 * DASHBOARD_BENCH_INVOICES Stored invoices of the signed-in user's business (default 100 000,
 * seeded as the console-pages scenario seeds them, plus one invoice with a UUID id for the invoice
 * page). Goal: p99 ≤ 50 ms per page.
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
import { Secret, TOTP } from "otpauth";
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
import type { BenchScenario, ScenarioResult } from "../run.ts";
import { benchLimits } from "../servers/common.ts";
import { seedBenchInvoices } from "./console-pages.ts";

const GOAL_MS = 50;
const USER = { email: "bench-owner@example.test", password: "bench password 0001", totpSecret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP" };

interface PageResult {
  path: string;
  p50: number;
  p99: number;
  mean: number;
  max: number;
  /** CPU of this process (gateway and client) per request: steadier than wall time on a loaded machine. */
  cpuUs: number;
}

export const dashboardPagesScenario: BenchScenario = {
  names: ["dashboard-pages"],
  async run({ env, progress }) {
    const invoices = envInt(env.DASHBOARD_BENCH_INVOICES, 100_000, 100, "DASHBOARD_BENCH_INVOICES");
    const requests = envInt(env.DASHBOARD_BENCH_REQUESTS, 30, 1, "DASHBOARD_BENCH_REQUESTS");
    const r = await _run(invoices, requests, progress);
    const worst = r.pages.reduce((a, p) => (p.p99 > a.p99 ? p : a), { path: "none", p50: 0, p99: 0, mean: 0, max: 0, cpuUs: 0 });
    const result: ScenarioResult = {
      name: "dashboard-pages/gateway",
      scenario: "dashboard-pages",
      server: "gateway",
      role: "subject",
      description: `dashboard invoice screens over ${invoices} Stored invoices, one request at a time; worst page ${worst.path}`,
      path: worst.path,
      requestsPerSec: worst.mean > 0 ? 1000 / worst.mean : 0,
      latency: { mean: worst.mean, p50: worst.p50, p90: Number.NaN, p99: worst.p99, max: worst.max },
      requests,
      status2xx: requests,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
      seconds: (worst.mean * requests) / 1000,
      extra: { invoices, seedSeconds: r.seedSeconds, worstP99Ms: worst.p99 },
    };
    const notes = r.pages.map((p) => `dashboard-pages: ${p.path}: p50 ${p.p50.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms, CPU ${p.cpuUs} µs/request${p.p99 > GOAL_MS ? ` (over the ${GOAL_MS} ms goal)` : ""}`);
    return { results: [result], notes, problems: r.problems, extra: r };
  },
};

// --- Internal helpers ---

async function _run(count: number, requests: number, progress: (line: string) => void): Promise<{ seedSeconds: number; pages: PageResult[]; problems: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-dashboard-bench-"));
  const store = await createSqliteDocumentStore({ file: join(dir, "gatehouse.sqlite") });
  try {
    const started = performance.now();
    await seedBenchInvoices(store, count, Math.max(1, Math.floor(count / 10)), Date.now(), progress);
    const newest = await _newestWithUuid(store);
    await createUserStore(store, Date.now).create({ businessId: "demo", email: USER.email, name: "Bench owner", role: "owner", status: "active", password: await hashPassword(USER.password), invitedBy: null, totpSecret: USER.totpSecret });
    const seedSeconds = Math.round((performance.now() - started) / 100) / 10;
    progress(`dashboard-pages: seeded ${count} invoices in ${seedSeconds} s`);
    const config = testConfig({ log: { level: "silent", format: "json" }, limits: benchLimits(), stored: { processor: { enabled: false } } });
    const log = createLogger({ level: "silent", sink: () => {} });
    const gateway = await composeGateway(config, { log, ports: { documentStore: store } });
    const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
    const agent = new Agent({ connections: 1 });
    try {
      const cookie = await _signIn(server.url, agent);
      const from = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
      const pages = [
        "/dashboard/invoices",
        "/dashboard/invoices?status=frozen",
        "/dashboard/invoices?subBusinessId=sub-3",
        `/dashboard/invoices?direction=outbound&createdFrom=${from}`,
        `/dashboard/invoices/${newest}`,
        "/dashboard/inbound",
      ];
      const results: PageResult[] = [];
      const problems: string[] = [];
      for (const path of pages) {
        const r = await _measure(server.url, agent, cookie, path, requests).catch((e: Error) => (problems.push(`dashboard-pages: ${e.message}`), null));
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

async function _signIn(base: string, agent: Agent): Promise<string> {
  const form = { host: "localhost", origin: "http://localhost", "content-type": "application/x-www-form-urlencoded" };
  const step1 = await request(`${base}/dashboard/sign-in`, { method: "POST", headers: form, body: new URLSearchParams({ email: USER.email, password: USER.password, next: "/dashboard" }).toString(), dispatcher: agent });
  await step1.body.dump();
  const pending = _cookies(step1.headers["set-cookie"]);
  const code = new TOTP({ secret: Secret.fromBase32(USER.totpSecret), digits: 6, period: 30, algorithm: "SHA1" }).generate();
  const step2 = await request(`${base}/dashboard/sign-in/code`, { method: "POST", headers: { ...form, cookie: pending }, body: new URLSearchParams({ code }).toString(), dispatcher: agent });
  await step2.body.dump();
  const session = _cookies(step2.headers["set-cookie"])
    .split("; ")
    .find((c) => c.startsWith("gh_dash="));
  if (step1.statusCode !== 303 || step2.statusCode !== 303 || !session) throw new Error(`bench dashboard-pages: sign-in answered ${step1.statusCode}, ${step2.statusCode}`);
  return session;
}

function _cookies(setCookie: string | string[] | undefined): string {
  return ([] as string[])
    .concat(setCookie ?? [])
    .map((c) => c.split(";")[0]!)
    .filter((c) => !c.endsWith("="))
    .join("; ");
}

async function _measure(base: string, agent: Agent, cookie: string, path: string, requests: number): Promise<PageResult> {
  const once = async (): Promise<number> => {
    const t = performance.now();
    const res = await request(base + path, { headers: { host: "localhost", cookie }, dispatcher: agent });
    await res.body.text();
    const ms = performance.now() - t;
    if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}`);
    return ms;
  };
  for (let i = 0; i < 3; i++) await once();
  const times: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < requests; i++) times.push(await once());
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  const at = (p: number) => Math.round(times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)]! * 10) / 10;
  return { path, p50: at(0.5), p99: at(0.99), mean: Math.round((times.reduce((a, b) => a + b, 0) / times.length) * 10) / 10, max: at(1), cpuUs: Math.round((used.user + used.system) / requests) };
}
