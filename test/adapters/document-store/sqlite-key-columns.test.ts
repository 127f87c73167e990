/**
 * Key columns of the SQLite store (adapters/document-store/sqlite/rows.ts, upgrade.ts): plain
 * columns the writer sets. Every key column holds exactly what the key expression computes from the
 * row's document after every kind of write (inserts, batches, updates that change keys or not,
 * upserts, claims, releases, a new index over existing rows); an update names only the columns
 * whose value changed; and a file written with generated key columns is rebuilt once at open with
 * its rows, rowids, keys, indexes, markers, unique keys, queries and TTL intact.
 */
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openConnection } from "../../../adapters/document-store/sqlite/connection.ts";
import { ident, keyColumn, keyExpr, presenceColumn, tableName } from "../../../adapters/document-store/sqlite/keys.ts";
import { changedKeyPaths, updateSql } from "../../../adapters/document-store/sqlite/rows.ts";
import { loadSchema } from "../../../adapters/document-store/sqlite/schema.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { upgradeKeyColumns } from "../../../adapters/document-store/sqlite/upgrade.ts";
import { isDuplicateKeyError, type CollectionSpec, type Doc } from "../../../adapters/ports.ts";
import { writeGeneratedColumnsFile } from "../../support/generated-key-columns.ts";
import { withSqliteFile } from "../../support/sqlite-file.ts";
import { tempDir } from "../../support/temp.ts";

const SPEC: CollectionSpec = {
  indexes: [
    { fields: ["attemptKey"], unique: true },
    { fields: ["status", "startedAtMs"] },
    { fields: ["irn"], unique: true, sparse: true },
    { fields: ["tags"] },
    { fields: ["meta.kind"] },
  ],
  ttlField: "expiresAtMs",
};

test("every key column holds what the key expression computes, after inserts, batches, updates, upserts, claims, releases and a new index", async () => {
  const file = join(tempDir("keycols"), "gatehouse.db");
  let now = 1_000_000;
  const store = await createSqliteDocumentStore({ file, clock: () => now });
  try {
    const c = store.collection<Doc>("records", SPEC);
    await c.insert({ _id: "a", attemptKey: "A", status: "new", startedAtMs: 1, meta: { kind: "x" }, expiresAtMs: now + 60_000 });
    await c.insertMany([
      { _id: "b", attemptKey: "B", status: "new", startedAtMs: 2, irn: "I-B", flag: true },
      { _id: "c", attemptKey: { nested: [1, 2] }, status: false, tags: ["t1", "t2"], meta: [{ kind: "y" }] },
      { _id: "d", attemptKey: null, status: "new", startedAtMs: 2.5, meta: { kind: { deep: true } } },
    ]);
    await c.updateOne({ _id: "a" }, { $set: { status: "done", note: "no key changes here" } });
    await c.updateOne({ _id: "a" }, { $set: { note: "still none" } });
    await c.findOneAndUpdate({ attemptKey: "B" }, { $set: { "meta.kind": "z", irn: null }, $unset: ["startedAtMs"] });
    await c.findOneAndUpdate({ _id: "d" }, { $set: { "meta.kind.deep": false }, $inc: { startedAtMs: 1 } });
    await c.findOneAndUpdate({ _id: "e" }, { $set: { attemptKey: "E", status: "new", tags: "solo" } }, { upsert: true });
    await c.updateOne({ _id: "c" }, { $set: { meta: { kind: "back to one" } }, $unset: ["tags"] });
    const claimed = await c.claim({ status: "new" }, "worker-1", 30_000, [{ field: "startedAtMs", direction: 1 }]);
    assert.ok(claimed);
    assert.ok(await c.release(claimed._id, "worker-1"));
    now += 1;
    await c.updateOne({ _id: "b" }, { $set: { expiresAtMs: now + 5 } });
    assert.is(_stale(file, "records", ["attemptKey", "status", "startedAtMs", "irn", "tags", "meta.kind", "expiresAtMs"]), 0);

    // A new index over the rows already there: its column is filled for every row at once.
    store.collection<Doc>("records", { indexes: [{ fields: ["flag"] }, { fields: ["note"] }] });
    await c.insert({ _id: "f", attemptKey: "F", flag: false });
    assert.is(_stale(file, "records", ["flag", "note"]), 0);
    assert.equal((await c.find({ flag: true })).items.map((d) => d._id), ["b"]);
    assert.equal((await c.find({ note: "still none" })).items.map((d) => d._id), ["a"]);
    assert.equal((await c.find({ tags: "t1" })).items.map((d) => d._id), [], "c's tags were unset");
    assert.equal((await c.find({ "meta.kind": "z" })).items.map((d) => d._id), ["b"]);
  } finally {
    await store.close();
  }
});

