/**
 * The port's Collection over one MongoDB collection. Reads hide expired documents; writes replace
 * the revision token; findOneAndUpdate and claim read, then compare-and-set on the token, retrying
 * while other writers win. Upserts insert the document built in code; losing the insert race means
 * re-reading and updating the winner.
 */
import type { Sort } from "mongodb";
import type { Collection, Doc, Filter, FindOptions, FindPage, Lease, SortSpec, Update } from "../../ports.ts";
import { decodeCursor, encodeCursor, pageLimit, pageSkip } from "../query/cursor.ts";
import { cloneJson } from "../query/copy.ts";
import { assertDocument, newId } from "../query/ids.ts";
import { validateLease } from "../query/lease.ts";
import { normalizeSort, sortValues } from "../query/sort.ts";
import { validateUpdate } from "../query/update.ts";
import { isDuplicate, updateError } from "./errors.ts";
import { REV, assertNoHiddenFields, assertNoHiddenPaths, strip, stripOrNull, toStored, ttlMirrorOf, upsertDocumentChecked } from "./hidden.ts";
import { applyIfUnchanged, contended, purgeExpiredBlockers, runOp, visibleQuery, type MongoCollectionState } from "./state.ts";
import { afterCursor, isEmptyUpdate, mergeQuery as merge, toMongoFilter, toMongoUpdate } from "./translate.ts";

/** The port's collection over `s` (every method works on the shared state; none needs `this`). */
export function createMongoCollection(s: MongoCollectionState): Collection<Doc> {
  return {
    name: s.name,
    insert: (doc) => _insert(s, doc),
    insertMany: (docs) => _insertMany(s, docs),
    get: (id) => runOp(s, async () => stripOrNull(await s.coll.findOne(merge({ _id: id }, visibleQuery(s, s.clock()))))),
    findOne: (filter) => _findOne(s, filter),
    find: (filter, options) => _find(s, filter, options),
    count: (filter) => _count(s, filter),
    findOneAndUpdate: (filter, update, options) => _findOneAndUpdate(s, filter, update, options),
    updateOne: (filter, update) => _updateOne(s, filter, update),
    delete: (id) => runOp(s, async () => (await s.coll.deleteOne(merge({ _id: id }, visibleQuery(s, s.clock())))).deletedCount === 1),
    deleteMany: (filter) => _deleteMany(s, filter),
    claim: (filter, owner, leaseMs, sort) => _claim(s, filter, owner, leaseMs, sort),
    release: (id, owner) => _release(s, id, owner),
  };
}

// --- Internal helpers ---

async function _insert(s: MongoCollectionState, doc: Doc): Promise<Doc> {
  assertDocument(doc);
  const out = cloneJson(doc);
  assertNoHiddenFields(out);
  const stored = toStored(out, s.ttlField);
  return runOp(s, async () => {
    try {
      await s.coll.insertOne({ ...stored });
    } catch (e) {
      if (!isDuplicate(e) || !(await purgeExpiredBlockers(s, out, s.clock()))) throw e;
      await s.coll.insertOne({ ...stored });
    }
    return out;
  });
}

/** One ordered insertMany command (no expired-blocker retry: batched documents carry fresh ids). */
async function _insertMany(s: MongoCollectionState, docs: readonly Doc[]): Promise<number> {
  if (docs.length === 0) return 0;
  const stored = docs.map((doc) => {
    assertDocument(doc);
    const out = cloneJson(doc);
    assertNoHiddenFields(out);
    return toStored(out, s.ttlField);
  });
  return runOp(s, async () => (await s.coll.insertMany(stored, { ordered: true })).insertedCount);
}

async function _findOne(s: MongoCollectionState, filter: Filter): Promise<Doc | null> {
  const q = toMongoFilter(filter);
  return runOp(s, async () => stripOrNull(await s.coll.findOne(merge(q, visibleQuery(s, s.clock())))));
}

async function _find(s: MongoCollectionState, filter: Filter, options: FindOptions = {}): Promise<FindPage<Doc>> {
  const sort = normalizeSort(options.sort);
  const limit = pageLimit(options.limit);
  const skip = pageSkip(options.skip);
  let q = toMongoFilter(filter);
  if (options.cursor) q = merge(q, afterCursor(sort, decodeCursor(options.cursor, sort)));
  const mongoSort: Sort = sort.map((x) => [x.field, x.direction] as const);
  const docs = await runOp(s, () => s.coll.find(merge(q, visibleQuery(s, s.clock()))).sort(mongoSort).skip(skip).limit(limit + 1).toArray());
  const items = docs.slice(0, limit).map(strip);
  const last = items[items.length - 1];
  return { items, nextCursor: docs.length > limit && last ? encodeCursor(sort, sortValues(last, sort)) : null };
}

