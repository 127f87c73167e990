/**
 * A (validated) filter, sort or cursor of the port translated to SQL over keys (./keys.ts), every
 * value a bound parameter (paths are identifiers: SQL string literals of JSON paths).
 *
 * A translation is exact where SQL can decide filter.ts's semantics, and a superset elsewhere:
 * `where` holds every match, and exactly the matches among the rows where `check` is false; the
 * rows where `check` is true are re-checked in JS with filter.ts's `compileFilter` (the caller reads
 * them in chunks). SQL is exact for
 * - `_id` (a TEXT column, never an array);
 * - an indexed path with a marker (./schema.ts: no document holds an array along it), compared on
 *   its key column, so the index serves equality, `$in`, ranges and sorts;
 * - any other path outside the rows that hold an array along it (those go to `check`);
 * - `$contains` with an ASCII needle: `lower()` is ASCII-only in SQLite, and the only characters
 *   whose JS lower case holds ASCII letters are U+0130 and U+212A, replaced first. Any other needle
 *   is checked in JS on every candidate.
 * A `$contains` on a declared text field (or an `$or` of them) with a needle the trigram index answers
 * exactly is a lookup in that index instead (./text-index.ts), its candidates re-checked in SQL when
 * the lookup left common trigrams out.
 * Range operators keep filter.ts's type brackets: numbers are the keys between -Infinity (null and
 * missing) and '' (the first TEXT), strings between '' and x'' (the first BLOB).
 */
import { InvalidQueryError, type Filter, type SortSpec } from "../../ports.ts";
import { isOperatorObject } from "../filter.ts";
import type { SqlParam } from "./connection.ts";
import { NULL_KEY, arrayAlongExpr, isSqlPath, keyExpr, keySql, lowerFoldSql, presenceExpr } from "./keys.ts";
import { sparseTermSql, type CollectionSchema } from "./schema.ts";
import { textMatchSql, type TrigramDensity } from "./text-index.ts";

export interface Translation {
  /** SQL condition holding every match (exactly the matches where `check` is false). */
  where: string;
  params: SqlParam[];
  /** SQL condition true on the rows JS must re-check; null when SQL is exact for every row. */
  check: string | null;
  /**
   * The collection's table as the statement names it: `NOT INDEXED` when a top-level condition is a
   * text index lookup, so SQLite reads that lookup's rowids first (the rowid still serves) rather
   * than walking another index and testing each row against the lookup (without statistics it
   * takes an equality on an index for a few rows: one business is every account of a big one).
   */
  from: string;
}

/**
 * `density` (a reading connection's estimate, ./text-index.ts) lets a text index lookup leave a
 * needle's common trigrams out; without it each needle is looked up whole.
 */
export function translateFilter(schema: CollectionSchema, filter: Filter, density: TrigramDensity | null = null): Translation {
  const ctx: _Ctx = { schema, params: [], checks: new Set(), markers: new Set(), textFirst: false, density };
  let where = _filterSql(filter, ctx, true);
  // Naming the markers makes SQLite re-prepare, and fail, in any snapshot where one was dropped.
  if (ctx.markers.size > 0) where += ` AND EXISTS (SELECT 1 FROM ${[...ctx.markers].join(", ")})`;
  const check = ctx.checks.has("1") ? "1" : ctx.checks.size > 0 ? `(${[...ctx.checks].join(" OR ")})` : null;
  return { where, params: ctx.params, check, from: ctx.textFirst ? `${schema.table} NOT INDEXED` : schema.table };
}

/** The SQL key of each sort field (`_id`, a key column, or the key expression). */
export function sortKeys(schema: CollectionSchema, sort: readonly SortSpec[]): string[] {
  return sort.map((s) => {
    if (s.field === "_id") return "_id";
    const col = schema.columns.get(s.field);
    if (col) return col;
    if (!isSqlPath(s.field)) throw new InvalidQueryError(`cannot sort by "${s.field}": a field name holds a double quote, a backslash or a lone surrogate`);
    return keyExpr(s.field);
  });
}

export function orderBySql(keys: readonly string[], sort: readonly SortSpec[]): string {
  return keys.map((k, i) => `${k} ${sort[i]!.direction === 1 ? "ASC" : "DESC"}`).join(", ");
}

