/**
 * Harness of the Admin API tests: the production composition (every plugin, plus the probe plugin)
 * on the embedded memory store behind a fault switch, served on a free port, called over real HTTP.
 */
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import type { SqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import type { Doc } from "../../../adapters/ports.ts";
import type { LogFields } from "../../../core/log.ts";
import { plugins } from "../../../plugins/index.ts";
import { ADMIN_KEY, startTestGateway, withHostKey, type TestGateway } from "../../support/gateway.ts";
import { probePlugin } from "../../support/probe-plugin.ts";
import { httpCall } from "../../support/raw-http.ts";
import { withStoreFaults, type StoreFaultHook } from "../../support/store-faults.ts";

export const HIGH_QUOTAS = {
  limits: { quotas: { management: { limit: 100_000, windowSeconds: 60 }, default: { limit: 100_000, windowSeconds: 60 }, sign: { limit: 100_000, windowSeconds: 60 } } },
};

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
  body: any;
}

export interface AdminHarness {
  tg: TestGateway;
  /** The raw store (before the fault switch and the resilience guard). */
  raw: SqliteDocumentStore;
  url: string;
  logs: LogFields[];
  /** Sets the fault hook (null: none). */
  fault(hook: StoreFaultHook | null): void;
  /** An operator call (x-admin-api-key) on host `localhost`; mutations send `idem` as x-idempotency-key. */
  admin(method: string, path: string, body?: unknown, idem?: string, headers?: Record<string, string>): Promise<HttpAnswer>;
  /** A customer call with x-api-key on `host`. */
  customer(path: string, key: string, host: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }): Promise<HttpAnswer>;
  /** Every document of a collection of the raw store. */
  all<T extends Doc>(collection: string): Promise<T[]>;
  close(): Promise<void>;
}

export async function startAdminHarness(options: { patch?: Record<string, unknown>; now?: () => number } = {}): Promise<AdminHarness> {
  const raw = await createSqliteDocumentStore({ file: ":memory:" });
  let hook: StoreFaultHook | null = null;
  const store = withStoreFaults(raw, (collection, method, args) => (hook ? hook(collection, method, args) : null));
  const tg = await startTestGateway({
    plugins: [...plugins, probePlugin],
    patch: { ...HIGH_QUOTAS, ...(options.patch ?? {}) },
    ports: { documentStore: store },
    ...(options.now ? { now: options.now } : {}),
  });
  const server = await tg.listen();
  const send = async (method: string, path: string, host: string, headers: Record<string, string>, body?: unknown): Promise<HttpAnswer> => {
    const h: Record<string, string> = { ...headers };
    if (body !== undefined) h["content-type"] ??= "application/json";
    const res = await httpCall(server.url, path, { method, host, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(res.text);
    } catch {
      // not JSON
    }
    return { status: res.status, headers: res.headers, text: res.text, body: parsed };
  };
  return {
    tg,
    raw,
    url: server.url,
    logs: tg.logs,
    fault(h) {
      hook = h;
    },
    admin(method, path, body, idem, headers = {}) {
      return send(method, path, "localhost", { "x-admin-api-key": ADMIN_KEY, ...(idem ? { "x-idempotency-key": idem } : {}), ...headers }, body);
    },
    customer(path, key, host, init = {}) {
      return send(init.method ?? "GET", path, host, withHostKey(host, { "x-api-key": key, ...init.headers }), init.body);
    },
    async all<T extends Doc>(collection: string) {
      const items: T[] = [];
      let cursor: string | null = null;
      do {
        const page: { items: T[]; nextCursor: string | null } = await raw.collection<T>(collection).find({}, { limit: 1000, cursor });
        items.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      return items;
    },
    close: () => tg.close(),
  };
}

/** Asserts a problem+json answer with that status and code; returns its body. */
export function problem(res: HttpAnswer, status: number, code: string): any {
  if (res.status !== status || res.body?.code !== code)
    throw new Error(`expected ${status} ${code}, got ${res.status} ${res.text.slice(0, 400)}`);
  if (!String(res.headers["content-type"]).startsWith("application/problem+json")) throw new Error(`not problem+json: ${res.headers["content-type"]}`);
  return res.body;
}
