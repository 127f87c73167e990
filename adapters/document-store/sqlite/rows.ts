/**
 * The SQL that writes a collection's rows: the document's JSON text and its key columns. Key
 * columns are plain columns the writer sets, each computed by SQL from the bound document text
 * with the key expression (./keys.ts `keyExpr`), the same one a query's column stands for. An
 * insert sets every key; an update sets `doc` and only the columns whose path's value changed
 * (`changedKeyPaths`, judged in JS on the old and new documents), with the presence columns of
 * those of them that are sparse index fields: SQLite rewrites the entries of
 * the indexes on the columns an UPDATE sets, so an update that changes no indexed value touches
 * none of them, and computes no key.
 *
 * The statements are built once per schema (and per set of changed columns) and kept with it.
 */
import { ident, keyColumn, keyExpr, presenceColumn, presenceExpr } from "./keys.ts";
import type { CollectionSchema } from "./schema.ts";

/** `INSERT` of one document: parameters `[_id, text]`. */
export function insertSql(schema: CollectionSchema): string {
  const c = _cache(schema);
  if (c.insert === null) {
    const [cols, exprs] = _keyParts(schema, "?2");
    c.insert = `INSERT INTO ${schema.table} (_id, doc${cols}) VALUES (?1, ?2${exprs})`;
  }
  return c.insert;
}

/** `INSERT` of a JSON array of documents, read by json_each: parameter `[text]`. */
export function insertManySql(schema: CollectionSchema): string {
  const c = _cache(schema);
  if (c.insertMany === null) {
    const [cols, exprs] = _keyParts(schema, "value");
    c.insertMany = `INSERT INTO ${schema.table} (_id, doc${cols}) SELECT value ->> '$._id', value${exprs} FROM json_each(?)`;
  }
  return c.insertMany;
}

/** `UPDATE` of one row's document and the key columns of `paths`: parameters `[text, rowid]`. */
export function updateSql(schema: CollectionSchema, paths: readonly string[]): string {
  const c = _cache(schema);
  const key = paths.join("\u0000");
  let sql = c.updates.get(key);
  if (sql === undefined) {
    let sets = "";
    for (const path of paths) {
      sets += `, ${schema.columns.get(path)!} = ${keyExpr(path, "?1")}`;
      const presence = schema.presence.get(path);
      if (presence) sets += `, ${presence} = ${presenceExpr(path, "?1")}`;
    }
    sql = `UPDATE ${schema.table} SET doc = ?1${sets} WHERE rowid = ?2`;
    c.updates.set(key, sql);
  }
  return sql;
}

/**
 * `UPDATE` of every row's key columns of `paths` from its document (rows written without them: a
 * new index on existing rows, an upgraded table, rows filled in bulk by raw SQL); with `afterRowid`
 * only the rows after parameter `?1`.
 */
export function fillKeysSql(table: string, paths: readonly string[], afterRowid = false): string {
  const sets = paths.map((path) => `${ident(keyColumn(path))} = ${keyExpr(path)}`).join(", ");
  return `UPDATE ${table} SET ${sets}${afterRowid ? " WHERE rowid > ?1" : ""}`;
}

/**
 * `ADD COLUMN` of a presence column: 0 by default, so adding it rewrites no row (SQLite reads the
 * default for the rows written before) and `fillPresenceSql` rewrites only the rows holding the field.
 */
export function addPresenceSql(table: string, path: string): string {
  return `ALTER TABLE ${table} ADD COLUMN ${ident(presenceColumn(path))} DEFAULT 0`;
}

/**
 * `UPDATE` of the presence columns of `paths` (sparse index fields) from the document, on the rows
 * holding any of the fields (the others keep their 0); with `afterRowid` only the rows after `?1`.
 */
export function fillPresenceSql(table: string, paths: readonly string[], afterRowid = false): string {
  const sets = paths.map((path) => `${ident(presenceColumn(path))} = ${presenceExpr(path)}`).join(", ");
  const any = paths.map((path) => presenceExpr(path)).join(" OR ");
  return `UPDATE ${table} SET ${sets} WHERE (${any})${afterRowid ? " AND rowid > ?1" : ""}`;
}

/**
 * The key paths whose value differs between two versions of a document (the columns an update
 * sets). A path's key is a function of the JSON value SQL's JSON path finds there (object members
 * only: a path through an array or a scalar finds nothing), so equal JSON texts mean equal keys.
 * Values `applyUpdate` left alone are the same object in both (it copies on write).
 */
export function changedKeyPaths(schema: CollectionSchema, before: unknown, after: unknown): string[] {
  const out: string[] = [];
  for (const path of schema.columns.keys()) {
    const a = _jsonPathValue(before, path);
    const b = _jsonPathValue(after, path);
    if (a === b) continue;
    if (typeof a === "object" && typeof b === "object" && JSON.stringify(a) === JSON.stringify(b)) continue;
    out.push(path);
  }
  return out;
}

// --- Internal helpers ---

interface _Statements {
  insert: string | null;
  insertMany: string | null;
  /** By the changed paths, joined. */
  updates: Map<string, string>;
}

/** Statements per schema object (a schema is re-read, as a new object, whenever its columns change). */
const _statements = new WeakMap<CollectionSchema, _Statements>();

function _cache(schema: CollectionSchema): _Statements {
  let c = _statements.get(schema);
  if (!c) {
    c = { insert: null, insertMany: null, updates: new Map() };
    _statements.set(schema, c);
  }
  return c;
}

/** `, "k_…", "p_…"` and `, <key>, <presence>` for every key and presence column of the schema, over the JSON text `doc`. */
function _keyParts(schema: CollectionSchema, doc: string): [string, string] {
  let cols = "";
  let exprs = "";
  for (const [path, column] of schema.columns) {
    cols += `, ${column}`;
    exprs += `, ${keyExpr(path, doc)}`;
  }
  for (const [path, column] of schema.presence) {
    cols += `, ${column}`;
    exprs += `, ${presenceExpr(path, doc)}`;
  }
  return [cols, exprs];
}

/**
 * The value SQLite's JSON path `$."a"."b"` finds in a document: object members only (a segment
 * on an array or a scalar finds nothing), own properties only (JSON.parse makes `__proto__` one).
 */
function _jsonPathValue(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const seg of path.includes(".") ? path.split(".") : [path]) {
    if (typeof cur !== "object" || cur === null || Array.isArray(cur) || !Object.hasOwn(cur, seg)) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}
