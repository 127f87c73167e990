/**
 * Shared document-store helpers: filter/update validation, in-memory matching with MongoDB's
 * semantics (for the operators of the port), MongoDB's cross-type value order, sort normalisation,
 * opaque cursors, update application, unique-index keys and time-ordered ids.
 *
 * The unstorage store runs every query through these functions; the MongoDB store uses the
 * validation, sort, cursor, limit and id helpers so both implementations accept and reject the
 * same inputs.
 *
 * Semantics (MongoDB's, restricted to what the port offers):
 * - Equality with `null` matches null and missing fields; `$ne: null` matches present, non-null fields.
 * - An array field matches an equality / `$in` / range / `$contains` condition when the array itself
 *   or any element matches (no nested-array flattening).
 * - Range operators compare numbers with numbers and strings with strings only (type brackets).
 * - Sort order across types: null/missing < numbers < strings < objects < arrays < booleans; null
 *   and missing sort equal. Strings compare by UTF-16 code units (MongoDB: UTF-8 bytes; they differ
 *   only for characters above U+FFFF against U+E000–U+FFFF).
 * - Unique keys treat a missing field as null (a non-sparse unique index admits one such document);
 *   arrays are indexed as whole values, not per element (no multikey indexes).
 */
import { randomBytes } from "node:crypto";
import type { Doc, Filter, SortSpec, Update } from "../ports.ts";

/** The largest page `find` returns; also the default page size. */
export const MAX_PAGE_SIZE = 1000;

import { InvalidQueryError } from "../ports.ts";
export { InvalidQueryError, isInvalidQueryError } from "../ports.ts";

const FIELD_OPS = new Set(["$eq", "$ne", "$in", "$gt", "$gte", "$lt", "$lte", "$exists", "$contains"]);
const UPDATE_OPS = new Set(["$set", "$unset", "$inc", "$setOnInsert"]);

/** Throws InvalidQueryError unless `filter` only uses the port's operators with well-typed operands. */
export function validateFilter(filter: Filter): void {
  if (!_isPlainObject(filter)) throw new InvalidQueryError("filter must be an object");
  for (const [key, cond] of Object.entries(filter)) {
    if (key === "$or") {
      if (!Array.isArray(cond) || cond.length === 0) throw new InvalidQueryError("$or takes a non-empty array of filters");
      for (const sub of cond) validateFilter(sub as Filter);
      continue;
    }
    if (key.startsWith("$")) throw new InvalidQueryError(`unsupported top-level operator ${key}`);
    if (key === "" || key.split(".").some((s) => s === "")) throw new InvalidQueryError(`invalid field path "${key}"`);
    _validateCondition(key, cond);
  }
}

/** Throws InvalidQueryError unless `update` only uses the port's operators and leaves `_id` alone. */
export function validateUpdate(update: Update): void {
  if (!_isPlainObject(update)) throw new InvalidQueryError("update must be an object");
  for (const [op, arg] of Object.entries(update)) {
    if (!UPDATE_OPS.has(op)) throw new InvalidQueryError(`unsupported update operator ${op}`);
    if (arg === undefined) continue;
    if (op === "$unset") {
      if (!Array.isArray(arg) || arg.some((p) => typeof p !== "string")) throw new InvalidQueryError("$unset takes an array of paths");
      for (const p of arg as string[]) _validateUpdatePath(op, p);
      continue;
    }
    if (!_isPlainObject(arg)) throw new InvalidQueryError(`${op} takes an object of path → value`);
    for (const [p, v] of Object.entries(arg)) {
      if (op === "$setOnInsert" && p === "_id") {
        if (typeof v !== "string") throw new InvalidQueryError("_id must be a string");
        continue;
      }
      _validateUpdatePath(op, p);
      if (op === "$inc" && (typeof v !== "number" || !Number.isFinite(v))) throw new InvalidQueryError(`$inc ${p} takes a finite number`);
    }
  }
}

/** True when `doc` matches `filter` (validate the filter first; compile it when testing many documents). */
export function matchesFilter(doc: Doc, filter: Filter): boolean {
  return compileFilter(filter)(doc);
}

