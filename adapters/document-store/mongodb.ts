/**
 * The scale-out DocumentStore on MongoDB (official driver), written against the subset that both a
 * real server and the jongodb test server get right (ARCHITECTURE.md §5 "MongoDB, honestly"):
 * insertOne / findOne / find+sort+skip+limit / countDocuments / updateOne / deleteOne / deleteMany /
 * createIndex. The port's `updateOne` is one `updateOne` command (atomic with its filter on MongoDB
 * and, measured by the contract suite's races, on jongodb) that also replaces the revision token.
 * No projections (hidden fields are stripped in code), no transactions, no change streams, no
 * findOneAndUpdate/findOneAndDelete, no `$type` arrays.
 *
 * - Compare-and-set without findAndModify: jongodb's findAndModify is not atomic (it matches the
 *   query, then updates by `_id` alone, so two racing conditional updates both apply — measured:
 *   2–22 double wins in 200 rounds). Every document therefore carries a hidden revision token
 *   (`_gh_rev`, replaced by every write). `findOneAndUpdate` and `claim` read the first matching
 *   document, then `updateOne({ _id, _gh_rev })`: the write applies only if nobody wrote in between,
 *   otherwise they re-read and retry (optimistic concurrency, jittered after 3 losses, at most
 *   MAX_ATTEMPTS). The returned document is computed from the exact version that was updated.
 *   Cost: two round trips instead of one; hot documents cost retries. All writes must go through
 *   this adapter (a write that does not replace `_gh_rev` is invisible to the guard).
 * - Upserts insert `{equality fields of the filter, $setOnInsert, $set, $inc}` built in code with
 *   insertOne (same rule as the embedded store); losing an insert race (E11000) means re-reading
 *   and updating the winner; a second clash with nothing matching is a real DuplicateKeyError.
 * - Indexes: created when `collection()` opens a collection (createIndex is idempotent); every
 *   operation awaits them first, and a failed creation is retried by the next operation. Index names
 *   are MongoDB's defaults (`email_1`, `a_1_b_1`), which DuplicateKeyError.index reports.
 *   `sparse` unique indexes are partial indexes (`{ field: { $exists: true } }` for every field), so
 *   uniqueness applies only when all fields exist, as the port says.
 * - Errors: E11000 → DuplicateKeyError; network, server selection, pool, topology and raw socket
 *   failures → DependencyUnavailableError("mongodb", …, "transport" | "timeout"); transient server
 *   states (not primary, shutting down) → "server_error". Invalid filters/updates → InvalidQueryError.
 * - TTL (`ttlField`, epoch ms): reads, counts, updates, claims and deletes only see documents whose
 *   ttlField is not below `clock()`. MongoDB's TTL monitor only deletes documents whose indexed field
 *   is a BSON Date, so the store keeps a hidden Date mirror (`_gh_expiresAt`) of a numeric ttlField,
 *   with a TTL index on it (expireAfterSeconds 0). An expired document that still blocks a unique
 *   key (the monitor runs every 60 s) is deleted and the write retried.
 * - Cursor pagination translates "after the last item" into range clauses per sort key that respect
 *   MongoDB's cross-type order for null/missing, numbers, strings, objects and booleans (cursor sort
 *   values must be scalars).
 * - Field names starting with `_gh_` are reserved.
 */
import {
  MongoClient,
  MongoNetworkError,
  MongoNetworkTimeoutError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  MongoClientClosedError,
  type Collection as MongoCollection,
  type Db,
  type Document,
  type Sort,
} from "mongodb";
import {
  DependencyUnavailableError,
  DuplicateKeyError,
  type Collection,
  type CollectionSpec,
  type Doc,
  type DocumentStore,
  type Filter,
  type FindOptions,
  type FindPage,
  type IndexSpec,
  type Lease,
  type SortSpec,
  type Update,
} from "../ports.ts";
import {
  InvalidQueryError,
  applyUpdate,
  assertDocument,
  cloneJson,
  decodeCursor,
  encodeCursor,
  getPath,
  indexName,
  isOperatorObject,
  newId,
  normalizeSort,
  pageLimit,
  pageSkip,
  sortValues,
  uniqueKey,
  upsertDocument,
  validateFilter,
  validateIndexFields,
  validateLease,
  validateUpdate,
} from "./filter.ts";

