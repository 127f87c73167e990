/**
 * A collection's tables and indexes. Each collection is one table `(_id TEXT PRIMARY KEY, doc TEXT)`
 * holding the document's JSON; each path named by a declared index (or the TTL field) gets a
 * key column holding its key (./keys.ts), and each declared index becomes an SQLite index on those
 * columns (UNIQUE for unique ones; a sparse index is partial: only documents having every field,
 * judged by each field's presence column, which the writer sets like a key column).
 * Columns rather than expression indexes: one definition per path shared by every index and sort
 * that uses it, and queries name a column, so the planner matches it without comparing long
 * expressions. They are plain columns the writer sets (./rows.ts), not generated ones: SQLite
 * counts every column generated from `doc` as changed whenever `doc` is set, so each update would
 * rewrite every index entry of its row; a plain column is rewritten only when its key changed.
 * A new key column is filled for the rows already there by one UPDATE (the same key expression).
 *
 * Arrays (filter.ts matches an array field element by element, which one key per document cannot
 * index): when a path's column is created and no document holds an array along it, a marker view
 * `<table>/scalar/<column>` is created too. Queries compare the column directly only for paths
 * with a marker, and name the marker in their SQL; the first write of an array along such a path
 * drops the marker in its own transaction. A statement prepared earlier then fails to re-prepare
 * ("no such table") in the first snapshot that holds the array, so no query ever misses it: the
 * reader reloads the schema and asks again with the element-wise form. (MongoDB's "multikey" flag,
 * kept where SQLite's own schema check enforces it.)
 *
 * `gatehouse_collections` records every collection's declared indexes and TTL field (the union of
 * what every process declared), so a process knows the indexes another one created.
 */
import { DuplicateKeyError, InvalidQueryError, type CollectionSpec, type IndexSpec } from "../../ports.ts";
import { indexName, validateIndexFields } from "../filter.ts";
import { sqliteCode, type SqliteConnection } from "./connection.ts";
import { arrayAlongExpr, ident, isSqlPath, keyColumn, presenceColumn, presenceExpr, tableName } from "./keys.ts";
import { addPresenceSql, fillKeysSql, fillPresenceSql } from "./rows.ts";
import { ensureTextIndex, loadTextIndex, validateTextFields, type TextIndex } from "./text-index.ts";

export interface IndexInfo {
  /** filter.ts's name (`a_1_b_1`): DuplicateKeyError.index. */
  name: string;
  fields: string[];
  unique: boolean;
  sparse: boolean;
  /** The key columns, in order (unquoted). */
  columns: string[];
}

export interface CollectionSchema {
  collection: string;
  /** The quoted table name. */
  table: string;
  /** The unquoted table name (error messages name it so). */
  tableRaw: string;
  /** False until the table exists: reads answer nothing. */
  exists: boolean;
  /** Path → quoted key column, for every path with one. */
  columns: Map<string, string>;
  /** Path → quoted marker view, for the indexed paths no document holds an array along. */
  scalar: Map<string, string>;
  indexes: IndexInfo[];
  /** Fields of sparse indexes: a query adds their presence terms so the planner may use them. */
  sparsePaths: Set<string>;
  /** Path → quoted presence column (./keys.ts `presenceColumn`), for every sparse path with one. */
  presence: Map<string, string>;
  ttl: { path: string; column: string } | null;
  /** The declared text fields' FTS5 index (./text-index.ts), once it exists. */
  text: TextIndex | null;
}

/** The collections table, created by the writer when it opens a file. */
export const META_TABLE_SQL = "CREATE TABLE IF NOT EXISTS gatehouse_collections (name TEXT PRIMARY KEY NOT NULL, spec TEXT NOT NULL)";

