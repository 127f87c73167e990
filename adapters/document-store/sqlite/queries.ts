/**
 * Reads of a collection, synchronous on one connection: the main thread's read connection answers
 * the port's reads, and the writer runs the same functions inside its transaction to find what it
 * updates. Every query is one SQL statement through the collection's indexes (./translate.ts); when
 * the translation leaves rows to re-check in JS, those are read in chunks of CHUNK rows inside one
 * read transaction (one snapshot), so a page never holds more than it returns plus a chunk.
 *
 * TTL: a document whose TTL key is a number below `now` is invisible to every read (the writer's
 * sweep deletes it later).
 */
import type { Doc, Filter, SortSpec } from "../../ports.ts";
import { compileFilter } from "../filter.ts";
import type { SqlParam, SqliteConnection } from "./connection.ts";
import { NULL_KEY } from "./keys.ts";
import type { CollectionSchema } from "./schema.ts";
import { trigramDensity } from "./text-index.ts";
import { afterCursorSql, orderBySql, sortKeys, translateFilter } from "./translate.ts";

export interface MatchQuery {
  filter: Filter;
  /** A normalized sort (ends with `_id`), or empty for any order. */
  sort: readonly SortSpec[];
  /** Sort values of the last row of the previous page (filter.ts's `decodeCursor`), or null. */
  after: readonly unknown[] | null;
  skip: number;
  /** At most this many rows; null for all. */
  limit: number | null;
  now: number;
  /** An extra SQL condition and its parameters (the lease test of `claim`). */
  extra?: { sql: string; params: SqlParam[] };
}

export interface MatchRow {
  rowid: number;
  /** The document's JSON text. */
  text: string;
  /** The document, when the query parsed it already (to match it in JS); the caller's to keep. */
  doc?: Doc;
  /** The row's sort keys, in sort order. */
  keys: unknown[];
}

/** The statement `selectMatches` runs (also what EXPLAIN QUERY PLAN is asked about). */
export interface MatchStatement {
  sql: string;
  params: SqlParam[];
  /** Whether rows carry a trailing check flag (JS re-checks those with a true flag). */
  checked: boolean;
}

/** Rows read per chunk when the translation is not exact (the first chunk; later ones double up to MAX_CHUNK). */
const CHUNK = 256;
const MAX_CHUNK = 16_384;

/**
 * The SQL of `selectMatches` without LIMIT/OFFSET. With `conn`, a text index lookup is shaped by
 * what that connection reads of the index (its common trigrams left out).
 */
export function matchStatement(schema: CollectionSchema, q: MatchQuery, conn?: SqliteConnection): MatchStatement {
  const t = translateFilter(schema, q.filter, _density(conn, schema));
  const params = [...t.params];
  const where = [t.where];
  const visible = visibleSql(schema, params, q.now);
  if (visible) where.push(visible);
  if (q.extra) {
    where.push(q.extra.sql);
    params.push(...q.extra.params);
  }
  const keys = q.sort.length > 0 ? sortKeys(schema, q.sort) : [];
  if (q.after) where.push(afterCursorSql(keys, q.sort, q.after, params));
  const columns = ["rowid", "doc", ...keys, ...(t.check ? [t.check] : [])].join(", ");
  const order = keys.length > 0 ? ` ORDER BY ${orderBySql(keys, q.sort)}` : "";
  return { sql: `SELECT ${columns} FROM ${t.from} WHERE ${where.join(" AND ")}${order}`, params, checked: t.check !== null };
}

