/** The document store port (re-exported by adapters/ports.ts). */

/** Every stored document has a string `_id`. Values are JSON-compatible (no Date, no BigInt). */
export interface Doc {
  _id: string;
  [field: string]: unknown;
}

/** Field operators a filter may use. Everything else is equality on the top-level field. */
export interface FieldOps {
  $eq?: unknown;
  $ne?: unknown;
  $in?: readonly unknown[];
  $gt?: string | number;
  $gte?: string | number;
  $lt?: string | number;
  $lte?: string | number;
  $exists?: boolean;
  /** Case-insensitive substring match on a string field (search boxes). */
  $contains?: string;
}

/**
 * A filter: top-level field → value (equality) or FieldOps. `$or` takes a list of such filters.
 * Dotted paths (`a.b`) address nested fields.
 */
export type Filter = { $or?: Filter[] } & { [field: string]: unknown };

export interface SortSpec {
  field: string;
  direction: 1 | -1;
}

export interface FindOptions {
  /** Sort order; `_id` ascending is always appended as the final tie-breaker. */
  sort?: SortSpec[];
  /** Page size; implementations cap it at 1000. */
  limit?: number;
  /** Opaque cursor from a previous page's `nextCursor` (cursor pagination). */
  cursor?: string | null;
  /** Number of matching documents to skip (page/limit pagination). Not combined with cursor. */
  skip?: number;
}

export interface FindPage<T> {
  items: T[];
  /** Cursor for the next page, or null when this page is the last. */
  nextCursor: string | null;
}

/** Update operators. `$set` / `$unset` take (possibly dotted) paths; `$inc` adds numbers. */
export interface Update {
  $set?: Record<string, unknown>;
  $unset?: string[];
  $inc?: Record<string, number>;
  /** Only applied when an upsert inserts. */
  $setOnInsert?: Record<string, unknown>;
}

export interface IndexSpec {
  /** Field paths of the index, in order. */
  fields: string[];
  unique?: boolean;
  /** Only index/enforce uniqueness for documents where all fields exist (partial unique index). */
  sparse?: boolean;
}

export interface CollectionSpec {
  indexes?: IndexSpec[];
  /** A numeric field holding an epoch-millisecond expiry; the document disappears after it. */
  ttlField?: string;
  /**
   * Top-level string (or string-array) fields a `$contains` may be answered from an index rather
   * than by reading every document: the embedded store keeps a trigram index of them. MongoDB
   * ignores it (it has no substring index; its `$regex` scan answers the same results).
   */
  textFields?: string[];
}

export interface Lease {
  owner: string;
  /** Epoch milliseconds. */
  until: number;
}

