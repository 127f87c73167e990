/**
 * A collection's text index: the fields its spec declares in `textFields`, held per row in an FTS5
 * table `<table>/text` (tokenizer `trigram`), so a `$contains` on them is answered by trigram
 * lookups instead of reading every document's JSON.
 *
 * What the index holds per field is the haystack translate.ts's exact SQL form of `$contains`
 * searches: `lower()` of the string (after the two replacements that make SQLite's ASCII-only
 * `lower()` agree with JS's `toLowerCase()` wherever an ASCII needle can match), and for an array its
 * string elements joined by U+E000 (an ASCII needle never spans two elements). The tokenizer is case
 * sensitive over that lowered text, and a quoted trigram phrase matches exactly its substring, so a
 * printable-ASCII needle of three characters or more, lower-cased, matches in the index exactly the
 * rows filter.ts matches: no JS re-check. Shorter needles (no trigram) and other needles keep the
 * scan of translate.ts.
 *
 * The index is contentless (`content=''`, `contentless_delete=1`: it stores trigrams, not a copy of
 * the text), keyed by the collection table's rowid, and kept in step by triggers on the collection
 * table (AFTER INSERT / UPDATE OF doc / DELETE), so no write path knows it exists. A declaration that
 * changes the set of fields, or finds a trigger missing, rebuilds it from the table in the declaring
 * transaction. Fields are top-level (no dotted path): an array along a path prefix would need
 * filter.ts's element-wise walk.
 */
import { InvalidQueryError, type Filter } from "../../ports.ts";
import { isOperatorObject } from "../filter.ts";
import type { SqlParam, SqliteConnection } from "./connection.ts";
import { ident, isSqlPath, jsonPath, keyColumn, lowerFoldSql } from "./keys.ts";

export interface TextIndex {
  /** The quoted FTS5 table. */
  table: string;
  /** Field → its (unquoted) column in the FTS5 table. */
  columns: Map<string, string>;
}

/** Throws InvalidQueryError unless every text field is a top-level field the store can address. */
export function validateTextFields(fields: readonly string[]): void {
  for (const f of fields) {
    if (typeof f !== "string" || f === "" || f.includes(".") || f.startsWith("$") || !isSqlPath(f)) {
      throw new InvalidQueryError(`text field "${String(f)}" must be a top-level field name`);
    }
  }
}

/** The collection's text index as the database holds it now, or null when it has none. */
export function loadTextIndex(conn: SqliteConnection, raw: string, fields: readonly string[] | undefined): TextIndex | null {
  if (!fields || fields.length === 0) return null;
  const existing = _ftsColumns(conn, raw);
  if (existing === null) return null;
  const columns = new Map<string, string>();
  for (const f of fields) if (existing.has(keyColumn(f))) columns.set(f, keyColumn(f));
  return columns.size > 0 ? { table: ident(`${raw}/text`), columns } : null;
}

/**
 * Creates (or, when the declared fields changed, rebuilds) the text index of the table `raw` over
 * `fields`, with its triggers, and fills it from the rows already stored (the writer's transaction).
 */
export function ensureTextIndex(conn: SqliteConnection, raw: string, fields: readonly string[]): void {
  if (fields.length === 0) return;
  validateTextFields(fields);
  const wanted = [...new Set(fields)].sort();
  const columns = wanted.map(keyColumn);
  const existing = _ftsColumns(conn, raw);
  // Whole only with its three triggers: rebuilding the collection table drops them (its upgrade).
  const whole = existing !== null && existing.size === columns.length && columns.every((c) => existing.has(c)) && _triggerCount(conn, raw) === _TRIGGERS.length;
  if (whole) return;
  const fts = ident(`${raw}/text`);
  for (const t of _TRIGGERS) conn.exec(`DROP TRIGGER IF EXISTS ${ident(`${raw}/text/${t}`)}`);
  conn.exec(`DROP TABLE IF EXISTS ${fts}`);
  conn.exec(`CREATE VIRTUAL TABLE ${fts} USING fts5(${columns.map(ident).join(", ")}, content='', contentless_delete=1, tokenize='trigram case_sensitive 1')`);
  const names = `rowid, ${columns.map(ident).join(", ")}`;
  const values = (row: string) => `${row}.rowid, ${wanted.map((f) => _haystackSql(`${row}.doc`, f)).join(", ")}`;
  const table = ident(raw);
  const del = `DELETE FROM ${fts} WHERE rowid = old.rowid;`;
  const ins = `INSERT INTO ${fts} (${names}) VALUES (${values("new")});`;
  conn.exec(`CREATE TRIGGER ${ident(`${raw}/text/insert`)} AFTER INSERT ON ${table} BEGIN ${ins} END`);
  conn.exec(`CREATE TRIGGER ${ident(`${raw}/text/update`)} AFTER UPDATE OF doc ON ${table} BEGIN ${del} ${ins} END`);
  conn.exec(`CREATE TRIGGER ${ident(`${raw}/text/delete`)} AFTER DELETE ON ${table} BEGIN ${del} END`);
  conn.exec(`INSERT INTO ${fts} (${names}) SELECT ${values(table)} FROM ${table}`);
}