/** A filter compiled once into a predicate (paths split, needles prepared); validate the filter first. */
export function compileFilter(filter: Filter): (doc: Doc) => boolean {
  const parts: Array<(doc: Doc) => boolean> = [];
  for (const key in filter) {
    const cond = filter[key];
    if (key === "$or") {
      const subs = (cond as Filter[]).map(compileFilter);
      parts.push((d) => subs.some((f) => f(d)));
      continue;
    }
    const get = compilePath(key);
    const test = _compileCondition(cond);
    parts.push((d) => test(get(d)));
  }
  if (parts.length === 0) return () => true;
  if (parts.length === 1) return parts[0]!;
  return (d) => {
    for (const p of parts) if (!p(d)) return false;
    return true;
  };
}

/** `getPath` with the path split once. */
export function compilePath(path: string): (doc: unknown) => unknown {
  if (!path.includes(".")) return (doc) => (doc as Record<string, unknown>)[path]; // documents are plain objects
  const segs = path.split(".");
  const numeric = segs.map((seg) => /^\d+$/.test(seg));
  return (doc) => {
    let cur: unknown = doc;
    for (let i = 0; i < segs.length; i++) {
      const seg = segs[i]!;
      if (typeof cur !== "object" || cur === null) return undefined;
      if (!Array.isArray(cur)) {
        cur = (cur as Record<string, unknown>)[seg];
      } else if (numeric[i]) {
        cur = cur[Number(seg)];
      } else {
        const vals = cur.map((e) => (_isPlainObject(e) ? e[seg] : undefined)).filter((v) => v !== undefined);
        cur = vals.length > 0 ? vals : undefined;
      }
      if (cur === undefined) return undefined;
    }
    return cur;
  };
}

export interface CompiledSort {
  sort: readonly SortSpec[];
  /** The document's sort values (missing → null). */
  keyOf(doc: Doc): unknown[];
  /** Orders a document against sort values without allocating. */
  compareDocToKey(doc: Doc, key: readonly unknown[]): number;
  compareKeys(a: readonly unknown[], b: readonly unknown[]): number;
}

/** A normalized sort compiled once. */
export function compileSort(sort: readonly SortSpec[]): CompiledSort {
  const getters = sort.map((s) => (s.field === "_id" ? (d: unknown) => (d as Doc)._id : compilePath(s.field)));
  const dirs = sort.map((s) => s.direction);
  return {
    sort,
    keyOf: (doc) => getters.map((g) => g(doc) ?? null),
    compareDocToKey(doc, key) {
      for (let i = 0; i < getters.length; i++) {
        const c = compareValues(getters[i]!(doc) ?? null, key[i]);
        if (c !== 0) return dirs[i] === 1 ? c : -c;
      }
      return 0;
    },
    compareKeys: (a, b) => compareSortValues(a, b, sort),
  };
}

