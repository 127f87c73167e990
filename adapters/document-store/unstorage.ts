/**
 * The embedded, single-process DocumentStore (ARCHITECTURE.md §5): every collection lives in memory
 * (a Map by `_id` plus one Map per unique index). With the `fs` driver every mutation is made
 * durable under `dir` (./journal.ts): appended to a write-ahead journal in one write per batch, and
 * checkpointed about every second into one JSON file per document, as unstorage's fs driver lays
 * out key `<collection>:<id>`; a restart loads those files and replays the journal. The `memory`
 * driver (tests, benches) keeps nothing else (a new store starts empty).
 *
 * - Documents held by the store are never changed in place: an update builds the next version
 *   copy-on-write (`applyUpdate`: the top level and the objects along the updated paths are new,
 *   every other sub-document is shared with the previous version), and every document handed to a
 *   caller is a copy (`cloneJson`, a direct deep copy of the JSON value), so a caller can change what
 *   it got without touching the store. `updateOne` hands nothing back and copies nothing but the
 *   update's own values.
 * - Atomicity: each operation checks and mutates the in-memory state synchronously (no `await`
 *   between the check and the mutation), then awaits the write. Unique keys, compare-and-set,
 *   upserts and lease claims are therefore atomic within the process. It is a single-process store:
 *   two processes sharing one `dir` would overwrite each other (scale-out uses MongoDB).
 * - Durability: an operation resolves once its change is in the journal (no fsync: a process crash
 *   loses nothing acknowledged, a power cut may). A failed append rejects the operation with
 *   DependencyUnavailableError; the in-memory state keeps the change and the next checkpoint writes
 *   it. Files are written in place (no rename); a file torn by a crash mid-checkpoint is rewritten
 *   by the journal replay, and anything unreadable left over (a torn journal line, a damaged file)
 *   is skipped at load and counted in `loadReport()`.
 * - Queries scan the collection in memory (the `_id` and unique-index equalities are looked up
 *   directly) with the filter compiled once per query. A sorted page keeps a bounded buffer of the
 *   best candidates (O(n log k) in any scan order); a page in `_id` order stops scanning once full
 *   while the collection's Map iterates in `_id` order (ids appended in ascending order, as
 *   generated ids are, and always right after a load).
 * - TTL: a document whose `ttlField` is a number below `clock()` is invisible to every read and is
 *   removed lazily (when it blocks a unique key) and by a sweep every `sweepIntervalMs` (timer unref'd).
 * - Non-unique indexes of the spec are accepted and ignored (queries scan).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createStorage, type Storage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
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
  type Lease,
  type SortSpec,
  type Update,
} from "../ports.ts";
import {
  InvalidQueryError,
  applyUpdate,
  assertDocument,
  cloneJson,
  compareValues,
  compileFilter,
  compilePath,
  compileSort,
  decodeCursor,
  encodeCursor,
  indexName,
  isOperatorObject,
  matchesScalarEquality,
  normalizeSort,
  pageLimit,
  pageSkip,
  uniqueKey,
  uniqueKeyOf,
  upsertDocument,
  validateFilter,
  validateIndexFields,
  validateLease,
  validateUpdate,
} from "./filter.ts";
import { createJournal, type Journal, type JournalOptions } from "./journal.ts";

/**
 * The fs driver's journal settings (./journal.ts): `checkpointMs`, how often the journal is
 * checkpointed into the per-document files (default 1000 ms); `onCheckpointFallback`, told once if
 * the checkpoint's worker thread could not start or died (checkpoints then run on the main thread);
 * `onCheckpointFailed` / `onCheckpointRecovered`, told when checkpoints cannot write their files and
 * when they can again.
 */
type _JournalSettings = Pick<JournalOptions, "checkpointMs" | "onCheckpointFallback" | "onCheckpointFailed" | "onCheckpointRecovered">;

export interface UnstorageDocumentStoreOptions extends _JournalSettings {
  driver: "memory" | "fs";
  /** Base directory of the fs driver. Default ".data". */
  dir?: string;
  /** Epoch milliseconds; drives TTL expiry and leases. Default Date.now. */
  clock?: () => number;
  /** How often expired documents are swept from memory and storage. Default 60 000 ms. */
  sweepIntervalMs?: number;
}