test("two processes on one file: an index one declares gets its key from the other's next writes too", async () => {
  const file = join(tempDir("keycols-two"), "gatehouse.db");
  const first = await createSqliteDocumentStore({ file });
  const second = await createSqliteDocumentStore({ file });
  try {
    const spec = { indexes: [{ fields: ["a"] }] };
    await second.collection<Doc>("shared", spec).insert({ _id: "s1", a: 1, b: "x" }); // its writer holds the schema and statements
    await first.collection<Doc>("shared", spec).insert({ _id: "f1", a: 2, b: "y" });
    const withB = first.collection<Doc>("shared", { indexes: [{ fields: ["b"], unique: true }] });
    await withB.insert({ _id: "f2", a: 3, b: "z" });
    const c2 = second.collection<Doc>("shared");
    await c2.insert({ _id: "s2", a: 4, b: "w" });
    await c2.updateOne({ _id: "s1" }, { $set: { b: "v" } });
    assert.is(_stale(file, "shared", ["a", "b"]), 0);
    assert.equal((await withB.find({ b: { $in: ["v", "w"] } })).items.map((d) => d._id), ["s1", "s2"]);
    const clash = await c2.insert({ _id: "s3", b: "z" }).catch((e: unknown) => e);
    assert.ok(isDuplicateKeyError(clash) && clash.index === "b_1", String(clash));
  } finally {
    await first.close();
    await second.close();
  }
});

test("an update names only the key columns whose value changed (compared as JSON, object members only)", () => {
  const conn = openConnection({ file: ":memory:", busyTimeoutMs: 1000, synchronous: "OFF" });
  try {
    conn.exec("CREATE TABLE gatehouse_collections (name TEXT PRIMARY KEY NOT NULL, spec TEXT NOT NULL)");
    const spec: CollectionSpec = { indexes: [{ fields: ["a"] }, { fields: ["b.c"] }, { fields: ["d"] }, { fields: ["e.0"] }] };
    conn.run("INSERT INTO gatehouse_collections (name, spec) VALUES (?, ?)", ["x", JSON.stringify(spec)]);
    conn.exec(`CREATE TABLE ${ident(tableName("x"))} (_id TEXT PRIMARY KEY, doc TEXT, ${["a", "b.c", "d", "e.0"].map((p) => ident(keyColumn(p))).join(", ")})`);
    const schema = loadSchema(conn, "x");
    const before = { _id: "1", a: 1, b: { c: { deep: [1] } }, d: "s", e: [5], other: 1 };
    assert.equal(changedKeyPaths(schema, before, { ...before, other: 2 }), []);
    assert.equal(changedKeyPaths(schema, before, { ...before, b: { c: { deep: [1] } } }), [], "an equal copy of an object");
    assert.equal(changedKeyPaths(schema, before, { ...before, e: [6] }), [], "a path through an array finds nothing in SQL either");
    assert.equal(changedKeyPaths(schema, before, { ...before, a: 2, b: { c: { deep: [2] } } }), ["a", "b.c"]);
    assert.equal(changedKeyPaths(schema, before, { _id: "1", b: before.b, d: "s", e: [5] }), ["a"], "a removed field");
    assert.equal(changedKeyPaths(schema, before, { ...before, d: null }), ["d"]);
    assert.ok(!updateSql(schema, []).includes("k_"), "no key column when none changed");
    assert.ok(updateSql(schema, ["d"]).includes(ident(keyColumn("d"))));
  } finally {
    conn.close();
  }
});

