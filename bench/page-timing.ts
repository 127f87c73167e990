/**
 * Timing server-rendered pages (the console-pages, dashboard-pages and request-log-pages scenarios):
 * each page fetched `requests` times in a row over one keep-alive connection after 3 warm-up
 * fetches, its wall-time percentiles and this process's CPU per request (gateway and client share
 * the process: steadier than wall time on a loaded machine), and the scenario's table row for the
 * page with the worst p99. `runPageBench` is the scenarios' common frame: a seeded SQLite file in a
 * temporary folder, the full gateway on it, a signed-in keep-alive connection, every page timed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Secret, TOTP } from "otpauth";
import { Agent, request } from "undici";
import { createSqliteDocumentStore } from "../adapters/document-store/sqlite/store.ts";
import type { DocumentStore } from "../adapters/ports.ts";
import { composeGateway } from "../boot/compose.ts";
import { createLogger } from "../core/log.ts";
import { serveGateway } from "../core/server.ts";
import { testConfig } from "../test/support/gateway.ts";
import type { ScenarioResult } from "./run.ts";
import { benchLimits } from "./servers/common.ts";

/** The p99 goal of every page scenario (issues 27 and 28), ms. */
export const PAGE_GOAL_MS = 50;

export interface PageResult {
  path: string;
  p50: number;
  p99: number;
  mean: number;
  max: number;
  /** CPU time of this process per request, µs. */
  cpuUs: number;
}

export interface PageFetch {
  base: string;
  agent: Agent;
  /** Host and cookie headers of the signed-in page set. */
  headers: Record<string, string>;
  /** The status every fetch must answer. Default 200. */
  expected?: number;
}

/** Fetches `path` 3 + `requests` times and reports the last `requests`. */
export async function measurePage(f: PageFetch, path: string, requests: number): Promise<PageResult> {
  const expected = f.expected ?? 200;
  const once = async (): Promise<number> => {
    const t = performance.now();
    const res = await request(f.base + path, { headers: f.headers, dispatcher: f.agent });
    await res.body.text();
    const ms = performance.now() - t;
    if (res.statusCode !== expected) throw new Error(`${path} answered ${res.statusCode} (expected ${expected})`);
    return ms;
  };
  for (let i = 0; i < 3; i++) await once();
  const times: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < requests; i++) times.push(await once());
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  const at = (p: number) => _tenth(times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)]!);
  return { path, p50: at(0.5), p99: at(0.99), mean: _tenth(times.reduce((a, b) => a + b, 0) / times.length), max: at(1), cpuUs: Math.round((used.user + used.system) / requests) };
}

/** The scenario's table row: the page with the worst p99 stands for the scenario. */
export function worstPageResult(scenario: string, description: string, pages: readonly PageResult[], requests: number, extra: Record<string, unknown>): ScenarioResult {
  const worst = pages.reduce<PageResult>((a, p) => (p.p99 > a.p99 ? p : a), pages[0] ?? { path: "none", p50: Number.NaN, p99: Number.NaN, mean: Number.NaN, max: Number.NaN, cpuUs: 0 });
  return {
    name: `${scenario}/gateway`,
    scenario,
    server: "gateway",
    role: "subject",
    description: `${description}; worst page ${worst.path}`,
    path: worst.path,
    requestsPerSec: worst.mean > 0 ? 1000 / worst.mean : 0,
    latency: { mean: worst.mean, p50: worst.p50, p90: Number.NaN, p99: worst.p99, max: worst.max },
    requests,
    status2xx: requests,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    seconds: (worst.mean * requests) / 1000,
    extra: { ...extra, worstP99Ms: worst.p99 },
  };
}

/** One note line per page: "<scenario>: <path>: p50 …, p99 …, CPU … µs/request (over the goal)". */
export function pageNotes(scenario: string, pages: readonly PageResult[]): string[] {
  return pages.map((p) => `${scenario}: ${p.path}: p50 ${p.p50.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms, CPU ${p.cpuUs} µs/request${p.p99 > PAGE_GOAL_MS ? ` (over the ${PAGE_GOAL_MS} ms goal)` : ""}`);
}

