/**
 * Test harness: a gateway built exactly as production builds it (composeGateway), on the embedded
 * default stores (SQLite in memory, in-process coordination), from the demo config with overrides,
 * with its log records captured. `call()` goes through app.fetch in-process; `listen()` starts a
 * real HTTP server on a free loopback port.
 */
import { readFileSync } from "node:fs";
import { loadConfig } from "../../config/load.ts";
import type { Config } from "../../config/schema.ts";
import { composeGateway, type ComposeOptions } from "../../boot/compose.ts";
import type { Gateway } from "../../core/create-gateway.ts";
import { createLogger, type LogFields } from "../../core/log.ts";
import { serveGateway, type RunningServer } from "../../core/server.ts";
import { tempDir } from "./temp.ts";

export const DEMO_RAW = JSON.parse(readFileSync(new URL("../../config/demo.json", import.meta.url), "utf8")) as Record<string, unknown>;

export const PASSTHROUGH = "passthrough.demo.localhost";
export const STORED = "stored.demo.localhost";
export const OTHER = "other.demo.localhost";
export const DEMO_KEY = "gw_demo_key_0001";
export const ALLOWLISTED_KEY = "gw_demo_key_allowlisted";
export const OTHER_KEY = "gw_other_key_0001";
export const ADMIN_KEY = "admin_demo_key_0001";
export const BEARER_DEMO = "sk_test_demo_0001";
export const BEARER_OTHER = "sk_test_other_0001";
/** The Stored demo domain belongs to its own business (one approved domain per top-level business). */
export const STORED_KEY = "gw_demo_key_stored";
export const STORED_BUSINESS = "demo-stored";

/**
 * The demo gateway key of each of the two demo hosts: `demo` owns the Pass-through host,
 * `demo-stored` the Stored host. Tests written for "the demo business's key" send DEMO_KEY; `call()`
 * sends the Stored business's key instead on the Stored host (`withHostKey`). Other hosts and other
 * keys are left alone, so a key of another business is still refused where a test expects it.
 */
export const DEMO_HOST_KEYS: Readonly<Record<string, string>> = { [PASSTHROUGH]: DEMO_KEY, [STORED]: STORED_KEY };

/** The demo key for `host`: STORED_KEY on the Stored demo host, DEMO_KEY elsewhere. */
export function keyForHost(host: string): string {
  const canonical = host.toLowerCase().replace(/:\d+$/, "").replace(/\.+$/, "");
  return DEMO_HOST_KEYS[canonical] ?? DEMO_KEY;
}

/** `headers` with DEMO_KEY swapped for the key of the business owning `host` (other keys untouched). */
export function withHostKey(host: string, headers: Record<string, string>): Record<string, string> {
  return headers["x-api-key"] === DEMO_KEY ? { ...headers, "x-api-key": keyForHost(host) } : headers;
}

/** The headers of a request with the demo business's gateway key. */
export const DEMO_KEY_HEADERS = { "x-api-key": DEMO_KEY };

/** An `edge` config section for a trusted edge: the secret and client address come in these headers. */
export const TRUSTED_EDGE = {
  mode: "trusted",
  secret: "edge-secret-0123456789",
  secretHeader: "x-edge-secret",
  clientAddressHeader: "x-edge-client-ip",
};

/** The demo config with the embedded in-memory stores, no simulator, and `patch` merged in. */
export function testConfig(patch: Record<string, unknown> = {}): Config {
  const raw = structuredClone(DEMO_RAW);
  raw.storage = { driver: "memory" };
  raw.coordination = { driver: "memory" };
  raw.regulator = { ...(raw.regulator as object), simulator: { enabled: false } };
  raw.log = { level: "debug", format: "json" };
  raw.email = { driver: "folder", dir: tempDir("mail") };
  return loadConfig({ raw: _merge(raw, patch), env: {} });
}

export interface TestGateway {
  gateway: Gateway;
  config: Config;
  logs: LogFields[];
  call(path: string, init?: CallInit): Promise<Response>;
  listen(): Promise<RunningServer>;
  close(): Promise<void>;
}

export interface CallInit {
  method?: string;
  host?: string;
  headers?: Record<string, string>;
  /** Objects are sent as JSON (Content-Type added unless given). */
  body?: unknown;
}

export async function startTestGateway(
  options: { config?: Config; patch?: Record<string, unknown> } & Partial<ComposeOptions> = {},
): Promise<TestGateway> {
  const config = options.config ?? testConfig(options.patch);
  const logs: LogFields[] = [];
  const log = options.log ?? createLogger({ level: "debug", sink: (r) => logs.push(r) });
  const gateway = await composeGateway(config, { ...options, log });
  await gateway.startWorkers();
  let server: RunningServer | null = null;
  return {
    gateway,
    config,
    logs,
    call(path, init = {}) {
      const host = init.host ?? PASSTHROUGH;
      const headers: Record<string, string> = { host, ...withHostKey(host, init.headers ?? {}) };
      let body: BodyInit | undefined;
      if (init.body !== undefined) {
        if (typeof init.body === "string" || init.body instanceof Uint8Array) body = init.body as BodyInit;
        else {
          body = JSON.stringify(init.body);
          headers["content-type"] ??= "application/json";
        }
      }
      const req = new Request(`http://${headers.host}${path}`, { method: init.method ?? "GET", headers, body });
      return gateway.fetch(req);
    },
    async listen() {
      server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
      return server;
    },
    async close() {
      if (server) await server.drain("test");
      else await gateway.close();
    },
  };
}

/**
 * Gateways a test file opens, closed after every test, passed or failed, so a failure never leaves
 * the file hanging: `const { start, track, closeAll } = gatewayTracker(); test.after.each(closeAll);`.
 * `start` is startTestGateway, tracked; `track` tracks anything else with a close(); closing twice
 * closes once.
 */
export function gatewayTracker() {
  const opened: Array<{ close(): Promise<void> }> = [];
  function track<T extends { close(): Promise<void> }>(g: T): T {
    const close = g.close.bind(g);
    let closing: Promise<void> | undefined;
    g.close = () => (closing ??= close());
    opened.push(g);
    return g;
  }
  async function start(options?: Parameters<typeof startTestGateway>[0]): Promise<TestGateway> {
    return track(await startTestGateway(options));
  }
  async function closeAll(): Promise<void> {
    for (const g of opened.splice(0)) await g.close().catch(() => {});
  }
  return { start, track, closeAll };
}

/** Sends a raw HTTP/1.1 request over a socket and returns the status line, headers and body. */
export { rawRequest } from "./raw-http.ts";

// --- Internal helpers ---

function _merge(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(patch)) {
    const cur = base[k];
    if (v && typeof v === "object" && !Array.isArray(v) && cur && typeof cur === "object" && !Array.isArray(cur))
      base[k] = _merge({ ...(cur as Record<string, unknown>) }, v as Record<string, unknown>);
    else base[k] = v;
  }
  return base;
}