/** The matching rows in sort order, after `skip`, at most `limit`. */
export function selectMatches(conn: SqliteConnection, schema: CollectionSchema, q: MatchQuery): MatchRow[] {
  if (!schema.exists || q.limit === 0) return [];
  const nKeys = q.sort.length;
  const toRow = (r: unknown[]): MatchRow => ({ rowid: r[0] as number, text: r[1] as string, keys: r.slice(2, 2 + nKeys) });
  if (typeof q.filter._id === "string" && q.after === null) {
    if (q.skip > 0) return [];
    const pinned = _pinnedRow(conn, schema, q, q.filter._id);
    return pinned ? [{ ...toRow(pinned.row), doc: pinned.doc }] : [];
  }
  const st = matchStatement(schema, q, conn);
  if (!st.checked) {
    if (q.limit === 1 && q.skip === 0) {
      const row = conn.get(`${st.sql} LIMIT 1`, st.params); // one row: the binding's cheaper call
      return row ? [toRow(row)] : [];
    }
    if (q.skip > 0) return conn.all(_skipFirstSql(schema, st, q), [...st.params, q.limit ?? -1, q.skip]).map(toRow);
    return conn.all(`${st.sql} LIMIT ? OFFSET ?`, [...st.params, q.limit ?? -1, q.skip]).map(toRow);
  }
  const matches = compileFilter(q.filter);
  const scan = _scanner(q, matches, toRow);
  // The first chunk is the page itself (rows JS rejects are rare: those holding an array along a
  // path), read alone in one statement (its own snapshot): enough whenever it holds every row or the
  // page. Later chunks double in size, so reading n rows re-walks at most ~2n (OFFSET starts over).
  const first = q.limit === null ? CHUNK : Math.min(MAX_CHUNK, Math.max(1, q.limit + q.skip));
  if (!conn.inTransaction) {
    const rows = conn.all(`${st.sql} LIMIT ? OFFSET ?`, [...st.params, first, 0]);
    if (scan.take(rows) || rows.length < first) return scan.out;
    scan.reset();
  }
  return inSnapshot(conn, () => {
    for (let offset = 0, size = first; ; offset += size, size = Math.min(size * 2, MAX_CHUNK)) {
      const rows = conn.all(`${st.sql} LIMIT ? OFFSET ?`, [...st.params, size, offset]);
      if (scan.take(rows) || rows.length < size) return scan.out;
    }
  });
}

/** How many visible documents match. */
export function countMatches(conn: SqliteConnection, schema: CollectionSchema, filter: Filter, now: number): number {
  if (!schema.exists) return 0;
  if (typeof filter._id === "string") return _pinnedRow(conn, schema, { filter, sort: [], after: null, skip: 0, limit: 1, now }, filter._id) ? 1 : 0;
  const t = translateFilter(schema, filter, _density(conn, schema));
  const params = [...t.params];
  const visible = visibleSql(schema, params, now);
  const where = visible ? `${t.where} AND ${visible}` : t.where;
  if (!t.check) return conn.get(`SELECT count(*) FROM ${t.from} WHERE ${where}`, params)![0] as number;
  // One statement while no matching row needs JS's check (the usual case: no array along the paths).
  const [exact, flagged] = conn.get(`SELECT count(*) FILTER (WHERE NOT ${t.check}), count(*) FILTER (WHERE ${t.check}) FROM ${t.from} WHERE ${where}`, params)!;
  if (flagged === 0) return exact as number;
  const matches = compileFilter(filter);
  return inSnapshot(conn, () => {
    let n = conn.get(`SELECT count(*) FROM ${t.from} WHERE ${where} AND NOT ${t.check}`, params)![0] as number;
    for (let last = -Infinity; ; ) {
      const rows = conn.all(`SELECT rowid, doc FROM ${schema.table} WHERE ${where} AND ${t.check} AND rowid > ? ORDER BY rowid LIMIT ${CHUNK}`, [...params, last]);
      for (const r of rows) if (matches(JSON.parse(r[1] as string) as Doc)) n++;
      if (rows.length < CHUNK) return n;
      last = rows[rows.length - 1]![0] as number;
    }
  });
}

/** One visible document by `_id`, as JSON text. */
export function getText(conn: SqliteConnection, schema: CollectionSchema, id: string, now: number): string | null {
  if (!schema.exists) return null;
  const params: SqlParam[] = [id];
  const visible = visibleSql(schema, params, now);
  const row = conn.get(`SELECT doc FROM ${schema.table} WHERE _id = ?${visible ? ` AND ${visible}` : ""}`, params);
  return row ? (row[0] as string) : null;
}

