/**
 * Backup and restore of the SQLite database file (docs/operations.md "Backup and restore").
 *
 * - Backup: `VACUUM INTO` from a read connection (the binding has no backup API). It copies one
 *   read snapshot, so the copy is consistent while gateways keep writing (in WAL mode a reader
 *   never blocks the writers, nor they it), compacted, without a WAL of its own. It is written
 *   beside the target as `<target>.partial`, fsync'd, checked (`PRAGMA quick_check`), then renamed
 *   into place: a target that exists is never overwritten, and a backup interrupted half-way
 *   leaves no file that looks finished.
 * - Restore: the backup is checked first (readable, a Gatehouse database, quick_check ok); the
 *   current database (its file and WAL together, which stay a consistent pair) is moved aside as
 *   `<file>.before-restore-<time>`, never deleted; the backup is copied to `<file>.restoring`,
 *   fsync'd and renamed into place. The caller holds the database's process lock (no process may
 *   have it open).
 */
import { closeSync, copyFileSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { APPLICATION_ID, openConnection, type SqliteConnection } from "./connection.ts";
import { ident, tableName } from "./keys.ts";

export interface DatabaseSummary {
  file: string;
  bytes: number;
  /** `PRAGMA quick_check`: "ok", or the first problems found. */
  integrity: string;
  /** Documents per collection (expired TTL documents not yet swept included). */
  collections: Record<string, number>;
  documents: number;
}

export interface BackupReport extends DatabaseSummary {
  /** The database backed up. */
  from: string;
  ms: number;
}

export interface RestoreReport extends DatabaseSummary {
  /** The backup restored. */
  from: string;
  /** Where the database it replaced was moved (null: there was none). */
  previous: string | null;
  ms: number;
}

/** Writes a consistent copy of `file` to `to` (which must not exist); returns what the copy holds. */
export function backupDatabase(file: string, to: string): BackupReport {
  const started = performance.now();
  if (!existsSync(file)) throw new Error(`${file} does not exist: nothing to back up`);
  if (existsSync(to)) throw new Error(`${to} exists: a backup never overwrites a file; name a new one`);
  const partial = `${to}.partial`;
  rmSync(partial, { force: true });
  const conn = openConnection({ file, busyTimeoutMs: 5_000, synchronous: "FULL", inspect: true });
  try {
    conn.run("VACUUM INTO ?", [partial]);
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  } finally {
    conn.close();
  }
  _fsync(partial);
  const summary = summarizeDatabase(partial);
  if (summary.integrity !== "ok") {
    rmSync(partial, { force: true });
    throw new Error(`the copy of ${file} failed its check (${summary.integrity}); nothing was written to ${to}`);
  }
  renameSync(partial, to);
  _fsync(dirname(to));
  return { ...summary, file: to, from: file, ms: Math.round(performance.now() - started) };
}

/** Replaces `file` by a copy of `backup` after checking it; the database replaced is kept aside. */
export function restoreDatabase(file: string, backup: string, now: () => number = Date.now): RestoreReport {
  const started = performance.now();
  if (!existsSync(backup)) throw new Error(`${backup} does not exist`);
  const checked = summarizeDatabase(backup);
  if (checked.integrity !== "ok") throw new Error(`${backup} failed its check (${checked.integrity}): not restored`);
  const previous = existsSync(file) ? `${file}.before-restore-${new Date(now()).toISOString().replace(/[:.]/g, "-")}` : null;
  if (previous) {
    for (const suffix of ["", "-wal"]) if (existsSync(file + suffix)) renameSync(file + suffix, previous + suffix);
    rmSync(`${file}-shm`, { force: true }); // rebuilt from the WAL by the next opener
  }
  const restoring = `${file}.restoring`;
  copyFileSync(backup, restoring);
  _fsync(restoring);
  renameSync(restoring, file);
  _fsync(dirname(file));
  return { ...summarizeDatabase(file), from: backup, previous, ms: Math.round(performance.now() - started) };
}

/**
 * What a database file holds: its size, `quick_check`, documents per collection. Throws when it is
 * not an SQLite database or not a Gatehouse one. Reads only.
 */
export function summarizeDatabase(file: string): DatabaseSummary {
  const conn = openConnection({ file, busyTimeoutMs: 5_000, synchronous: "FULL", readOnly: true });
  try {
    const id = Number(conn.get("PRAGMA application_id")![0]);
    const meta = conn.get("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'gatehouse_collections'");
    if (id !== APPLICATION_ID && !(id === 0 && meta)) throw new Error(`${file} is not a Gatehouse database (application_id ${id})`);
    const integrity = conn.all("PRAGMA quick_check(5)").map((r) => String(r[0])).join("; ");
    const collections = _counts(conn);
    const documents = Object.values(collections).reduce((n, c) => n + c, 0);
    return { file, bytes: statSync(file).size, integrity, collections, documents };
  } finally {
    conn.close();
  }
}

// --- Internal helpers ---

function _counts(conn: SqliteConnection): Record<string, number> {
  if (!conn.get("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'gatehouse_collections'")) return {};
  const out: Record<string, number> = {};
  for (const [name] of conn.all("SELECT name FROM gatehouse_collections ORDER BY name")) {
    const raw = tableName(String(name));
    const exists = conn.get("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", [raw]);
    out[String(name)] = exists ? Number(conn.get(`SELECT count(*) FROM ${ident(raw)}`)![0]) : 0;
  }
  return out;
}

function _fsync(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
