/**
 * The store's own figures for the health snapshot and /metrics: sizes of the database file and of
 * its write-ahead log, free pages, commits and their latency, and the page cache's bound. Two
 * `stat` calls and four pragmas on the main thread's read connection: cheap, but still read only
 * by the background health refresh, never per request.
 *
 * The binding exposes no cache counters (sqlite3_db_status), so the cache is reported by its
 * bound: `cache_size` of each connection (the reader here, the writer's on its thread, the same
 * default) times the connections. A sole writer's remembered point reads (./read-cache.ts) are
 * counted by the store itself.
 */
import { statSync } from "node:fs";
import type { DocumentStoreStats } from "../../ports.ts";
import type { SqliteConnection } from "./connection.ts";
import type { ReadCacheStats } from "./read-cache.ts";
import type { WriterStats } from "./writer.ts";

export function sqliteStats(file: string, reader: SqliteConnection, writer: WriterStats, readCache: ReadCacheStats | null): DocumentStoreStats {
  const pageSize = _pragma(reader, "page_size");
  const cacheSize = _pragma(reader, "cache_size");
  const perConnection = cacheSize < 0 ? -cacheSize * 1024 : cacheSize * pageSize;
  const connections = writer.transport === "thread" ? 2 : 1;
  return {
    engine: "sqlite",
    fileBytes: file === "" ? _pragma(reader, "page_count") * pageSize : _size(file),
    ...(file === "" ? {} : { walBytes: _size(`${file}-wal`) }),
    freeBytes: _pragma(reader, "freelist_count") * pageSize,
    commits: writer.commits,
    commitMs: { last: _round(writer.lastCommitMs), p50: _round(writer.commitMsP50), p99: _round(writer.commitMsP99) },
    cacheLimitBytes: perConnection * connections,
    ...(readCache ? { readCache } : {}),
  };
}

// --- Internal helpers ---

function _pragma(conn: SqliteConnection, name: string): number {
  return Number(conn.get(`PRAGMA ${name}`)?.[0] ?? 0);
}

function _size(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function _round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