async function _count(s: MongoCollectionState, filter: Filter): Promise<number> {
  const q = toMongoFilter(filter);
  return runOp(s, () => s.coll.countDocuments(merge(q, visibleQuery(s, s.clock()))));
}

async function _findOneAndUpdate(s: MongoCollectionState, filter: Filter, update: Update, options: { upsert?: boolean } = {}): Promise<Doc | null> {
  const q = toMongoFilter(filter);
  validateUpdate(update);
  const upsert = options.upsert === true;
  return runOp(s, async () => {
    let lostInsert: unknown = null;
    for (let attempt = 1; ; attempt++) {
      const now = s.clock();
      const current = await s.coll.findOne(merge(q, visibleQuery(s, now)));
      if (current) {
        if (isEmptyUpdate(update)) return strip(current);
        const updated = await applyIfUnchanged(s, current, update);
        if (updated) return updated;
        await contended(s, attempt);
        continue;
      }
      if (!upsert) return null;
      const inserted = upsertDocumentChecked(filter, update);
      try {
        await s.coll.insertOne(toStored(inserted, s.ttlField));
        return inserted;
      } catch (e) {
        if (!isDuplicate(e)) throw e;
        if (await purgeExpiredBlockers(s, inserted, now)) continue;
        // Lost an insert race: the next read finds the winner and updates it. A second clash
        // with nothing matching the filter is a real unique-key conflict.
        if (lostInsert) throw e;
        lostInsert = e;
      }
    }
  });
}

async function _updateOne(s: MongoCollectionState, filter: Filter, update: Update): Promise<boolean> {
  const q = toMongoFilter(filter);
  validateUpdate(update);
  assertNoHiddenPaths(update);
  const mirror = ttlMirrorOf(update, s.ttlField);
  // An update whose effect on the TTL field is unknown without the document: read, then compare-and-set.
  if (mirror === "unknown") return (await _findOneAndUpdate(s, filter, update)) !== null;
  return runOp(s, async () => {
    if (isEmptyUpdate(update)) return (await s.coll.countDocuments(merge(q, visibleQuery(s, s.clock())), { limit: 1 })) === 1;
    try {
      const res = await s.coll.updateOne(merge(q, visibleQuery(s, s.clock())), toMongoUpdate(update, { [REV]: newId(), ...mirror.set }, mirror.unset));
      return res.matchedCount === 1;
    } catch (e) {
      throw updateError(e);
    }
  });
}

async function _deleteMany(s: MongoCollectionState, filter: Filter): Promise<number> {
  const q = toMongoFilter(filter);
  return runOp(s, async () => (await s.coll.deleteMany(merge(q, visibleQuery(s, s.clock())))).deletedCount);
}

async function _claim(s: MongoCollectionState, filter: Filter, owner: string, leaseMs: number, sort?: SortSpec[]): Promise<(Doc & { lease: Lease }) | null> {
  const q = toMongoFilter(filter);
  validateLease(owner, leaseMs);
  const order: Sort = normalizeSort(sort).map((x) => [x.field, x.direction] as const);
  return runOp(s, async () => {
    for (let attempt = 1; ; attempt++) {
      const now = s.clock();
      const free = { $or: [{ lease: null }, { "lease.until": { $lt: now } }] };
      const [current] = await s.coll.find(merge(merge(q, visibleQuery(s, now)), free)).sort(order).limit(1).toArray();
      if (!current) return null;
      const lease: Lease = { owner, until: now + leaseMs };
      const claimed = await applyIfUnchanged(s, current, { $set: { lease } });
      if (claimed) return claimed as Doc & { lease: Lease };
      await contended(s, attempt);
    }
  });
}

async function _release(s: MongoCollectionState, id: string, owner: string): Promise<boolean> {
  return runOp(s, async () => {
    const res = await s.coll.updateOne({ _id: id, "lease.owner": owner }, { $unset: { lease: "" }, $set: { [REV]: newId() } });
    return res.matchedCount === 1;
  });
}
