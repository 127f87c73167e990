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
 * scan of translate.ts. A reading connection may look a needle up by its rarer trigrams only (those
 * most rows hold have posting lists as long as the table) and re-check the candidates in SQL against
 * the same text (`textMatchSql`).
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
  /** Trigram densities (and counts of lookups) estimated lately on this connection (`trigramDensity`). */
  densities: DensityCache;
}

/** Estimates kept DENSITY_TTL_MS (a density moves slowly; a stale one costs time, never a row). */
export interface DensityCache {
  /** When the cache was last emptied (ms). */
  at: number;
  /** The sampling's starting rowids and the table's largest rowid. */
  range: _Range | null;
  values: Map<string, number>;
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
  return columns.size > 0 ? { table: ident(`${raw}/text`), columns, densities: { at: 0, range: null, values: new Map() } } : null;
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
 * How common a trigram is among the collection's rows: the share (0–1) of rows whose indexed text
 * holds it, estimated from its first few index entries (`trigramDensity`).
 */
export interface TrigramDensity {
  /** The share (0–1) of the rows whose indexed text holds `trigram`. */
  share(trigram: string): number;
  /** The rows of the collection (its rowid span). */
  rows(): number;
  /** How many rows an FTS5 query matches, counted up to `limit`. */
  countUpTo(query: string, limit: number): number;
}

/**
 * The SQL condition answering `cond` under `key` from the text index, appending its parameters: a
 * `{ field: { $contains } }` on a text field, or an `$or` of such terms (one FTS query over their
 * columns). Null when the index cannot answer it (translate.ts then scans).
 *
 * Without `density`, each needle is one phrase of all its trigrams: exact. With it, trigrams held by
 * most rows (every account number holds "000") are left out of the lookup, whose posting lists
 * would be walked whole for a handful of matches: the needle's runs of the other trigrams are
 * looked up (a superset of the matches) and each candidate row is re-checked in SQL against the very
 * text the index holds (`instr`), so the result stays exact.
 */
export function textMatchSql(text: TextIndex | null, key: string, cond: unknown, params: SqlParam[], density: TrigramDensity | null = null): string | null {
  if (!text) return null;
  const terms = key === "$or" ? (cond as Filter[]).map((f) => _single(text, f)) : [_term(text, key, cond)];
  if (terms.length === 0 || terms.some((t) => t === null)) return null;
  // One query per distinct needle, over every column searched for it.
  const byNeedle = new Map<string, Set<string>>();
  for (const t of terms) byNeedle.set(t!.needle, (byNeedle.get(t!.needle) ?? new Set()).add(t!.column));
  let exact = true;
  const queries = [...byNeedle].map(([needle, cols]) => {
    const phrases = density ? _selectivePhrases(needle, density) : [needle];
    exact &&= phrases.length === 1 && phrases[0] === needle;
    return `{${[...cols].join(" ")}} : (${_andSql(phrases)})`;
  });
  params.push(queries.join(" OR "));
  const lookup = `rowid IN (SELECT rowid FROM ${text.table} WHERE ${text.table} MATCH ?)`;
  if (exact) return lookup;
  const recheck = [...byNeedle.keys()].map((needle) => _recheckSql(needle, terms.filter((t) => t!.needle === needle).map((t) => t!.field), params));
  return `(${lookup} AND (${recheck.join(" OR ")}))`;
}

/**
 * The density estimate of the text index `text` of the collection table `table` (quoted), read on
 * `conn` and kept in `text.densities`. The trigram's first DENSITY_SAMPLE index entries from each of
 * DENSITY_WINDOWS starting points spread over the table's rowid range (rows written at different
 * times differ: the first 100 000 account names all hold "r 0"), over the rowids they span (to the
 * end of the table when fewer are left). The starting points follow the golden ratio, away from
 * round fractions of the range (sequential data is special there). One short statement per
 * trigram, a seek and a few entries per starting point (FTS5 seeks to a lower rowid bound given as
 * an INTEGER: a bound parameter arrives as REAL and makes it walk every entry).
 */
export function trigramDensity(conn: SqliteConnection, table: string, text: TextIndex): TrigramDensity {
  const cache = text.densities;
  const fresh = () => {
    const now = Date.now();
    if (now - cache.at > DENSITY_TTL_MS || cache.values.size >= _MAX_CACHED) {
      cache.at = now;
      cache.range = null;
      cache.values.clear();
    }
    return (cache.range ??= _sampleStarts(conn, table));
  };
  return {
    share(trigram) {
      const range = fresh();
      let d = cache.values.get(trigram);
      if (d === undefined) cache.values.set(trigram, (d = _sampleDensity(conn, text, range, trigram)));
      return d;
    },
    rows: () => fresh().rows,
    countUpTo(query, limit) {
      fresh();
      const n = Math.max(1, Math.floor(limit));
      const key = `\u0000${n} ${query}`; // beside the trigrams: no trigram starts with U+0000 (never printable)
      let c = cache.values.get(key);
      if (c === undefined) cache.values.set(key, (c = conn.get(`SELECT count(*) FROM (SELECT rowid FROM ${text.table} WHERE ${text.table} MATCH ? LIMIT ${n})`, [query])![0] as number));
      return c;
    },
  };
}

/** Starting points in the rowid range a trigram's density is sampled from, and index entries read from each. */
export const DENSITY_WINDOWS = 4;
export const DENSITY_SAMPLE = 16;
/** How long density estimates are kept. */
export const DENSITY_TTL_MS = 60_000;
/** Trigrams held by more than this share of the rows (most rows) are left out of a lookup (re-checked instead). */
export const COMMON_TRIGRAM = 0.5;
/** A needle's candidates are sparse when they are at most this share of the rows... */
export const SPARSE_SHARE = 0.005;
/** ...or fewer than this many. */
const _FEW_ROWS = 64;
/** Trigrams of one needle estimated at most (the others count as common). */
const _MAX_PROBES = 24;
/** Estimates kept at most (the cache is emptied beyond). */
const _MAX_CACHED = 4096;

// --- Internal helpers ---

/** Where a trigram's density is sampled from: starting rowids, the largest rowid, the rowid span. */
interface _Range {
  starts: number[];
  max: number;
  rows: number;
}

const _TRIGGERS = ["insert", "update", "delete"] as const;

/** Printable ASCII, three characters or more: a needle the trigram index answers exactly. */
const _INDEXABLE = /^[\x20-\x7e]{3,}$/;

/**
 * Whether `needle` is in the indexed text of one of `fields`, exactly (`instr` over the text the
 * index holds), after a cheaper test on the whole document's JSON text that every such row passes:
 * a field's text stands verbatim in the JSON (JSON.stringify escapes only `"`, `\`, control
 * characters and lone surrogates, none of them in a printable-ASCII needle but the first two), so
 * a needle without `"` or `\` is in the document folded the same way. `lower()` alone (no
 * replacements) serves a needle without "i" or "k", the only letters the two replacements produce.
 */
function _recheckSql(needle: string, fields: string[], params: SqlParam[]): string {
  const quick = /["\\]/.test(needle) ? null : /[ik]/.test(needle) ? lowerFoldSql("doc") : "lower(doc)";
  if (quick) params.push(needle);
  const exact = fields.map((f) => {
    params.push(needle);
    return `instr(${_haystackSql("doc", f)}, ?) > 0`;
  });
  const any = exact.length === 1 ? exact[0]! : `(${exact.join(" OR ")})`;
  return quick ? `(instr(${quick}, ?) > 0 AND ${any})` : any;
}

/** Where the density of a trigram is sampled from (see `trigramDensity`). */
function _sampleStarts(conn: SqliteConnection, table: string): _Range {
  // Two subqueries: SQLite seeks a lone min() or max() but scans the table for both at once.
  const [min, max] = conn.get(`SELECT (SELECT min(rowid) FROM ${table}), (SELECT max(rowid) FROM ${table})`)!.map((v) => Number(v ?? 0)) as [number, number];
  const span = Math.max(1, max - min + 1);
  return { starts: Array.from({ length: DENSITY_WINDOWS }, (_, i) => min + Math.floor(span * ((i * 0.6180339887) % 1))), max, rows: max > 0 ? span : 0 };
}

function _sampleDensity(conn: SqliteConnection, text: TextIndex, range: _Range, trigram: string): number {
  const window = `SELECT count(*), max(rowid) FROM (SELECT rowid FROM ${text.table} WHERE ${text.table} MATCH ? AND rowid >= CAST(? AS INTEGER) LIMIT ${DENSITY_SAMPLE})`;
  const sql = Array.from({ length: DENSITY_WINDOWS }, () => window).join(" UNION ALL ");
  const phrase = `"${trigram.replace(/"/g, '""')}"`;
  const rows = conn.all(sql, range.starts.flatMap((start) => [phrase, start]));
  let sum = 0;
  rows.forEach(([n, last], i) => {
    const start = range.starts[i]!;
    const spanned = (n as number) < DENSITY_SAMPLE ? range.max - start + 1 : (last as number) - start + 1;
    sum += (n as number) / Math.max(1, spanned);
  });
  return Math.min(1, sum / DENSITY_WINDOWS);
}

/** The text the index holds for `field` of the document column `doc` (see the module comment). */
function _haystackSql(doc: string, field: string): string {
  const p = jsonPath(field);
  return (
    `CASE json_type(${doc}, ${p}) WHEN 'text' THEN ${lowerFoldSql(`${doc} ->> ${p}`)} ` +
    `WHEN 'array' THEN (SELECT group_concat(${lowerFoldSql("value")}, char(57344)) FROM json_each(${doc}, ${p}) WHERE type = 'text') END`
  );
}

/**
 * The phrases a needle is looked up by: its runs of trigrams that are not common (each run a
 * substring of the needle), when two or more of its distinct trigrams are common, at least one is
 * not, and the runs match few rows (counted up to SPARSE_SHARE of the rows, or _FEW_ROWS).
 * Otherwise the whole needle (exact, no re-check). FTS5 walks a phrase's lists in step: from one
 * sparse candidate to the next it seeks far into each common list (~20 µs a candidate for the
 * account number's "000"), while dense candidates lie next to each other there (~1.5 µs, less than
 * re-checking a row that matches).
 */
function _selectivePhrases(needle: string, density: TrigramDensity): string[] {
  const common = new Map<string, boolean>();
  for (let i = 0; i <= needle.length - 3; i++) {
    const t = needle.slice(i, i + 3);
    if (!common.has(t)) common.set(t, common.size >= _MAX_PROBES || density.share(t) > COMMON_TRIGRAM);
  }
  const nCommon = [...common.values()].filter((c) => c).length;
  if (nCommon < 2 || nCommon === common.size) return [needle];
  const phrases: string[] = [];
  for (let i = 0, start = -1; i <= needle.length - 3; i++) {
    const rare = !common.get(needle.slice(i, i + 3));
    if (rare && start < 0) start = i;
    if ((!rare || i === needle.length - 3) && start >= 0) {
      phrases.push(needle.slice(start, rare ? i + 3 : i + 2));
      start = -1;
    }
  }
  const limit = Math.max(_FEW_ROWS, SPARSE_SHARE * density.rows());
  return density.countUpTo(_andSql(phrases), limit) < limit ? phrases : [needle];
}

/** FTS5 query text: every phrase (quoted), ANDed. */
function _andSql(phrases: readonly string[]): string {
  return phrases.map((p) => `"${p.replace(/"/g, '""')}"`).join(" AND ");
}

interface _Term {
  field: string;
  column: string;
  /** Lower-cased. */
  needle: string;
}

/** An `$or` branch that is exactly one indexable `$contains` term. */
function _single(text: TextIndex, f: Filter): _Term | null {
  const keys = Object.keys(f);
  return keys.length === 1 ? _term(text, keys[0]!, f[keys[0]!]) : null;
}

/** The term of `{ $contains: needle }` alone on a text field. */
function _term(text: TextIndex, field: string, cond: unknown): _Term | null {
  const column = text.columns.get(field);
  if (!column || !isOperatorObject(cond)) return null;
  const ops = Object.keys(cond);
  const needle = (cond as { $contains?: unknown }).$contains;
  if (ops.length !== 1 || typeof needle !== "string" || !_INDEXABLE.test(needle)) return null;
  return { field, column, needle: needle.toLowerCase() };
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