export interface MongoDocumentStoreOptions {
  /** mongodb:// or mongodb+srv:// connection string (never logged). */
  uri: string;
  /** Database name; default: the one in the URI. */
  dbName?: string;
  /** Epoch milliseconds; drives TTL visibility and leases. Default Date.now. */
  clock?: () => number;
  /** Connect and server-selection timeout. Default 5000 ms. */
  connectTimeoutMs?: number;
}

const DEPENDENCY = "mongodb";
const HIDDEN_PREFIX = "_gh_";
/** Date mirror of a numeric ttlField (MongoDB's TTL monitor only deletes Dates). */
const TTL_MIRROR = "_gh_expiresAt";
/** Revision token, replaced by every write: the compare-and-set guard of findOneAndUpdate and claim. */
const REV = "_gh_rev";
const MAX_ATTEMPTS = 200;

export async function createMongoDocumentStore(options: MongoDocumentStoreOptions): Promise<DocumentStore> {
  const clock = options.clock ?? Date.now;
  const timeoutMs = options.connectTimeoutMs ?? 5000;
  const client = new MongoClient(options.uri, {
    serverSelectionTimeoutMS: timeoutMs,
    connectTimeoutMS: timeoutMs,
    ignoreUndefined: true,
    appName: "gatehouse",
  });
  try {
    await client.connect();
  } catch (e) {
    await client.close().catch(() => {});
    throw _mapError(e, "connect");
  }
  const db = client.db(options.dbName);
  const handles = new Map<string, _Handle>();

  return {
    kind: "mongodb",

    collection<T extends Doc>(name: string, spec?: CollectionSpec): Collection<T> {
      if (typeof name !== "string" || name === "" || name.includes("$") || name.includes("\0")) {
        throw new InvalidQueryError("collection name must be a non-empty string without $ or NUL");
      }
      let h = handles.get(name);
      if (!h) {
        h = _createHandle(db, name, clock);
        handles.set(name, h);
      }
      h.open(spec);
      return h.collection as unknown as Collection<T>;
    },

    async ping(): Promise<void> {
      try {
        await db.command({ ping: 1 });
      } catch (e) {
        throw _mapError(e, "ping");
      }
    },

    async close(): Promise<void> {
      await client.close();
    },
  };
}

// --- Internal helpers ---

interface _Handle {
  collection: Collection<Doc>;
  open(spec: CollectionSpec | undefined): void;
}

type _Query = Record<string, unknown>;

/** A stored document: string `_id` (never an ObjectId), JSON fields plus the hidden TTL mirror. */
type _Stored = { _id: string } & Document;