/**
 * The SQL condition answering `cond` under `key` from the text index, appending its parameter: a
 * `{ field: { $contains } }` on a text field, or an `$or` of such terms (one FTS query over their
 * columns). Null when the index cannot answer it exactly (translate.ts then scans).
 */
export function textMatchSql(text: TextIndex | null, key: string, cond: unknown, params: SqlParam[]): string | null {
  if (!text) return null;
  const terms = key === "$or" ? (cond as Filter[]).map((f) => _single(text, f)) : [_term(text, key, cond)];
  if (terms.length === 0 || terms.some((t) => t === null)) return null;
  // One phrase per distinct needle, over every column searched for it.
  const byNeedle = new Map<string, Set<string>>();
  for (const t of terms) {
    const [column, needle] = t!;
    byNeedle.set(needle, (byNeedle.get(needle) ?? new Set()).add(column));
  }
  const query = [...byNeedle].map(([needle, cols]) => `{${[...cols].join(" ")}} : "${needle.replace(/"/g, '""')}"`).join(" OR ");
  params.push(query);
  return `rowid IN (SELECT rowid FROM ${text.table} WHERE ${text.table} MATCH ?)`;
}

// --- Internal helpers ---

const _TRIGGERS = ["insert", "update", "delete"] as const;

/** Printable ASCII, three characters or more: a needle the trigram index answers exactly. */
const _INDEXABLE = /^[\x20-\x7e]{3,}$/;

/** The text the index holds for `field` of the document column `doc` (see the module comment). */
function _haystackSql(doc: string, field: string): string {
  const p = jsonPath(field);
  return (
    `CASE json_type(${doc}, ${p}) WHEN 'text' THEN ${lowerFoldSql(`${doc} ->> ${p}`)} ` +
    `WHEN 'array' THEN (SELECT group_concat(${lowerFoldSql("value")}, char(57344)) FROM json_each(${doc}, ${p}) WHERE type = 'text') END`
  );
}

/** An `$or` branch that is exactly one indexable `$contains` term. */
function _single(text: TextIndex, f: Filter): [string, string] | null {
  const keys = Object.keys(f);
  return keys.length === 1 ? _term(text, keys[0]!, f[keys[0]!]) : null;
}

/** `[column, lower-cased needle]` for `{ $contains: needle }` alone on a text field. */
function _term(text: TextIndex, field: string, cond: unknown): [string, string] | null {
  const column = text.columns.get(field);
  if (!column || !isOperatorObject(cond)) return null;
  const ops = Object.keys(cond);
  const needle = (cond as { $contains?: unknown }).$contains;
  if (ops.length !== 1 || typeof needle !== "string" || !_INDEXABLE.test(needle)) return null;
  return [column, needle.toLowerCase()];
}

function _triggerCount(conn: SqliteConnection, raw: string): number {
  const names = _TRIGGERS.map((t) => `${raw}/text/${t}`);
  return conn.get(`SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name IN (?, ?, ?)`, names)![0] as number;
}

/** The FTS5 table's columns, or null when the table has none. */
function _ftsColumns(conn: SqliteConnection, raw: string): Set<string> | null {
  if (!conn.get("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", [`${raw}/text`])) return null;
  return new Set(conn.all("SELECT name FROM pragma_table_info(?)", [`${raw}/text`]).map((r) => r[0] as string));
}
