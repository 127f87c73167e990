/**
 * A database file laid out as earlier releases of the SQLite store wrote it: each key a VIRTUAL
 * generated column computed from `doc`, the declared indexes on those columns (unique, partial when
 * sparse), the TTL index, an array marker per indexed path no document holds an array along, and
 * the collection's spec in `gatehouse_collections`. The writer upgrades such a file when it opens
 * it (adapters/document-store/sqlite/upgrade.ts); tests build one here to prove that.
 */
import type { CollectionSpec, Doc } from "../../adapters/ports.ts";
import { indexName } from "../../adapters/document-store/filter.ts";
import { openConnection, type SqliteConnection } from "../../adapters/document-store/sqlite/connection.ts";
import { hasArrayAlong, ident, keyColumn, keyExpr, presenceExpr, tableName } from "../../adapters/document-store/sqlite/keys.ts";
import { META_TABLE_SQL } from "../../adapters/document-store/sqlite/schema.ts";

/** Writes `collections` (name → spec and documents) into `file` with generated key columns. */
export function writeGeneratedColumnsFile(file: string, collections: Record<string, { spec: CollectionSpec; docs: Doc[] }>): void {
  const conn = openConnection({ file, busyTimeoutMs: 1000, synchronous: "FULL" });
  try {
    conn.exec(META_TABLE_SQL);
    conn.begin("IMMEDIATE");
    for (const [collection, { spec, docs }] of Object.entries(collections)) _collection(conn, collection, spec, docs);
    conn.commit();
  } finally {
    conn.close();
  }
}

// --- Internal helpers ---

function _collection(conn: SqliteConnection, collection: string, spec: CollectionSpec, docs: Doc[]): void {
  const raw = tableName(collection);
  const table = ident(raw);
  conn.exec(`CREATE TABLE ${table} (_id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL)`);
  const paths = new Set<string>();
  for (const ix of spec.indexes ?? []) for (const f of ix.fields) if (f !== "_id") paths.add(f);
  if (spec.ttlField) paths.add(spec.ttlField);
  for (const path of paths) {
    const col = keyColumn(path);
    conn.exec(`ALTER TABLE ${table} ADD COLUMN ${ident(col)} GENERATED ALWAYS AS (${keyExpr(path)}) VIRTUAL`);
    if (!docs.some((d) => hasArrayAlong(d, path))) conn.exec(`CREATE VIEW ${ident(`${raw}/scalar/${col}`)} AS SELECT 1`);
  }
  for (const ix of spec.indexes ?? []) {
    const name = ident(`${raw}/${indexName(ix.fields)}${ix.unique ? "/unique" : ""}${ix.sparse ? "/sparse" : ""}`);
    const cols = ix.fields.map((f) => (f === "_id" ? "_id" : ident(keyColumn(f)))).join(", ");
    const where = ix.sparse ? ` WHERE ${ix.fields.map((f) => presenceExpr(f)).join(" AND ")}` : "";
    conn.exec(`CREATE ${ix.unique ? "UNIQUE " : ""}INDEX ${name} ON ${table} (${cols})${where}`);
  }
  if (spec.ttlField) conn.exec(`CREATE INDEX ${ident(`${raw}/ttl`)} ON ${table} (${ident(keyColumn(spec.ttlField))})`);
  conn.run("INSERT INTO gatehouse_collections (name, spec) VALUES (?, ?)", [collection, JSON.stringify(spec)]);
  for (const doc of docs) conn.run(`INSERT INTO ${table} (_id, doc) VALUES (?, ?)`, [doc._id, JSON.stringify(doc)]);
}
