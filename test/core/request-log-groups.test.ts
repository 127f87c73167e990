/**
 * The request log's storage in groups (core/request-log/group.ts) and its reads (query.ts), on the
 * embedded store: a flush's requests of one kind become one document; lists merge groups that
 * overlap in time (two processes flushing the same seconds) newest first, and page through them
 * with a cursor without losing or repeating a request, with every filter and pair of filters; a
 * request ID finds its request (a slow one too) and nothing else; a forged cursor is refused.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { v7 } from "uuid";
import { isInvalidQueryError } from "../../adapters/ports.ts";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import type { PendingRequest, RequestLogEntry } from "../../core/request-log/entry.ts";
import { GROUP_SPAN_MS, entriesOf, groupRequests, openRequestLogGroups } from "../../core/request-log/group.ts";
import { createRequestLog, type RequestLogFilters } from "../../core/request-log/query.ts";

const DAY = 86_400_000;
/** An hour ago, rounded to a second (records older than their retention would be gone). */
const T0 = Math.floor((Date.now() - 3_600_000) / 1_000) * 1_000;

test("a flush's requests of one kind are one group; kinds, seconds and the size cap split groups", () => {
  const same = Array.from({ length: 1_200 }, (_, i) => _pending({ at: T0 + (i % 900) }));
  const groups = groupRequests(same, 7 * DAY, 500);
  assert.equal(groups.map((g) => g.n), [500, 500, 200]);
  assert.ok(groups.every((g) => g.to - g.from < GROUP_SPAN_MS));

  const mixed = [_pending({ at: T0 }), _pending({ at: T0 + 1, status: 404, code: "GW_ROUTE_NOT_FOUND", route: null }), _pending({ at: T0 + 2 }), _pending({ at: T0 + GROUP_SPAN_MS + 5 })];
  const split = groupRequests(mixed, 7 * DAY, 500);
  assert.equal(split.map((g) => [g.status, g.n]), [[200, 2], [404, 1], [200, 1]], "by kind, then by second");
  const [first] = split;
  assert.equal([first!.from, first!.to, first!.expiresAt], [T0, T0 + 2, T0 + 2 + 7 * DAY]);
  assert.is(first!.startMin, T0 - 40, "the earliest start, read from the request IDs");

  // A path can hold no separator of the lines (a URL's cannot): one that did would come back percent-encoded.
  const odd = { ..._pending({ at: T0 }), path: "/a b\nc", search: "?limit=5" };
  const [back] = entriesOf(groupRequests([odd], 7 * DAY, 500)[0]!);
  assert.equal([back!.path, back!.query, back!.method, back!.host, back!.credentialId, back!.durationMs], ["/a%20b%0Ac", "?limit=5", "GET", "passthrough.demo.localhost", "demo-primary", 40]);
});

