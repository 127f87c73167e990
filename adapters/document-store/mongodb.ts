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
 *
 * Files under ./mongodb/: collection (the port's methods), state (indexes, TTL visibility,
 * compare-and-set), hidden (the `_gh_` fields), translate (filters, updates, cursors), errors.
 */
import { MongoClient, type Db } from "mongodb";
import { InvalidQueryError, type Collection, type CollectionSpec, type Doc, type DocumentStore } from "../ports.ts";
import { createMongoCollection } from "./mongodb/collection.ts";
import { mapError } from "./mongodb/errors.ts";
import { createCollectionState, openCollection, type MongoCollectionState } from "./mongodb/state.ts";

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
    throw mapError(e, "connect");
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
      openCollection(h.state, spec);
      return h.collection as unknown as Collection<T>;
    },

    async ping(): Promise<void> {
      try {
        await db.command({ ping: 1 });
      } catch (e) {
        throw mapError(e, "ping");
      }
    },

    async close(): Promise<void> {
      await client.close();
    },
  };
}

// --- Internal helpers ---

/** One collection: its state and the port's view of it, made once per name. */
interface _Handle {
  state: MongoCollectionState;
  collection: Collection<Doc>;
}

function _createHandle(db: Db, name: string, clock: () => number): _Handle {
  const state = createCollectionState(db, name, clock);
  return { state, collection: createMongoCollection(state) };
}