/** Reads a collection's schema as the database holds it now. */
export function loadSchema(conn: SqliteConnection, collection: string): CollectionSchema {
  const raw = tableName(collection);
  const schema: CollectionSchema = {
    collection,
    table: ident(raw),
    tableRaw: raw,
    exists: false,
    columns: new Map(),
    scalar: new Map(),
    indexes: [],
    sparsePaths: new Set(),
    presence: new Map(),
    ttl: null,
    text: null,
  };
  const row = conn.get("SELECT spec FROM gatehouse_collections WHERE name = ?", [collection]);
  if (!row) return schema;
  schema.exists = true;
  const spec = JSON.parse(row[0] as string) as CollectionSpec;
  const columns = new Set(conn.all("SELECT name FROM pragma_table_xinfo(?)", [raw]).map((r) => r[0] as string));
  const markerPrefix = `${raw}/scalar/`;
  const markers = new Set(
    conn.all("SELECT name FROM sqlite_schema WHERE type = 'view' AND substr(name, 1, ?) = ?", [markerPrefix.length, markerPrefix]).map((r) => r[0] as string),
  );
  for (const path of keyPaths(spec)) {
    const col = keyColumn(path);
    if (!columns.has(col)) continue;
    schema.columns.set(path, ident(col));
    if (markers.has(markerPrefix + col)) schema.scalar.set(path, ident(markerPrefix + col));
  }
  for (const ix of spec.indexes ?? []) {
    schema.indexes.push({ name: indexName(ix.fields), fields: ix.fields, unique: ix.unique === true, sparse: ix.sparse === true, columns: ix.fields.map((f) => (f === "_id" ? "_id" : keyColumn(f))) });
    if (ix.sparse) for (const f of ix.fields) schema.sparsePaths.add(f);
  }
  for (const path of sparsePaths(spec)) if (columns.has(presenceColumn(path))) schema.presence.set(path, ident(presenceColumn(path)));
  if (spec.ttlField && schema.columns.has(spec.ttlField)) schema.ttl = { path: spec.ttlField, column: schema.columns.get(spec.ttlField)! };
  schema.text = loadTextIndex(conn, raw, spec.textFields);
  return schema;
}

/**
 * Creates the collection's table, columns, markers and indexes that `spec` declares and the
 * database lacks, and records the spec (inside the writer's transaction). Throws DuplicateKeyError
 * when the documents already stored break a new unique index.
 */
export function ensureCollection(conn: SqliteConnection, collection: string, spec: CollectionSpec): void {
  for (const ix of spec.indexes ?? []) validateIndexFields(ix.fields);
  validateTextFields(spec.textFields ?? []);
  for (const path of keyPaths(spec)) if (!isSqlPath(path)) throw new InvalidQueryError(`index or TTL field "${path}" holds a double quote, a backslash or a lone surrogate`);
  const raw = tableName(collection);
  const table = ident(raw);
  conn.exec(`CREATE TABLE IF NOT EXISTS ${table} (_id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL)`);
  const stored = conn.get("SELECT spec FROM gatehouse_collections WHERE name = ?", [collection]);
  const merged = _merge(stored ? (JSON.parse(stored[0] as string) as CollectionSpec) : {}, spec);
  const columns = new Set(conn.all("SELECT name FROM pragma_table_xinfo(?)", [raw]).map((r) => r[0] as string));
  for (const path of keyPaths(merged)) {
    const col = keyColumn(path);
    if (columns.has(col)) continue;
    conn.exec(`ALTER TABLE ${table} ADD COLUMN ${ident(col)}`); // no type: no affinity, keys stay as SQL computes them
    conn.exec(fillKeysSql(table, [path]));
    if (!conn.get(`SELECT 1 FROM ${table} WHERE ${arrayAlongExpr(path)} LIMIT 1`)) conn.exec(`CREATE VIEW IF NOT EXISTS ${ident(`${raw}/scalar/${col}`)} AS SELECT 1`);
  }
  for (const path of sparsePaths(merged)) {
    const col = presenceColumn(path);
    if (columns.has(col)) continue;
    conn.exec(addPresenceSql(table, path));
    conn.exec(fillPresenceSql(table, [path]));
  }
  for (const ix of merged.indexes ?? []) _createIndex(conn, collection, raw, ix);
  if (merged.ttlField) conn.exec(`CREATE INDEX IF NOT EXISTS ${ident(`${raw}/ttl`)} ON ${table} (${ident(keyColumn(merged.ttlField))})`);
  ensureTextIndex(conn, raw, merged.textFields ?? []);
  conn.run("INSERT INTO gatehouse_collections (name, spec) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET spec = excluded.spec", [collection, JSON.stringify(merged)]);
}

/**
 * The term a query adds for a sparse path it implies present, so that the planner may use the
 * sparse index: the index's partial condition exactly (its presence column).
 */
export function sparseTermSql(schema: CollectionSchema, path: string): string {
  const col = schema.presence.get(path);
  return col ? `${col} = 1` : presenceExpr(path);
}

