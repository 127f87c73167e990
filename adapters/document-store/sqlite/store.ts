/**
 * The SQLite DocumentStore (ARCHITECTURE.md §5): one database file (WAL), each collection a table of
 * JSON documents with its declared indexes as SQLite indexes (./schema.ts), queries translated to
 * SQL (./translate.ts, ./queries.ts), writes applied by one writer per process in group-committed
 * transactions whose promises settle after the commit's fsync (./writer.ts, ./commit-loop.ts).
 * Several processes may open the same file: each has its writer, and BEGIN IMMEDIATE with a busy
 * timeout serialises their transactions, so every check-and-change stays atomic across them.
 *
 * `file: ":memory:"` is the same store on an in-memory database (tests, benches): one connection,
 * the writer's commit loop inline on the calling thread, nothing kept after `close()`.
 */
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { DependencyUnavailableError, InvalidQueryError, type Collection, type CollectionSpec, type Doc, type DocumentStore, type DocumentStoreStats, type Filter, type FindOptions } from "../../ports.ts";
import { decodeCursor, normalizeSort, pageLimit, pageSkip, validateFilter } from "../filter.ts";
import { createSqliteCollection, type SqliteCollection } from "./collection.ts";
import { openWriterConnection } from "./commit-loop.ts";
import { openConnection, type SqliteConnection } from "./connection.ts";
import { explainStatement, type QueryPlan } from "./explain.ts";
import type { CommitInfo } from "./protocol.ts";
import { matchStatement } from "./queries.ts";
import { createReadCache } from "./read-cache.ts";
import { sqliteStats } from "./stats.ts";
import { createInlineWriter, createThreadWriter, type Writer, type WriterStats } from "./writer.ts";

export interface SqliteDocumentStoreOptions {
  /** The database file (its folder is created), or ":memory:". */
  file: string;
  /** Epoch milliseconds; drives TTL expiry and leases. Default Date.now. */
  clock?: () => number;
  /** How long a transaction waits for another process's write lock before failing. Default 5000 ms. */
  busyTimeoutMs?: number;
  /** How often expired documents are deleted. Default 60 000 ms. */
  sweepIntervalMs?: number;
  /** Where the writer runs: "thread" (default for a file) or "inline" (always for ":memory:"). */
  writer?: "thread" | "inline";
  /** Told after every commit (tests, metrics). */
  onCommit?: (commit: CommitInfo) => void;
  /** The compiled writer-thread entry (a bundle); default: ./writer-thread.ts through tsx. */
  writerEntry?: URL;
  /**
   * This process is the file's only writer (it holds the exclusive process lock): repeated point
   * reads may be answered from memory (./read-cache.ts). Always so in memory; default false.
   */
  soleWriter?: boolean;
}

export interface SqliteDocumentStore extends DocumentStore {
  /** The database file ("" in memory). */
  readonly file: string;
  stats(): Promise<DocumentStoreStats>;
  writerStats(): WriterStats;
  /** How SQLite would answer a `find` (or `count`) of `filter`: EXPLAIN QUERY PLAN, judged. */
  explain(collection: string, filter: Filter, options?: FindOptions & { count?: boolean }): QueryPlan;
}

export async function createSqliteDocumentStore(options: SqliteDocumentStoreOptions): Promise<SqliteDocumentStore> {
  const memory = options.file === ":memory:";
  const kind = memory ? "sqlite-memory" : "sqlite-file";
  const clock = options.clock ?? Date.now;
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const readCache = memory || options.soleWriter === true ? createReadCache() : null;
  const { reader, writer } = await _open({ ...options, onWritten: readCache ? (c) => readCache.written(c) : undefined }, kind, busyTimeoutMs);
  const collections = new Map<string, SqliteCollection>();
  let closed = false;
  const ctx = {
    kind,
    reader,
    writer,
    clock,
    readCache,
    assertOpen(): void {
      if (closed) throw new DependencyUnavailableError(kind, "document store is closed", "transport");
    },
  };
  const sweepTimer = setInterval(() => _sweep(collections, writer, clock), options.sweepIntervalMs ?? 60_000);
  sweepTimer.unref();

  return {
    kind,
    file: memory ? "" : resolve(options.file),
    collection<T extends Doc>(name: string, spec?: CollectionSpec): Collection<T> {
      ctx.assertOpen();
      if (typeof name !== "string" || name === "" || name.length > 120) throw new InvalidQueryError("collection name must be 1..120 characters");
      let c = collections.get(name);
      if (!c) {
        c = createSqliteCollection(ctx, name);
        collections.set(name, c);
      }
      if (spec) c.declare(spec);
      return c.handle as unknown as Collection<T>;
    },
    async ping() {
      ctx.assertOpen();
      try {
        reader.get("SELECT 1");
      } catch (e) {
        throw new DependencyUnavailableError(kind, `ping failed: ${(e as Error).message}`, "server_error");
      }
      await writer.write({ kind: "ping" });
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweepTimer);
      await writer.drained();
      // The reader first: the last connection to close checkpoints the WAL, and that should be the writer's thread.
      if (writer.stats().transport === "thread") reader.close();
      await writer.close();
      if (writer.stats().transport === "inline") reader.close();
    },
    async stats() {
      ctx.assertOpen();
      return sqliteStats(memory ? "" : resolve(options.file), reader, writer.stats(), readCache?.stats() ?? null);
    },
    writerStats: () => writer.stats(),
    explain(name, filter, opts = {}) {
      validateFilter(filter);
      const c = collections.get(name) ?? createSqliteCollection(ctx, name);
      const sort = opts.count ? [] : normalizeSort(opts.sort);
      const after = opts.cursor ? decodeCursor(opts.cursor, sort) : null;
      const q = { filter, sort, after, skip: pageSkip(opts.skip), limit: pageLimit(opts.limit), now: clock() };
      return explainStatement(reader, c.schema(), matchStatement(c.schema(), q), opts.count === true);
    },
  };
}

// --- Internal helpers ---

async function _open(
  options: SqliteDocumentStoreOptions & { onWritten: ((collection: string) => void) | undefined },
  kind: string,
  busyTimeoutMs: number,
): Promise<{ reader: SqliteConnection; writer: Writer }> {
  const told = { kind, onCommit: options.onCommit, onWritten: options.onWritten };
  if (options.file === ":memory:") {
    const conn = openWriterConnection(":memory:", busyTimeoutMs, "OFF");
    return { reader: conn, writer: createInlineWriter(conn, told) };
  }
  const file = resolve(options.file);
  mkdirSync(dirname(file), { recursive: true });
  if (options.writer === "inline") {
    const conn = openWriterConnection(file, busyTimeoutMs, "FULL");
    return { reader: conn, writer: createInlineWriter(conn, told) };
  }
  // The writer opens (and creates) the file first; then this thread's read-only connection.
  const writer = await createThreadWriter({ file, busyTimeoutMs }, { ...told, entry: options.writerEntry });
  try {
    return { reader: openConnection({ file, busyTimeoutMs: Math.min(busyTimeoutMs, 1000), synchronous: "FULL", readOnly: true }), writer };
  } catch (e) {
    await writer.close();
    throw e;
  }
}

function _sweep(collections: Map<string, SqliteCollection>, writer: Writer, clock: () => number): void {
  for (const [name, c] of collections) {
    let ttl = false;
    try {
      ttl = c.schema().ttl !== null;
    } catch {
      continue;
    }
    if (ttl) writer.write({ kind: "sweep", collection: name, now: clock() }).catch(() => {}); // best effort: the next sweep retries
  }
}