export interface Collection<T extends Doc> {
  readonly name: string;
  /** Inserts a new document; throws DuplicateKeyError on `_id` or a unique index clash. */
  insert(doc: T): Promise<T>;
  /**
   * Inserts many new documents in one call to the engine (one transaction of the embedded store, one
   * `insertMany` command of MongoDB): for batched append-only writes (the request log). Resolves with
   * the number inserted (all of them). Throws DuplicateKeyError on a clash: the embedded store then
   * keeps none of the batch, MongoDB the documents before the clashing one (ordered insert).
   */
  insertMany(docs: readonly T[]): Promise<number>;
  get(id: string): Promise<T | null>;
  findOne(filter: Filter): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<FindPage<T>>;
  count(filter: Filter): Promise<number>;
  /**
   * `count` answered synchronously: offered only by implementations that hold their documents in
   * the gateway process (the embedded store), and by their guard when the policy has no deadline.
   * Callers on a hot path use it when present (the tenant directory's key check), else `count`.
   */
  countNow?(filter: Filter): number;
  /**
   * Atomically applies `update` to the one document matching `filter` (compare-and-set: put the
   * expected version/state in the filter). Returns the updated document, or null when none matched.
   * With `upsert`, inserts `{...equality fields of filter, ...$setOnInsert, ...$set}` when none matched
   * (a concurrent insert of the same unique key makes exactly one win; the loser re-reads and updates).
   * Throws DuplicateKeyError when the update would break a unique index.
   */
  findOneAndUpdate(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<T | null>;
  /**
   * Atomically applies `update` to the one document matching `filter` without reading it back: a
   * conditional update (`{ _id, balance: { $gte: 5 } }` + `$inc`, or a compare-and-set on a version
   * or state) in one step of the engine (MongoDB: one `updateOne` command; the embedded store: one
   * synchronous check-and-change). True when a document matched and was updated, false when none
   * matched. No upsert. Throws DuplicateKeyError when the update would break a unique index.
   * Prefer it to findOneAndUpdate whenever the updated document is not needed.
   */
  updateOne(filter: Filter, update: Update): Promise<boolean>;
  /** Deletes by id; true when something was deleted. */
  delete(id: string): Promise<boolean>;
  deleteMany(filter: Filter): Promise<number>;
  /**
   * Claims one document matching `filter` whose lease (field `lease`) is absent or expired, for `owner`
   * until now + leaseMs. Oldest `_id` first unless `sort` is given. Returns the claimed document or null.
   */
  claim(filter: Filter, owner: string, leaseMs: number, sort?: SortSpec[]): Promise<(T & { lease: Lease }) | null>;
  /** Releases a lease held by `owner` (no-op when another owner holds it now). */
  release(id: string, owner: string): Promise<boolean>;
}

export interface DocumentStore {
  /** Implementation name for logs and health: "sqlite-file", "sqlite-memory", "mongodb". */
  readonly kind: string;
  /** Opens (or returns) a collection, creating its indexes once. */
  collection<T extends Doc>(name: string, spec?: CollectionSpec): Collection<T>;
  /** Cheap round trip proving the store answers; throws when it does not. */
  ping(): Promise<void>;
  /** What the engine reports about itself (health snapshot, gauges); read in the background, never per request. */
  stats?(): Promise<DocumentStoreStats>;
  close(): Promise<void>;
}

/** An engine's own figures; each is absent when the engine does not know it. */
export interface DocumentStoreStats {
  /** "sqlite", … */
  engine: string;
  /** The database file, in bytes (its pages, free ones included). */
  fileBytes?: number;
  /** The write-ahead log beside it, in bytes (reset when checkpointed). */
  walBytes?: number;
  /** Pages of the file that are free (reused before the file grows). */
  freeBytes?: number;
  /** Transactions this process committed since it started, and their latency in ms (BEGIN..COMMIT, fsync included). */
  commits?: number;
  commitMs?: { last: number; p50: number; p99: number };
  /** The page cache's bound for this process (every connection), in bytes: what the engine may hold in memory. */
  cacheLimitBytes?: number;
  /**
   * Point reads answered from memory since the process started (a sole writer's remembered reads):
   * hits, misses, and what is held now. Absent when the store remembers none.
   */
  readCache?: { hits: number; misses: number; entries: number; chars: number };
}

/** Typed error for a unique-key clash: a duplicate is a value to branch on, never a string to parse. */
export class DuplicateKeyError extends Error {
  readonly isDuplicateKeyError = true;
  constructor(
    readonly collection: string,
    readonly index: string,
  ) {
    super(`duplicate key in ${collection} (${index})`);
    this.name = "DuplicateKeyError";
  }
}

export function isDuplicateKeyError(e: unknown): e is DuplicateKeyError {
  return typeof e === "object" && e !== null && (e as { isDuplicateKeyError?: unknown }).isDuplicateKeyError === true;
}

/** A filter, update, cursor or document the store refuses: a caller bug, never a dependency failure. */
export class InvalidQueryError extends Error {
  readonly isInvalidQueryError = true;
  constructor(message: string) {
    super(message);
    this.name = "InvalidQueryError";
  }
}

export function isInvalidQueryError(e: unknown): e is InvalidQueryError {
  return typeof e === "object" && e !== null && (e as { isInvalidQueryError?: unknown }).isInvalidQueryError === true;
}

/** A store or coordination call that could not be completed (down, timeout, circuit open). */
export class DependencyUnavailableError extends Error {
  readonly isDependencyUnavailableError = true;
  constructor(
    readonly dependency: string,
    message: string,
    readonly failureClass: "timeout" | "transport" | "circuit_open" | "server_error" | "invalid_response" = "transport",
  ) {
    super(message);
    this.name = "DependencyUnavailableError";
  }
}

export function isDependencyUnavailableError(e: unknown): e is DependencyUnavailableError {
  return (
    typeof e === "object" &&
    e !== null &&
    (e as { isDependencyUnavailableError?: unknown }).isDependencyUnavailableError === true
  );
}
