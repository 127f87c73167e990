/**
 * Compare-and-sets as one SQL statement (adapters/document-store/sqlite/sql-update.ts): the sign
 * path's shapes are taken, what SQL cannot do exactly is left to the JS path, and a document SQL
 * writes is byte for byte the text the JS path writes (`JSON.stringify(applyUpdate(...))`), with
 * every key column as the key expression computes it from that text.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { applyUpdate } from "../../../adapters/document-store/filter.ts";
import { openConnection, type SqliteConnection } from "../../../adapters/document-store/sqlite/connection.ts";
import { ident, keyColumn, keyExpr, tableName } from "../../../adapters/document-store/sqlite/keys.ts";
import type { WriteOp } from "../../../adapters/document-store/sqlite/protocol.ts";
import { META_TABLE_SQL, ensureCollection, loadSchema } from "../../../adapters/document-store/sqlite/schema.ts";
import { sqlUpdate } from "../../../adapters/document-store/sqlite/sql-update.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { applyOp, createWriterState } from "../../../adapters/document-store/sqlite/writes.ts";
import type { CollectionSpec, Doc, Filter, Update } from "../../../adapters/ports.ts";

const SPEC: CollectionSpec = {
  indexes: [
    { fields: ["attemptKey"], unique: true },
    { fields: ["status", "startedAtMs"] },
    { fields: ["money", "completedAtMs", "operationId"] },
    { fields: ["meta.kind"] },
    { fields: ["tags"] },
    { fields: ["irn"], unique: true, sparse: true },
  ],
  ttlField: "expiresAtMs",
};

type UpdateOp = Extract<WriteOp, { kind: "update" }>;

const _op = (filter: Filter, update: Update, returnDoc = false): UpdateOp => ({ kind: "update", collection: "x", filter, update, upsert: false, returnDoc, now: 1000 });

test("the sign path's compare-and-sets are one statement; what SQL cannot do exactly is left to the JS path", () => {
  _withConn((conn) => {
    const schema = loadSchema(conn, "x");
    const taken: UpdateOp[] = [
      _op({ _id: "a", owner: "o", status: "in_progress" }, { $set: { status: "completed", phase: "done", answer: { status: 201, body: "x" }, money: "confirmed", completedAtMs: 5, expiresAtMs: 9 } }),
      _op({ _id: "a", state: "pending", round: 1 }, { $set: { state: "debited", applied: true, updatedAt: "2026-11-29T00:00:00.000Z" } }),
      _op({ _id: "a", version: 3 }, { $set: { balanceKobo: 10, version: 4, batch: { id: "b", moves: [{ e: "x" }] } }, $unset: ["marks", "horizon"] }),
      _op({ _id: "a", "batch.id": "b" }, { $set: { batch: null } }),
      _op({ _id: "a", flag: true }, { $unset: ["meta"] }, true),
      _op({ _id: "a" }, { $set: { tags: "solo" }, $setOnInsert: { created: 1 } }),
    ];
    for (const op of taken) assert.ok(sqlUpdate(schema, op), JSON.stringify(op));
    const declined: UpdateOp[] = [
      _op({ _id: "a" }, { $inc: { n: 1 } }),
      _op({ _id: "a", n: { $gte: 1 } }, { $set: { x: 1 } }),
      _op({ _id: "a", x: null }, { $set: { x: 1 } }),
      _op({ _id: "a", x: { k: 1 } }, { $set: { x: 1 } }),
      _op({ state: "pending" }, { $set: { x: 1 } }),
      _op({ _id: { $in: ["a"] } } as Filter, { $set: { x: 1 } }),
      _op({ _id: "a" }, { $set: { "meta.kind": "k" } }),
      _op({ _id: "a" }, { $set: { "7": "seven" } }),
      _op({ _id: "a" }, { $unset: ["meta.kind"] }),
      _op({ _id: "a" }, {}),
      _op({ _id: "a" }, { $set: { tags: ["t1"] } }),
      _op({ _id: "a" }, { $set: { meta: { kind: ["k"] } } }),
    ];
    for (const op of declined) assert.is(sqlUpdate(schema, op), null, JSON.stringify(op));
    assert.ok(sqlUpdate(schema, _op({ _id: "a" }, { $set: { other: ["fine"] } })), "an array where no indexed path has its marker");
  });
});

test("a document SQL writes is the JS path's text byte for byte, with every key column as computed from it", () => {
  _withConn((conn) => {
    const state = createWriterState(conn);
    const doc = { _id: "a", attemptKey: "A", status: "in_progress", phase: "claimed", money: "none", startedAtMs: 1, completedAtMs: null, meta: { kind: "k", "2": 1, "1": 0 }, headers: { "200": "ok", z: "é\u2028" }, n: 1e21, expiresAtMs: 5000 };
    applyOp(state, { kind: "insert", collection: "x", id: "a", text: JSON.stringify(doc), now: 1000 });
    const steps: Array<[Filter, Update]> = [
      [{ _id: "a", phase: "claimed" }, { $set: { phase: "dispatching", money: "debited" } }],
      [{ _id: "a", status: "in_progress" }, { $set: { status: "completed", completedAtMs: 7.5, money: "confirmed", answer: { body: "x\"y", list: [1, { b: true }] }, expiresAtMs: 9000 } }],
      [{ _id: "a", money: "confirmed", n: 1e21 }, { $set: { meta: { kind: { deep: { x: 2 } } }, irn: "I-1", fresh: -0, list: [1, 2] }, $unset: ["headers", "nothing"] }],
      [{ _id: "a", irn: "I-1" }, { $set: { attemptKey: null, meta: "flat" }, $unset: ["irn", "expiresAtMs"] }],
    ];
    for (const [filter, update] of steps) {
      const op = _op(filter, update, true);
      assert.ok(sqlUpdate(loadSchema(conn, "x"), op), `taken: ${JSON.stringify(update)}`);
      const before = _text(conn);
      const answered = applyOp(state, op);
      const expected = JSON.stringify(applyUpdate(JSON.parse(before) as Doc, update, false));
      assert.is(_text(conn), expected);
      assert.is(answered, expected, "the document after, as findOneAndUpdate answers it");
      assert.is(_stale(conn), 0, `keys after ${JSON.stringify(update)}`);
    }
    assert.is(applyOp(state, _op({ _id: "a", phase: "claimed" }, { $set: { phase: "again" } })), false, "no match");
  });
});

test("a document nested deeper than SQLite's JSON functions parse is updated by the JS path, as before the one-statement form", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  try {
    const c = store.collection<Doc>("plain", {});
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 1_100; i++) deep = { d: deep };
    await c.insert({ _id: "a", state: "pending", deep });
    assert.is(await c.updateOne({ _id: "a", state: "pending" }, { $set: { state: "debited" } }), true);
    assert.is(await c.updateOne({ _id: "a", state: "pending" }, { $set: { state: "again" } }), false, "the condition still holds");
    const back = (await c.get("a"))!;
    assert.is(back.state, "debited");
    assert.equal(back.deep, deep, "the nested document kept whole");
  } finally {
    await store.close();
  }
});

test.run();

// --- Internal helpers ---

function _withConn(fn: (conn: SqliteConnection) => void): void {
  const conn = openConnection({ file: ":memory:", busyTimeoutMs: 1000, synchronous: "OFF" });
  try {
    conn.exec(META_TABLE_SQL);
    ensureCollection(conn, "x", SPEC);
    fn(conn);
  } finally {
    conn.close();
  }
}

function _text(conn: SqliteConnection): string {
  return conn.get(`SELECT doc FROM ${ident(tableName("x"))} WHERE _id = 'a'`)![0] as string;
}

function _stale(conn: SqliteConnection): number {
  const paths = ["attemptKey", "status", "startedAtMs", "money", "completedAtMs", "operationId", "meta.kind", "tags", "irn", "expiresAtMs"];
  const terms = paths.map((p) => `${ident(keyColumn(p))} IS NOT (${keyExpr(p)})`).join(" OR ");
  return conn.get(`SELECT count(*) FROM ${ident(tableName("x"))} WHERE ${terms}`)![0] as number;
}
