/**
 * EXPLAIN QUERY PLAN of every statement the product sends to the SQLite store in a representative
 * run, and no full scan of a collection that grows with traffic.
 *
 * The statements are the ones the adapter compiles, caught where they reach the binding (libsql's
 * `Database.prototype.prepare`, wrapped for the length of the test: each SELECT, UPDATE or DELETE is
 * kept with the parameters of its first run). The run: the demo gateway on SQLite in memory (its
 * writer inline, so every statement passes through this thread), its workers (Stored processor,
 * webhook outbox, TTL sweeps every 50 ms) running, docs/examples/client/merchant.ts against it over
 * HTTP (onboarding, a billed sign and its transmission, a Stored invoice to `signed`, a payment link,
 * a virtual account, a deposit, the wallet), then every GET route of /openapi.json: bare, with each
 * query parameter alone, and with all of them together (the list filters).
 *
 * Each caught statement is explained with its parameters; a `SCAN <table>` line without an index on
 * a collection's table fails the test unless the collection is one of SMALL_COLLECTIONS below
 * (`SHOW_QUERY_PLANS=1` prints every plan line, by collection).
 * A statement the run does not reach is not checked: a new list or filter belongs in this run.
 */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { promisify } from "node:util";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { createRequestLog } from "../../../core/request-log/query.ts";
import { ADMIN_KEY, BEARER_DEMO, DEMO_KEY, PASSTHROUGH, STORED, STORED_BUSINESS, gatewayTracker, type TestGateway } from "../../support/gateway.ts";
import { startDemoSimulator } from "../regulator/simulator/simulator-helpers.ts";
import { member } from "../../plugins/dashboard/data-helpers.ts";

/**
 * Collections that may be scanned, and why: each holds a bounded number of documents that does not
 * grow with requests (configuration-sized), so a scan reads a handful of rows.
 */
const SMALL_COLLECTIONS: Record<string, string> = {
  stored_processor_heartbeats: "one document per running Stored processor (expiring): read whole for /health/dependencies",
};

/**
 * The check schema.ts makes once, when a path is first indexed: does any document hold an array
 * along it (then no marker view)? It reads rows until it finds one, as creating the index reads them
 * all; a one-time schema change, not a query of the traffic.
 */
const NEW_PATH_CHECK = /^SELECT 1 FROM "[^"]+" WHERE \(?json_type\(doc, '[^']+'\) IS 'array'.* LIMIT 1$/;

/** Collections that grow with traffic which the run must reach (a broken run would pass vacuously). */
const GROWING = [
  "billing_entries",
  "signing_idempotency",
  "stored_invoices",
  "transmission_claims",
  "collections_virtual_accounts",
  "collections_va_deposits",
  "collections_payment_links",
  "collections_wallet_entries",
  "webhook_outbox",
  "request_log_groups",
];

/** The identifier the console's search box and pages look up (an IRN, operation ID and invoice ID at once). */
const CONSOLE_LOOKUP = "CONSOLE1-94ND90NR-20240611";

const ROOT = new URL("../../../", import.meta.url).pathname;
const { start, track, closeAll } = gatewayTracker();
test.after.each(closeAll);

interface Caught {
  sql: string;
  params: unknown[];
  db: { prepare(sql: string): { raw(on: boolean): unknown; all(p: unknown[]): unknown[][]; get(p: unknown[]): unknown } };
}

