/**
 * The CLI's local commands on the embedded database the config names (docs/operations.md "Backup
 * and restore"): `backup` (online: gateways keep serving), `restore` (refused while any process
 * has the database open) and `import` (an older release's `.data/` folder, once). They run in the
 * CLI's process on the file itself, like `config check`: no gateway is asked.
 */
import { basename, resolve } from "node:path";
import { FOREIGN_DATABASE } from "../adapters/document-store/sqlite/connection.ts";
import { backupDatabase, restoreDatabase, type BackupReport, type RestoreReport } from "../adapters/document-store/sqlite/backup.ts";
import { importLegacyStore, inspectLegacyFolder, type LegacyImportReport } from "../adapters/document-store/sqlite/legacy-import.ts";
import type { Config } from "../config/schema.ts";
import { openError, sqliteLocation, StorageOpenError, takeLock, type SqliteLocation } from "./open-sqlite.ts";

/** How long the CLI's import waits for the database's write lock. */
const IMPORT_BUSY_MS = 60_000;

/** A consistent copy of the configured database at `to` (a new file), taken while gateways serve. */
export function backupStorage(config: Config, to: string): BackupReport {
  const { file } = _location(config, "backup");
  try {
    return backupDatabase(file, resolve(to));
  } catch (e) {
    throw _failure(file, e, "backup failed");
  }
}

/** Replaces the configured database by `backup` (the one replaced is kept aside); refused while any process has it open. */
export function restoreStorage(config: Config, backup: string): RestoreReport {
  const { file } = _location(config, "restore");
  const lock = takeLock(file, "exclusive", `${file} is open in a running gateway or worker: stop every process that opens it, then restore (nothing was changed)`);
  try {
    return restoreDatabase(file, resolve(backup));
  } catch (e) {
    throw _failure(file, e, "restore failed");
  } finally {
    lock.release();
  }
}

/**
 * Imports an older release's store (`dir`, default: the folder the config's database lives in)
 * into the configured database, unless it already holds an import (then its recorded report, with
 * `alreadyImported`). Refused while any process has the database open.
 */
export function importStorage(config: Config, dir?: string): LegacyImportReport {
  const location = _location(config, "import");
  const from = dir ? resolve(dir) : location.legacyDir;
  const lock = takeLock(location.file, "exclusive", `${location.file} is open in a running gateway or worker: stop every process that opens it, then import (nothing was changed)`);
  try {
    const own = (name: string) => from === location.legacyDir && name.startsWith(basename(location.file));
    if (inspectLegacyFolder(from, own).kind === "none") throw new StorageOpenError(location.file, `${from} holds no store of an older release (no <collection>/<id> files, no @journal-* files): nothing to import`);
    return importLegacyStore({ file: location.file, dir: from, busyTimeoutMs: IMPORT_BUSY_MS, ignore: own });
  } catch (e) {
    throw _failure(location.file, e, `importing ${from} failed`);
  } finally {
    lock.release();
  }
}

// --- Internal helpers ---

function _location(config: Config, command: string): SqliteLocation {
  const location = sqliteLocation(config.storage);
  if (!location)
    throw new StorageOpenError(
      "",
      config.storage.driver === "memory"
        ? `${command}: storage.driver "memory" keeps nothing on disk`
        : `${command}: storage.driver "${config.storage.driver}" is MongoDB: use its own tools (mongodump / mongorestore, docs/deployment.md)`,
    );
  return location;
}

function _failure(file: string, e: unknown, doing: string): StorageOpenError {
  if (e instanceof StorageOpenError) return e;
  const code = String((e as { code?: unknown } | null)?.code ?? "");
  if (code.startsWith("SQLITE_") || code === FOREIGN_DATABASE) return openError(file, e, doing);
  return new StorageOpenError(file, `${doing}: ${(e as Error)?.message ?? String(e)}`);
}
