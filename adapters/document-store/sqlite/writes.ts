/**
 * The writer's operations, each run inside the writer's transaction (./batch.ts): it reads what it
 * changes on the same connection in the same transaction (BEGIN IMMEDIATE holds the database's
 * write lock across processes), so compare-and-set, upserts, unique keys and lease claims are
 * atomic within a process and across every process sharing the file.
 *
 * Updates are applied in JS with filter.ts's `applyUpdate` and written back whole, with the key
 * columns whose values changed (./rows.ts); SQLite keeps the indexes in step and enforces unique
 * indexes (a clash → DuplicateKeyError naming the index). An expired document never blocks a
 * unique key or an `_id`: on a clash in a TTL collection the expired documents are swept and the
 * write is tried once more.
 */
import { DuplicateKeyError, type Doc, type Lease } from "../../ports.ts";
import { applyUpdate, normalizeSort, upsertDocument } from "../filter.ts";
import { sqliteCode, type SqlParam, type SqliteConnection } from "./connection.ts";
import { NULL_KEY, hasArrayAlong } from "./keys.ts";
import type { WriteOp, WriteValue } from "./protocol.ts";
import { selectMatches, visibleSql } from "./queries.ts";
import { sqlUpdate } from "./sql-update.ts";
import { changedKeyPaths, insertManySql, insertSql, updateSql } from "./rows.ts";
import { dropMarkersFor, ensureCollection, loadSchema, violatedIndex, type CollectionSchema } from "./schema.ts";
import { translateFilter } from "./translate.ts";

export interface WriterState {
  conn: SqliteConnection;
  /** Schemas as this writer last read them (cleared when any connection changed the schema). */
  schemas: Map<string, CollectionSchema>;
  schemaVersion: number;
}

export function createWriterState(conn: SqliteConnection): WriterState {
  return { conn, schemas: new Map(), schemaVersion: -1 };
}

/** Runs one operation (inside the transaction and a savepoint of its own). */
export function applyOp(state: WriterState, op: WriteOp): WriteValue {
  switch (op.kind) {
    case "ensure":
      ensureCollection(state.conn, op.collection, op.spec);
      state.schemas.delete(op.collection);
      return null;
    case "insert": {
      const schema = _schema(state, op.collection);
      _insert(state.conn, schema, op.id, op.text, () => JSON.parse(op.text), op.now);
      return null;
    }
    case "insertMany":
      _insertMany(state.conn, _schema(state, op.collection), op.text, op.arrays, op.now);
      return op.count;
    case "update":
      return _update(state, op);
    case "claim":
      return _claim(state, op);
    case "release":
      return _release(state, op);
    case "delete":
      return _delete(state, op);
    case "deleteMany":
      return _deleteMany(state, op);
    case "sweep": {
      const schema = _schema(state, op.collection);
      return schema.ttl ? _sweep(state.conn, schema, op.now) : 0;
    }
    case "ping":
      // A real (tiny) write: a file that can be read but not written answers reads and must still
      // show up unhealthy (a read-only file, a full disk); one row, rewritten in place.
      state.conn.exec(PING_TABLE_SQL);
      state.conn.run("INSERT INTO gatehouse_ping (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at", [Date.now()]);
      return null;
  }
}

/** The health probe's one row (see the "ping" operation). */
const PING_TABLE_SQL = "CREATE TABLE IF NOT EXISTS gatehouse_ping (id INTEGER PRIMARY KEY, at INTEGER NOT NULL)";

/** A document counts as leased while `lease.until` is a number not yet passed (filter.ts's `_leaseFree`, negated). */
export const LEASE_FREE_SQL =
  `(json_type(doc, '$."lease"') IS NULL OR json_type(doc, '$."lease"') = 'null' OR ` +
  `(json_type(doc, '$."lease"."until"') IN ('integer', 'real') AND doc ->> '$."lease"."until"' < ?))`;

// --- Internal helpers ---