test("every statement of a representative run finds its rows through an index (small fixed collections excepted)", async () => {
  const caught = new Map<string, Caught>();
  const restore = _catchStatements(caught);
  try {
    const sim = track(await startDemoSimulator({ credentials: { apiKey: "sim_api_key_demo", apiSecret: "sim_api_secret_demo" } }));
    const store = await createSqliteDocumentStore({ file: ":memory:", sweepIntervalMs: 50 });
    const tg = await start({ regulatorBaseUrls: { TEST: sim.url, LIVE: sim.url }, ports: { documentStore: store } });
    const server = await tg.listen();
    await promisify(execFile)(join(ROOT, "node_modules/.bin/tsx"), [join(ROOT, "docs/examples/client/merchant.ts")], {
      cwd: ROOT,
      env: { ...process.env, GATEHOUSE_URL: server.url },
      timeout: 90_000,
    });
    const calls = await _everyGetRoute(tg);
    assert.ok(calls > 50, `the GET routes were called (${calls})`);
    await _consolePages(tg);
    await _dashboardDataPages(tg);
    await _requestLogQueries(tg);
    await _webhookLogQueries(tg);
    await new Promise((r) => setTimeout(r, 200)); // a few sweeps and worker polls
  } finally {
    restore();
  }

  const explained = new Set<string>();
  const problems: string[] = [];
  const listing: string[] = [];
  const textLookups: string[] = [];
  for (const c of caught.values()) {
    if (NEW_PATH_CHECK.test(c.sql)) continue;
    const plan = _explain(c);
    for (const line of plan) {
      const m = /^(SCAN|SEARCH) (\S+)( USING (COVERING )?INDEX| USING INTEGER PRIMARY KEY| USING PRIMARY KEY)?/.exec(line);
      const table = m?.[2];
      if (!table || !table.includes("#") || table.includes("/scalar/")) continue; // a marker view (schema.ts): empty
      // A collection's text index (text-index.ts): a trigram lookup (MATCH) is an index search.
      if (table.endsWith("/text")) {
        textLookups.push(line);
        if (!/ VIRTUAL TABLE INDEX \d+:M/.test(line)) problems.push(`${table}: ${line}\n    ${c.sql.slice(0, 400)}`);
        continue;
      }
      const collection = table.replace(/#[0-9a-f]{8}$/, "");
      explained.add(collection);
      listing.push(`${collection}: ${line.replace(table, "")}`);
      if (m[1] === "SCAN" && m[3] === undefined && !(collection in SMALL_COLLECTIONS)) problems.push(`${collection}: ${line}\n    ${c.sql.slice(0, 400)}`);
      // The console's lookups by one identifier are point lookups: not even a scan along an index (the `_id` order).
      else if (m[1] === "SCAN" && c.params.includes(CONSOLE_LOOKUP) && !(collection in SMALL_COLLECTIONS)) problems.push(`${collection} (console lookup): ${line}\n    ${c.sql.slice(0, 400)}`);
    }
  }
  if (process.env.SHOW_QUERY_PLANS) process.stdout.write(`${[...new Set(listing)].sort().join("\n")}\n`);
  assert.ok(caught.size > 30, `statements caught: ${caught.size}`);
  for (const c of GROWING) assert.ok(explained.has(c), `the run reached ${c} (explained: ${[...explained].sort().join(", ")})`);
  assert.equal(problems, [], `full scans of growing collections:\n${problems.join("\n")}`);
  assert.ok(
    textLookups.some((l) => l.startsWith("SCAN collections_virtual_accounts#")),
    "the virtual-account search (a needle of three characters or more) is answered from the text index",
  );
});

test.run();

// --- Internal helpers ---

/** Wraps libsql's prepare: each new SELECT/UPDATE/DELETE text is kept with its first parameters. Returns the undo. */
function _catchStatements(caught: Map<string, Caught>): () => void {
  const Database = createRequire(import.meta.url)("libsql") as { prototype: { prepare(this: Caught["db"], sql: string, ...rest: unknown[]): any } };
  const original = Database.prototype.prepare;
  Database.prototype.prepare = function (this: Caught["db"], sql: string, ...rest: unknown[]) {
    const st = original.call(this, sql, ...rest);
    if (!/^(SELECT|UPDATE|DELETE)\b/i.test(sql) || /\bsqlite_schema\b|\bgatehouse_collections\b/.test(sql)) return st;
    const db = this;
    for (const method of ["all", "get", "run"] as const) {
      const fn = st[method] as (...p: unknown[]) => unknown;
      st[method] = function (this: unknown, ...p: unknown[]) {
        if (!caught.has(sql)) caught.set(sql, { sql, params: Array.isArray(p[0]) ? [...p[0]] : p, db });
        return fn.apply(this, p);
      };
    }
    return st;
  };
  return () => {
    Database.prototype.prepare = original;
  };
}

/** EXPLAIN QUERY PLAN's `detail` lines (a `get` after `all` resets the statement: explain.ts). */
function _explain(c: Caught): string[] {
  const st = c.db.prepare(`EXPLAIN QUERY PLAN ${c.sql}`);
  st.raw(true);
  const lines = st.all(c.params).map((r) => String(r[3]));
  st.get(c.params);
  return lines;
}

/** Calls every GET route of /openapi.json bare, with each query parameter alone, and with all of them. Returns the number of calls. */
async function _everyGetRoute(tg: TestGateway): Promise<number> {
  const doc = (await (await tg.call("/openapi.json")).json()) as { paths: Record<string, Record<string, _Operation>> };
  let calls = 0;
  for (const [path, ops] of Object.entries(doc.paths)) {
    const op = ops.get;
    if (!op) continue;
    const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(_pathValue(name)));
    const headers = _credentials(op);
    const host = op["x-gatehouse"].hosts === "collections" ? "localhost" : op["x-gatehouse"].hosts === "gateway" ? STORED : PASSTHROUGH;
    const query = (op.parameters ?? []).filter((p) => p.in === "query" && p.name !== "cursor");
    const variants: Array<Array<[string, string]>> = [[], ...query.map((p) => [[p.name, _queryValue(p)] as [string, string]])];
    if (query.length > 1) variants.push(query.filter((p) => p.name !== "search").map((p) => [p.name, _queryValue(p)]));
    for (const v of variants) {
      const res = await tg.call(`${url}${v.length ? `?${new URLSearchParams(v)}` : ""}`, { host, headers });
      assert.ok(res.status !== 500, `GET ${url} ${JSON.stringify(v)} answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer().catch(() => {});
      calls++;
    }
  }
  return calls;
}

/** The operator console's searches and filters (its pages are not in /openapi.json): signed in with the operator key. */
async function _consolePages(tg: TestGateway): Promise<void> {
  const form = { "content-type": "application/x-www-form-urlencoded", origin: "http://localhost" };
  const signIn = await tg.call("/console/sign-in", { method: "POST", host: "localhost", headers: form, body: new URLSearchParams({ key: ADMIN_KEY, next: "/console" }).toString() });
  assert.is(signIn.status, 303, "signed in to the console");
  const cookie = signIn.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const pages = [
    `/console/search?q=${CONSOLE_LOOKUP}`,
    `/console/invoices/${CONSOLE_LOOKUP}`,
    "/console/frozen",
    "/console/frozen?businessId=demo",
    "/console/audit?actor=operator%3Ademo-operator",
    "/console/audit?action=key.create&from=2020-01-01&to=2099-01-01",
    "/console/audit?from=2020-01-01T00%3A00",
  ];
  for (const path of pages) {
    const res = await tg.call(path, { host: "localhost", headers: { cookie } });
    assert.is(res.status === 200 || res.status === 404, true, `${path} answered ${res.status}`);
    await res.arrayBuffer();
  }
}

/**
 * The webhook delivery log's reads (the Admin API, the console and the dashboard list through the
 * same service): every filter alone and with a business, failed first and newest first, a next
 * page, one delivery of a business; and a business's webhook endpoints.
 */
async function _webhookLogQueries(tg: TestGateway): Promise<void> {
  const log = tg.gateway.kit.ports.webhooks!.deliveries!;
  const hooks = tg.gateway.kit.directory.webhooks;
  const ep = await hooks.create({ actor: "user:plans", requestId: null }, "demo", { url: "http://127.0.0.1:9/unreachable", services: ["collections"] });
  const all = await log.list({ limit: 1, failedFirst: true });
  assert.ok(all.items.length === 1, "the run's events are in the delivery log");
  const filters = [{}, { status: "dead" as const }, { eventType: all.items[0]!.eventType }, { endpointId: ep.id }];
  for (const f of filters)
    for (const scope of [{}, { businessId: all.items[0]!.businessId }])
      for (const failedFirst of [true, false]) {
        const page = await log.list({ ...f, ...scope, failedFirst, limit: 1 });
        if (page.nextCursor) await log.list({ ...f, ...scope, failedFirst, limit: 1, cursor: page.nextCursor });
      }
  await log.get(all.items[0]!.webhookId, all.items[0]!.businessId);
  await hooks.list("demo");
}

/**
 * The merchant dashboard's data screens (not in /openapi.json), as an owner of the demo business and
 * of the Stored demo business (signed in on a collections host: the e-mail looked up across
 * businesses): every list bare and with each filter, then the first item of each; and the keys
 * (with their last use from the request log), team and two-factor pages.
 */
async function _dashboardDataPages(tg: TestGateway): Promise<void> {
  const filters: Record<string, string[]> = {
    "/dashboard/invoices": ["status=signed", "direction=outbound", "subBusinessId=x", "createdFrom=2020-01-01", "createdTo=2100-01-01", "status=signed&direction=outbound&createdFrom=2020-01-01&createdTo=2100-01-01"],
    "/dashboard/inbound": [],
    "/dashboard/sign-operations": [],
    "/dashboard/represented": [],
    "/dashboard/wallet": ["page=2"],
    "/dashboard/payment-links": ["status=active", "search=a", "page=2"],
    "/dashboard/virtual-accounts": ["status=active", "accountType=multi_use", "search=a", "startDate=2020-01-01&endDate=2100-01-01", "sort=ASC"],
    "/dashboard/customers": [],
    "/dashboard/keys": [],
    "/dashboard/team": [],
    "/dashboard/account/two-factor": [],
  };
  for (const businessId of ["demo", STORED_BUSINESS]) {
    const c = await member(tg, businessId, "owner");
    for (const [list, queries] of Object.entries(filters)) {
      for (const q of ["", ...queries]) {
        const res = await c.get(q ? `${list}?${q}` : list);
        assert.is(res.status, 200, `${list}?${q}`);
        const page = await res.text();
        const first = new RegExp(`href="(${list.replace("/inbound", "/invoices")}/[^"?]+)"`).exec(page)?.[1];
        if (first && q === "") assert.is((await c.get(first.replaceAll("&amp;", "&"))).status, 200, first);
      }
    }
  }
}