/** Reads a (possibly dotted) path; through an array, collects the elements' values. */
export function getPath(doc: unknown, path: string): unknown {
  if (!path.includes(".")) return _isPlainObject(doc) ? doc[path] : undefined;
  let cur: unknown = doc;
  for (const seg of path.split(".")) {
    if (Array.isArray(cur)) {
      if (/^\d+$/.test(seg)) {
        cur = cur[Number(seg)];
      } else {
        const vals = cur.map((e) => (_isPlainObject(e) ? e[seg] : undefined)).filter((v) => v !== undefined);
        cur = vals.length > 0 ? vals : undefined;
      }
    } else if (_isPlainObject(cur)) {
      cur = cur[seg];
    } else {
      return undefined;
    }
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** MongoDB's cross-type order (see the module comment). */
export function compareValues(a: unknown, b: unknown): number {
  const ra = _typeRank(a);
  const rb = _typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 1:
      return 0;
    case 2:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 3:
      return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
    case 4: {
      const ea = Object.entries(a as object);
      const eb = Object.entries(b as object);
      for (let i = 0; i < Math.min(ea.length, eb.length); i++) {
        const [ka, va] = ea[i]!;
        const [kb, vb] = eb[i]!;
        const c = compareValues(va, vb);
        if (c !== 0) return c;
        if (ka !== kb) return ka < kb ? -1 : 1;
      }
      return Math.sign(ea.length - eb.length);
    }
    case 5: {
      const aa = a as unknown[];
      const ab = b as unknown[];
      for (let i = 0; i < Math.min(aa.length, ab.length); i++) {
        const c = compareValues(aa[i], ab[i]);
        if (c !== 0) return c;
      }
      return Math.sign(aa.length - ab.length);
    }
    default:
      return a === b ? 0 : a ? 1 : -1;
  }
}

/** The sort to apply: the caller's keys, then `_id` ascending unless `_id` is already a key. */
export function normalizeSort(sort: readonly SortSpec[] | undefined): SortSpec[] {
  const out: SortSpec[] = [];
  const seen = new Set<string>();
  for (const s of sort ?? []) {
    if (typeof s?.field !== "string" || s.field === "" || (s.direction !== 1 && s.direction !== -1)) {
      throw new InvalidQueryError("sort takes { field, direction: 1 | -1 } entries");
    }
    if (seen.has(s.field)) continue;
    seen.add(s.field);
    out.push({ field: s.field, direction: s.direction });
    if (s.field === "_id") break; // _id is unique: later keys can never decide
  }
  if (!seen.has("_id")) out.push({ field: "_id", direction: 1 });
  return out;
}

/** The document's values for a normalized sort (missing → null, as MongoDB sorts them). */
export function sortValues(doc: Doc, sort: readonly SortSpec[]): unknown[] {
  return sort.map((s) => getPath(doc, s.field) ?? null);
}

/** Orders two value lists by a normalized sort. */
export function compareSortValues(a: readonly unknown[], b: readonly unknown[], sort: readonly SortSpec[]): number {
  for (let i = 0; i < sort.length; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return sort[i]!.direction === 1 ? c : -c;
  }
  return 0;
}

/** Opaque cursor: base64url JSON of the sort signature and the last item's sort values (incl. `_id`). */
export function encodeCursor(sort: readonly SortSpec[], values: readonly unknown[]): string {
  return Buffer.from(JSON.stringify({ s: _sortSignature(sort), v: values }), "utf8").toString("base64url");
}

/** Decodes a cursor made by `encodeCursor` for the same sort; throws InvalidQueryError otherwise. */
export function decodeCursor(cursor: string, sort: readonly SortSpec[]): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new InvalidQueryError("invalid cursor");
  }
  const p = parsed as { s?: unknown; v?: unknown };
  if (!_isPlainObject(parsed) || !Array.isArray(p.v) || p.v.length !== sort.length) throw new InvalidQueryError("invalid cursor");
  if (p.s !== _sortSignature(sort)) throw new InvalidQueryError("cursor does not belong to this sort order");
  if (typeof p.v[p.v.length - 1] !== "string") throw new InvalidQueryError("invalid cursor"); // the last key is always _id
  return p.v;
}

/** Page size: 1..MAX_PAGE_SIZE, MAX_PAGE_SIZE when absent or not positive. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit) || limit <= 0) return MAX_PAGE_SIZE;
  return Math.min(Math.floor(limit), MAX_PAGE_SIZE) || 1;
}

export function pageSkip(skip: number | undefined): number {
  if (skip === undefined) return 0;
  if (!Number.isInteger(skip) || skip < 0) throw new InvalidQueryError("skip must be a non-negative integer");
  return skip;
}

/** The fields an upsert copies from its filter: top-level equalities and `$eq`s (not `$or`). */
export function equalityFields(filter: Filter): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, cond] of Object.entries(filter)) {
    if (key === "$or") continue;
    if (!_isOperatorObject(cond)) out[key] = cond;
    else if (Object.keys(cond).length === 1 && "$eq" in cond) out[key] = cond.$eq;
  }
  return out;
}

/**
 * Applies a validated update to a copy of `doc` (`inserting`: an upsert's insert, so `$setOnInsert`
 * applies). Never mutates `doc`. Throws InvalidQueryError for `$inc` on a non-number or a path
 * through a non-object.
 */
export function applyUpdate(doc: Doc, update: Update, inserting: boolean): Doc {
  const out = cloneJson(doc);
  if (inserting) for (const [p, v] of Object.entries(update.$setOnInsert ?? {})) if (v !== undefined) setPath(out, p, cloneJson(v));
  for (const [p, v] of Object.entries(update.$set ?? {})) if (v !== undefined) setPath(out, p, cloneJson(v));
  for (const [p, n] of Object.entries(update.$inc ?? {})) {
    const cur = getPath(out, p);
    if (cur === undefined) setPath(out, p, n);
    else if (typeof cur === "number") setPath(out, p, cur + n);
    else throw new InvalidQueryError(`$inc target ${p} is not a number`);
  }
  for (const p of update.$unset ?? []) _unsetPath(out, p);
  return out;
}