test("a file written with generated key columns: rebuilt once at open into plain columns, with its rows, keys, indexes, markers, unique keys, queries and TTL intact", async () => {
  const file = join(tempDir("keycols-upgrade"), "gatehouse.db");
  const now = Date.now();
  const records: Doc[] = [
    { _id: "r1", attemptKey: "A1", status: "done", startedAtMs: 10, irn: "I-1", expiresAtMs: now + 3_600_000 },
    { _id: "r2", attemptKey: "A2", status: "new", startedAtMs: 20, tags: ["x", "y"], expiresAtMs: now + 3_600_000 },
    { _id: "r3", attemptKey: "A3", status: "new", startedAtMs: 30, meta: { kind: "k" }, expiresAtMs: now - 1000 },
    { _id: "r4", attemptKey: { o: 1 }, status: true, expiresAtMs: now + 3_600_000 },
  ];
  writeGeneratedColumnsFile(file, {
    records: { spec: SPEC, docs: records },
    plain: { spec: {}, docs: [{ _id: "p1", v: 1 }] },
    entries: { spec: { indexes: [{ fields: ["businessId", "state"] }] }, docs: [{ _id: "e1", businessId: "b", state: "pending" }, { _id: "e2", businessId: "b", state: "done" }] },
  });
  const before = _snapshot(file, "records");
  assert.ok(before.generated > 0);

  const store = await createSqliteDocumentStore({ file, clock: () => now });
  try {
    const after = _snapshot(file, "records");
    assert.is(after.generated, 0, "no generated column left");
    assert.equal(after.rows, before.rows, "rowids, _ids, documents and keys as they were");
    assert.equal(after.indexes, before.indexes.map(_onPresence), "the sparse index then partial on its presence column (upgradeSparseIndexes)");
    assert.equal(after.views, before.views, "the markers: tags holds an array, the other paths none");
    assert.is(_stale(file, "records", ["attemptKey", "status", "startedAtMs", "irn", "tags", "meta.kind", "expiresAtMs"]), 0);

    const c = store.collection<Doc>("records", SPEC);
    assert.equal((await c.get("r1"))?.irn, "I-1");
    assert.is(await c.get("r3"), null, "expired: invisible");
    assert.equal((await c.find({ status: "new" }, { sort: [{ field: "startedAtMs", direction: -1 }] })).items.map((d) => d._id), ["r2"]);
    assert.equal((await c.find({ tags: "y" })).items.map((d) => d._id), ["r2"]);
    assert.ok(store.explain("records", { status: "new" }).usesIndex);
    const clash = await c.insert({ _id: "r9", attemptKey: "A1" }).catch((e: unknown) => e);
    assert.ok(isDuplicateKeyError(clash) && clash.index === "attemptKey_1", String(clash));
    const irnClash = await c.insert({ _id: "r9", attemptKey: "A9", irn: "I-1" }).catch((e: unknown) => e);
    assert.ok(isDuplicateKeyError(irnClash) && irnClash.index === "irn_1", String(irnClash));
    await c.insert({ _id: "r10", attemptKey: "A3" }); // r3's key: expired, swept at once
    await c.updateOne({ _id: "r2" }, { $set: { status: "done" } });
    assert.equal((await c.find({ status: "done" })).items.map((d) => d._id).sort(), ["r1", "r2"]);
    assert.equal(await store.collection<Doc>("plain").get("p1"), { _id: "p1", v: 1 });
    assert.equal((await store.collection<Doc>("entries").find({ businessId: "b", state: "done" })).items.map((d) => d._id), ["e2"]);
    assert.is(_snapshot(file, "entries").generated, 0, "every table with generated columns is rebuilt");
  } finally {
    await store.close();
  }
  assert.is(withSqliteFile(file, upgradeKeyColumns, "write"), 0, "a second open finds nothing to do");
});

test.run();

// --- Internal helpers ---

/** Rows whose key column differs from the key expression over their document. */
function _stale(file: string, collection: string, paths: string[]): number {
  return withSqliteFile(file, (conn) => {
    const terms = paths.map((p) => `${ident(keyColumn(p))} IS NOT (${keyExpr(p)})`).join(" OR ");
    return conn.get(`SELECT count(*) FROM ${ident(tableName(collection))} WHERE ${terms}`)![0] as number;
  });
}

function _snapshot(file: string, collection: string): { generated: number; rows: string; indexes: string[]; views: string[] } {
  const raw = tableName(collection);
  return withSqliteFile(file, (conn) => {
    // Presence columns (sparse paths, added at open after the key columns) are checked in sqlite-sparse-presence.test.ts.
    const cols = conn.all("SELECT name FROM pragma_table_xinfo(?) WHERE name NOT LIKE 'p\\_%' ESCAPE '\\' ORDER BY name", [raw]).map((r) => ident(r[0] as string));
    const rows = conn.all(`SELECT rowid, ${cols.map((c) => `quote(${c})`).join(", ")} FROM ${ident(raw)} ORDER BY rowid`);
    return {
      generated: conn.get("SELECT count(*) FROM pragma_table_xinfo(?) WHERE hidden IN (2, 3)", [raw])![0] as number,
      rows: JSON.stringify(rows),
      indexes: conn.all("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? ORDER BY name", [raw]).map((r) => `${r[0]}: ${r[1]}`),
      views: conn.all("SELECT name FROM sqlite_schema WHERE type = 'view' ORDER BY name").map((r) => r[0] as string),
    };
  });
}

/** An index line as the sparse upgrade leaves it: partial on the presence column instead of `json_type(doc, …)`. */
function _onPresence(line: string): string {
  return line.replace(/ WHERE json_type\(doc, '\$\."([^"]+)"'\) IS NOT NULL$/, (_, path: string) => ` WHERE ${ident(presenceColumn(path))} = 1`);
}