function _createHandle(db: Db, name: string, clock: () => number): _Handle {
  const coll: MongoCollection<_Stored> = db.collection<_Stored>(name);
  const uniques: IndexSpec[] = [];
  const opened = new Set<string>();
  let ttlField: string | undefined;
  /** Index creations still to confirm; each operation awaits them (a failure is retried next time). */
  let pendingIndexes: Array<{ keys: Document; options: Document }> = [];
  let creating: Promise<void> | null = null;

  const createPending = (): Promise<void> => {
    const batch = pendingIndexes;
    creating = (async () => {
      for (const ix of batch) await coll.createIndex(ix.keys, ix.options);
    })().then(
      () => {
        pendingIndexes = pendingIndexes.filter((ix) => !batch.includes(ix));
        creating = null;
      },
      (e: unknown) => {
        creating = null;
        throw _mapError(e, name);
      },
    );
    return creating;
  };

  const ensureIndexes = async (): Promise<void> => {
    while (pendingIndexes.length > 0) await (creating ?? createPending());
  };

  /** Runs one operation after the indexes, mapping driver errors. */
  const run = async <R>(op: () => Promise<R>): Promise<R> => {
    await ensureIndexes();
    try {
      return await op();
    } catch (e) {
      throw _mapError(e, name);
    }
  };

  const visible = (now: number): _Query | null => (ttlField ? { [ttlField]: { $not: { $lt: now } } } : null);

  /** The hidden fields a document with these (port) contents stores besides them. */
  const hidden = (doc: Doc): { set: Document; unset: string[] } => {
    const set: Document = { [REV]: newId() };
    const unset: string[] = [];
    if (ttlField) {
      const v = getPath(doc, ttlField);
      if (typeof v === "number" && Number.isFinite(v)) set[TTL_MIRROR] = new Date(v);
      else unset.push(TTL_MIRROR);
    }
    return { set, unset };
  };

  /**
   * The TTL mirror after `update`, when the update alone says it: untouched, set from a `$set` of
   * the TTL field, or removed by its `$unset`; "unknown" when the update increments the TTL field or
   * changes an object above or below it (the caller then reads the document first).
   */
  const ttlMirrorOf = (update: Update): { set: Document; unset: string[] } | "unknown" => {
    if (!ttlField) return { set: {}, unset: [] };
    const f = ttlField;
    const touches = (p: string) => p === f || f.startsWith(`${p}.`) || p.startsWith(`${f}.`);
    if (Object.keys(update.$inc ?? {}).some(touches)) return "unknown";
    const set = Object.keys(_defined(update.$set)).filter(touches);
    const unset = (update.$unset ?? []).filter(touches);
    if (set.length === 0 && unset.length === 0) return { set: {}, unset: [] };
    if (set.length === 1 && unset.length === 0 && set[0] === f) {
      const v = update.$set![f];
      return typeof v === "number" && Number.isFinite(v) ? { set: { [TTL_MIRROR]: new Date(v) }, unset: [] } : { set: {}, unset: [TTL_MIRROR] };
    }
    if (set.length === 0 && unset.length === 1 && unset[0] === f) return { set: {}, unset: [TTL_MIRROR] };
    return "unknown";
  };

  const toStored = (doc: Doc): _Stored => {
    const { set } = hidden(doc);
    return { ...doc, ...set };
  };

  /** Deletes expired documents that hold one of the unique keys `doc` needs; true when any went. */
  const purgeExpiredBlockers = async (doc: Doc, now: number): Promise<boolean> => {
    if (!ttlField) return false;
    const clauses: _Query[] = [{ _id: doc._id }];
    for (const ix of uniques) {
      if (ix.sparse && uniqueKey(doc, ix.fields, true) === null) continue;
      clauses.push(Object.fromEntries(ix.fields.map((f) => [f, getPath(doc, f) ?? null])));
    }
    const res = await coll.deleteMany({ $and: [{ [ttlField]: { $lt: now } }, { $or: clauses }] });
    return res.deletedCount > 0;
  };

  /**
   * Applies `update` to the document read as `current` only if it is still exactly that document
   * (same revision token): one atomic updateOne. Returns the new document, or null when it changed
   * in between (the caller re-reads and retries).
   */
  const applyIfUnchanged = async (current: _Stored, update: Update): Promise<Doc | null> => {
    const rev = (current[REV] as string | undefined) ?? null;
    const after = applyUpdate(_strip({ ...current }), update, false);
    _assertNoHiddenFields(after);
    const { set, unset } = hidden(after);
    const mongoUpdate = _toMongoUpdate(update, set, unset);
    const res = await coll.updateOne({ _id: current._id, [REV]: rev }, mongoUpdate);
    return res.matchedCount === 1 ? after : null;
  };

  /** Optimistic retry loop: re-read and retry while other writers win; back off a little under contention. */
  const contended = async (attempt: number): Promise<void> => {
    if (attempt >= MAX_ATTEMPTS) {
      throw new DependencyUnavailableError(DEPENDENCY, `${name}: gave up after ${MAX_ATTEMPTS} conflicting concurrent updates`, "server_error");
    }
    if (attempt > 3) await new Promise((r) => setTimeout(r, Math.random() * Math.min(attempt, 20)));
  };

  const collection: Collection<Doc> = {
    name,

    async insert(doc: Doc): Promise<Doc> {
      assertDocument(doc);
      const out = cloneJson(doc);
      _assertNoHiddenFields(out);
      const stored = toStored(out);
      return run(async () => {
        try {
          await coll.insertOne({ ...stored });
        } catch (e) {
          if (!_isDuplicate(e) || !(await purgeExpiredBlockers(out, clock()))) throw e;
          await coll.insertOne({ ...stored });
        }
        return out;
      });
    },

    async get(id: string): Promise<Doc | null> {
      return run(async () => _stripOrNull(await coll.findOne(_merge({ _id: id }, visible(clock())))));
    },

    async findOne(filter: Filter): Promise<Doc | null> {
      const q = _toMongoFilter(filter);
      return run(async () => _stripOrNull(await coll.findOne(_merge(q, visible(clock())))));
    },

    async find(filter: Filter, options: FindOptions = {}): Promise<FindPage<Doc>> {
      const sort = normalizeSort(options.sort);
      const limit = pageLimit(options.limit);
      const skip = pageSkip(options.skip);
      let q = _toMongoFilter(filter);
      if (options.cursor) q = _merge(q, _afterCursor(sort, decodeCursor(options.cursor, sort)));
      const mongoSort: Sort = sort.map((s) => [s.field, s.direction] as const);
      const docs = await run(() => coll.find(_merge(q, visible(clock()))).sort(mongoSort).skip(skip).limit(limit + 1).toArray());
      const items = docs.slice(0, limit).map(_strip);
      const last = items[items.length - 1];
      return { items, nextCursor: docs.length > limit && last ? encodeCursor(sort, sortValues(last, sort)) : null };
    },

    async count(filter: Filter): Promise<number> {
      const q = _toMongoFilter(filter);
      return run(() => coll.countDocuments(_merge(q, visible(clock()))));
    },

    async findOneAndUpdate(filter: Filter, update: Update, options: { upsert?: boolean } = {}): Promise<Doc | null> {
      const q = _toMongoFilter(filter);
      validateUpdate(update);
      const upsert = options.upsert === true;
      return run(async () => {
        let lostInsert: unknown = null;
        for (let attempt = 1; ; attempt++) {
          const now = clock();
          const current = await coll.findOne(_merge(q, visible(now)));
          if (current) {
            if (_isEmptyUpdate(update)) return _strip(current);
            const updated = await applyIfUnchanged(current, update);
            if (updated) return updated;
            await contended(attempt);
            continue;
          }
          if (!upsert) return null;
          const inserted = _upsertDocument(filter, update);
          try {
            await coll.insertOne(toStored(inserted));
            return inserted;
          } catch (e) {
            if (!_isDuplicate(e)) throw e;
            if (await purgeExpiredBlockers(inserted, now)) continue;
            // Lost an insert race: the next read finds the winner and updates it. A second clash
            // with nothing matching the filter is a real unique-key conflict.
            if (lostInsert) throw e;
            lostInsert = e;
          }
        }
      });
    },

    async updateOne(filter: Filter, update: Update): Promise<boolean> {
      const q = _toMongoFilter(filter);
      validateUpdate(update);
      _assertNoHiddenPaths(update);
      const mirror = ttlMirrorOf(update);
      // An update whose effect on the TTL field is unknown without the document: read, then compare-and-set.
      if (mirror === "unknown") return (await collection.findOneAndUpdate(filter, update)) !== null;
      return run(async () => {
        if (_isEmptyUpdate(update)) return (await coll.countDocuments(_merge(q, visible(clock())), { limit: 1 })) === 1;
        try {
          const res = await coll.updateOne(_merge(q, visible(clock())), _toMongoUpdate(update, { [REV]: newId(), ...mirror.set }, mirror.unset));
          return res.matchedCount === 1;
        } catch (e) {
          throw _updateError(e);
        }
      });
    },

    async delete(id: string): Promise<boolean> {
      return run(async () => (await coll.deleteOne(_merge({ _id: id }, visible(clock())))).deletedCount === 1);
    },

    async deleteMany(filter: Filter): Promise<number> {
      const q = _toMongoFilter(filter);
      return run(async () => (await coll.deleteMany(_merge(q, visible(clock())))).deletedCount);
    },

    async claim(filter: Filter, owner: string, leaseMs: number, sort?: SortSpec[]): Promise<(Doc & { lease: Lease }) | null> {
      const q = _toMongoFilter(filter);
      validateLease(owner, leaseMs);
      const order: Sort = normalizeSort(sort).map((s) => [s.field, s.direction] as const);
      return run(async () => {
        for (let attempt = 1; ; attempt++) {
          const now = clock();
          const free = { $or: [{ lease: null }, { "lease.until": { $lt: now } }] };
          const [current] = await coll.find(_merge(_merge(q, visible(now)), free)).sort(order).limit(1).toArray();
          if (!current) return null;
          const lease: Lease = { owner, until: now + leaseMs };
          const claimed = await applyIfUnchanged(current, { $set: { lease } });
          if (claimed) return claimed as Doc & { lease: Lease };
          await contended(attempt);
        }
      });
    },

    async release(id: string, owner: string): Promise<boolean> {
      return run(async () => {
        const res = await coll.updateOne({ _id: id, "lease.owner": owner }, { $unset: { lease: "" }, $set: { [REV]: newId() } });
        return res.matchedCount === 1;
      });
    },
  };

  return {
    collection,
    open(spec: CollectionSpec | undefined): void {
      if (!spec) return;
      if (spec.ttlField && !ttlField) {
        ttlField = spec.ttlField;
        pendingIndexes.push({ keys: { [TTL_MIRROR]: 1 }, options: { name: `${TTL_MIRROR}_ttl`, expireAfterSeconds: 0 } });
      }
      for (const ix of spec.indexes ?? []) {
        validateIndexFields(ix.fields);
        const ixName = indexName(ix.fields);
        if (opened.has(ixName)) continue;
        opened.add(ixName);
        const options: Document = { name: ixName };
        if (ix.unique) {
          options.unique = true;
          uniques.push({ fields: [...ix.fields], unique: true, sparse: ix.sparse === true });
        }
        if (ix.sparse) options.partialFilterExpression = Object.fromEntries(ix.fields.map((f) => [f, { $exists: true }]));
        pendingIndexes.push({ keys: Object.fromEntries(ix.fields.map((f) => [f, 1])), options });
      }
      // Start now; operations await (and retry) it. The rejection is handled there.
      ensureIndexes().catch(() => {});
    },
  };
}