/** Sets a dotted path, creating intermediate objects. */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const segs = path.split(".");
  let cur: Record<string, unknown> | unknown[] = obj;
  for (let i = 0; i < segs.length - 1; i++) {
    const seg = segs[i]!;
    let next: unknown = Array.isArray(cur) ? cur[Number(seg)] : cur[seg];
    if (next === undefined || next === null) {
      next = {};
      _assign(cur, seg, next, path);
    } else if (!_isPlainObject(next) && !Array.isArray(next)) {
      throw new InvalidQueryError(`cannot create field in ${path}: ${segs.slice(0, i + 1).join(".")} is not an object`);
    }
    cur = next as Record<string, unknown> | unknown[];
  }
  _assign(cur, segs[segs.length - 1]!, value, path);
}

/** The unique-index key of a document, or null when a sparse index does not cover it. */
export function uniqueKey(doc: Doc, fields: readonly string[], sparse: boolean): string | null {
  const values: unknown[] = [];
  for (const f of fields) {
    const v = getPath(doc, f);
    if (v === undefined && sparse) return null;
    values.push(v ?? null);
  }
  return JSON.stringify(values);
}

/** MongoDB's default index name (`a_1_b.c_1`), used by both stores in DuplicateKeyError.index. */
export function indexName(fields: readonly string[]): string {
  return fields.map((f) => `${f}_1`).join("_");
}

/** A 28-hex-character id ordered by creation time (48-bit ms timestamp, counter, random). */
export function newId(): string {
  _idCounter = (_idCounter + 1) & 0xffffff;
  return Date.now().toString(16).padStart(12, "0") + _idCounter.toString(16).padStart(6, "0") + randomBytes(5).toString("hex");
}

/** Deep copy through JSON (documents are JSON values by contract; drops `undefined` fields). */
export function cloneJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** True for `{ $op: … }` objects (every key an operator). */
export function isOperatorObject(v: unknown): v is Record<string, unknown> {
  return _isOperatorObject(v);
}

// --- Internal helpers ---

let _idCounter = randomBytes(3).readUIntBE(0, 3);

function _isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function _isOperatorObject(v: unknown): v is Record<string, unknown> {
  if (!_isPlainObject(v)) return false;
  const keys = Object.keys(v);
  return keys.length > 0 && keys[0]!.startsWith("$");
}

function _validateCondition(field: string, cond: unknown): void {
  if (cond === undefined) throw new InvalidQueryError(`filter value for ${field} is undefined`);
  if (!_isPlainObject(cond)) return;
  const keys = Object.keys(cond);
  const ops = keys.filter((k) => k.startsWith("$"));
  if (ops.length === 0) return; // equality on an embedded document
  if (ops.length !== keys.length) throw new InvalidQueryError(`filter for ${field} mixes operators and fields`);
  for (const op of ops) {
    const arg = cond[op];
    if (!FIELD_OPS.has(op)) throw new InvalidQueryError(`unsupported operator ${op} on ${field}`);
    if (arg === undefined) throw new InvalidQueryError(`${op} on ${field} is undefined`);
    if (op === "$in" && !Array.isArray(arg)) throw new InvalidQueryError(`$in on ${field} takes an array`);
    if ((op === "$gt" || op === "$gte" || op === "$lt" || op === "$lte") && typeof arg !== "number" && typeof arg !== "string") {
      throw new InvalidQueryError(`${op} on ${field} takes a number or a string`);
    }
    if (op === "$exists" && typeof arg !== "boolean") throw new InvalidQueryError(`$exists on ${field} takes a boolean`);
    if (op === "$contains" && typeof arg !== "string") throw new InvalidQueryError(`$contains on ${field} takes a string`);
  }
}

function _validateUpdatePath(op: string, path: string): void {
  if (path === "" || path.split(".").some((s) => s === "" || s.startsWith("$"))) throw new InvalidQueryError(`invalid path "${path}" in ${op}`);
  if (path === "_id" || path.startsWith("_id.")) throw new InvalidQueryError(`${op} cannot change _id`);
}