/**
 * Signs a dashboard user in (password, then the TOTP code of this time step) and answers the
 * session cookie ("gh_dash=…") for later fetches.
 */
export async function signInDashboard(base: string, agent: Agent, host: string, user: { email: string; password: string; totpSecret: string }): Promise<string> {
  const jar = new Map<string, string>();
  const post = async (path: string, form: Record<string, string>) => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await request(`${base}${path}`, {
      method: "POST",
      headers: { host, origin: `http://${host}`, "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) },
      body: new URLSearchParams(form).toString(),
      dispatcher: agent,
    });
    await res.body.dump();
    for (const c of ([] as string[]).concat(res.headers["set-cookie"] ?? [])) {
      const pair = c.split(";")[0]!;
      const eq = pair.indexOf("=");
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return res.statusCode;
  };
  const first = await post("/dashboard/sign-in", { email: user.email, password: user.password, next: "/dashboard" });
  const code = new TOTP({ secret: Secret.fromBase32(user.totpSecret), digits: 6, period: 30, algorithm: "SHA1" }).generate();
  const second = await post("/dashboard/sign-in/code", { code });
  const session = jar.get("gh_dash");
  if (first !== 303 || second !== 303 || !session) throw new Error(`bench: dashboard sign-in answered ${first}, ${second}`);
  return `gh_dash=${session}`;
}

// --- Internal helpers ---

function _tenth(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** A page scenario: what to seed, how to sign in, which pages to time. */
export interface PageBench<T> {
  scenario: string;
  /** Fills the store; `seeded` names what for the progress line, `known` goes to `pages`. */
  seed(store: DocumentStore): Promise<{ seeded: string; known: T }>;
  /** Signs in on the connection; the session cookie. */
  signIn(base: string, agent: Agent): Promise<string>;
  /** The Host header of every page. */
  host: string;
  /** The pages, each a path or [path, status it must answer]; `get` fetches a page's body once. */
  pages(known: T, get: (path: string) => Promise<string>): Promise<ReadonlyArray<string | readonly [string, number]>>;
  requests: number;
  progress: (line: string) => void;
}

/** Seeds, starts the gateway, signs in and times every page; problems are pages that failed. */
export async function runPageBench<T>(b: PageBench<T>): Promise<{ seedSeconds: number; pages: PageResult[]; problems: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), `gatehouse-${b.scenario}-`));
  const store = await createSqliteDocumentStore({ file: join(dir, "gatehouse.sqlite") });
  try {
    const started = performance.now();
    const { seeded, known } = await b.seed(store);
    const seedSeconds = Math.round((performance.now() - started) / 100) / 10;
    b.progress(`${b.scenario}: seeded ${seeded} in ${seedSeconds} s`);
    const config = testConfig({ log: { level: "silent", format: "json" }, limits: benchLimits(), stored: { processor: { enabled: false } } });
    const log = createLogger({ level: "silent", sink: () => {} });
    const gateway = await composeGateway(config, { log, ports: { documentStore: store } });
    const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
    const agent = new Agent({ connections: 1 });
    try {
      const cookie = await b.signIn(server.url, agent);
      const headers = { host: b.host, cookie };
      const get = async (path: string) => (await request(server.url + path, { headers, dispatcher: agent })).body.text();
      const pages: PageResult[] = [];
      const problems: string[] = [];
      for (const page of await b.pages(known, get)) {
        const [path, expected] = typeof page === "string" ? [page, 200] : page;
        const r = await measurePage({ base: server.url, agent, headers, expected }, path, b.requests).catch((e: Error) => (problems.push(`${b.scenario}: ${e.message}`), null));
        if (r) pages.push(r);
      }
      return { seedSeconds, pages, problems };
    } finally {
      await agent.close();
      await server.drain("bench");
    }
  } finally {
    await store.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}