/** Validates a port filter and translates it: `$contains` → escaped case-insensitive `$regex`, `{ $eq: scalar }` → scalar. */
function _toMongoFilter(filter: Filter): _Query {
  validateFilter(filter);
  return _translate(filter);
}

function _translate(filter: Filter): _Query {
  const out: _Query = {};
  for (const [key, cond] of Object.entries(filter)) {
    if (key === "$or") {
      out.$or = (cond as Filter[]).map(_translate);
      continue;
    }
    if (!isOperatorObject(cond)) {
      out[key] = cond;
      continue;
    }
    const keys = Object.keys(cond);
    // jongodb ignores `{ f: { $eq: v } }` when building an upsert's document; plain equality is the same query.
    if (keys.length === 1 && keys[0] === "$eq" && !_isObjectLike(cond.$eq)) {
      out[key] = cond.$eq;
      continue;
    }
    const ops: _Query = {};
    for (const op of keys) {
      if (op === "$contains") {
        ops.$regex = (cond.$contains as string).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        ops.$options = "i";
      } else {
        ops[op] = cond[op];
      }
    }
    out[key] = ops;
  }
  return out;
}

function _isObjectLike(v: unknown): boolean {
  return typeof v === "object" && v !== null;
}

/**
 * Adds `extra`'s conditions to `base`, keeping `base`'s top-level equalities top-level (an upsert
 * copies them into the new document); clashing keys go into `$and`.
 */
