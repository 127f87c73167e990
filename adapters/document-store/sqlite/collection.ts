/**
 * One collection of the SQLite store (the port's Collection). Reads run synchronously on the main
 * thread's read connection (an indexed point read costs a few microseconds, less than a round trip
 * to the writer thread; docs/decisions.md "SQLite document store: commit design"); in WAL mode they
 * never wait for the writer, and a write's promise settles after its commit, so a read that follows
 * an awaited write sees it. A sole writer answers a repeated point read from memory until a write
 * to the collection settles (./read-cache.ts). Writes go to the writer (./writer.ts) and settle
 * after their commit.
 *
 * Inputs are validated here with filter.ts (an InvalidQueryError never costs a round trip); the
 * writer copies them with JSON's meaning when the call is made (it writes each operation as JSON
 * text at once, ./protocol.ts, and takes the batch a turn later). The
 * collection's schema (./schema.ts) is read once and again after this process declared indexes,
 * or when a statement names what the database no longer has (a dropped array marker).
 */
import type { Collection, CollectionSpec, Doc, Filter, FindOptions, FindPage, Lease, SortSpec, Update } from "../../ports.ts";
import { DependencyUnavailableError, isDuplicateKeyError, isInvalidQueryError } from "../../ports.ts";
import {
  assertDocument,
  decodeCursor,
  encodeCursor,
  normalizeSort,
  pageLimit,
  pageSkip,
  validateFilter,
  validateLease,
  validateUpdate,
} from "../filter.ts";
import type { SqliteConnection } from "./connection.ts";
import { keyValue } from "./keys.ts";
import type { WriteOp, WriteValue } from "./protocol.ts";
import { countMatches, getText, selectMatches } from "./queries.ts";
import { filterKey, type CachedAnswer, type ReadCache } from "./read-cache.ts";
import { loadSchema, type CollectionSchema } from "./schema.ts";
import type { Writer } from "./writer.ts";

export interface CollectionContext {
  kind: string;
  reader: SqliteConnection;
  writer: Writer;
  clock: () => number;
  /** Point reads answered from memory (./read-cache.ts): only when this process is the file's sole writer. */
  readCache: ReadCache | null;
  /** Throws DependencyUnavailableError once the store is closed. */
  assertOpen(): void;
}

/** A collection handle and what the store does with it. */
export interface SqliteCollection {
  handle: Collection<Doc>;
  /** Declares indexes / TTL (once per distinct spec): the writer creates what the database lacks. */
  declare(spec: CollectionSpec): void;
  /** The schema as this process knows it (for EXPLAIN and the TTL sweep). */
  schema(): CollectionSchema;
}

export function createSqliteCollection(ctx: CollectionContext, name: string): SqliteCollection {
  const st: _State = { ctx, name, schema: null, declareError: null, declared: new Set(), retry: new Map() };
  return {
    handle: _handle(st),
    declare(spec) {
      const key = JSON.stringify(spec);
      if (st.declared.has(key)) return;
      st.declared.add(key);
      _declare(st, spec, key);
    },
    schema: () => _schema(st),
  };
}

// --- Internal helpers ---

interface _State {
  ctx: CollectionContext;
  name: string;
  schema: CollectionSchema | null;
  /** Why declaring the collection's indexes failed (existing documents break a unique index). */
  declareError: Error | null;
  declared: Set<string>;
  /** Declarations that failed for a reason other than the documents (retried before the next write). */
  retry: Map<string, CollectionSpec>;
}

function _handle(st: _State): Collection<Doc> {
  const { name } = st;
  const now = st.ctx.clock;
  return {
    name,
    async insert(doc) {
      assertDocument(doc);
      const text = JSON.stringify(doc);
      await _write(st, { kind: "insert", collection: name, id: doc._id, text, now: now() });
      return JSON.parse(text) as Doc;
    },
    async insertMany(docs) {
      if (docs.length === 0) return 0;
      let arrays = false;
      for (const doc of docs) {
        assertDocument(doc);
        arrays ||= _holdsArray(doc);
      }
      return (await _write(st, { kind: "insertMany", collection: name, text: JSON.stringify(docs), count: docs.length, arrays, now: now() })) as number;
    },
    get: async (id) => _parse(_cached(st, typeof id === "string" ? `get ${id}` : null, () => _read(st, (s) => getText(st.ctx.reader, s, id, now())))),
    findOne: async (filter) => _findOne(st, filter),
    find: async (filter, options = {}) => _find(st, filter, options),
    count: async (filter) => _count(st, filter),
    countNow: (filter) => _count(st, filter),
    async findOneAndUpdate(filter, update, options = {}) {
      _validate(filter, update);
      const op: WriteOp = { kind: "update", collection: name, filter, update, upsert: options.upsert === true, returnDoc: true, now: now() };
      return _parse(await _write(st, op));
    },
    async updateOne(filter: Filter, update: Update) {
      _validate(filter, update);
      const op: WriteOp = { kind: "update", collection: name, filter, update, upsert: false, returnDoc: false, now: now() };
      return (await _write(st, op)) === true;
    },
    delete: async (id) => (await _write(st, { kind: "delete", collection: name, id, now: now() })) === true,
    async deleteMany(filter) {
      validateFilter(filter);
      return (await _write(st, { kind: "deleteMany", collection: name, filter, now: now() })) as number;
    },
    async claim(filter: Filter, owner: string, leaseMs: number, sort?: SortSpec[]) {
      validateFilter(filter);
      validateLease(owner, leaseMs);
      const op: WriteOp = { kind: "claim", collection: name, filter, owner, leaseMs, sort: normalizeSort(sort), now: now() };
      return _parse(await _write(st, op)) as (Doc & { lease: Lease }) | null;
    },
    release: async (id, owner) => (await _write(st, { kind: "release", collection: name, id, owner })) === true,
  };
}

