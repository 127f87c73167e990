/**
 * Files written by earlier releases held each key as a VIRTUAL generated column computed from
 * `doc`. The writer sets key columns itself now (./rows.ts), so when it opens a file it rebuilds,
 * once, every collection table that still has generated columns into a table of plain columns
 * with the same names: a new table, the rows copied with their rowid and keys (read from the old
 * columns, so the keys are the ones SQLite computed), the old table dropped, the new one renamed,
 * its indexes created again from the SQL the old ones were created with. The array markers are
 * views of their own and stay. Every table is rebuilt in one transaction: the file is upgraded
 * whole or not at all, and a second process opening it at the same time waits for the write lock,
 * then finds nothing left to do.
 */
import type { SqliteConnection } from "./connection.ts";
import { ident, tableName } from "./keys.ts";

/** Rebuilds the tables with generated key columns into plain ones; answers how many it rebuilt. */
export function upgradeKeyColumns(conn: SqliteConnection): number {
  if (_generatedTables(conn).length === 0) return 0;
  conn.begin("IMMEDIATE");
  let rebuilt = 0;
  try {
    for (const raw of _generatedTables(conn)) {
      _rebuild(conn, raw);
      rebuilt++;
    }
    conn.commit();
  } catch (e) {
    conn.rollback();
    throw e;
  } finally {
    conn.forgetStatements();
  }
  return rebuilt;
}

// --- Internal helpers ---

/** The collection tables holding a generated column (`hidden` 2: virtual, 3: stored). */
function _generatedTables(conn: SqliteConnection): string[] {
  const out: string[] = [];
  for (const [name] of conn.all("SELECT name FROM gatehouse_collections ORDER BY name")) {
    const raw = tableName(name as string);
    if (conn.get("SELECT 1 FROM pragma_table_xinfo(?) WHERE hidden IN (2, 3) LIMIT 1", [raw])) out.push(raw);
  }
  return out;
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
