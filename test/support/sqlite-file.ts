/**
 * A connection of its own to an SQLite database file, for tests that look at (or upgrade) the file
 * the store wrote: opened for `fn` and closed after, whatever `fn` does.
 */
import { openConnection, type SqliteConnection } from "../../adapters/document-store/sqlite/connection.ts";

export function withSqliteFile<T>(file: string, fn: (conn: SqliteConnection) => T, access: "read" | "write" = "read"): T {
  const conn = openConnection({ file, busyTimeoutMs: 1000, synchronous: "FULL", readOnly: access === "read" });
  try {
    return fn(conn);
  } finally {
    conn.close();
  }
}