/**
 * The request log's reads with every filter (the list, each filter alone and together, a next page,
 * a request ID within a business and across them), after a flush so the pages are not empty. Through
 * the service /admin/requests and the dashboard call (the route itself is reached by _everyGetRoute
 * until the operator's management quota runs out).
 */
async function _requestLogQueries(tg: TestGateway): Promise<void> {
  await tg.gateway.requestLog!.flush();
  const log = createRequestLog(tg.gateway.kit.ports.documentStore);
  const first = await log.list("demo", {}, { limit: 2 });
  assert.ok(first.items.length === 2 && first.nextCursor, "the run's requests are in the request log");
  const id = first.items[0]!._id;
  await log.list("demo", {}, { limit: 2, cursor: first.nextCursor });
  for (const f of [{ status: "200" }, { status: "4xx" }, { code: "GW_ROUTE_NOT_FOUND" }, { code: "none" }, { route: "/invoices/:irn" }, { route: "unmatched" }, { status: "4xx", code: "GW_API_KEY_INVALID", route: "unmatched" }])
    await log.list("demo", f, { limit: 50 });
  assert.is((await log.find("demo", id))?._id, id);
  assert.is((await log.findAny(id))?._id, id);
}

interface _Operation {
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; schema: { enum?: string[]; pattern?: string; type?: string } }>;
  "x-gatehouse": { hosts: string };
}

function _credentials(op: _Operation): Record<string, string> {
  const scheme = Object.keys(op.security?.[0] ?? {})[0];
  if (scheme === "adminKey") return { "x-admin-api-key": ADMIN_KEY };
  if (scheme === "bearer") return { authorization: `Bearer ${BEARER_DEMO}` };
  if (scheme === "apiKey") return { "x-api-key": DEMO_KEY };
  return {};
}

function _pathValue(name: string): string {
  if (name === "businessId") return "demo";
  if (name === "irn") return "DOC1-94ND90NR-20240611";
  return "0123456789";
}

function _queryValue(p: NonNullable<_Operation["parameters"]>[number]): string {
  if (p.schema.enum) return p.schema.enum[0]!;
  if (/date|from|to$/i.test(p.name)) return p.name.toLowerCase().includes("end") || p.name.endsWith("To") ? "2099-01-01" : "2020-01-01";
  if (p.name === "limit") return "20";
  if (p.name === "page") return "2";
  if (p.name === "accountNumber") return "0123456789";
  if (p.name === "currency") return "NGN";
  if (p.name === "businessId") return "demo";
  if (p.name === "action") return "key.created";
  if (p.name === "search") return "acc"; // long enough for a text index (trigrams)
  return "x";
}