/** Rows strictly after a cursor's sort values (decoded by filter.ts's `decodeCursor`), in sort order. */
export function afterCursorSql(keys: readonly string[], sort: readonly SortSpec[], values: readonly unknown[], params: SqlParam[]): string {
  const key = (v: unknown): string => {
    const k = keySql(v, params);
    if (k === undefined) throw new InvalidQueryError("invalid cursor");
    return k;
  };
  const dir = sort[0]!.direction;
  if (sort.every((s) => s.direction === dir)) {
    const cmp = dir === 1 ? ">" : "<";
    return `(${keys.join(", ")}) ${cmp} (${values.map(key).join(", ")})`;
  }
  const alternatives: string[] = [];
  for (let i = 0; i < keys.length; i++) {
    const terms: string[] = [];
    for (let j = 0; j < i; j++) terms.push(`${keys[j]} = ${key(values[j])}`);
    terms.push(`${keys[i]} ${sort[i]!.direction === 1 ? ">" : "<"} ${key(values[i])}`);
    alternatives.push(`(${terms.join(" AND ")})`);
  }
  return `(${alternatives.join(" OR ")})`;
}

// --- Internal helpers ---

interface _Ctx {
  schema: CollectionSchema;
  params: SqlParam[];
  /** SQL conditions (or "1") marking rows for the JS re-check. */
  checks: Set<string>;
  /** Marker views the exact forms rely on. */
  markers: Set<string>;
  /** A top-level condition is a text index lookup. */
  textFirst: boolean;
  density: TrigramDensity | null;
}

function _filterSql(filter: Filter, ctx: _Ctx, top: boolean): string {
  const terms: string[] = [];
  const presence: string[] = [];
  for (const key in filter) {
    const cond = filter[key];
    const text = textMatchSql(ctx.schema.text, key, cond, ctx.params, ctx.density);
    if (text !== null) {
      terms.push(text);
      ctx.textFirst ||= top;
    } else if (key === "$or") {
      terms.push(`(${(cond as Filter[]).map((f) => _filterSql(f, ctx, false)).join(" OR ")})`);
    } else if (key === "_id") {
      terms.push(_and(_ops(cond).map(([op, arg]) => _idOp(op, arg, ctx))));
    } else {
      terms.push(_fieldSql(key, cond, ctx));
      // A sparse (partial) index serves a query only when the query states its condition.
      if (top && ctx.schema.sparsePaths.has(key) && _ops(cond).some(([op, arg]) => _impliesPresence(op, arg))) presence.push(sparseTermSql(ctx.schema, key));
    }
  }
  return _and([...terms, ...presence]);
}

function _fieldSql(path: string, cond: unknown, ctx: _Ctx): string {
  if (!isSqlPath(path)) {
    ctx.checks.add("1");
    return "1";
  }
  const key = ctx.schema.columns.get(path) ?? keyExpr(path);
  const ops = _ops(cond);
  const pair = _boundedRange(ops);
  const sql = _and(
    ops.flatMap(([op, arg], i) => (i === pair?.[1] ? [] : i === pair?.[0] ? [_pairSql(key, ops[i]!, ops[pair[1]]!, ctx)] : [_fieldOp(path, key, op, arg, ctx)])),
  );
  const marker = ctx.schema.scalar.get(path);
  if (marker) {
    ctx.markers.add(marker);
    return sql;
  }
  const along = arrayAlongExpr(path);
  ctx.checks.add(along);
  return `(${along} OR ${sql})`;
}

function _fieldOp(path: string, key: string, op: string, arg: unknown, ctx: _Ctx): string {
  switch (op) {
    case "$eq": {
      const k = keySql(arg, ctx.params);
      return k === undefined ? "0" : `${key} = ${k}`;
    }
    case "$ne": {
      const k = keySql(arg, ctx.params);
      return k === undefined ? "1" : `${key} <> ${k}`;
    }
    case "$in": {
      const keys = (arg as unknown[]).map((v) => keySql(v, ctx.params)).filter((k): k is string => k !== undefined);
      return keys.length === 0 ? "0" : `${key} IN (${keys.join(", ")})`;
    }
    case "$gt":
    case "$gte":
    case "$lt":
    case "$lte":
      return _rangeSql(key, op, arg as number | string, ctx);
    case "$exists":
      return arg ? presenceExpr(path) : `NOT ${presenceExpr(path)}`;
    case "$contains":
      return _containsSql(key, arg as string, ctx);
    default:
      throw new InvalidQueryError(`unsupported operator ${op}`);
  }
}

/** `$gt`/`$gte`/`$lt`/`$lte` within the operand's type bracket (see the module comment). */
function _rangeSql(key: string, op: "$gt" | "$gte" | "$lt" | "$lte", q: number | string, ctx: _Ctx): string {
  const cmp = op === "$gt" ? ">" : op === "$gte" ? ">=" : op === "$lt" ? "<" : "<=";
  const upward = op === "$gt" || op === "$gte";
  if (typeof q === "string") {
    ctx.params.push(q);
    return upward ? `(${key} ${cmp} ? AND ${key} < x'')` : `(${key} ${cmp} ? AND ${key} >= '')`;
  }
  const anyNumber = `(${key} > ${NULL_KEY} AND ${key} < '')`;
  if (Number.isNaN(q)) return op === "$gte" || op === "$lte" ? anyNumber : "0"; // as `!(v < NaN)` / `v > NaN`
  if (q === Infinity) return upward ? "0" : anyNumber;
  if (q === -Infinity) return upward ? anyNumber : "0";
  ctx.params.push(q);
  return upward ? `(${key} ${cmp} ? AND ${key} < '')` : `(${key} ${cmp} ? AND ${key} > ${NULL_KEY})`;
}

