/**
 * Benches that fill a collection's table in bulk with raw SQL (`INSERT … (_id, doc) SELECT …`, far
 * faster than the store's writes for millions of rows) must also set the key columns the store's
 * writer sets (adapters/document-store/sqlite/rows.ts): otherwise those rows hold no keys, and
 * their indexes and queries are not the product's. This sets every key column of the rows after
 * `afterRowid` with the store's own key expression.
 */
import type { SqliteConnection } from "../adapters/document-store/sqlite/connection.ts";
import { keyExpr } from "../adapters/document-store/sqlite/keys.ts";
import { loadSchema } from "../adapters/document-store/sqlite/schema.ts";

export function fillKeyColumns(conn: SqliteConnection, collection: string, afterRowid = 0): void {
  const schema = loadSchema(conn, collection);
  const sets = [...schema.columns].map(([path, column]) => `${column} = ${keyExpr(path)}`);
  if (sets.length === 0) return;
  conn.run(`UPDATE ${schema.table} SET ${sets.join(", ")} WHERE rowid > ?`, [afterRowid]);
}
