/**
 * The embedded SQLite store as a deployment opens it (docs/deployment.md): where the file is, who
 * else may open it, the one-time import of an older release's `.data/` folder, and the store
 * itself, with every failure to open turned into one clear startup error naming the file and what
 * to do (the file left untouched).
 *
 * Who may share the file: a process with in-process coordination must be its only user (its
 * quotas, leases, key revocations and directory changes live in its memory); processes with Redis
 * coordination share it (adapters/document-store/sqlite/process-lock.ts). The lock is held until
 * the store is closed.
 */
import { existsSync, mkdirSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { FOREIGN_DATABASE, openConnection } from "../adapters/document-store/sqlite/connection.ts";
import { importLegacyStore, inspectLegacyFolder, recordedImport, type LegacyImportReport } from "../adapters/document-store/sqlite/legacy-import.ts";
import { acquireProcessLock, isProcessLockError, type ProcessLock, type ProcessLockMode } from "../adapters/document-store/sqlite/process-lock.ts";
import { createSqliteDocumentStore, type SqliteDocumentStore } from "../adapters/document-store/sqlite/store.ts";
import { SQLITE_FILE_IN_DIR, type Config } from "../config/schema.ts";
import type { Logger } from "../core/log.ts";

/** Where the embedded database lives, and the folder an older release's store is imported from. */
export interface SqliteLocation {
  file: string;
  legacyDir: string;
}

/** The database file could not be opened: the message says which file, why, and what to do. */
export class StorageOpenError extends Error {
  readonly isStorageOpenError = true;
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(message);
    this.name = "StorageOpenError";
  }
}

export function isStorageOpenError(e: unknown): e is StorageOpenError {
  return typeof e === "object" && e !== null && (e as { isStorageOpenError?: unknown }).isStorageOpenError === true;
}

/** How long an import at start waits for another process's (a simultaneous start importing too). */
const IMPORT_BUSY_MS = 60_000;

/** The file (absolute) and the import folder of an SQLite storage section; null for the other drivers. */
export function sqliteLocation(storage: Config["storage"]): SqliteLocation | null {
  if (storage.driver === "fs") {
    const dir = resolve(storage.dir);
    return { file: join(dir, SQLITE_FILE_IN_DIR), legacyDir: dir };
  }
  if (storage.driver === "sqlite") {
    const file = resolve(storage.file);
    return { file, legacyDir: dirname(file) };
  }
  return null;
}

/** The lock a process with this coordination takes: sole user with in-process coordination, shared with Redis. */
export function lockModeFor(config: Config): ProcessLockMode {
  return config.coordination.driver === "memory" ? "exclusive" : "shared";
}

/**
 * Opens the configured SQLite file: takes the process lock, imports an older release's store found
 * beside it (once), opens the store. Throws StorageOpenError; closing the store releases the lock.
 */
export async function openSqliteStore(config: Config, location: SqliteLocation, log?: Logger): Promise<SqliteDocumentStore> {
  const { file } = location;
  const mode = lockModeFor(config);
  const lock = takeLock(file, mode);
  try {
    const imported = importLegacyAtStart(location, log);
    if (imported && !imported.alreadyImported) log?.event("document_store_imported", importFields(imported));
    // The exclusive lock makes this process the file's only writer: its reads may be remembered.
    const store = await createSqliteDocumentStore({ file, busyTimeoutMs: config.dependencies.storeTimeoutMs, soleWriter: mode === "exclusive" }).catch((e: unknown) => {
      throw openError(file, e);
    });
    return _releasingOnClose(store, lock);
  } catch (e) {
    lock.release();
    throw e;
  }
}

/** Takes the process lock of `file` (creating its folder), or throws StorageOpenError saying who holds it. */
export function takeLock(file: string, mode: ProcessLockMode, refusal?: string): ProcessLock {
  try {
    mkdirSync(dirname(file), { recursive: true });
    return acquireProcessLock(file, mode);
  } catch (e) {
    if (isProcessLockError(e)) throw new StorageOpenError(file, refusal ?? e.message);
    throw openError(file, e);
  }
}

/**
 * At start: imports the older release's store in the import folder when the database is new and
 * the folder holds that layout and nothing else. Otherwise the folder is left to `npx gatehouse
 * import`, and a warning says so until the database records an import: a folder holding other
 * entries too, or a database already in use (its documents could clash with the old ones).
 */