function _schema(state: WriterState, collection: string): CollectionSchema {
  let schema = state.schemas.get(collection);
  if (!schema) {
    schema = loadSchema(state.conn, collection);
    if (!schema.exists) {
      ensureCollection(state.conn, collection, {});
      schema = loadSchema(state.conn, collection);
    }
    state.schemas.set(collection, schema);
  }
  return schema;
}

function _update(state: WriterState, op: Extract<WriteOp, { kind: "update" }>): WriteValue {
  const schema = _schema(state, op.collection);
  const done = _updateInSql(state.conn, schema, op);
  if (done !== null) return done;
  const [row] = selectMatches(state.conn, schema, { filter: op.filter, sort: [], after: null, skip: 0, limit: 1, now: op.now });
  if (!row) {
    if (!op.upsert) return op.returnDoc ? null : false;
    const doc = upsertDocument(op.filter, op.update);
    const text = JSON.stringify(doc);
    _insert(state.conn, schema, doc._id, text, () => doc, op.now);
    return text;
  }
  const before = row.doc ?? (JSON.parse(row.text) as Doc);
  const next = applyUpdate(before, op.update, false);
  const text = JSON.stringify(next);
  _replace(state.conn, schema, row.rowid, text, before, next, op.now);
  return op.returnDoc ? text : true;
}

/**
 * The update as one statement when SQL can do it alone (./sql-update.ts); null when it did not
 * change a row, or when SQLite's JSON functions refused the document (nested deeper than they
 * parse): the JS path then does it, as it did before.
 */
function _updateInSql(conn: SqliteConnection, schema: CollectionSchema, op: Extract<WriteOp, { kind: "update" }>): WriteValue {
  const st = sqlUpdate(schema, op);
  if (!st) return null;
  let value: WriteValue = null;
  try {
    _retryingClash(conn, schema, op.now, () => {
      if (op.returnDoc) value = (conn.get(st.sql, st.params)?.[0] as string | undefined) ?? null;
      else value = conn.run(st.sql, st.params) > 0 ? true : null;
    });
  } catch (e) {
    if (_isMalformedJson(e)) return null; // the statement changed nothing
    throw e;
  }
  return value;
}

function _isMalformedJson(e: unknown): boolean {
  return sqliteCode(e) === "SQLITE_ERROR" && /malformed JSON/.test((e as Error).message);
}

function _claim(state: WriterState, op: Extract<WriteOp, { kind: "claim" }>): WriteValue {
  const schema = _schema(state, op.collection);
  const extra = { sql: LEASE_FREE_SQL, params: [op.now] };
  const [row] = selectMatches(state.conn, schema, { filter: op.filter, sort: normalizeSort(op.sort), after: null, skip: 0, limit: 1, now: op.now, extra });
  if (!row) return null;
  const lease: Lease = { owner: op.owner, until: op.now + op.leaseMs };
  const before = row.doc ?? (JSON.parse(row.text) as Doc);
  const next = applyUpdate(before, { $set: { lease } }, false);
  const text = JSON.stringify(next);
  _replace(state.conn, schema, row.rowid, text, before, next, op.now);
  return text;
}

function _release(state: WriterState, op: Extract<WriteOp, { kind: "release" }>): WriteValue {
  const schema = _schema(state, op.collection);
  const row = state.conn.get(`SELECT rowid, doc FROM ${schema.table} WHERE _id = ?`, [op.id]);
  if (!row) return false;
  const doc = JSON.parse(row[1] as string) as Doc;
  const lease = doc.lease as Partial<Lease> | null | undefined;
  if (!lease || lease.owner !== op.owner) return false;
  const next = applyUpdate(doc, { $unset: ["lease"] }, false);
  state.conn.run(updateSql(schema, changedKeyPaths(schema, doc, next)), [JSON.stringify(next), row[0] as number]);
  return true;
}

