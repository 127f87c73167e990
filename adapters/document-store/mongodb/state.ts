/**
 * One MongoDB collection's state and the steps its operations share: indexes created when the
 * collection is opened (every operation awaits them; a failed creation is retried by the next),
 * TTL visibility, compare-and-set on the revision token, and the optimistic retry loop.
 */
import type { Collection as MongoCollection, Db, Document } from "mongodb";
import { DependencyUnavailableError, type CollectionSpec, type Doc, type IndexSpec, type Update } from "../../ports.ts";
import { indexName, uniqueKey, validateIndexFields } from "../query/keys.ts";
import { applyUpdate } from "../query/update.ts";
import { getPath } from "../query/values.ts";
import { DEPENDENCY, mapError } from "./errors.ts";
import { REV, TTL_MIRROR, assertNoHiddenFields, hiddenFields, strip, type StoredDoc } from "./hidden.ts";
import { toMongoUpdate, type MongoQuery } from "./translate.ts";

/** At most this many optimistic attempts of one compare-and-set write. */
const MAX_ATTEMPTS = 200;

/** An index creation still to confirm. */
export interface PendingIndex {
  keys: Document;
  options: Document;
}

export interface MongoCollectionState {
  readonly name: string;
  readonly coll: MongoCollection<StoredDoc>;
  readonly clock: () => number;
  /** The numeric expiry field (epoch ms), once a spec named one. */
  ttlField: string | undefined;
  /** The unique indexes, for purging expired documents that block a key. */
  readonly uniques: IndexSpec[];
  /** Index names already requested. */
  readonly opened: Set<string>;
  /** Index creations still to confirm; each operation awaits them (a failure is retried next time). */
  pendingIndexes: PendingIndex[];
  creating: Promise<void> | null;
}

export function createCollectionState(db: Db, name: string, clock: () => number): MongoCollectionState {
  return { name, coll: db.collection<StoredDoc>(name), clock, ttlField: undefined, uniques: [], opened: new Set(), pendingIndexes: [], creating: null };
}

/**
 * Applies a collection spec: the TTL field and the indexes it names, created from now on.
 * `textFields` is ignored: MongoDB has no substring index (its text index matches words), so a
 * `$contains` stays an escaped case-insensitive `$regex` over the documents, with the same results.
 */
export function openCollection(s: MongoCollectionState, spec: CollectionSpec | undefined): void {
  if (!spec) return;
  if (spec.ttlField && !s.ttlField) {
    s.ttlField = spec.ttlField;
    s.pendingIndexes.push({ keys: { [TTL_MIRROR]: 1 }, options: { name: `${TTL_MIRROR}_ttl`, expireAfterSeconds: 0 } });
  }
  for (const ix of spec.indexes ?? []) {
    validateIndexFields(ix.fields);
    const ixName = indexName(ix.fields);
    if (s.opened.has(ixName)) continue;
    s.opened.add(ixName);
    const options: Document = { name: ixName };
    if (ix.unique) {
      options.unique = true;
      s.uniques.push({ fields: [...ix.fields], unique: true, sparse: ix.sparse === true });
    }
    if (ix.sparse) options.partialFilterExpression = Object.fromEntries(ix.fields.map((f) => [f, { $exists: true }]));
    s.pendingIndexes.push({ keys: Object.fromEntries(ix.fields.map((f) => [f, 1])), options });
  }
  // Start now; operations await (and retry) it. The rejection is handled there.
  _ensureIndexes(s).catch(() => {});
}

/** Runs one operation after the indexes, mapping driver errors. */
export async function runOp<R>(s: MongoCollectionState, op: () => Promise<R>): Promise<R> {
  await _ensureIndexes(s);
  try {
    return await op();
  } catch (e) {
    throw mapError(e, s.name);
  }
}

/** The condition that hides expired documents, or null without a TTL field. */
export function visibleQuery(s: MongoCollectionState, now: number): MongoQuery | null {
  return s.ttlField ? { [s.ttlField]: { $not: { $lt: now } } } : null;
}

/** Deletes expired documents that hold one of the unique keys `doc` needs; true when any went. */
export async function purgeExpiredBlockers(s: MongoCollectionState, doc: Doc, now: number): Promise<boolean> {
  if (!s.ttlField) return false;
  const clauses: MongoQuery[] = [{ _id: doc._id }];
  for (const ix of s.uniques) {
    if (ix.sparse && uniqueKey(doc, ix.fields, true) === null) continue;
    clauses.push(Object.fromEntries(ix.fields.map((f) => [f, getPath(doc, f) ?? null])));
  }
  const res = await s.coll.deleteMany({ $and: [{ [s.ttlField]: { $lt: now } }, { $or: clauses }] });
  return res.deletedCount > 0;
}

/**
 * Applies `update` to the document read as `current` only if it is still exactly that document
 * (same revision token): one atomic updateOne. Returns the new document, or null when it changed
 * in between (the caller re-reads and retries).
 */
export async function applyIfUnchanged(s: MongoCollectionState, current: StoredDoc, update: Update): Promise<Doc | null> {
  const rev = (current[REV] as string | undefined) ?? null;
  const after = applyUpdate(strip({ ...current }), update, false);
  assertNoHiddenFields(after);
  const { set, unset } = hiddenFields(after, s.ttlField);
  const mongoUpdate = toMongoUpdate(update, set, unset);
  const res = await s.coll.updateOne({ _id: current._id, [REV]: rev }, mongoUpdate);
  return res.matchedCount === 1 ? after : null;
}

/** Optimistic retry loop: re-read and retry while other writers win; back off a little under contention. */
export async function contended(s: MongoCollectionState, attempt: number): Promise<void> {
  if (attempt >= MAX_ATTEMPTS) {
    throw new DependencyUnavailableError(DEPENDENCY, `${s.name}: gave up after ${MAX_ATTEMPTS} conflicting concurrent updates`, "server_error");
  }
  if (attempt > 3) await new Promise((r) => setTimeout(r, Math.random() * Math.min(attempt, 20)));
}

// --- Internal helpers ---

async function _ensureIndexes(s: MongoCollectionState): Promise<void> {
  while (s.pendingIndexes.length > 0) await (s.creating ?? _createPending(s));
}

function _createPending(s: MongoCollectionState): Promise<void> {
  const batch = s.pendingIndexes;
  s.creating = (async () => {
    for (const ix of batch) await s.coll.createIndex(ix.keys, ix.options);
  })().then(
    () => {
      s.pendingIndexes = s.pendingIndexes.filter((ix) => !batch.includes(ix));
      s.creating = null;
    },
    (e: unknown) => {
      s.creating = null;
      throw mapError(e, s.name);
    },
  );
  return s.creating;
}