export function importLegacyAtStart(location: SqliteLocation, log?: Logger): LegacyImportReport | null {
  const own = basename(location.file);
  const folder = inspectLegacyFolder(location.legacyDir, (name) => name.startsWith(own));
  if (folder.kind === "none") return null;
  try {
    const state = _databaseState(location.file);
    if (state === "imported") return null;
    if (folder.kind === "legacy" && state === "new")
      return importLegacyStore({ file: location.file, dir: location.legacyDir, busyTimeoutMs: IMPORT_BUSY_MS, ignore: (name) => name.startsWith(own) });
    const why =
      state === "in-use"
        ? "the database already holds data written since"
        : `the folder holds entries an older release's store never wrote (${folder.kind === "mixed" ? folder.foreign.slice(0, 3).join(", ") : ""})`;
    log?.warn("document_store_import_skipped", { from: location.legacyDir, reason: `${why}; run \`npx gatehouse import\` to import it` });
    return null;
  } catch (e) {
    throw openError(location.file, e, folder.kind === "legacy" ? `importing the older store in ${location.legacyDir} failed` : "cannot open the database");
  }
}

/** The fields of the `document_store_imported` log event. */
export function importFields(r: LegacyImportReport): Record<string, unknown> {
  return { from: r.from, file: r.file, documents: r.documents, collections: r.collections, skipped: r.skipped.length, journalChanges: r.journalChanges, ms: r.ms };
}

/** A failure to open `file` as StorageOpenError: what happened and what the operator can do. */
export function openError(file: string, e: unknown, doing = "cannot open the database"): StorageOpenError {
  if (isStorageOpenError(e)) return e;
  const cause = (e as Error)?.message ?? String(e);
  // The binding reports a file it cannot open at all as "ConnectionFailed(... 14)" (SQLITE_CANTOPEN) without a code.
  const code = String((e as { code?: unknown } | null)?.code || (/ConnectionFailed\(.*: 14"?\)/.test(cause) ? "SQLITE_CANTOPEN" : ""));
  if (code === FOREIGN_DATABASE)
    return new StorageOpenError(file, `${doing}: ${cause}. It was left untouched: point storage.file at a new path (or at a Gatehouse database).`);
  if (code.startsWith("SQLITE_NOTADB") || code.startsWith("SQLITE_CORRUPT"))
    return new StorageOpenError(
      file,
      `${doing}: ${file} is not a readable SQLite database (${cause}). It was left untouched. If it is Gatehouse's database and was damaged, move it aside and restore the latest backup (npx gatehouse restore <backup>); if it is another file, point storage.file at another path.`,
    );
  if (code.startsWith("SQLITE_CANTOPEN") || code.startsWith("SQLITE_READONLY") || code.startsWith("SQLITE_PERM") || code === "EACCES" || code === "EROFS" || code === "EPERM")
    return new StorageOpenError(
      file,
      `${doing}: ${file} cannot be opened for writing (${cause.replace(/^:\s*/, "")}). Check that it is a file (or does not exist yet), that its folder exists, and that this user may write the file and the folder (SQLite keeps ${basename(file)}-wal and -shm beside it).`,
    );
  return new StorageOpenError(file, `${doing}: ${file}: ${cause}`);
}

// --- Internal helpers ---

/** "new": no collection yet (a missing or empty file); "imported": it records an import; "in-use": collections, no import. Reads only. */
function _databaseState(file: string): "new" | "imported" | "in-use" {
  if (!existsSync(file)) return "new";
  const conn = openConnection({ file, busyTimeoutMs: 1_000, synchronous: "FULL", readOnly: true });
  try {
    if (recordedImport(conn)) return "imported";
    const meta = conn.get("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'gatehouse_collections'");
    return meta && conn.get("SELECT 1 FROM gatehouse_collections LIMIT 1") ? "in-use" : "new";
  } finally {
    conn.close();
  }
}

function _releasingOnClose(store: SqliteDocumentStore, lock: ProcessLock): SqliteDocumentStore {
  let closing: Promise<void> | null = null;
  return {
    ...store,
    close() {
      closing ??= store.close().finally(() => lock.release());
      return closing;
    },
  };
}