function _delete(state: WriterState, op: Extract<WriteOp, { kind: "delete" }>): WriteValue {
  const schema = _schema(state, op.collection);
  const params: SqlParam[] = [op.id];
  const visible = visibleSql(schema, params, op.now) || "1";
  const rows = state.conn.all(`DELETE FROM ${schema.table} WHERE _id = ? RETURNING ${visible}`, params);
  return rows.length > 0 && Boolean(rows[0]![0]);
}

function _deleteMany(state: WriterState, op: Extract<WriteOp, { kind: "deleteMany" }>): WriteValue {
  const schema = _schema(state, op.collection);
  const t = translateFilter(schema, op.filter);
  if (!t.check) {
    const params = [...t.params];
    const visible = visibleSql(schema, params, op.now);
    return state.conn.run(`DELETE FROM ${schema.table} WHERE ${t.where}${visible ? ` AND ${visible}` : ""}`, params);
  }
  const rows = selectMatches(state.conn, schema, { filter: op.filter, sort: [], after: null, skip: 0, limit: null, now: op.now });
  for (let i = 0; i < rows.length; i += 10_000) {
    const ids = JSON.stringify(rows.slice(i, i + 10_000).map((r) => r.rowid));
    state.conn.run(`DELETE FROM ${schema.table} WHERE rowid IN (SELECT value FROM json_each(?))`, [ids]);
  }
  return rows.length;
}

function _insert(conn: SqliteConnection, schema: CollectionSchema, id: string, text: string, doc: () => unknown, now: number): void {
  _dropMarkers(conn, schema, text, doc);
  _retryingClash(conn, schema, now, () => conn.run(insertSql(schema), [id, text]));
}

/**
 * A batch of new documents in one statement: SQLite reads them from one JSON array (json_each), so
 * a batch costs one call into the engine, not one per document.
 */
function _insertMany(conn: SqliteConnection, schema: CollectionSchema, text: string, arrays: boolean, now: number): void {
  if (arrays && schema.scalar.size > 0) {
    const docs = JSON.parse(text) as unknown[];
    dropMarkersFor(conn, schema, (path) => docs.some((d) => hasArrayAlong(d, path)));
  }
  _retryingClash(conn, schema, now, () => conn.run(insertManySql(schema), [text]));
}

/** Rewrites a row's document (`before` → `after`, whose JSON is `text`) and the keys that changed. */
function _replace(conn: SqliteConnection, schema: CollectionSchema, rowid: number, text: string, before: unknown, after: unknown, now: number): void {
  _dropMarkers(conn, schema, text, () => after);
  const sql = updateSql(schema, changedKeyPaths(schema, before, after));
  _retryingClash(conn, schema, now, () => conn.run(sql, [text, rowid]));
}

/** Drops the marker of every indexed path the document holds an array along (no "[" in the text: none). */
function _dropMarkers(conn: SqliteConnection, schema: CollectionSchema, text: string, doc: () => unknown): void {
  if (schema.scalar.size === 0 || !text.includes("[")) return;
  const value = doc();
  dropMarkersFor(conn, schema, (path) => hasArrayAlong(value, path));
}

/** Runs a write; on a unique clash, sweeps expired documents (TTL collections) and tries once more. */
function _retryingClash(conn: SqliteConnection, schema: CollectionSchema, now: number, write: () => void): void {
  try {
    write();
    return;
  } catch (e) {
    if (!_isClash(e)) throw e;
    if (!schema.ttl || _sweep(conn, schema, now) === 0) throw new DuplicateKeyError(schema.collection, violatedIndex(schema, e));
  }
  try {
    write();
  } catch (e) {
    if (!_isClash(e)) throw e;
    throw new DuplicateKeyError(schema.collection, violatedIndex(schema, e));
  }
}

function _sweep(conn: SqliteConnection, schema: CollectionSchema, now: number): number {
  const k = schema.ttl!.column;
  return conn.run(`DELETE FROM ${schema.table} WHERE ${k} > ${NULL_KEY} AND ${k} < ?`, [now]);
}

function _isClash(e: unknown): boolean {
  const code = sqliteCode(e);
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}
