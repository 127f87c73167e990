/**
 * Files written by earlier releases held each key as a VIRTUAL generated column computed from
 * `doc`. The writer sets key columns itself now (./rows.ts), so when it opens a file it rebuilds,
 * once, every collection table that still has generated columns into a table of plain columns
 * with the same names: a new table, the rows copied with their rowid and keys (read from the old
 * columns, so the keys are the ones SQLite computed), the old table dropped, the new one renamed,
 * its indexes created again from the SQL the old ones were created with. The array markers are
 * views of their own and stay. Each table is rebuilt in a transaction of its own: a table is
 * upgraded whole or not at all (an open that stops half way leaves the rest to the next one), the
 * WAL is checkpointed between tables, so it grows to the largest table rather than the whole file,
 * and a second process opening the file at the same time waits for the write lock, then finds
 * nothing left to do. The pages of the dropped table stay in the file as free pages, reused by
 * later writes (the file does not shrink).
 */
import type { SqliteConnection } from "./connection.ts";
import { ident, tableName } from "./keys.ts";

/** Rebuilds the tables with generated key columns into plain ones; answers how many it rebuilt. */
export function upgradeKeyColumns(conn: SqliteConnection): number {
  let rebuilt = 0;
  for (const raw of _generatedTables(conn)) {
    conn.begin("IMMEDIATE");
    try {
      if (_isGenerated(conn, raw)) {
        _rebuild(conn, raw); // unless another process did it meanwhile
        rebuilt++;
      }
      conn.commit();
    } catch (e) {
      conn.rollback();
      throw e;
    } finally {
      conn.forgetStatements();
    }
  }
  return rebuilt;
}

// --- Internal helpers ---

/** The collection tables holding a generated column (`hidden` 2: virtual, 3: stored). */
function _generatedTables(conn: SqliteConnection): string[] {
  const out: string[] = [];
  for (const [name] of conn.all("SELECT name FROM gatehouse_collections ORDER BY name")) {
    const raw = tableName(name as string);
    if (_isGenerated(conn, raw)) out.push(raw);
  }
  return out;
}

function _isGenerated(conn: SqliteConnection, raw: string): boolean {
  return conn.get("SELECT 1 FROM pragma_table_xinfo(?) WHERE hidden IN (2, 3) LIMIT 1", [raw]) !== undefined;
}

function _rebuild(conn: SqliteConnection, raw: string): void {
  const table = ident(raw);
  const next = ident(`${raw}/upgrade`);
  const keys = conn
    .all("SELECT name FROM pragma_table_xinfo(?) ORDER BY cid", [raw])
    .map((r) => r[0] as string)
    .filter((name) => name !== "_id" && name !== "doc")
    .map(ident);
  const indexes = conn.all("SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", [raw]).map((r) => r[0] as string);
  const cols = keys.map((k) => `, ${k}`).join("");
  // Key columns have no type (no affinity): each keeps the value and type SQL computed.
  conn.exec(`CREATE TABLE ${next} (_id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL${cols})`);
  conn.exec(`INSERT INTO ${next} (rowid, _id, doc${cols}) SELECT rowid, _id, doc${cols} FROM ${table} ORDER BY rowid`);
  conn.exec(`DROP TABLE ${table}`);
  conn.exec(`ALTER TABLE ${next} RENAME TO ${table}`);
  for (const sql of indexes) conn.exec(sql); // built once over the copied rows
}
