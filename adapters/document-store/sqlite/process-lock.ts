/**
 * Which processes may share a database file. A process whose coordination is in-process (quotas,
 * leases, key revocations and directory changes live in its memory) must be the file's only user;
 * processes coordinating through Redis may share it. The rule is a reader-writer lock held for the
 * process's life on a side file, `<database>-lock`: an SQLite database in `locking_mode=EXCLUSIVE`,
 * whose connection keeps the lock it took (SHARED after a read, EXCLUSIVE after BEGIN EXCLUSIVE)
 * until it closes. The locks are the kernel's (fcntl), so a killed process releases its lock with
 * it, and SQLite's own bookkeeping makes two connections of one process conflict as two processes do.
 *
 * - "exclusive" (in-process coordination, a restore, an import from the CLI): refused while any
 *   other holder exists.
 * - "shared" (Redis coordination): refused while an exclusive holder exists.
 */
import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import type LibsqlDatabase from "libsql";

export type ProcessLockMode = "exclusive" | "shared";

export interface ProcessLock {
  readonly file: string;
  readonly mode: ProcessLockMode;
  /** Releases the lock (idempotent). */
  release(): void;
}

/** Another process holds the database in a way this one cannot share. */
export class ProcessLockError extends Error {
  readonly isProcessLockError = true;
  constructor(
    readonly database: string,
    readonly mode: ProcessLockMode,
  ) {
    super(
      mode === "exclusive"
        ? `${database} is in use by another process. A process with in-process coordination (coordination.driver "memory") must be the only one opening the database: quotas, leases, key revocations and directory changes would not reach the others. Stop the other process, or run every process with coordination { "driver": "redis" }.`
        : `${database} is in use by a process with in-process coordination (coordination.driver "memory"), which must be its only user. Stop that process, or give it coordination { "driver": "redis" } too.`,
    );
    this.name = "ProcessLockError";
  }
}

export function isProcessLockError(e: unknown): e is ProcessLockError {
  return typeof e === "object" && e !== null && (e as { isProcessLockError?: unknown }).isProcessLockError === true;
}

/** The side file of `database`. */
export function lockFileOf(database: string): string {
  return `${database}-lock`;
}

/**
 * Takes the lock of `database` in `mode`, or throws ProcessLockError. A shared request waits a little
 * longer than an exclusive one, so a refused exclusive request (which holds SQLite's PENDING lock
 * while it retries) never makes a shared one fail.
 */
export function acquireProcessLock(named: string, mode: ProcessLockMode): ProcessLock {
  // One lock file per database, whatever symbolic link or relative path names it.
  const database = _canonical(named);
  const Database = _require("libsql") as typeof LibsqlDatabase;
  const waitMs = mode === "exclusive" ? EXCLUSIVE_WAIT_MS : SHARED_WAIT_MS;
  const db = new Database(lockFileOf(database), { timeout: waitMs });
  try {
    db.exec(`PRAGMA busy_timeout = ${waitMs}`);
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    if (mode === "exclusive") db.exec("BEGIN EXCLUSIVE; COMMIT");
    else db.exec("SELECT count(*) FROM sqlite_schema"); // exec: no statement left unfinalized (it would keep the connection, and its lock, past close)
  } catch (e) {
    db.close();
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))) throw new ProcessLockError(database, mode);
    throw e;
  }
  let held = true;
  return {
    file: database,
    mode,
    release() {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}

// --- Internal helpers ---

const EXCLUSIVE_WAIT_MS = 500;
const SHARED_WAIT_MS = 2_000;
const _require = createRequire(import.meta.url);

/** `file` with every symbolic link resolved (its folder's, when the file does not exist yet). */
function _canonical(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    try {
      return join(realpathSync(dirname(file)), basename(file));
    } catch {
      return resolve(file);
    }
  }
}
