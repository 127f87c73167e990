/**
 * One SQLite connection through `libsql` (docs/decisions.md "SQLite binding"), behind the narrow
 * interface the store needs. It hides the binding's sharp edges:
 * - rows are read raw (arrays of column values: libsql adds a `_metadata` field to row objects);
 * - a result set is always read whole (an unfinished libsql iterator keeps its read snapshot open,
 *   and the WAL cannot be checkpointed past it, until the statement runs again);
 * - a `Buffer` parameter is refused here (libsql 0.5.29 aborts the process on a blob parameter of a
 *   query): blob keys are written into SQL as literals or `CAST(? AS BLOB)` over text;
 * - statements are prepared once per SQL text (a bounded cache).
 */
import { createRequire } from "node:module";
import type LibsqlDatabase from "libsql";

/** A value bound to a `?` of a statement. */
export type SqlParam = string | number | null;

export interface SqliteConnection {
  /** The file ("" for `:memory:`). */
  readonly file: string;
  /** Runs one statement; returns the rows it changed. */
  run(sql: string, params?: readonly SqlParam[]): number;
  /** Every row of a query, each an array of column values. */
  all(sql: string, params?: readonly SqlParam[]): unknown[][];
  /** The first row of a query, or undefined. */
  get(sql: string, params?: readonly SqlParam[]): unknown[] | undefined;
  /** Runs SQL text without parameters (several statements allowed). */
  exec(sql: string): void;
  /** True between `begin` and `commit` / `rollback`. */
  readonly inTransaction: boolean;
  begin(mode?: "DEFERRED" | "IMMEDIATE"): void;
  commit(): void;
  rollback(): void;
  /** Forgets every prepared statement (after a schema change made them name what no longer exists). */
  forgetStatements(): void;
  close(): void;
}

export interface ConnectionOptions {
  /** A file path, or ":memory:". */
  file: string;
  /** How long a statement waits for another connection's lock before SQLITE_BUSY. */
  busyTimeoutMs: number;
  /** `synchronous=FULL` (an acknowledged commit is fsync'd) or `OFF` (tests and benches in memory). */
  synchronous: "FULL" | "OFF";
  /** A connection that only reads (`query_only`). */
  readOnly?: boolean;
  /**
   * A connection that changes nothing about the file (no claim, no journal mode) and is not
   * `query_only`, so `VACUUM INTO` may write its copy elsewhere (backups, inspections).
   */
  inspect?: boolean;
}

/** Prepared statements a connection keeps (least recently used first out). */
const STATEMENT_CACHE = 512;

export function openConnection(options: ConnectionOptions): SqliteConnection {
  const Database = _require("libsql") as typeof LibsqlDatabase;
  const db = new Database(options.file, { timeout: options.busyTimeoutMs });
  const statements = new Map<string, LibsqlDatabase.Statement>();
  let inTransaction = false;
  try {
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs))}`);
    if (options.file !== ":memory:" && !options.readOnly && !options.inspect) {
      _claim(db, options.file); // before anything writes to the file
      db.exec("PRAGMA journal_mode = WAL"); // kept in the file
    }
    db.exec(`PRAGMA synchronous = ${options.synchronous}`);
    if (options.readOnly) db.exec("PRAGMA query_only = 1");
  } catch (e) {
    db.close();
    throw e;
  }

  const prepare = (sql: string): LibsqlDatabase.Statement => {
    let st = statements.get(sql);
    if (st) {
      statements.delete(sql); // re-inserted below: the Map's order is the recency order
    } else {
      st = db.prepare(sql);
      if (st.reader) st.raw(true);
      if (statements.size >= STATEMENT_CACHE) statements.delete(statements.keys().next().value!);
    }
    statements.set(sql, st);
    return st;
  };

  return {
    file: options.file === ":memory:" ? "" : options.file,
    run(sql, params = _NONE) {
      _checkParams(params);
      return prepare(sql).run(params as unknown[]).changes;
    },
    all(sql, params = _NONE) {
      _checkParams(params);
      return prepare(sql).all(params as unknown[]) as unknown[][];
    },
    get(sql, params = _NONE) {
      _checkParams(params);
      return prepare(sql).get(params as unknown[]) as unknown[] | undefined;
    },
    exec(sql) {
      db.exec(sql);
    },
    get inTransaction() {
      return inTransaction;
    },
    begin(mode = "DEFERRED") {
      db.exec(`BEGIN ${mode}`);
      inTransaction = true;
    },
    commit() {
      db.exec("COMMIT");
      inTransaction = false;
    },
    rollback() {
      inTransaction = false;
      try {
        db.exec("ROLLBACK");
      } catch {
        // no transaction left to roll back (SQLite already rolled it back after an I/O error)
      }
    },
    forgetStatements() {
      statements.clear();
    },
    close() {
      statements.clear();
      db.close();
    },
  };
}

/** `PRAGMA application_id` of a Gatehouse database ("GH", format 1). */
export const APPLICATION_ID = 0x47480001;

/** The code of the error thrown when a file is an SQLite database of another program. */
export const FOREIGN_DATABASE = "GATEHOUSE_FOREIGN_DATABASE";

/** The SQLite result code of an error thrown by the binding ("SQLITE_CONSTRAINT_UNIQUE"...), or "". */
export function sqliteCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

// --- Internal helpers ---

const _require = createRequire(import.meta.url);
const _NONE: readonly SqlParam[] = [];

/**
 * Makes sure the file is a Gatehouse database before anything writes to it: one carrying our
 * application id, or a new (empty) one, which gets it. A database without the id that holds only
 * this store's tables (one created before the id was set) gets it too. Anything else is another
 * program's database and is refused untouched.
 */
function _claim(db: LibsqlDatabase.Database, file: string): void {
  const id = Number((db.prepare("PRAGMA application_id").raw(true).get() as unknown[])[0]);
  if (id === APPLICATION_ID) return;
  const tables = (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").raw(true).all() as unknown[][]).map((r) => String(r[0]));
  if (id === 0 && (tables.length === 0 || tables.includes("gatehouse_collections"))) {
    db.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
    return;
  }
  const e = new Error(`${file} is an SQLite database of another program (application_id ${id}, ${tables.length} tables), not a Gatehouse database`);
  (e as Error & { code: string }).code = FOREIGN_DATABASE;
  throw e;
}

function _checkParams(params: readonly SqlParam[]): void {
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (p !== null && typeof p !== "string" && typeof p !== "number") throw new TypeError(`SQL parameter ${i + 1} must be a string, a number or null`);
  }
}
