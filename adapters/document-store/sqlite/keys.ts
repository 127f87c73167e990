/**
 * How a document field becomes an SQL value that orders and compares as filter.ts does: the
 * field's *key*. Every indexed path has a key column holding its key, and every
 * SQL comparison, sort and index of the store is on keys:
 *
 *   null or missing  →  -9e999 (SQLite's -Infinity: never a JSON number; not NULL, so a unique
 *                       index treats two missing fields as equal, as filter.ts's unique keys do)
 *   number           →  INTEGER / REAL
 *   string           →  TEXT
 *   object           →  BLOB x'01' || its JSON text
 *   array            →  BLOB x'02' || its JSON text
 *   false / true     →  BLOB x'03' / x'04'
 *
 * SQLite orders NULL < numbers < TEXT < BLOB and blobs bytewise, so keys follow filter.ts's type
 * order (null/missing < numbers < strings < objects < arrays < booleans). Strings compare by UTF-8
 * bytes (MongoDB's order; filter.ts compares UTF-16 code units: the two differ only for characters
 * above U+FFFF against U+E000–U+FFFF). Two keys are equal exactly when the values are (documents
 * are written by JSON.stringify, so equal embedded documents have equal text, field order
 * included). Arrays order among themselves by their JSON text (filter.ts: element by element).
 */
import { createHash } from "node:crypto";
import type { SqlParam } from "./connection.ts";

/** The key of null and missing fields, as an SQL literal. */
export const NULL_KEY = "-9e999";

/**
 * A field path the store can address in SQL: no double quote (a JSON path label cannot hold one),
 * no backslash (SQLite reads escapes in a quoted label: `a\u0062` would address `ab`), and no lone
 * surrogate (the label is spliced into the statement's text, which would replace it). Other paths
 * are matched, sorted and updated in JS.
 */
export function isSqlPath(path: string): boolean {
  return !/["\\]|\p{Cs}/u.test(path);
}

/** The SQL string literal of a (validated, SQL-addressable) field path's JSON path: `'$."a"."b"'`. */
export function jsonPath(path: string): string {
  return _sqlString("$" + path.split(".").map((s) => `."${s}"`).join(""));
}

/**
 * The key of `path` in the document `doc` (see the module comment): the document column, or any
 * SQL expression of a document's JSON text (a parameter `?1`, json_each's `value`).
 */
export function keyExpr(path: string, doc = "doc"): string {
  return keyExprAt(doc, jsonPath(path));
}

/** The key of what the JSON path `p` (an SQL string literal, `'$'` for the whole) finds in the JSON text `doc`. */
export function keyExprAt(doc: string, p: string): string {
  return (
    `CASE json_type(${doc}, ${p}) WHEN 'true' THEN x'04' WHEN 'false' THEN x'03' ` +
    `WHEN 'object' THEN CAST(x'01' || (${doc} -> ${p}) AS BLOB) WHEN 'array' THEN CAST(x'02' || (${doc} -> ${p}) AS BLOB) ` +
    `ELSE ifnull(${doc} ->> ${p}, ${NULL_KEY}) END`
  );
}

/**
 * `x` lower-cased as JS's `toLowerCase()` does wherever an ASCII needle can match: SQLite's
 * `lower()` is ASCII-only, and U+0130 and U+212A are the only characters whose JS lower case holds
 * ASCII letters (`$contains` in SQL, and what the text index holds).
 */
export function lowerFoldSql(x: string): string {
  return `lower(replace(replace(${x}, '\u0130', 'i\u0307'), '\u212a', 'k'))`;
}

/** True (1) when `path` or one of its prefixes holds an array: filter.ts then matches element-wise. */
export function arrayAlongExpr(path: string): string {
  const segs = path.split(".");
  const terms = segs.map((_, i) => `json_type(doc, ${jsonPath(segs.slice(0, i + 1).join("."))}) IS 'array'`);
  return terms.length === 1 ? terms[0]! : `(${terms.join(" OR ")})`;
}

/** True when the field exists (null included) in the JSON text `doc`: a sparse path's presence column, and `$exists`. */
export function presenceExpr(path: string, doc = "doc"): string {
  return `json_type(${doc}, ${jsonPath(path)}) IS NOT NULL`;
}

/** Whether `path` or one of its prefixes holds an array in `doc` (the JS side of `arrayAlongExpr`). */
export function hasArrayAlong(doc: unknown, path: string): boolean {
  let cur: unknown = doc;
  for (const seg of path.split(".")) {
    if (typeof cur !== "object" || cur === null || Array.isArray(cur)) return false;
    cur = (cur as Record<string, unknown>)[seg];
    if (Array.isArray(cur)) return true;
  }
  return false;
}

/** The key column holding the key of `path` (the same name in every process). */
export function keyColumn(path: string): string {
  return `k_${_hash(path, 12)}`;
}

/**
 * The presence column of a sparse index's path: 1 when the field exists (null included), else 0
 * (`presenceExpr`), set by the writer like a key column. A sparse index's partial condition reads it
 * rather than `doc`, so an update that leaves the field's presence alone does not touch the index.
 */
export function presenceColumn(path: string): string {
  return `p_${_hash(path, 12)}`;
}

/** The table of a collection: its name (SQLite names are case-insensitive) and a hash of it. */
export function tableName(collection: string): string {
  return `${collection}#${_hash(collection, 8)}`;
}

/** A quoted SQL identifier. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The SQL of a JS value's key, appending a parameter when it needs one: booleans and null are
 * literals, numbers and strings are parameters, embedded documents and arrays are `CAST(? AS BLOB)`
 * over their tagged text (the binding cannot take a blob parameter). Undefined for a value no
 * document field can equal (a non-finite number).
 */
export function keySql(value: unknown, params: SqlParam[]): string | undefined {
  if (value === null || value === undefined) return NULL_KEY;
  switch (typeof value) {
    case "boolean":
      return value ? "x'04'" : "x'03'";
    case "number":
      if (!Number.isFinite(value)) return undefined;
      params.push(value);
      return "?";
    case "string":
      params.push(value);
      return "?";
    default:
      params.push((Array.isArray(value) ? "\u0002" : "\u0001") + JSON.stringify(value));
      return "CAST(? AS BLOB)";
  }
}

/** The JS value a key read from SQL stands for (cursors carry values, as filter.ts's do). */
export function keyValue(key: unknown): unknown {
  if (typeof key === "number") return key === -Infinity ? null : key;
  if (typeof key === "string" || key === null) return key;
  if (key instanceof Uint8Array) {
    const tag = key[0];
    if (tag === 3) return false;
    if (tag === 4) return true;
    return JSON.parse(Buffer.from(key.buffer, key.byteOffset + 1, key.byteLength - 1).toString("utf8"));
  }
  return key;
}

// --- Internal helpers ---

function _sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function _hash(s: string, hexChars: number): string {
  return createHash("sha256").update(s).digest("hex").slice(0, hexChars);
}