export interface UnstorageDocumentStore extends DocumentStore {
  /** What the initial load found: documents loaded and stored values skipped as unreadable. */
  loadReport(): { documents: number; skipped: string[] };
}

const LOAD_CONCURRENCY = 64;
const MAX_COLLECTION_NAME = 120;
const MAX_KEY_SEGMENT = 200;
/** Top-level key (no collection prefix; `@` never appears in an encoded collection name). */
const PING_KEY = "@ping";
/** Slack of the top-k buffer beyond k: it is compacted (sorted, cut to k) once it holds k + max(k, this). */
const TOP_K_SLACK = 1024;

export async function createUnstorageDocumentStore(options: UnstorageDocumentStoreOptions): Promise<UnstorageDocumentStore> {
  const kind = options.driver === "fs" ? "unstorage-fs" : "unstorage-memory";
  const clock = options.clock ?? Date.now;
  const storage: Storage =
    options.driver === "fs" ? createStorage({ driver: fsDriver({ base: options.dir ?? ".data" }) }) : createStorage();
  const fsBase = options.driver === "fs" ? resolve(options.dir ?? ".data") : null;
  const states = new Map<string, _CollectionState>();
  let closed = false;

  const report = await _load(storage, kind, states, fsBase);
  // The memory driver is never read back (a new store starts empty): writing through to it would only
  // serialise every document and keep a second copy of it.
  let writer: _Writer = _NO_WRITER;
  if (fsBase) {
    const journal = createJournal({
      base: fsBase,
      kind,
      keyOf: (collection, id) => `${_encodeSegment(collection)}:${_encodeSegment(id)}`,
      checkpointMs: options.checkpointMs,
      onCheckpointFallback: options.onCheckpointFallback,
      onCheckpointFailed: options.onCheckpointFailed,
      onCheckpointRecovered: options.onCheckpointRecovered,
    });
    const replayed = journal.replay((c) => {
      let st = states.get(c.collection);
      if (!st) {
        st = _newState(c.collection);
        states.set(c.collection, st);
      }
      if (c.doc) st.docs.set(c.id, c.doc);
      else st.docs.delete(c.id);
    });
    if (replayed.changes > 0) {
      // A file the journal rewrote is no longer a loss.
      report.skipped = report.skipped.filter((key) => !_present(states, key));
      report.documents = [...states.values()].reduce((n, st) => n + st.docs.size, 0);
    }
    report.skipped.push(...replayed.skipped);
    writer = journal;
  }
  _restoreOrder(states);

  const sweepTimer = setInterval(() => {
    const now = clock();
    for (const st of states.values()) if (st.ttlField) _sweep(st, now, writer);
  }, options.sweepIntervalMs ?? 60_000);
  sweepTimer.unref();

  const assertOpen = (): void => {
    if (closed) throw new DependencyUnavailableError(kind, "document store is closed", "transport");
  };

  return {
    kind,

    collection<T extends Doc>(name: string, spec?: CollectionSpec): Collection<T> {
      assertOpen();
      if (typeof name !== "string" || name === "" || name.length > MAX_COLLECTION_NAME || _encodeSegment(name).startsWith("~")) {
        throw new InvalidQueryError(`collection name must be 1..${MAX_COLLECTION_NAME} characters (${MAX_KEY_SEGMENT} once URI-encoded)`);
      }
      let st = states.get(name);
      if (!st) {
        st = _newState(name);
        states.set(name, st);
      }
      _applySpec(st, spec, clock());
      st.handle ??= _createCollection(st, { clock, writer, assertOpen });
      return st.handle as unknown as Collection<T>;
    },

    async ping(): Promise<void> {
      assertOpen();
      try {
        await storage.setItem(PING_KEY, String(clock()));
        await storage.removeItem(PING_KEY);
      } catch (e) {
        throw new DependencyUnavailableError(kind, `ping failed: ${(e as Error).message}`, "server_error");
      }
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      clearInterval(sweepTimer);
      await writer.close();
      await storage.dispose();
    },

    loadReport: () => ({ documents: report.documents, skipped: [...report.skipped] }),
  };
}

// --- Internal helpers ---

