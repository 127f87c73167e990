/**
 * What every bench server shares: the routes and bodies of the load scenarios, the demo key the
 * authenticated requests carry, the upstream's answer, and how a server process tells the runner
 * it is listening (one `BENCH_READY <url>` line on stderr: stdout belongs to the gateway's log).
 *
 * Every server (bench/servers/*.ts) runs in its own process, started by bench/run.ts with
 * `node --import tsx <file> [--upstream <url>]`, so its RSS and CPU are its own.
 */

import type { Server } from "node:http";

/** The authenticated GET every server answers locally with BENCH_BODY. */
export const BENCH_PATH = "/bench/ping";
/** The body of BENCH_PATH (the same bytes from every server). */
export const BENCH_BODY = { status: "ok", service: "gatehouse-bench" } as const;
/** The liveness route (public, no key). */
export const HEALTH_PATH = "/health/live";
export const HEALTH_BODY = { status: "ok" } as const;
/** The relayed regulator read: every proxy forwards it, path unchanged, to the upstream. */
export const RELAY_PREFIX = "/api/v1/invoice/resources";
export const RELAY_PATH = `${RELAY_PREFIX}/currencies`;
/** The demo business's gateway key (config/demo.json); the peers accept exactly this one key. */
export const BENCH_API_KEY = "gw_demo_key_0001";
/** The Pass-through demo domain. */
export const BENCH_HOST = "passthrough.demo.localhost";
/** Limits far above anything a bench sends (admission, quotas, the peers' rate limits): never a 429. */
export const BENCH_LIMIT = 100_000_000;

/** The gateway config's `limits` for a bench: admission and every quota class at BENCH_LIMIT (a bench of 429s measures nothing). */
export function benchLimits() {
  const quota = { limit: BENCH_LIMIT, windowSeconds: 60 };
  return { admission: { perClient: BENCH_LIMIT, windowSeconds: 1 }, quotas: { sign: quota, management: quota, default: quota } };
}
/** The rate-limit window of the peers (the gateway's quota windows are 60 s too). */
export const BENCH_WINDOW_MS = 60_000;

/** The upstream's answer: a regulator resource envelope of ~600 bytes (four currency records). */
export const UPSTREAM_BODY = JSON.stringify({
  code: 200,
  data: [
    { symbol: "$", name: "US Dollar", symbol_native: "$", decimal_digits: 2, rounding: 0, code: "USD", name_plural: "US dollars" },
    { symbol: "CA$", name: "Canadian Dollar", symbol_native: "$", decimal_digits: 2, rounding: 0, code: "CAD", name_plural: "Canadian dollars" },
    { symbol: "€", name: "Euro", symbol_native: "€", decimal_digits: 2, rounding: 0, code: "EUR", name_plural: "euros" },
    { symbol: "£", name: "British Pound Sterling", symbol_native: "£", decimal_digits: 2, rounding: 0, code: "GBP", name_plural: "British pounds sterling" },
  ],
  message: "Successful",
});

export const READY_PREFIX = "BENCH_READY ";

/** Tells the runner where the server listens. */
export function announce(url: string): void {
  process.stderr.write(`${READY_PREFIX}${url}\n`);
}

/** The value of `--name <value>` in this process's arguments, or null. */
export function argValue(name: string): string | null {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? null) : null;
}

/** The required `--upstream <url>` argument. */
export function upstreamArg(): string {
  const url = argValue("upstream");
  if (!url) throw new Error("bench server: --upstream <url> is required");
  return url;
}

/** The peers' rate limit per key and window: `--limit <n>` (tests prove the limiter is in the path), else BENCH_LIMIT. */
export function limitArg(): number {
  const raw = argValue("limit");
  const n = raw === null ? BENCH_LIMIT : Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`bench server: --limit must be a positive integer (got "${raw}")`);
  return n;
}

/** Listens on a free loopback port with keep-alive, announces the address, and closes on a signal. */
export function listenAndAnnounce(server: Server, name: string): void {
  server.keepAliveTimeout = 30_000;
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    if (typeof address !== "object" || !address) throw new Error(`${name}: no address`);
    announce(`http://127.0.0.1:${address.port}`);
  });
  closeOnSignal(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
}

/** Exits cleanly on SIGTERM/SIGINT after `close` (the runner stops every server it started). */
export function closeOnSignal(close: () => Promise<unknown>): void {
  const stop = () => {
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
