/**
 * Every list route of the route table (a GET whose query schema takes `cursor`, `limit` or `page`),
 * walked over a real socket with invalid cursors, limits and filters: a refusal is a 4xx in the
 * host's contract shape (an invalid cursor: 400 naming `cursor`), never a 5xx. The list is taken
 * from the route table, so a new list route is walked without editing this file.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { CompiledRoute } from "../../core/route-table.ts";
import { ADMIN_KEY, BEARER_DEMO, PASSTHROUGH, STORED, gatewayTracker, keyForHost } from "../support/gateway.ts";
import { httpCall } from "../support/raw-http.ts";

const { start, closeAll } = gatewayTracker();
test.after(closeAll);

const tg = await start({ patch: { limits: { quotas: { management: { limit: 1_000_000, windowSeconds: 60 }, default: { limit: 1_000_000, windowSeconds: 60 } } } } });
const server = await tg.listen();

/** Cursors of the right alphabet that no page gave, and ones the schema refuses outright. */
const BAD_CURSORS = ["zz", "AAAA", Buffer.from('{"v":[1]}').toString("base64url"), Buffer.from('{"v":["x","y","z"]}').toString("base64url"), "eyJ2IjpbXX0", "_".repeat(512), "x".repeat(600), "%00", "a b", ""];
const BAD_LIMITS = ["0", "101", "-1", "abc", "1e3", "1.5", "9".repeat(30), ""];
const BAD_FILTERS = ["x", "-1", "1e309", "%zz", "__proto__", "2024-13-45", "9".repeat(400), ""];

function listRoutes(): CompiledRoute[] {
  return tg.gateway.routes.routes().filter((r) => r.decl.method === "GET" && ["cursor", "limit", "page"].some((k) => k in _queryEntries(r)));
}

test("the route table's list routes are found (a new one joins by itself)", () => {
  const ids = listRoutes().map((r) => r.id);
  for (const id of ["GET /admin/alerts/dead-letters", "GET /invoices", "GET /admin/keys", "GET /sub-businesses", "GET /api/v1/payment-link"]) assert.ok(ids.includes(id), id);
});

test("an invalid cursor on GET /admin/alerts/dead-letters is 400 naming cursor, as on every other list route", async () => {
  const refused: string[] = [];
  for (const r of listRoutes().filter((r) => "cursor" in _queryEntries(r))) {
    for (const cursor of BAD_CURSORS.slice(0, 5)) {
      const res = await _get(r, `cursor=${cursor}`);
      // A route whose cursor is a position (an id to continue after) may take any token as one: an empty page.
      if (res.status === 200) continue;
      assert.is(res.status, 400, `${r.id} ${cursor}: ${res.text.slice(0, 200)}`);
      const body = res.json() as { errors?: Array<{ field?: string; location?: string }> };
      assert.ok(body.errors?.some((e) => e.field === "cursor" && e.location === "query"), `${r.id} names cursor: ${res.text.slice(0, 300)}`);
      refused.push(r.id);
    }
  }
  assert.ok(refused.includes("GET /admin/alerts/dead-letters"), "the dead-letter stream refuses a cursor no page gave");
});

test("no invalid cursor, limit or filter on any list route gives a 5xx", async () => {
  const failures: string[] = [];
  let calls = 0;
  for (const r of listRoutes()) {
    const entries = Object.keys(_queryEntries(r));
    const queries = [
      ...(entries.includes("cursor") ? BAD_CURSORS.map((c) => `cursor=${c}`) : []),
      ...BAD_LIMITS.map((l) => `limit=${l}`),
      ...(entries.includes("page") ? BAD_LIMITS.map((p) => `page=${p}`) : []),
      ...entries.filter((k) => !["cursor", "limit", "page"].includes(k)).flatMap((k) => BAD_FILTERS.map((v) => `${k}=${v}`)),
      "limit=1&cursor=AAAA&limit=2",
    ];
    for (const q of queries) {
      const res = await _get(r, q);
      calls++;
      if (res.status >= 500) failures.push(`${r.id}?${q} → ${res.status} ${res.text.slice(0, 160)}`);
      else if (res.status >= 400 && !res.headers["x-request-id"]) failures.push(`${r.id}?${q} → ${res.status} without X-Request-ID`);
    }
  }
  assert.ok(calls > 200, `${calls} calls`);
  assert.equal(failures, []);
});

test.run();

// --- Internal helpers ---

function _queryEntries(r: CompiledRoute): Record<string, unknown> {
  return ((r.decl.schemas?.query as { entries?: Record<string, unknown> } | undefined)?.entries ?? {}) as Record<string, unknown>;
}

/** The route with its natural host and credential; path parameters get a well-formed value. */
function _get(r: CompiledRoute, query: string) {
  const path = r.decl.path.replace(/:([A-Za-z_]+)/g, (_, name: string) => (name === "businessId" ? "demo" : "missing-0001"));
  const host = r.surface === "collections" ? "localhost" : r.decl.modes?.includes("stored") ? STORED : PASSTHROUGH;
  const headers: Record<string, string> =
    r.decl.auth === "admin" ? { "x-admin-api-key": ADMIN_KEY } : r.decl.auth === "bearer" ? { authorization: `Bearer ${BEARER_DEMO}` } : r.decl.auth === "apiKey" ? { "x-api-key": keyForHost(host) } : {};
  return httpCall(server.url, `${path}?${query}`, { host, headers });
}