interface _UniqueIndex {
  name: string;
  fields: string[];
  sparse: boolean;
  /** unique key → _id */
  map: Map<string, string>;
}

interface _CollectionState {
  name: string;
  prefix: string;
  docs: Map<string, Doc>;
  /** True while `docs` iterates in ascending `_id` order (every append so far had a larger _id). */
  idOrdered: boolean;
  /** The largest `_id` appended to `docs` since it was last known ordered (null: none). */
  maxId: string | null;
  unique: _UniqueIndex[];
  /**
   * The documents in order of a sort field (then `_id`), for the fields lists are sorted by (created
   * on the first such query, at most SORTED_INDEXES per collection, kept up to date by every write):
   * a list walks it and stops after its page instead of ranking every match.
   */
  sorted?: Map<string, _SortedIndex>;
  ttlField?: string;
  /** `ttlField` compiled. */
  ttlGet?: (doc: unknown) => unknown;
  handle?: Collection<Doc>;
}

interface _SortedIndex {
  get: (doc: unknown) => unknown;
  /** Ascending (field, then `_id`): the order of compileSort([{ field, 1 }, { _id, 1 }]). */
  compare: (a: Doc, b: Doc) => number;
  docs: Doc[];
}

/** Sorted indexes a collection keeps at most (each costs a pointer per document and a binary insert per write). */
const SORTED_INDEXES = 4;

/** Where changes become durable (the fs driver's journal), or nowhere (the memory driver). */
type _Writer = Pick<Journal, "persist" | "close">;

interface _Deps {
  clock: () => number;
  writer: _Writer;
  assertOpen: () => void;
}

function _newState(name: string): _CollectionState {
  return { name, prefix: _encodeSegment(name), docs: new Map(), idOrdered: true, maxId: null, unique: [] };
}

function _applySpec(st: _CollectionState, spec: CollectionSpec | undefined, now: number): void {
  if (!spec) return;
  if (spec.ttlField && spec.ttlField !== st.ttlField) {
    st.ttlField = spec.ttlField;
    st.ttlGet = compilePath(spec.ttlField);
  }
  for (const ix of spec.indexes ?? []) {
    if (!ix.unique) continue;
    validateIndexFields(ix.fields);
    const name = indexName(ix.fields);
    if (st.unique.some((u) => u.name === name)) continue;
    const idx: _UniqueIndex = { name, fields: [...ix.fields], sparse: ix.sparse === true, map: new Map() };
    for (const doc of st.docs.values()) {
      if (_expired(st, doc, now)) continue;
      const key = uniqueKey(doc, idx.fields, idx.sparse);
      if (key === null) continue;
      if (idx.map.has(key)) throw new DuplicateKeyError(st.name, name); // existing data breaks the new index
      idx.map.set(key, doc._id);
    }
    st.unique.push(idx);
  }
}

