/**
 * The request log over real HTTP (docs/dashboard.md "Request log"): requests of a business appear
 * after a flush with their fields; keys, passwords, invoice bodies and unsafe query values never
 * reach a stored record (scanned as the log scan scans logs); operators find a request by ID and
 * list a business's requests with filters, and a business never sees another's; a store that
 * cannot take the batches leaves requests served and counts the drops; a full buffer drops and
 * counts; stopping the gateway flushes what is buffered.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Doc, DocumentStore } from "../../adapters/ports.ts";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import { safePath, safeQuery, type RequestLogEntry } from "../../core/request-log/entry.ts";
import { entriesOf, openRequestLogGroups } from "../../core/request-log/group.ts";
import { plugins } from "../../plugins/index.ts";
import { withStoreFaults } from "../support/store-faults.ts";
import { ADMIN_KEY, BEARER_DEMO, DEMO_KEY, OTHER_KEY, STORED, gatewayTracker, type CallInit, type TestGateway } from "../support/gateway.ts";
import { callOverHttp } from "../support/over-http.ts";
import { OPERATOR_KEY, consoleClient } from "../plugins/console/console-helpers.ts";
import { probePlugin } from "../support/probe-plugin.ts";

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

const SECRET_QUERY = "QSECRET-4471";
const PASSWORD = "BODY-PASSWORD-8812";
const IDEM = "IDEMKEY-SECRET-0001";
const INVOICE_TEXT = "INV001-94ND90NR-20240611 Consulting supplier@example.ng";
const ADMIN = { "x-admin-api-key": ADMIN_KEY };

test("safeQuery keeps documented safe values, redacts the rest; safePath redacts credential-shaped segments", () => {
  assert.is(safeQuery(""), null);
  assert.is(safeQuery("?limit=20&status=signed&token=abc&search=Ada+Lovelace"), "?limit=20&status=signed&token=[redacted]&search=[redacted]");
  assert.is(safeQuery("?limit=<script>&%ZZ=1&gw_live_x"), "?limit=[redacted]&[redacted]&gw_live_x=[redacted]");
  assert.is(safePath("/invoices/INV-1"), "/invoices/INV-1");
  assert.is(safePath("/keys/gw_live_abc/x"), "/keys/[redacted]/x");
  assert.is(safePath("/x/sk%5Ftest_1"), "/x/[redacted]");
});

test("requests of a business appear after a flush with their fields; nothing secret is stored; others are not kept", async () => {
  const tg = await _start();
  const sent: Array<{ path: string; init: CallInit; status: number; id: string }> = [];
  const send = async (path: string, init: CallInit, status: number) => {
    const res = await tg.call(path, init);
    await res.arrayBuffer();
    assert.is(res.status, status, `${init.method ?? "GET"} ${path}`);
    sent.push({ path, init, status, id: res.headers.get("x-request-id")! });
  };
  const key = { "x-api-key": DEMO_KEY };
  await send(`/probe/echo?limit=20&token=${SECRET_QUERY}`, { headers: key }, 200);
  await send(`/probe/echo?token=${SECRET_QUERY}`, { headers: { "x-api-key": "gw_wrong_key_123456" } }, 401);
  await send(`/probe/echo`, { headers: { "x-api-key": OTHER_KEY } }, 403);
  await send(`/nope?token=${SECRET_QUERY}`, { headers: key }, 404);
  await send("/probe/items/abc", { method: "POST", headers: { ...key, "x-idempotency-key": IDEM }, body: { name: "ok" } }, 200);
  await send("/probe/items/abc", { method: "POST", headers: { ...key, "x-idempotency-key": IDEM }, body: { name: INVOICE_TEXT, password: PASSWORD } }, 400);
  await send(`/api/v1/probe?search=${SECRET_QUERY}`, { host: "localhost", headers: { authorization: `Bearer ${BEARER_DEMO}` } }, 200);
  await send("/probe/echo", { host: STORED, headers: key }, 200);
  // Not kept: operator routes, unauthenticated pages, hosts of no business.
  await send("/probe/admin", { headers: ADMIN }, 200);
  await send("/health", {}, 200);
  await send("/api/v1/probe", { host: "localhost", headers: { authorization: "Bearer sk_test_wrong_key_999" } }, 401);
  await send("/probe/echo", { host: "unprovisioned.example", headers: key }, 404);

  await tg.gateway.requestLog!.flush();
  const stored = await _all(tg);
  const byId = new Map(stored.map((e) => [e._id, e]));
  for (const s of sent.slice(0, 8)) assert.ok(byId.has(s.id), `kept: ${s.init.method ?? "GET"} ${s.path} ${s.status}`);
  for (const s of sent.slice(8)) assert.not.ok(byId.has(s.id), `not kept: ${s.path} ${s.status}`);
  assert.is(stored.length, 8);

  const first = byId.get(sent[0]!.id)!;
  assert.equal(
    { ...first, at: 0, durationMs: 0, expiresAt: 0 },
    { _id: sent[0]!.id, businessId: "demo", at: 0, method: "GET", route: "/probe/echo", path: "/probe/echo", query: "?limit=20&token=[redacted]", status: 200, statusClass: "2xx", code: null, durationMs: 0, host: "passthrough.demo.localhost", credentialId: "demo-primary", expiresAt: 0 },
  );
  assert.ok(Math.abs(first.at - Date.now()) < 60_000, "time is epoch ms");
  assert.is(first.expiresAt - first.at, 7 * 86_400_000, "kept 7 days");
  assert.type(first.durationMs, "number");
  const unauth = byId.get(sent[1]!.id)!;
  assert.equal([unauth.businessId, unauth.status, unauth.code, unauth.credentialId], ["demo", 401, "GW_API_KEY_INVALID", null], "an unauthenticated error is the domain owner's");
  const notFound = byId.get(sent[3]!.id)!;
  assert.equal([notFound.route, notFound.code, notFound.path], [null, "GW_ROUTE_NOT_FOUND", "/nope"]);
  assert.equal([byId.get(sent[6]!.id)!.businessId, byId.get(sent[6]!.id)!.credentialId], ["demo", "demo-collections"]);
  assert.is(byId.get(sent[7]!.id)!.businessId, "demo-stored", "the Stored host is its own business's");
  assert.is(byId.get(sent[5]!.id)!.code, "GW_REQUEST_VALIDATION_FAILED");

  const all = JSON.stringify(stored);
  for (const s of [DEMO_KEY, OTHER_KEY, BEARER_DEMO, ADMIN_KEY, "gw_wrong_key_123456", "sk_test_wrong_key_999", SECRET_QUERY, PASSWORD, IDEM, "INV001-94ND90NR", "Consulting", "supplier@example.ng"])
    assert.not.ok(all.includes(s), `the request log holds "${s}"`);
});

test("operators find a request by ID and list a business's requests newest first with filters; a business never sees another's", async () => {
  const tg = await _start();
  const ids: string[] = [];
  for (const [path, headers] of [
    ["/probe/echo", { "x-api-key": DEMO_KEY }],
    ["/probe/echo", { "x-api-key": "gw_wrong_key_123456" }],
    ["/nope", { "x-api-key": DEMO_KEY }],
    ["/probe/echo", { "x-api-key": DEMO_KEY }],
  ] as const) {
    const res = await tg.call(path, { headers });
    await res.arrayBuffer();
    ids.push(res.headers.get("x-request-id")!);
  }
  const stored = await tg.call("/probe/echo", { host: STORED, headers: { "x-api-key": DEMO_KEY } });
  const storedId = stored.headers.get("x-request-id")!;
  await tg.gateway.requestLog!.flush();

  const list = async (q: string) => {
    const res = await tg.call(`/admin/requests?${q}`, { headers: ADMIN });
    assert.is(res.status, 200, q);
    return (await res.json()) as { data: RequestLogEntry[]; nextCursor: string | null };
  };
  assert.equal((await list(`requestId=${ids[2]}`)).data.map((e) => e._id), [ids[2]]);
  assert.equal((await list(`requestId=${storedId}`)).data.map((e) => e.businessId), ["demo-stored"]);
  assert.equal((await list(`businessId=demo&requestId=${storedId}`)).data, [], "another business's request ID is not found within this one");
  assert.equal((await list("businessId=demo")).data.map((e) => e._id), [...ids].reverse(), "newest first");
  assert.ok(!(await list("businessId=demo")).data.some((e) => e._id === storedId), "not in another business's list");
  assert.equal((await list("businessId=demo&status=4xx")).data.map((e) => e._id), [ids[2], ids[1]]);
  assert.equal((await list("businessId=demo&status=401")).data.map((e) => e._id), [ids[1]]);
  assert.equal((await list("businessId=demo&code=GW_ROUTE_NOT_FOUND")).data.map((e) => e._id), [ids[2]]);
  assert.equal((await list("businessId=demo&code=none")).data.map((e) => e._id), [ids[3], ids[0]]);
  assert.equal((await list("businessId=demo&route=unmatched")).data.map((e) => e._id), [ids[2]]);
  assert.equal((await list(`businessId=demo&route=${encodeURIComponent("/probe/echo")}`)).data.length, 3);
  const first = await list("businessId=demo&limit=2");
  assert.equal(first.data.map((e) => e._id), [ids[3], ids[2]]);
  const second = await list(`businessId=demo&limit=2&cursor=${first.nextCursor}`);
  assert.equal(second.data.map((e) => e._id), [ids[1], ids[0]]);
  const forged = await tg.call(`/admin/requests?businessId=demo&cursor=${Buffer.from("12 ").toString("base64url")}x`, { headers: ADMIN });
  assert.is(forged.status, 400, "a cursor no page gave");
  const problem = (await forged.json()) as { code: string; errors: Array<{ field: string; code: string }> };
  assert.equal([problem.code, problem.errors.map((e) => [e.field, e.code])], ["GW_REQUEST_VALIDATION_FAILED", [["cursor", "FORMAT"]]]);
  assert.is((await tg.call("/admin/requests", { headers: ADMIN })).status, 400, "a business or a request ID is required");
  assert.is((await tg.call("/admin/requests?businessId=demo&status=abc", { headers: ADMIN })).status, 400);
  assert.is((await tg.call("/admin/requests?businessId=demo", { headers: { "x-api-key": DEMO_KEY } })).status, 401, "operators only");
});

test("the operator console's search box finds a request ID in the request log (its route, status and code, escaped)", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin], patch: { requestLog: { flushMs: 3_600_000 } } });
  const res = await tg.call("/nope", { headers: { "x-api-key": DEMO_KEY } });
  const id = res.headers.get("x-request-id")!;
  await tg.gateway.requestLog!.flush();
  const c = consoleClient(tg);
  assert.is((await c.signIn(OPERATOR_KEY)).status, 303);
  const page = await c.html(`/console/search?q=${id}`);
  for (const s of ["In the request log", id, "GW_ROUTE_NOT_FOUND", "business demo", "status 404"]) assert.ok(page.includes(s), s);
  assert.match(await c.html("/console/search?q=nothing-here"), /Nothing found for <code>nothing-here<\/code>/);
});

test("store down: requests are still served, the lost batch is counted and logged once", async () => {
  let down = true;
  const raw = await createSqliteDocumentStore({ file: ":memory:" });
  const store = withStoreFaults(raw, (collection, method) => (down && collection === "request_log_groups" && method === "insertMany" ? "before" : null));
  const tg = await _start({ ports: { documentStore: store } });
  for (let i = 0; i < 5; i++) {
    const res = await tg.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY } });
    assert.is(res.status, 200, "served while the request log cannot be written");
    await res.arrayBuffer();
  }
  await tg.gateway.requestLog!.flush();
  for (let i = 0; i < 2; i++) await (await tg.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY } })).arrayBuffer();
  await tg.gateway.requestLog!.flush();
  const metrics = await tg.gateway.kit.metrics.text();
  assert.match(metrics, /gatehouse_request_log_dropped_total\{reason="store_unavailable"\} 7/);
  assert.is(tg.logs.filter((r) => r.event === "request_log_write_failed").length, 1, "one log line per outage");
  down = false;
  await (await tg.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY } })).arrayBuffer();
  await tg.gateway.requestLog!.flush();
  assert.ok(tg.logs.some((r) => r.event === "request_log_write_recovered" && r.lost === 7));
  assert.is((await _all(tg)).length, 1);
});

test("a full buffer drops the request's record and counts it; stopping the gateway flushes what is buffered", async () => {
  const raw = await createSqliteDocumentStore({ file: ":memory:" });
  const kept: DocumentStore = { kind: raw.kind, collection: (n, s) => raw.collection(n, s), ping: () => raw.ping(), close: async () => {} };
  const tg = await start({ plugins: [...plugins, probePlugin], patch: { requestLog: { bufferRecords: 100, batchRecords: 5_000, flushMs: 3_600_000 } }, ports: { documentStore: kept } });
  for (let i = 0; i < 110; i++) await (await tg.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY } })).arrayBuffer();
  assert.is(tg.gateway.requestLog!.buffered(), 100);
  assert.match(await tg.gateway.kit.metrics.text(), /gatehouse_request_log_dropped_total\{reason="buffer_full"\} 10/);
  await tg.close();
  assert.is((await openRequestLogGroups(raw).find({}, { limit: 1000 })).items.flatMap(entriesOf).length, 100, "the stop flushed the buffer");
  await raw.close();
});

test.run();

// --- Internal helpers ---

async function _start(extra: { ports?: { documentStore: DocumentStore } } = {}): Promise<TestGateway> {
  const tg = await start({ plugins: [...plugins, probePlugin], patch: { requestLog: { flushMs: 3_600_000 } }, ...extra });
  await callOverHttp(tg);
  return tg;
}

async function _all(tg: TestGateway): Promise<RequestLogEntry[]> {
  const page = await openRequestLogGroups(tg.gateway.kit.ports.documentStore).find({}, { limit: 1000 });
  return page.items.flatMap(entriesOf);
}
