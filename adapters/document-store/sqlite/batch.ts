/**
 * Group commit: many operations in one transaction, one COMMIT (with synchronous=FULL in WAL mode,
 * one fsync of the WAL) for all of them. One that fails (a duplicate key, a refused update) is
 * undone alone and the others commit: its one writing statement is atomic, or it runs in a
 * savepoint of its own (`_runOne`). The caller
 * answers the operations only after this returns, i.e. after the commit (and its fsync) is done.
 *
 * A transaction that cannot start (another process holds the lock past the busy timeout) or
 * commit (disk full, read-only file, I/O error) fails every operation of the batch with
 * DependencyUnavailableError's data; nothing of it is kept.
 */
import { isDuplicateKeyError, isInvalidQueryError } from "../../ports.ts";
import { sqliteCode } from "./connection.ts";
import type { CommitInfo, WriteFailure, WriteOp, WriteResult } from "./protocol.ts";
import { applyOp, type WriterState } from "./writes.ts";

export function runBatch(state: WriterState, ops: readonly WriteOp[]): { results: WriteResult[]; commit: CommitInfo } {
  const { conn } = state;
  const started = performance.now();
  try {
    conn.begin("IMMEDIATE");
  } catch (e) {
    return _allFailed(ops, e, started);
  }
  const results: WriteResult[] = [];
  try {
    _refreshSchemaVersion(state);
    for (const op of ops) results.push(_runOne(state, op));
    conn.commit();
  } catch (e) {
    conn.rollback();
    state.schemas.clear();
    return _allFailed(ops, e, started);
  }
  return { results, commit: { operations: ops.length, ms: performance.now() - started } };
}

/** The failure data of an error thrown by an operation or by SQLite. */
export function toFailure(e: unknown): WriteFailure {
  if (isDuplicateKeyError(e)) return { kind: "duplicate", collection: e.collection, index: e.index };
  if (isInvalidQueryError(e)) return { kind: "invalid", message: e.message };
  const code = sqliteCode(e);
  const message = `${code || "error"}: ${(e as Error)?.message ?? String(e)}`;
  return { kind: "unavailable", message, failureClass: code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED") ? "timeout" : "server_error" };
}

// --- Internal helpers ---

/**
 * One operation; a failure of the database itself (I/O, full disk) fails the batch. The operations
 * that may change several things before failing run in a savepoint of their own; the others change
 * the data with one statement, which SQLite undoes by itself when it fails (a statement is atomic),
 * and what else they may have done first is invisible: expired documents swept, an array marker
 * dropped (a marker only makes queries use the element-wise form).
 */
function _runOne(state: WriterState, op: WriteOp): WriteResult {
  const { conn } = state;
  const savepoint = _SAVEPOINT_KINDS.has(op.kind);
  if (savepoint) conn.run("SAVEPOINT op");
  try {
    const value = applyOp(state, op);
    if (savepoint) conn.run("RELEASE op");
    return { ok: true, value };
  } catch (e) {
    if (savepoint) {
      conn.run("ROLLBACK TO op");
      conn.run("RELEASE op");
    }
    if ("collection" in op) state.schemas.delete(op.collection); // what it cached may have been rolled back
    if (_isFatal(e)) throw e;
    return { ok: false, error: toFailure(e) };
  }
}

/** Operations that run several writing statements (DDL, chunked deletes, the ping's table and row). */
const _SAVEPOINT_KINDS: ReadonlySet<WriteOp["kind"]> = new Set(["ensure", "deleteMany", "ping"]);

/** Errors after which the transaction cannot go on. */
function _isFatal(e: unknown): boolean {
  const code = sqliteCode(e);
  return code.startsWith("SQLITE_FULL") || code.startsWith("SQLITE_IOERR") || code.startsWith("SQLITE_READONLY") || code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_BUSY");
}

/** Another connection changed the schema (indexes, markers) since this writer read it: forget what it read. */
function _refreshSchemaVersion(state: WriterState): void {
  const version = state.conn.get("PRAGMA schema_version")![0] as number;
  if (version !== state.schemaVersion) {
    state.schemas.clear();
    state.schemaVersion = version;
  }
}

function _allFailed(ops: readonly WriteOp[], e: unknown, started: number): { results: WriteResult[]; commit: CommitInfo } {
  const error = toFailure(e);
  return { results: ops.map(() => ({ ok: false, error })), commit: { operations: 0, ms: performance.now() - started } };
}