function _createCollection(st: _CollectionState, deps: _Deps): Collection<Doc> {
  const { clock, writer, assertOpen } = deps;

  /** count, synchronously: the documents are in this process (the in-process fast path of the port). */
  function countNow(filter: Filter): number {
    assertOpen();
    if (typeof filter._id === "string") {
      // A point lookup of scalar equalities (the tenant directory's key check on every request).
      const doc = st.docs.get(filter._id);
      const match = matchesScalarEquality(doc ?? _NO_DOC, filter);
      if (match !== undefined) return doc !== undefined && match && !_expired(st, doc, clock()) ? 1 : 0;
    }
    validateFilter(filter);
    const now = clock();
    if (!st.ttlField && Object.keys(filter).length === 0) return st.docs.size;
    const matches = compileFilter(filter);
    let n = 0;
    for (const doc of _candidates(st, filter)) if (!_expired(st, doc, now) && matches(doc)) n++;
    return n;
  }

  /** Records a document's new state (null = deleted) with the writer; nothing to do without one. */
  const persist =
    writer === _NO_WRITER ? (): Promise<void> => _DONE : (id: string, doc: Doc | null): Promise<void> => writer.persist({ collection: st.name, id, doc });

  /** Removes a document from memory and indexes; returns the write promise. */
  const remove = (doc: Doc): Promise<void> => {
    st.docs.delete(doc._id);
    _indexRemove(st, doc);
    return persist(doc._id, null);
  };

  /** Removes an expired document that blocks a write; the caller observes the write through `pending`. */
  const purge = (expired: Doc, pending: Promise<void>[]): void => {
    const p = remove(expired);
    p.catch(_ignore); // observed by the caller through `pending`, unless a later clash throws first
    pending.push(p);
  };

  /** Throws DuplicateKeyError when `doc` clashes with another visible document; purges expired blockers. */
  const checkUnique = (doc: Doc, selfId: string | null, now: number, pending: Promise<void>[]): void => {
    if (selfId === null) {
      const existing = st.docs.get(doc._id);
      if (existing) {
        if (!_expired(st, existing, now)) throw new DuplicateKeyError(st.name, "_id_");
        purge(existing, pending);
      }
    }
    for (const idx of st.unique) {
      const key = uniqueKey(doc, idx.fields, idx.sparse);
      if (key === null) continue;
      const ownerId = idx.map.get(key);
      if (ownerId === undefined || ownerId === selfId) continue;
      const owner = st.docs.get(ownerId);
      if (owner && !_expired(st, owner, now)) throw new DuplicateKeyError(st.name, idx.name);
      if (owner) purge(owner, pending);
      else idx.map.delete(key);
    }
  };

  const insertNow = (doc: Doc, now: number): Promise<void> => {
    const pending: Promise<void>[] = [];
    checkUnique(doc, null, now, pending);
    _append(st, doc);
    _indexAdd(st, doc);
    pending.push(persist(doc._id, doc));
    return _all(pending);
  };

  const replaceNow = (prev: Doc, next: Doc, now: number): Promise<void> => {
    const pending: Promise<void>[] = [];
    checkUnique(next, prev._id, now, pending);
    _indexReplace(st, prev, next);
    st.docs.set(next._id, next);
    pending.push(persist(next._id, next));
    return _all(pending);
  };

  const firstMatch = (filter: Filter, now: number): Doc | null => {
    const candidates = _candidates(st, filter);
    if (Array.isArray(candidates)) {
      // A point lookup (`_id`, a unique key): a filter of plain scalar equalities is tested as is.
      let simple = true;
      for (const doc of candidates) {
        const match = matchesScalarEquality(doc, filter);
        if (match === undefined) {
          simple = false;
          break;
        }
        if (match && !_expired(st, doc, now)) return doc;
      }
      if (simple) return null;
    }
    const matches = compileFilter(filter);
    for (const doc of candidates) {
      if (!_expired(st, doc, now) && matches(doc)) return doc;
    }
    return null;
  };

  const collection: Collection<Doc> = {
    name: st.name,

    async insert(doc: Doc): Promise<Doc> {
      assertOpen();
      assertDocument(doc);
      const stored = cloneJson(doc);
      const written = insertNow(stored, clock());
      const out = cloneJson(stored);
      await written;
      return out;
    },

    async get(id: string): Promise<Doc | null> {
      assertOpen();
      const doc = st.docs.get(id);
      return doc && !_expired(st, doc, clock()) ? cloneJson(doc) : null;
    },

    async findOne(filter: Filter): Promise<Doc | null> {
      assertOpen();
      validateFilter(filter);
      const doc = firstMatch(filter, clock());
      return doc ? cloneJson(doc) : null;
    },

    async find(filter: Filter, options: FindOptions = {}): Promise<FindPage<Doc>> {
      assertOpen();
      validateFilter(filter);
      const sort = normalizeSort(options.sort);
      const limit = pageLimit(options.limit);
      const skip = pageSkip(options.skip);
      const after = options.cursor ? decodeCursor(options.cursor, sort) : null;
      const matches = compileFilter(filter);
      const order = compileSort(sort);
      const now = clock();
      const k = skip + limit + 1;
      const candidates = _candidates(st, filter);
      let sorted: Doc[];
      let index: _SortedIndex | null;
      if (sort.length === 1 && (st.idOrdered || Array.isArray(candidates))) {
        // `_id` order and candidates already in ascending `_id` order: stop once the page is full.
        sorted = [];
        const asc = sort[0]!.direction === 1;
        const list = asc ? candidates : Array.isArray(candidates) ? candidates : Array.from(candidates);
        const accept = (doc: Doc): boolean =>
          !_expired(st, doc, now) && matches(doc) && !(after && order.compareDocToKey(doc, after) <= 0);
        if (asc) {
          for (const doc of list) if (accept(doc) && sorted.push(doc) >= k) break;
        } else {
          const arr = list as Doc[];
          for (let i = arr.length - 1; i >= 0; i--) if (accept(arr[i]!) && sorted.push(arr[i]!) >= k) break;
        }
      } else if (sort.length === 2 && sort[1]!.field === "_id" && !Array.isArray(candidates) && (index = _sortedIndex(st, sort[0]!.field)) !== null) {
        // A list sorted by one field (creation time): its page from the sorted index, without ranking every match.
        sorted = _firstInOrder(index, k, sort, order, (doc) => !_expired(st, doc, now) && matches(doc) && !(after && order.compareDocToKey(doc, after) <= 0));
      } else {
        const top = _topK(k, order.compareDocs);
        for (const doc of candidates) {
          if (_expired(st, doc, now) || !matches(doc)) continue;
          if (after && order.compareDocToKey(doc, after) <= 0) continue;
          top.offer(doc);
        }
        sorted = top.result();
      }
      const page = sorted.slice(skip, skip + limit);
      const last = page[page.length - 1];
      return {
        items: page.map((d) => cloneJson(d)),
        nextCursor: sorted.length > skip + limit && last ? encodeCursor(sort, order.keyOf(last)) : null,
      };
    },

    async count(filter: Filter): Promise<number> {
      return countNow(filter);
    },

    countNow,

    async findOneAndUpdate(filter: Filter, update: Update, options: { upsert?: boolean } = {}): Promise<Doc | null> {
      assertOpen();
      validateFilter(filter);
      validateUpdate(update);
      const now = clock();
      const target = firstMatch(filter, now);
      let result: Doc;
      let written: Promise<void>;
      if (target) {
        result = applyUpdate(target, update, false);
        written = replaceNow(target, result, now);
      } else if (options.upsert) {
        result = upsertDocument(filter, update);
        written = insertNow(result, now);
      } else {
        return null;
      }
      const out = cloneJson(result);
      await written;
      return out;
    },

    async updateOne(filter: Filter, update: Update): Promise<boolean> {
      assertOpen();
      validateFilter(filter);
      validateUpdate(update);
      const now = clock();
      const target = firstMatch(filter, now);
      if (!target) return false;
      await replaceNow(target, applyUpdate(target, update, false), now);
      return true;
    },

    async delete(id: string): Promise<boolean> {
      assertOpen();
      const doc = st.docs.get(id);
      if (!doc) return false;
      const visible = !_expired(st, doc, clock());
      await remove(doc);
      return visible;
    },

    async deleteMany(filter: Filter): Promise<number> {
      assertOpen();
      validateFilter(filter);
      const now = clock();
      const matches = compileFilter(filter);
      const victims: Doc[] = [];
      for (const doc of _candidates(st, filter)) if (!_expired(st, doc, now) && matches(doc)) victims.push(doc);
      await _all(victims.map(remove));
      return victims.length;
    },

    async claim(filter: Filter, owner: string, leaseMs: number, sort?: SortSpec[]): Promise<(Doc & { lease: Lease }) | null> {
      assertOpen();
      validateFilter(filter);
      validateLease(owner, leaseMs);
      const order = compileSort(normalizeSort(sort));
      const matches = compileFilter(filter);
      const now = clock();
      let best: Doc | null = null;
      for (const doc of _candidates(st, filter)) {
        if (_expired(st, doc, now) || !_leaseFree(doc, now) || !matches(doc)) continue;
        if (!best || order.compareDocs(doc, best) < 0) best = doc;
      }
      if (!best) return null;
      const lease: Lease = { owner, until: now + leaseMs };
      const next = applyUpdate(best, { $set: { lease } }, false);
      const written = replaceNow(best, next, now);
      const out = cloneJson(next) as Doc & { lease: Lease };
      await written;
      return out;
    },

    async release(id: string, owner: string): Promise<boolean> {
      assertOpen();
      const doc = st.docs.get(id);
      const lease = doc?.lease as Partial<Lease> | null | undefined;
      if (!doc || !lease || lease.owner !== owner) return false;
      const next = applyUpdate(doc, { $unset: ["lease"] }, false);
      await replaceNow(doc, next, clock());
      return true;
    },
  };
  return collection;
}