function _merge(base: _Query, extra: _Query | null): _Query {
  if (!extra) return base;
  const out: _Query = { ...base };
  for (const [k, v] of Object.entries(extra)) {
    if (!(k in out) && k !== "$and") out[k] = v;
    else out.$and = [...((out.$and as _Query[] | undefined) ?? []), { [k]: v }];
  }
  return out;
}

/** Port update → MongoDB update, plus the hidden fields (new revision, TTL mirror) of the result. */
function _toMongoUpdate(update: Update, hiddenSet: Document, hiddenUnset: string[]): Document {
  const set = { ..._defined(update.$set), ...hiddenSet };
  const unset: Record<string, ""> = Object.fromEntries([...(update.$unset ?? []), ...hiddenUnset].map((p) => [p, ""]));
  const out: Document = { $set: set };
  if (Object.keys(unset).length > 0) out.$unset = unset;
  if (update.$inc && Object.keys(update.$inc).length > 0) out.$inc = { ...update.$inc };
  return out;
}

/** `upsertDocument`, refusing the reserved field names. */
function _upsertDocument(filter: Filter, update: Update): Doc {
  const built = upsertDocument(filter, update);
  _assertNoHiddenFields(built);
  return built;
}

function _isEmptyUpdate(update: Update): boolean {
  return (
    Object.keys(_defined(update.$set)).length === 0 &&
    (update.$unset ?? []).length === 0 &&
    Object.keys(update.$inc ?? {}).length === 0
  );
}

