/**
 * Benches that fill a collection's table in bulk with raw SQL (`INSERT … (_id, doc) SELECT …`, far
 * faster than the store's writes for millions of rows) must also set the key columns the store's
 * writer sets: otherwise those rows hold no keys, and their indexes and queries are not the
 * product's. This sets every key column (and sparse paths' presence columns) of the rows after
 * `afterRowid` (the store's `fillKeysSql`, `fillPresenceSql`).
 */
import type { SqliteConnection } from "../adapters/document-store/sqlite/connection.ts";
import { fillKeysSql, fillPresenceSql } from "../adapters/document-store/sqlite/rows.ts";
import { loadSchema } from "../adapters/document-store/sqlite/schema.ts";

export function fillKeyColumns(conn: SqliteConnection, collection: string, afterRowid = 0): void {
  const schema = loadSchema(conn, collection);
  if (schema.columns.size > 0) conn.run(fillKeysSql(schema.table, [...schema.columns.keys()], true), [afterRowid]);
  if (schema.presence.size > 0) conn.run(fillPresenceSql(schema.table, [...schema.presence.keys()], true), [afterRowid]);
}