/** The schema, read again while the collection has no table yet (the writer creates it on a first write). */
function _schema(st: _State): CollectionSchema {
  if (st.schema?.exists) return st.schema;
  return (st.schema = loadSchema(st.ctx.reader, st.name));
}

/** A read against the schema; once more with the schema re-read if the database changed under it. */
function _read<T>(st: _State, fn: (s: CollectionSchema) => T): T {
  st.ctx.assertOpen();
  try {
    return fn(_schema(st));
  } catch (e) {
    if (!_isStale(e)) throw _readError(st.ctx.kind, e);
    st.schema = null;
    try {
      return fn(_schema(st));
    } catch (e2) {
      throw _readError(st.ctx.kind, e2);
    }
  }
}

/**
 * Has the writer create what `spec` declares. Existing documents that break a new unique index
 * fail every later write of the collection; a failure of the database itself (a full disk) is
 * retried before the next write.
 */
function _declare(st: _State, spec: CollectionSpec, key: string): void {
  st.ctx.writer.write({ kind: "ensure", collection: st.name, spec }).then(
    () => (st.schema = null), // re-read with the new columns, markers and indexes
    (e: Error) => {
      if (isDuplicateKeyError(e) || isInvalidQueryError(e)) st.declareError = e;
      else st.retry.set(key, spec);
    },
  );
}

function _write(st: _State, op: WriteOp): Promise<WriteValue> {
  st.ctx.assertOpen();
  if (st.declareError) return Promise.reject(st.declareError);
  for (const [key, spec] of st.retry) _declare(st, spec, key); // queued ahead of `op`
  st.retry.clear();
  return st.ctx.writer.write(op);
}

function _findOne(st: _State, filter: Filter): Doc | null {
  validateFilter(filter);
  return _parse(
    _cached(st, _queryKey("findOne", filter), () => {
      const [row] = _read(st, (s) => selectMatches(st.ctx.reader, s, { filter, sort: [], after: null, skip: 0, limit: 1, now: st.ctx.clock() }));
      return row ? row.text : null;
    }),
  );
}

function _find(st: _State, filter: Filter, options: FindOptions): FindPage<Doc> {
  validateFilter(filter);
  const sort = normalizeSort(options.sort);
  const limit = pageLimit(options.limit);
  const skip = pageSkip(options.skip);
  const after = options.cursor ? decodeCursor(options.cursor, sort) : null;
  const rows = _read(st, (s) => selectMatches(st.ctx.reader, s, { filter, sort, after, skip, limit: limit + 1, now: st.ctx.clock() }));
  const page = rows.length > limit ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  const nextCursor = rows.length > limit && last ? encodeCursor(sort, last.keys.map(keyValue)) : null;
  return { items: page.map((r) => JSON.parse(r.text) as Doc), nextCursor };
}

function _count(st: _State, filter: Filter): number {
  validateFilter(filter);
  return _cached(st, _queryKey("count", filter), () => _read(st, (s) => countMatches(st.ctx.reader, s, filter, st.ctx.clock())));
}

/**
 * `read()`'s answer, or the one remembered for `key` since the collection's last write. Not for a
 * collection with a TTL field, whose answers change with the clock, nor one whose schema is not
 * read yet (it may have one).
 */
function _cached<T extends CachedAnswer>(st: _State, key: string | null, read: () => T): T {
  const cache = st.ctx.readCache;
  if (cache === null || key === null || st.schema === null || st.schema.ttl) return read();
  const known = cache.get(st.name, key);
  if (known !== undefined) {
    st.ctx.assertOpen();
    return known as T;
  }
  const answer = read();
  cache.remember(st.name, key, answer);
  return answer;
}

function _queryKey(kind: "findOne" | "count", filter: Filter): string | null {
  const key = filterKey(filter);
  return key === null ? null : `${kind} ${key}`;
}

function _validate(filter: Filter, update: Update): void {
  validateFilter(filter);
  validateUpdate(update);
}

/** Any array anywhere in a document (then the writer checks its indexed paths' markers). */
function _holdsArray(value: unknown): boolean {
  if (Array.isArray(value)) return true;
  if (typeof value !== "object" || value === null) return false;
  for (const k in value) if (_holdsArray((value as Record<string, unknown>)[k])) return true;
  return false;
}

function _parse(text: WriteValue): Doc | null {
  return typeof text === "string" ? (JSON.parse(text) as Doc) : null;
}

/** A statement named a table or column the database no longer has (another connection changed the schema). */
function _isStale(e: unknown): boolean {
  return /no such (table|column)/.test(String((e as Error)?.message ?? ""));
}

function _readError(kind: string, e: unknown): Error {
  if (isInvalidQueryError(e) || !(e instanceof Error) || (e as { code?: unknown }).code === undefined) return e as Error;
  return new DependencyUnavailableError(kind, `read failed: ${(e as { code?: string }).code}: ${e.message}`, "server_error");
}