function _strip(doc: Document): Doc {
  delete doc[TTL_MIRROR];
  delete doc[REV];
  return doc as Doc;
}

function _stripOrNull(doc: Document | null): Doc | null {
  return doc ? _strip(doc) : null;
}

/** An update must not name a reserved field (updateOne sends it as it is). */
function _assertNoHiddenPaths(update: Update): void {
  const paths = [...Object.keys(update.$set ?? {}), ...Object.keys(update.$inc ?? {}), ...(update.$unset ?? [])];
  for (const p of paths) if (p.split(".")[0]!.startsWith(HIDDEN_PREFIX)) throw new InvalidQueryError(`field names starting with ${HIDDEN_PREFIX} are reserved`);
}

/** A server's refusal of an update's shape (`$inc` of a non-number, a path through a scalar) is a caller bug. */
function _updateError(e: unknown): unknown {
  if (e instanceof MongoServerError && (e.code === 14 || e.code === 28)) return new InvalidQueryError(`update refused: ${_redact(e.message)}`);
  return e;
}

function _assertNoHiddenFields(doc: Doc): void {
  for (const k of Object.keys(doc)) if (k.startsWith(HIDDEN_PREFIX)) throw new InvalidQueryError(`field names starting with ${HIDDEN_PREFIX} are reserved`);
}

function _defined(o: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o ?? {})) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * The documents strictly after `values` in `sort` order: an `$or` over the sort keys
 * (k1 after v1) | (k1 = v1 and k2 after v2) | … with the last key `_id`.
 */
function _afterCursor(sort: readonly SortSpec[], values: readonly unknown[]): _Query {
  const clauses: _Query[] = [];
  for (let i = 0; i < sort.length; i++) {
    const after = _afterValue(sort[i]!.field, values[i], sort[i]!.direction);
    if (!after) continue;
    const clause: _Query = {};
    const and: _Query[] = [];
    for (let j = 0; j < i; j++) clause[sort[j]!.field] = values[j] ?? null;
    if ("$or" in after) and.push(after);
    else Object.assign(clause, after);
    if (and.length > 0) clause.$and = and;
    clauses.push(clause);
  }
  return clauses.length === 0 ? { _id: { $in: [] } } : { $or: clauses };
}