function _compileCondition(cond: unknown): (value: unknown) => boolean {
  if (!_isOperatorObject(cond)) return _compileEquals(cond);
  const tests: Array<(value: unknown) => boolean> = [];
  for (const op in cond) {
    const arg = cond[op];
    switch (op) {
      case "$eq":
        tests.push(_compileEquals(arg));
        break;
      case "$ne": {
        const eq = _compileEquals(arg);
        tests.push((v) => !eq(v));
        break;
      }
      case "$in": {
        const eqs = (arg as unknown[]).map(_compileEquals);
        tests.push((v) => eqs.some((eq) => eq(v)));
        break;
      }
      case "$gt":
        tests.push((v) => _range(v, arg, (c) => c > 0));
        break;
      case "$gte":
        tests.push((v) => _range(v, arg, (c) => c >= 0));
        break;
      case "$lt":
        tests.push((v) => _range(v, arg, (c) => c < 0));
        break;
      case "$lte":
        tests.push((v) => _range(v, arg, (c) => c <= 0));
        break;
      case "$exists":
        tests.push((v) => (v !== undefined) === arg);
        break;
      case "$contains": {
        const needle = (arg as string).toLowerCase();
        const hit = (v: unknown): boolean => typeof v === "string" && v.toLowerCase().includes(needle);
        tests.push((v) => hit(v) || (Array.isArray(v) && v.some(hit)));
        break;
      }
      default:
        throw new InvalidQueryError(`unsupported operator ${op}`);
    }
  }
  if (tests.length === 1) return tests[0]!;
  return (v) => tests.every((t) => t(v));
}

function _compileEquals(q: unknown): (value: unknown) => boolean {
  if (q === null) return (v) => v === undefined || v === null || (Array.isArray(v) && v.includes(null));
  if (typeof q !== "object") return (v) => v === q || (Array.isArray(v) && v.includes(q));
  return (v) => _equals(v, q);
}

function _equals(value: unknown, q: unknown): boolean {
  if (q === null) return value === undefined || value === null || (Array.isArray(value) && value.includes(null));
  if (_deepEqual(value, q)) return true;
  return Array.isArray(value) && value.some((e) => _deepEqual(e, q));
}

function _range(value: unknown, q: unknown, ok: (c: number) => boolean): boolean {
  const one = (v: unknown): boolean => typeof v === typeof q && (typeof v === "number" || typeof v === "string") && ok(compareValues(v, q));
  return one(value) || (Array.isArray(value) && value.some(one));
}

function _deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => _deepEqual(x, bb[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  // Embedded documents are equal only with the same fields in the same order (MongoDB's rule).
  return ka.every((k, i) => k === kb[i] && _deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function _typeRank(v: unknown): number {
  if (v === null || v === undefined) return 1;
  switch (typeof v) {
    case "number":
      return 2;
    case "string":
      return 3;
    case "boolean":
      return 8;
    default:
      return Array.isArray(v) ? 5 : 4;
  }
}

function _sortSignature(sort: readonly SortSpec[]): string {
  return sort.map((s) => `${s.field}:${s.direction}`).join(",");
}

function _assign(target: Record<string, unknown> | unknown[], seg: string, value: unknown, path: string): void {
  if (Array.isArray(target)) {
    if (!/^\d+$/.test(seg)) throw new InvalidQueryError(`cannot set ${path}: ${seg} is not an array index`);
    target[Number(seg)] = value;
  } else {
    target[seg] = value;
  }
}

function _unsetPath(obj: Record<string, unknown>, path: string): void {
  const segs = path.split(".");
  let cur: unknown = obj;
  for (let i = 0; i < segs.length - 1; i++) {
    cur = Array.isArray(cur) ? cur[Number(segs[i])] : _isPlainObject(cur) ? cur[segs[i]!] : undefined;
    if (cur === undefined || cur === null) return;
  }
  const last = segs[segs.length - 1]!;
  if (Array.isArray(cur)) {
    if (/^\d+$/.test(last) && Number(last) < cur.length) cur[Number(last)] = null; // MongoDB leaves null
  } else if (_isPlainObject(cur)) {
    delete cur[last];
  }
}