/** The TTL visibility condition (appending its parameter), or "" for a collection without TTL. */
export function visibleSql(schema: CollectionSchema, params: SqlParam[], now: number): string {
  if (!schema.ttl) return "";
  params.push(now);
  const k = schema.ttl.column;
  return `NOT (${k} > ${NULL_KEY} AND ${k} < ?)`;
}

/**
 * A page after `skip` rows, the skipped rows passed over by their keys alone: the inner statement
 * walks and orders rowids (an index holding the filter's and the sort's fields answers it without
 * reading a row, even where SQLite sorts runs of equal keys itself), the outer one reads the page.
 */
function _skipFirstSql(schema: CollectionSchema, st: MatchStatement, q: MatchQuery): string {
  const from = st.sql.indexOf(` FROM ${schema.table} `); // then WHERE, or NOT INDEXED (translate.ts)
  const order = st.sql.lastIndexOf(" ORDER BY ");
  const inner = `SELECT rowid${st.sql.slice(from)} LIMIT ? OFFSET ?`;
  const outerOrder = q.sort.length > 0 && order > from ? st.sql.slice(order) : "";
  return `${st.sql.slice(0, from)} FROM ${schema.table} WHERE rowid IN (${inner})${outerOrder}`;
}

/** Runs `fn` in one read snapshot: the connection's transaction if it is in one, else a new one. */
export function inSnapshot<T>(conn: SqliteConnection, fn: () => T): T {
  if (conn.inTransaction) return fn();
  conn.begin("DEFERRED");
  try {
    return fn();
  } finally {
    conn.commit();
  }
}

// --- Internal helpers ---

/** The trigram density estimate of the collection's text index on `conn`, if it has one. */
function _density(conn: SqliteConnection | undefined, schema: CollectionSchema) {
  return conn && schema.text ? trigramDensity(conn, schema.table, schema.text) : null;
}

/**
 * The one document a filter's `_id` pins, if visible and matching: read by its primary key (with the
 * TTL test and the claim's lease test in SQL) and matched by filter.ts in JS, so no filter SQL is
 * built and no JSON function runs on the row (a compare-and-set names its `_id` and fields no
 * index holds: in SQL each such field costs three JSON functions and a long statement text).
 */
function _pinnedRow(conn: SqliteConnection, schema: CollectionSchema, q: MatchQuery, id: string): { row: unknown[]; doc: Doc } | null {
  const params: SqlParam[] = [id];
  const where = ["_id = ?"];
  const visible = visibleSql(schema, params, q.now);
  if (visible) where.push(visible);
  if (q.extra) {
    where.push(q.extra.sql);
    params.push(...q.extra.params);
  }
  const columns = ["rowid", "doc", ...(q.sort.length > 0 ? sortKeys(schema, q.sort) : [])].join(", ");
  const row = conn.get(`SELECT ${columns} FROM ${schema.table} WHERE ${where.join(" AND ")}`, params);
  if (!row) return null;
  const doc = JSON.parse(row[1] as string) as Doc;
  return compileFilter(q.filter)(doc) ? { row, doc } : null;
}

/** Filters chunks of candidate rows with JS's check, skipping and limiting as the query asks. */
function _scanner(q: MatchQuery, matches: (doc: Doc) => boolean, toRow: (r: unknown[]) => MatchRow) {
  const scan = {
    out: [] as MatchRow[],
    toSkip: q.skip,
    reset(): void {
      scan.out = [];
      scan.toSkip = q.skip;
    },
    /** Takes a chunk's matches; true once the page is full. */
    take(rows: unknown[][]): boolean {
      for (const r of rows) {
        if (r[r.length - 1] && !matches(JSON.parse(r[1] as string) as Doc)) continue;
        if (scan.toSkip > 0) {
          scan.toSkip--;
          continue;
        }
        scan.out.push(toRow(r));
        if (q.limit !== null && scan.out.length >= q.limit) return true;
      }
      return false;
    },
  };
  return scan;
}