/** The `CREATE INDEX` of a declared index on the table `raw` (a sparse one is partial on its presence columns). */
export function createIndexSql(raw: string, ix: IndexSpec): string {
  const sqlName = ident(`${raw}/${indexName(ix.fields)}${ix.unique ? "/unique" : ""}${ix.sparse ? "/sparse" : ""}`);
  const cols = ix.fields.map((f) => (f === "_id" ? "_id" : ident(keyColumn(f)))).join(", ");
  const present = ix.sparse ? ix.fields.filter((f) => f !== "_id").map((f) => `${ident(presenceColumn(f))} = 1`) : [];
  const where = present.length > 0 ? ` WHERE ${present.join(" AND ")}` : "";
  return `CREATE ${ix.unique ? "UNIQUE " : ""}INDEX IF NOT EXISTS ${sqlName} ON ${ident(raw)} (${cols})${where}`;
}

/** The fields of a spec's sparse indexes (but `_id`, always present): each gets a presence column. */
export function sparsePaths(spec: CollectionSpec): string[] {
  const out = new Set<string>();
  for (const ix of spec.indexes ?? []) if (ix.sparse) for (const f of ix.fields) if (f !== "_id") out.add(f);
  return [...out];
}

/** Drops the markers of the paths along which `doc` holds an array (the writer, before writing it). */
export function dropMarkersFor(conn: SqliteConnection, schema: CollectionSchema, hasArray: (path: string) => boolean): void {
  for (const [path, marker] of schema.scalar) {
    if (!hasArray(path)) continue;
    conn.exec(`DROP VIEW IF EXISTS ${marker}`);
    schema.scalar.delete(path);
  }
}

/** The index a unique-constraint error names ("UNIQUE constraint failed: <table>.<column>, ..."). */
export function violatedIndex(schema: CollectionSchema, e: unknown): string {
  if (sqliteCode(e) === "SQLITE_CONSTRAINT_PRIMARYKEY") return "_id_";
  const message = String((e as Error)?.message ?? "");
  const prefix = `${schema.tableRaw}.`;
  const at = message.indexOf(prefix);
  if (at < 0) return "unknown";
  const cols = message.slice(at).split(", ").map((c) => (c.startsWith(prefix) ? c.slice(prefix.length) : c));
  if (cols.length === 1 && cols[0] === "_id") return "_id_";
  const hit = schema.indexes.find((ix) => ix.unique && ix.columns.length === cols.length && ix.columns.every((c, i) => c === cols[i]));
  return hit?.name ?? "unknown";
}

// --- Internal helpers ---

/** The paths a spec gives a key column: its indexes' fields (but `_id`) and its TTL field. */
export function keyPaths(spec: CollectionSpec): string[] {
  const out = new Set<string>();
  for (const ix of spec.indexes ?? []) for (const f of ix.fields) if (f !== "_id") out.add(f);
  if (spec.ttlField) out.add(spec.ttlField);
  return [...out];
}

function _merge(stored: CollectionSpec, spec: CollectionSpec): CollectionSpec {
  const indexes: IndexSpec[] = [...(stored.indexes ?? [])];
  const key = (ix: IndexSpec): string => JSON.stringify([ix.fields, ix.unique === true, ix.sparse === true]);
  const seen = new Set(indexes.map(key));
  for (const ix of spec.indexes ?? []) {
    const clean: IndexSpec = { fields: [...ix.fields], ...(ix.unique ? { unique: true } : {}), ...(ix.sparse ? { sparse: true } : {}) };
    if (!seen.has(key(clean))) {
      seen.add(key(clean));
      indexes.push(clean);
    }
  }
  const ttlField = spec.ttlField ?? stored.ttlField;
  const textFields = [...new Set([...(stored.textFields ?? []), ...(spec.textFields ?? [])])].sort();
  return { indexes, ...(ttlField ? { ttlField } : {}), ...(textFields.length > 0 ? { textFields } : {}) };
}

function _createIndex(conn: SqliteConnection, collection: string, raw: string, ix: IndexSpec): void {
  try {
    conn.exec(createIndexSql(raw, ix));
  } catch (e) {
    if (sqliteCode(e).startsWith("SQLITE_CONSTRAINT")) throw new DuplicateKeyError(collection, indexName(ix.fields));
    throw e;
  }
}
