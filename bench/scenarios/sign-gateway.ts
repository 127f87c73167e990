/**
 * The billed Pass-through sign load of bench/scenarios/sign.ts and sign-history.ts: the gateway's
 * config on a given store, onboarding `taxpayer@demo.ng`, topping up the demo wallet, unique signed
 * invoices, an autocannon run of N signs with the completion time of each, and the gateway's heap
 * (from /metrics) and wallet balance.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import { request } from "undici";
import { demoInvoice } from "../../test/adapters/regulator/simulator/simulator-helpers.ts";
import { ROOT } from "../processes.ts";
import { benchLimits } from "../servers/common.ts";

const HOST = "passthrough.demo.localhost";
const API_KEY = "gw_demo_key_0001";
const ADMIN_KEY = "admin_demo_key_0001";

/** The sign fee of the demo domain, kobo. */
export const FEE_KOBO = 5_000;

/** Unique invoices, each with its own IRN and idempotency key. */
export interface SignInvoices {
  next(): { body: string; headers: Record<string, string> };
}

/** The demo config on `storage`/`coordination`, the simulator out of process at `simUrl`, limits far above the load. */
export function signGatewayConfig(storage: Record<string, unknown>, coordination: Record<string, unknown>, simUrl: string, dir: string): Record<string, unknown> {
  const raw = JSON.parse(readFileSync(join(ROOT, "config/demo.json"), "utf8")) as Record<string, any>;
  raw.server = { ...raw.server, port: 0 };
  raw.storage = storage;
  raw.coordination = coordination;
  raw.regulator = { ...raw.regulator, simulator: { enabled: false }, baseUrls: { TEST: simUrl, LIVE: simUrl } };
  raw.email = { driver: "folder", dir: join(dir, "mail") };
  raw.limits = benchLimits();
  return raw;
}

export async function onboardDemo(base: string): Promise<string> {
  const r = await _call(base, "/sub-businesses", {
    method: "POST",
    headers: { "x-api-key": API_KEY, "x-idempotency-key": `sign-bench-onboard-${process.pid}` },
    body: { regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } },
  });
  if (r.status !== 201 && r.status !== 200) throw new Error(`bench: onboarding answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
  return r.json.gatewaySubBusinessId as string;
}

export async function creditDemo(base: string, amountNgn: number): Promise<void> {
  const r = await _call(base, "/admin/wallets/demo/credits", {
    method: "POST",
    headers: { "x-admin-api-key": ADMIN_KEY },
    body: { amount: amountNgn, reference: `sign-bench-${Date.now()}` },
  });
  if (r.status !== 201) throw new Error(`bench: top-up answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
}

/** The main thread's V8 heap, from the gateway's Prometheus metrics (prom-client's default process metrics). */
export async function gatewayHeap(base: string): Promise<{ usedMiB: number; totalMiB: number }> {
  const res = await request(`${base}/metrics`, { headers: { host: HOST, "x-admin-api-key": ADMIN_KEY } });
  const text = await res.body.text();
  const value = (name: string): number => {
    const m = new RegExp(`^gatehouse_${name} (\\S+)$`, "m").exec(text);
    return m ? Number(m[1]) / 1048576 : Number.NaN;
  };
  return { usedMiB: value("nodejs_heap_size_used_bytes"), totalMiB: value("nodejs_heap_size_total_bytes") };
}

export async function demoBalanceKobo(base: string): Promise<number> {
  const r = await _call(base, "/admin/wallets/demo?limit=1", { headers: { "x-admin-api-key": ADMIN_KEY } });
  if (r.status !== 200) throw new Error(`bench: wallet read answered ${r.status}`);
  return Math.round((r.json.balance as number) * 100);
}

/** Unique invoices: the demo invoice with IRN `B<run><n>-94ND90NR-20240611`, serialised once as a template. */
export function signInvoiceFactory(sub: string): SignInvoices {
  const marker = "XXIRNXX";
  const [head, tail] = JSON.stringify(demoInvoice(marker)).split(marker) as [string, string];
  const run = Date.now().toString(36);
  let n = 0;
  return {
    next() {
      const no = `B${run}${(n++).toString(36)}`;
      return {
        body: head + no + tail,
        headers: {
          host: HOST,
          "content-type": "application/json",
          "x-api-key": API_KEY,
          "x-sub-business-id": sub,
          "x-idempotency-key": `sign-bench-${no}`,
          "x-attempt-number": "1",
        },
      };
    },
  };
}

export interface SignLoadResult {
  startedAt: number;
  /** performance.now() of every completed response, in completion order. */
  completedAt: Float64Array;
  seconds: number;
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
  status2xx: number;
  non2xx: number;
  errors: number;
  firstBad: string;
}

export async function loadSigns(base: string, invoices: SignInvoices, amount: number, connections: number): Promise<SignLoadResult> {
  const completedAt = new Float64Array(amount);
  let done = 0;
  let firstBad = "";
  const startedAt = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${base}/api/v1/invoice/sign`,
        method: "POST",
        connections: Math.min(connections, amount),
        amount,
        requests: [
          {
            setupRequest: (req: autocannon.Request) => {
              const inv = invoices.next();
              return { ...req, method: "POST" as const, body: inv.body, headers: inv.headers };
            },
          },
        ],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on("response", (_client, status) => {
      if (done < amount) completedAt[done++] = performance.now();
      if (status !== 201 && firstBad === "") firstBad = String(status);
    });
  });
  // Timed to the last answer: autocannon calls back on its next one-second tick after it, which
  // made every run's duration a whole number of seconds (+30 ms) until 2026-11-29.
  const lastAt = done > 0 ? completedAt[done - 1]! : performance.now();
  return {
    startedAt,
    completedAt: completedAt.subarray(0, done),
    seconds: (lastAt - startedAt) / 1000,
    latency: { mean: result.latency.mean, p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    status2xx: result["2xx"],
    non2xx: result.non2xx,
    errors: result.errors,
    firstBad,
  };
}

// --- Internal helpers ---

async function _call(base: string, path: string, init: { method?: "GET" | "POST"; headers?: Record<string, string>; body?: unknown }): Promise<{ status: number; json: any }> {
  const res = await request(base + path, {
    method: init.method ?? "GET",
    headers: { host: HOST, ...(init.body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : null };
}
