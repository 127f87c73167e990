/**
 * Files written by earlier releases held each key as a VIRTUAL generated column computed from
 * `doc`. The writer sets key columns itself now (./rows.ts), so when it opens a file it turns,
 * once, every collection table that still has generated columns into plain columns of the same
 * names, in place (`_rebuild`): indexes dropped, each generated column dropped and added again as
 * a plain one, one UPDATE filling the keys with the same key expression, the indexes created again
 * from their SQL. The array markers are views of their own and stay. Each table is done in a
 * transaction of its own: upgraded whole or not at all (an open that stops half way leaves the rest
 * to the next one), and a second process opening the file at the same time waits for the write
 * lock, then finds nothing left to do.
 *
 * Files written before sparse paths had presence columns held each sparse index partial on
 * `json_type(doc, …) IS NOT NULL`, which SQLite re-evaluates (and so rewrites the index entry) on
 * every update of `doc`. `upgradeSparseIndexes` gives such a table its presence columns, filled
 * from the documents, and creates its sparse indexes again partial on them; the same way, one
 * transaction per table.
 */
import type { CollectionSpec } from "../../ports.ts";
import type { SqliteConnection } from "./connection.ts";
import { ident, keyColumn, presenceColumn, tableName } from "./keys.ts";
import { addPresenceSql, fillKeysSql, fillPresenceSql } from "./rows.ts";
import { createIndexSql, keyPaths, sparsePaths } from "./schema.ts";

/** Rebuilds the tables with generated key columns into plain ones; answers how many it rebuilt. */
export function upgradeKeyColumns(conn: SqliteConnection): number {
  let rebuilt = 0;
  for (const [collection, raw] of _generatedTables(conn))
    _inTransaction(conn, () => {
      if (!_isGenerated(conn, raw)) return; // another process did it meanwhile
      _rebuild(conn, raw, collection);
      rebuilt++;
    });
  return rebuilt;
}

/** Gives the tables whose sparse indexes read `doc` presence columns and indexes on them; answers how many. */
export function upgradeSparseIndexes(conn: SqliteConnection): number {
  let upgraded = 0;
  for (const [name] of conn.all("SELECT name FROM gatehouse_collections ORDER BY name")) {
    const raw = tableName(name as string);
    if (_docSparseIndexes(conn, raw).length === 0) continue;
    _inTransaction(conn, () => {
      const stale = _docSparseIndexes(conn, raw);
      if (stale.length === 0) return; // another process did it meanwhile
      _presenceIndexes(conn, raw, name as string, stale);
      upgraded++;
    });
  }
  return upgraded;
}

// --- Internal helpers ---

/** One table's upgrade in an IMMEDIATE transaction of its own: whole or not at all. */
function _inTransaction(conn: SqliteConnection, upgrade: () => void): void {
  conn.begin("IMMEDIATE");
  try {
    upgrade();
    conn.commit();
  } catch (e) {
    conn.rollback();
    throw e;
  } finally {
    conn.forgetStatements(); // the tables' shapes changed
  }
}

/** The names of the table's sparse indexes whose partial condition reads `doc`. */
function _docSparseIndexes(conn: SqliteConnection, raw: string): string[] {
  const rows = conn.all("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", [raw]) as Array<[string, string]>;
  return rows.filter(([name, sql]) => name.endsWith("/sparse") && sql.includes("json_type(doc")).map(([name]) => name);
}

/**
 * Adds the missing presence columns (no row rewritten: 0 by default) and sets them on the rows
 * holding the fields, then drops the `doc`-reading sparse indexes and creates them again.
 */
function _presenceIndexes(conn: SqliteConnection, raw: string, collection: string, stale: string[]): void {
  const table = ident(raw);
  const row = conn.get("SELECT spec FROM gatehouse_collections WHERE name = ?", [collection]);
  const spec = row ? (JSON.parse(row[0] as string) as CollectionSpec) : {};
  const columns = new Set(conn.all("SELECT name FROM pragma_table_xinfo(?)", [raw]).map((r) => r[0] as string));
  const missing = sparsePaths(spec).filter((path) => !columns.has(presenceColumn(path)));
  for (const path of missing) conn.exec(addPresenceSql(table, path));
  if (missing.length > 0) conn.exec(fillPresenceSql(table, missing));
  for (const name of stale) conn.exec(`DROP INDEX ${ident(name)}`);
  for (const ix of spec.indexes ?? []) if (ix.sparse) conn.exec(createIndexSql(raw, ix));
}

/** The collections (name, table) whose table holds a generated column (`hidden` 2: virtual, 3: stored). */
function _generatedTables(conn: SqliteConnection): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [name] of conn.all("SELECT name FROM gatehouse_collections ORDER BY name")) {
    const raw = tableName(name as string);
    if (_isGenerated(conn, raw)) out.push([name as string, raw]);
  }
  return out;
}

function _isGenerated(conn: SqliteConnection, raw: string): boolean {
  return conn.get("SELECT 1 FROM pragma_table_xinfo(?) WHERE hidden IN (2, 3) LIMIT 1", [raw]) !== undefined;
}

/**
 * In place: the indexes are dropped, each generated column is dropped (a VIRTUAL column stores
 * nothing, so no row is rewritten) and added again as a plain column of the same name, one UPDATE
 * fills every key column of every row with the same key expression, and the indexes are created
 * again from their SQL. The rows keep their rowids and pages; the file grows by the keys the rows
 * now hold, and the WAL by about the table's size until its checkpoint.
 */
function _rebuild(conn: SqliteConnection, raw: string, collection: string): void {
  const table = ident(raw);
  const generated = new Set(conn.all("SELECT name FROM pragma_table_xinfo(?) WHERE hidden IN (2, 3)", [raw]).map((r) => r[0] as string));
  const indexes = conn.all("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", [raw]) as Array<[string, string]>;
  for (const [name] of indexes) conn.exec(`DROP INDEX ${ident(name)}`);
  const filled: string[] = [];
  for (const path of _keyPaths(conn, collection)) {
    const col = keyColumn(path);
    if (!generated.delete(col)) continue;
    conn.exec(`ALTER TABLE ${table} DROP COLUMN ${ident(col)}`);
    conn.exec(`ALTER TABLE ${table} ADD COLUMN ${ident(col)}`); // no type: no affinity, keys stay as SQL computes them
    filled.push(path);
  }
  for (const col of generated) conn.exec(`ALTER TABLE ${table} DROP COLUMN ${ident(col)}`); // a path no longer declared
  if (filled.length > 0) conn.exec(fillKeysSql(table, filled));
  for (const [, sql] of indexes) conn.exec(sql); // built once over the filled columns
}

/** The paths the collection's recorded spec gives a key column. */
function _keyPaths(conn: SqliteConnection, collection: string): string[] {
  const row = conn.get("SELECT spec FROM gatehouse_collections WHERE name = ?", [collection]);
  return row ? keyPaths(JSON.parse(row[0] as string) as CollectionSpec) : [];
}