test("lists merge overlapping groups newest first and page through them without loss or repeat, with each filter and pair", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  const groups = openRequestLogGroups(store);
  // Two processes flushing the same minutes: each its own groups, interleaved in time, with ties.
  const all: PendingRequest[] = [];
  for (let i = 0; i < 600; i++) {
    const r = i % 20;
    all.push(
      _pending({
        businessId: i % 13 === 0 ? "other" : "demo",
        at: T0 + Math.floor(i / 3) * 250,
        status: r < 14 ? 200 : r < 17 ? 404 : r < 19 ? 401 : 503,
        code: r < 14 ? null : r < 17 ? "GW_ROUTE_NOT_FOUND" : r < 19 ? "GW_API_KEY_INVALID" : "GW_UPSTREAM_UNAVAILABLE",
        route: r >= 14 && r < 17 ? null : ["/wallet", "/invoices", "/invoices/:irn"][i % 3]!,
      }),
    );
  }
  const processA = all.filter((_, i) => i % 2 === 0);
  const processB = all.filter((_, i) => i % 2 === 1);
  for (let s = 0; s < 600; s += 40) {
    await groups.insertMany(groupRequests(processA.slice(s, s + 40), 7 * DAY, 500));
    await groups.insertMany(groupRequests(processB.slice(s, s + 40), 7 * DAY, 7));
  }
  // Twelve flushes ending at the same millisecond: more groups with one end than a query reads.
  for (let i = 0; i < 12; i++) {
    const tie = _pending({ at: T0 + 60_000, status: i % 2 ? 200 : 503, code: i % 2 ? null : "GW_UPSTREAM_UNAVAILABLE", route: "/wallet" });
    all.push(tie);
    await groups.insertMany(groupRequests([tie], 7 * DAY, 500));
  }
  const log = createRequestLog(store);
  const expected = (f: (p: PendingRequest) => boolean) =>
    all
      .filter((p) => p.businessId === "demo" && f(p))
      .sort((a, b) => b.at - a.at || (a.requestId < b.requestId ? 1 : -1))
      .map((p) => p.requestId);
  const cases: Array<[RequestLogFilters, (p: PendingRequest) => boolean]> = [
    [{}, () => true],
    [{ status: "4xx" }, (p) => p.status >= 400 && p.status < 500],
    [{ status: "401" }, (p) => p.status === 401],
    [{ code: "none" }, (p) => p.code === null],
    [{ code: "GW_UPSTREAM_UNAVAILABLE" }, (p) => p.code === "GW_UPSTREAM_UNAVAILABLE"],
    [{ route: "unmatched" }, (p) => p.route === null],
    [{ route: "/wallet", status: "5xx" }, (p) => p.route === "/wallet" && p.status >= 500],
    [{ route: "/invoices", code: "GW_API_KEY_INVALID" }, (p) => p.route === "/invoices" && p.code === "GW_API_KEY_INVALID"],
    [{ route: "/invoices/:irn", status: "401", code: "GW_API_KEY_INVALID" }, (p) => p.route === "/invoices/:irn" && p.status === 401],
    [{ route: "/wallet", status: "404" }, () => false],
  ];
  for (const [filters, f] of cases) {
    const want = expected(f);
    for (const limit of [1, 7, 50, 1000]) {
      const got: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await log.list("demo", filters, { limit, cursor });
        assert.ok(page.items.length <= limit);
        got.push(...page.items.map((e) => e._id));
        cursor = page.nextCursor;
        assert.ok(++pages <= want.length + 1, "the pages end");
      } while (cursor !== null);
      assert.equal(got, want, `${JSON.stringify(filters)}, ${limit} a page`);
    }
  }
  const one = (await log.list("demo", { status: "503" }, { limit: 1 })).items[0]!;
  const source = all.find((p) => p.requestId === one._id)!;
  assert.equal(
    [one.businessId, one.at, one.status, one.statusClass, one.code, one.route, one.method, one.path, one.credentialId, one.expiresAt - one.at],
    ["demo", source.at, 503, "5xx", "GW_UPSTREAM_UNAVAILABLE", source.route, "GET", source.path, "demo-primary", 7 * DAY],
  );
  await store.close();
});

test("a request ID finds its request (a slow one too) within its business only; a non-gateway ID or another's is not found", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  const groups = openRequestLogGroups(store);
  const log = createRequestLog(store);
  const busy = Array.from({ length: 3_000 }, (_, i) => _pending({ at: T0 + i * 10 }));
  const slow = _pending({ at: T0 + 9 * 60_000, started: T0 + 60_000 });
  const mine = busy[1_234]!;
  const theirs = _pending({ businessId: "other", at: T0 + 12_345 });
  await groups.insertMany(groupRequests([...busy, slow, theirs], 7 * DAY, 500));
  const found = (e: RequestLogEntry | null) => e?._id ?? null;
  assert.is(found(await log.find("demo", mine.requestId)), mine.requestId);
  assert.is(found(await log.find("demo", slow.requestId)), slow.requestId, "a request of 8 minutes");
  assert.is(found(await log.findAny(theirs.requestId)), theirs.requestId);
  assert.is(await log.find("demo", theirs.requestId), null, "another business's request");
  assert.is(await log.find("demo", v7({ msecs: T0 + 5_000 })), null, "an ID no request had");
  assert.is(await log.find("demo", "00000000-0000-4000-8000-000000000001"), null, "not a gateway request ID");
  await store.close();
});

test("a cursor no page gave is refused", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  const log = createRequestLog(store);
  for (const cursor of ["nonsense", Buffer.from("x y").toString("base64url"), Buffer.from("12 ").toString("base64url")]) {
    const err = await log.list("demo", {}, { limit: 5, cursor }).then(() => null, (e: unknown) => e);
    assert.ok(isInvalidQueryError(err), cursor);
  }
  await store.close();
});

test.run();

// --- Internal helpers ---

let _seq = 0;

function _pending(o: { at: number; businessId?: string; status?: number; code?: string | null; route?: string | null; started?: number }): PendingRequest {
  const status = o.status ?? 200;
  const route = o.route === undefined ? "/invoices" : o.route;
  return {
    requestId: v7({ msecs: o.started ?? o.at - 40, seq: _seq++ }),
    businessId: o.businessId ?? "demo",
    at: o.at,
    method: "GET",
    route,
    path: route === null ? `/nope/${_seq}` : route.replace(":irn", `INV${_seq}`),
    search: "",
    status,
    code: o.code === undefined ? null : o.code,
    durationMs: 40,
    host: "passthrough.demo.localhost",
    credentialId: status === 401 ? null : "demo-primary",
  };
}