/** Values of `field` sorting strictly after `v` in `direction`, across MongoDB's type order. */
function _afterValue(field: string, v: unknown, direction: 1 | -1): _Query | null {
  const types = (...t: string[]): _Query[] => t.map((type) => ({ [field]: { $type: type } }));
  const any = (parts: _Query[]): _Query | null => (parts.length === 0 ? null : parts.length === 1 ? parts[0]! : { $or: parts });
  const isNull = v === null || v === undefined;
  if (!isNull && typeof v === "object") throw new InvalidQueryError(`cursor pagination over ${field} needs scalar sort values`);
  if (direction === 1) {
    if (isNull) return { [field]: { $ne: null } };
    if (typeof v === "number") return any([{ [field]: { $gt: v } }, ...types("string", "object", "bool")]);
    if (typeof v === "string") return any([{ [field]: { $gt: v } }, ...types("object", "bool")]);
    return v === false ? { [field]: true } : null;
  }
  if (isNull) return null;
  const nulls = { [field]: null };
  if (typeof v === "number") return any([{ [field]: { $lt: v } }, nulls]);
  if (typeof v === "string") return any([{ [field]: { $lt: v } }, nulls, ...types("number")]);
  return any([...(v === true ? [{ [field]: false }] : []), nulls, ...types("number", "string", "object")]);
}

function _isDuplicate(e: unknown): boolean {
  return e instanceof MongoServerError && (e.code === 11000 || e.code === 11001 || e.code === 12582);
}

const _TRANSIENT_SERVER_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

const _SOCKET_ERROR_CODES = new Set([
  "EPIPE",
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

function _mapError(e: unknown, where: string): unknown {
  if (e instanceof DependencyUnavailableError || e instanceof DuplicateKeyError || e instanceof InvalidQueryError) return e;
  if (_isDuplicate(e)) {
    const m = /index: (\S+)/.exec((e as Error).message);
    return new DuplicateKeyError(where, m?.[1] ?? "unknown");
  }
  const msg = `${where}: ${_redact((e as Error)?.message ?? String(e))}`;
  if (e instanceof MongoNetworkTimeoutError || e instanceof MongoOperationTimeoutError) return new DependencyUnavailableError(DEPENDENCY, msg, "timeout");
  if (e instanceof MongoServerSelectionError) return new DependencyUnavailableError(DEPENDENCY, msg, /timed out/i.test(msg) ? "timeout" : "transport");
  if (
    e instanceof MongoNetworkError ||
    e instanceof MongoTopologyClosedError ||
    e instanceof MongoNotConnectedError ||
    e instanceof MongoClientClosedError
  ) {
    return new DependencyUnavailableError(DEPENDENCY, msg, "transport");
  }
  // The driver occasionally lets a raw socket error through (EPIPE when the server went away mid-write).
  const sysCode = (e as { code?: unknown })?.code;
  if (typeof sysCode === "string" && _SOCKET_ERROR_CODES.has(sysCode)) {
    return new DependencyUnavailableError(DEPENDENCY, msg, sysCode === "ETIMEDOUT" ? "timeout" : "transport");
  }
  if (e instanceof MongoServerError) {
    if (e.code === 50 || e.code === 262) return new DependencyUnavailableError(DEPENDENCY, msg, "timeout"); // MaxTimeMSExpired, ExceededTimeLimit
    if (typeof e.code === "number" && _TRANSIENT_SERVER_CODES.has(e.code)) return new DependencyUnavailableError(DEPENDENCY, msg, "server_error");
  }
  return e;
}

/** Removes connection strings (they may carry credentials) from driver messages. */
function _redact(message: string): string {
  return message.replace(/mongodb(\+srv)?:\/\/\S+/g, "mongodb://<redacted>");
}