/** Stands in for a missing document when only the filter's shape is checked. */
const _NO_DOC: Doc = Object.freeze({ _id: "" });

function _expired(st: _CollectionState, doc: Doc, now: number): boolean {
  if (!st.ttlGet) return false;
  const v = st.ttlGet(doc);
  return typeof v === "number" && v < now;
}

/** Adds a document whose `_id` is not in `docs` (Map order: appended last). */
function _append(st: _CollectionState, doc: Doc): void {
  const id = doc._id;
  if (st.maxId === null || id > st.maxId) st.maxId = id;
  else st.idOrdered = false;
  st.docs.set(id, doc);
}

/** The sorted index of `field` (built on first use), or null when the collection keeps as many as it may. */
function _sortedIndex(st: _CollectionState, field: string): _SortedIndex | null {
  let idx = st.sorted?.get(field);
  if (idx === undefined) {
    if ((st.sorted?.size ?? 0) >= SORTED_INDEXES) return null;
    const compare = compileSort(normalizeSort([{ field, direction: 1 }])).compareDocs;
    idx = { get: compilePath(field), compare, docs: Array.from(st.docs.values()).sort(compare) };
    (st.sorted ??= new Map()).set(field, idx);
  }
  return idx;
}

/** The position of the first document not before `doc` (binary search). */
function _lowerBound(idx: _SortedIndex, doc: Doc): number {
  let lo = 0;
  let hi = idx.docs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (idx.compare(idx.docs[mid]!, doc) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The first `k` matches in sort order, for a sort on an indexed field (then `_id`): the sorted index
 * is walked in the sort's direction and the walk stops once `k` are taken and the field has moved
 * past the k-th one's value (all its ties are taken: `_id` orders them, in either direction).
 */
function _firstInOrder(idx: _SortedIndex, k: number, sort: readonly SortSpec[], order: ReturnType<typeof compileSort>, accept: (doc: Doc) => boolean): Doc[] {
  const { get, docs } = idx;
  const desc = sort[0]!.direction === -1;
  const taken: Doc[] = [];
  let boundary: unknown;
  for (let i = desc ? docs.length - 1 : 0; desc ? i >= 0 : i < docs.length; desc ? i-- : i++) {
    const doc = docs[i]!;
    if (!accept(doc)) continue;
    if (taken.length >= k && compareValues(get(doc), boundary) !== 0) break;
    if (taken.push(doc) === k) boundary = get(doc);
  }
  // `taken` is in field order already; only runs of equal values need ordering (by _id).
  for (let i = 0; i < taken.length; ) {
    let j = i + 1;
    while (j < taken.length && compareValues(get(taken[j]), get(taken[i])) === 0) j++;
    if (j - i > 1) {
      const run = taken.slice(i, j).sort(order.compareDocs);
      for (let r = 0; r < run.length; r++) taken[i + r] = run[r]!;
    }
    i = j;
  }
  return taken.length > k ? taken.slice(0, k) : taken;
}

function _leaseFree(doc: Doc, now: number): boolean {
  const lease = doc.lease as Partial<Lease> | null | undefined;
  return lease === undefined || lease === null || (typeof lease.until === "number" && lease.until < now);
}

function _indexAdd(st: _CollectionState, doc: Doc): void {
  for (const idx of st.unique) {
    const key = uniqueKey(doc, idx.fields, idx.sparse);
    if (key !== null) idx.map.set(key, doc._id);
  }
  if (st.sorted) {
    for (const idx of st.sorted.values()) {
      const last = idx.docs[idx.docs.length - 1];
      if (last === undefined || idx.compare(last, doc) < 0) idx.docs.push(doc); // the usual case: the newest
      else idx.docs.splice(_lowerBound(idx, doc), 0, doc);
    }
  }
}

/**
 * `prev` replaced by `next` (same `_id`) in the indexes: what `_indexRemove(prev)` then
 * `_indexAdd(next)` leave, but a sorted index whose field the update left alone takes `next` in
 * `prev`'s place (same field value and `_id`, so the same position) instead of a remove and an
 * insert that each move the rest of the array.
 */
function _indexReplace(st: _CollectionState, prev: Doc, next: Doc): void {
  for (const idx of st.unique) {
    const before = uniqueKey(prev, idx.fields, idx.sparse);
    const after = uniqueKey(next, idx.fields, idx.sparse);
    if (before !== null && before !== after && idx.map.get(before) === prev._id) idx.map.delete(before);
    if (after !== null) idx.map.set(after, next._id);
  }
  if (st.sorted) {
    for (const idx of st.sorted.values()) {
      const at = _lowerBound(idx, prev);
      if (idx.docs[at] === prev && idx.compare(prev, next) === 0) {
        idx.docs[at] = next;
        continue;
      }
      if (idx.docs[at] === prev) idx.docs.splice(at, 1);
      const last = idx.docs[idx.docs.length - 1];
      if (last === undefined || idx.compare(last, next) < 0) idx.docs.push(next);
      else idx.docs.splice(_lowerBound(idx, next), 0, next);
    }
  }
}

function _indexRemove(st: _CollectionState, doc: Doc): void {
  for (const idx of st.unique) {
    const key = uniqueKey(doc, idx.fields, idx.sparse);
    if (key !== null && idx.map.get(key) === doc._id) idx.map.delete(key);
  }
  if (st.sorted) {
    for (const idx of st.sorted.values()) {
      const at = _lowerBound(idx, doc);
      if (idx.docs[at] === doc) idx.docs.splice(at, 1);
    }
  }
}

/** The documents a filter can match: by `_id`, by a fully-specified unique key, else all. */
function _candidates(st: _CollectionState, filter: Filter): Iterable<Doc> {
  const idCond = filter._id;
  if (typeof idCond === "string") {
    const d = st.docs.get(idCond);
    return d ? [d] : [];
  }
  if (isOperatorObject(idCond) && Array.isArray(idCond.$in) && Object.keys(idCond).length === 1) {
    const out: Doc[] = [];
    for (const id of new Set(idCond.$in)) {
      const d = typeof id === "string" ? st.docs.get(id) : undefined;
      if (d) out.push(d);
    }
    return out.sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
  }
  for (const idx of st.unique) {
    const values: unknown[] = [];
    for (const f of idx.fields) {
      const v = filter[f];
      if (typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) values.push(v);
      else break;
    }
    if (values.length !== idx.fields.length) continue;
    const id = idx.map.get(uniqueKeyOf(values));
    const d = id === undefined ? undefined : st.docs.get(id);
    return d ? [d] : [];
  }
  return st.docs.values();
}

/**
 * Keeps the k smallest documents by `compare` (a strict total order: the sort ends with `_id`).
 * Offered documents go into a buffer unless they are not better than the k-th best known (one
 * comparison); when the buffer holds k + max(k, TOP_K_SLACK) documents it is sorted and cut to k.
 * Each compaction sorts O(k + slack) documents and admits at least max(k, slack) new ones, so any
 * scan order costs O(n log k) comparisons; a scan in (or against) the sort order is cheaper still:
 * the sort merges ordered runs in linear time, and a scan in order is rejected by the threshold.
 * Nothing is allocated per document.
 */
function _topK(k: number, compare: (a: Doc, b: Doc) => number): { offer(doc: Doc): void; result(): Doc[] } {
  const buf: Doc[] = [];
  const cap = k + Math.max(k, TOP_K_SLACK);
  let threshold: Doc | null = null; // the k-th best after the last compaction
  const compact = (): void => {
    buf.sort(compare);
    if (buf.length > k) buf.length = k;
    if (buf.length === k) threshold = buf[k - 1]!;
  };
  return {
    offer(doc: Doc): void {
      if (threshold !== null && compare(doc, threshold) >= 0) return;
      if (buf.push(doc) >= cap) compact();
    },
    result(): Doc[] {
      compact();
      return buf;
    },
  };
}

function _sweep(st: _CollectionState, now: number, writer: _Writer): void {
  for (const doc of st.docs.values()) {
    if (!_expired(st, doc, now)) continue;
    st.docs.delete(doc._id);
    _indexRemove(st, doc);
    // Best effort: a failed delete leaves the file, which the next load skips as expired data.
    writer.persist({ collection: st.name, id: doc._id, doc: null }).catch(() => {});
  }
}

/**
 * A storage key segment: URI-encoded (no `:`, `/`, `.`), hashed (`~<sha256>`) when too long for a
 * file name. Only document ids are ever hashed (the document itself holds its `_id`).
 */
function _encodeSegment(s: string): string {
  const enc = encodeURIComponent(s).replace(/\./g, "%2E").replace(/\*/g, "%2A");
  return enc.length <= MAX_KEY_SEGMENT ? enc : `~${createHash("sha256").update(s).digest("hex")}`;
}

/**
 * Reads every stored document. With the fs driver the files are read synchronously at the path the
 * driver maps a key to (`base/<key with : as />`): at startup that is ~8x cheaper than one promise
 * `readFile` per document (100k documents: ~1 s instead of ~8 s of CPU). Any read that fails there
 * falls back to `storage.getItem`. The journal is replayed afterwards (the caller does it).
 */
async function _load(
  storage: Storage,
  kind: string,
  states: Map<string, _CollectionState>,
  fsBase: string | null,
): Promise<{ documents: number; skipped: string[] }> {
  let keys: string[];
  try {
    keys = await storage.getKeys();
  } catch (e) {
    throw new DependencyUnavailableError(kind, `loading the document store failed: ${(e as Error).message}`, "server_error");
  }
  const skipped: string[] = [];
  let documents = 0;
  const work = keys.filter((k) => k.includes(":"));
  let next = 0;
  const loadOne = async (key: string): Promise<void> => {
    const prefix = key.slice(0, key.indexOf(":"));
    let value: unknown = undefined;
    let read = false;
    if (fsBase) {
      try {
        const text = readFileSync(join(fsBase, key.replace(/:/g, "/")), "utf8");
        read = true;
        value = JSON.parse(text);
      } catch {
        // unreadable JSON (read = true) is skipped below; a failed read falls back to unstorage
      }
    }
    if (!read) {
      try {
        value = await storage.getItem(key);
      } catch {
        value = undefined;
      }
    }
    const doc = value as Doc | null | undefined;
    if (typeof doc !== "object" || doc === null || typeof doc._id !== "string") {
      skipped.push(key);
      return;
    }
    let name: string;
    try {
      name = decodeURIComponent(prefix);
    } catch {
      skipped.push(key);
      return;
    }
    let st = states.get(name);
    if (!st) {
      st = _newState(name);
      states.set(name, st);
    }
    st.docs.set(doc._id, doc);
    documents++;
  };
  await Promise.all(
    Array.from({ length: Math.min(LOAD_CONCURRENCY, work.length) }, async () => {
      while (next < work.length) await loadOne(work[next++]!);
    }),
  );
  return { documents, skipped };
}

/** Loading in parallel scrambles insertion order; restores a stable (time-ordered for generated ids) order. */
function _restoreOrder(states: Map<string, _CollectionState>): void {
  for (const st of states.values()) {
    const sorted = [...st.docs.values()].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
    st.docs = new Map(sorted.map((d) => [d._id, d]));
    st.sorted = undefined;
    st.idOrdered = true;
    st.maxId = sorted.length > 0 ? sorted[sorted.length - 1]!._id : null;
  }
}

/** Whether the document stored under `key` (`<encoded collection>:<encoded id>`) is loaded. */
function _present(states: Map<string, _CollectionState>, key: string): boolean {
  const i = key.indexOf(":");
  try {
    const st = states.get(decodeURIComponent(key.slice(0, i)));
    const segment = key.slice(i + 1);
    return !!st && !segment.startsWith("~") && st.docs.has(decodeURIComponent(segment));
  } catch {
    return false;
  }
}

const _DONE: Promise<void> = Promise.resolve();

const _NO_WRITER: _Writer = {
  persist: () => _DONE,
  close: () => _DONE,
};

async function _all(pending: Promise<void>[]): Promise<void> {
  if (pending.length === 1) return pending[0];
  await Promise.all(pending);
}

function _ignore(): void {}