/**
 * The positions of a lower and an upper bound of the same type (finite numbers, or strings), if the
 * condition has exactly one of each. Between two numbers lie only numbers (null and missing are
 * below every number, TEXT above), between two strings only strings: the pair needs no type
 * bracket, and without one SQLite seeks the index between the two values rather than between the
 * brackets' ends (it uses one lower and one upper bound per column, and took the brackets').
 */
function _boundedRange(ops: Array<[string, unknown]>): [number, number] | null {
  const lows = ops.flatMap(([op], i) => (op === "$gt" || op === "$gte" ? [i] : []));
  const highs = ops.flatMap(([op], i) => (op === "$lt" || op === "$lte" ? [i] : []));
  if (lows.length !== 1 || highs.length !== 1) return null;
  const [a, b] = [ops[lows[0]!]![1], ops[highs[0]!]![1]];
  const numbers = typeof a === "number" && typeof b === "number" && Number.isFinite(a) && Number.isFinite(b);
  return numbers || (typeof a === "string" && typeof b === "string") ? [Math.min(lows[0]!, highs[0]!), Math.max(lows[0]!, highs[0]!)] : null;
}

/** `first` and `second` (a lower and an upper bound, in either order) as one range, parameters in text order. */
function _pairSql(key: string, first: [string, unknown], second: [string, unknown], ctx: _Ctx): string {
  const cmp = (op: string) => (op === "$gt" ? ">" : op === "$gte" ? ">=" : op === "$lt" ? "<" : "<=");
  ctx.params.push(first[1] as number | string, second[1] as number | string);
  return `(${key} ${cmp(first[0])} ? AND ${key} ${cmp(second[0])} ?)`;
}

function _containsSql(value: string, needle: string, ctx: _Ctx): string {
  if (!_ASCII.test(needle)) {
    ctx.checks.add("1");
    return `typeof(${value}) = 'text'`;
  }
  ctx.params.push(needle.toLowerCase());
  return `(typeof(${value}) = 'text' AND instr(${lowerFoldSql(value)}, ?) > 0)`;
}

/** A condition on `_id`: a TEXT column present in every document. */
function _idOp(op: string, arg: unknown, ctx: _Ctx): string {
  switch (op) {
    case "$eq":
    case "$ne":
      if (typeof arg !== "string") return op === "$eq" ? "0" : "1";
      ctx.params.push(arg);
      return op === "$eq" ? "_id = ?" : "_id <> ?";
    case "$in": {
      const ids = (arg as unknown[]).filter((v): v is string => typeof v === "string");
      ctx.params.push(...ids);
      return ids.length === 0 ? "0" : `_id IN (${ids.map(() => "?").join(", ")})`;
    }
    case "$gt":
    case "$gte":
    case "$lt":
    case "$lte":
      if (typeof arg !== "string") return "0";
      ctx.params.push(arg);
      return `_id ${op === "$gt" ? ">" : op === "$gte" ? ">=" : op === "$lt" ? "<" : "<="} ?`;
    case "$exists":
      return arg ? "1" : "0";
    case "$contains":
      return _containsSql("_id", arg as string, ctx);
    default:
      throw new InvalidQueryError(`unsupported operator ${op}`);
  }
}

/** A field condition as operator/operand pairs (a plain value is `$eq`). */
function _ops(cond: unknown): Array<[string, unknown]> {
  return isOperatorObject(cond) ? Object.entries(cond) : [["$eq", cond]];
}

/** Whether an operator can only match a present field. */
function _impliesPresence(op: string, arg: unknown): boolean {
  switch (op) {
    case "$eq":
      return arg !== null && arg !== undefined;
    case "$in":
      return (arg as unknown[]).length > 0 && !(arg as unknown[]).some((v) => v === null || v === undefined);
    case "$exists":
      return arg === true;
    case "$ne":
      return false;
    default:
      return true;
  }
}

function _and(terms: string[]): string {
  if (terms.length === 0) return "1";
  return terms.length === 1 ? terms[0]! : `(${terms.join(" AND ")})`;
}

const _ASCII = /^[\x00-\x7f]*$/;
