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
const MAX_PAGE_SIZE = 1000;

import { InvalidQueryError } from "../ports.ts";
export { InvalidQueryError, isInvalidQueryError } from "../ports.ts";

const FIELD_OPS = new Set(["$eq", "$ne", "$in", "$gt", "$gte", "$lt", "$lte", "$exists", "$contains"]);
const UPDATE_OPS = new Set(["$set", "$unset", "$inc", "$setOnInsert"]);

/** Throws InvalidQueryError unless `filter` only uses the port's operators with well-typed operands. */
export function validateFilter(filter: Filter): void {
  if (!_isPlainObject(filter)) throw new InvalidQueryError("filter must be an object");
  for (const key in filter) {
    const cond = filter[key];
    if (key === "$or") {
      if (!Array.isArray(cond) || cond.length === 0) throw new InvalidQueryError("$or takes a non-empty array of filters");
      for (const sub of cond) validateFilter(sub as Filter);
      continue;
    }
    if (key.startsWith("$")) throw new InvalidQueryError(`unsupported top-level operator ${key}`);
    if (key === "" || (key.includes(".") && key.split(".").some((s) => s === ""))) throw new InvalidQueryError(`invalid field path "${key}"`);
    _validateCondition(key, cond);
  }
}

/** Throws InvalidQueryError unless `update` only uses the port's operators and leaves `_id` alone. */
export function validateUpdate(update: Update): void {
  if (!_isPlainObject(update)) throw new InvalidQueryError("update must be an object");
  for (const op in update) {
    const arg = (update as Record<string, unknown>)[op];
    if (!UPDATE_OPS.has(op)) throw new InvalidQueryError(`unsupported update operator ${op}`);
    if (arg === undefined) continue;
    if (op === "$unset") {
      if (!Array.isArray(arg) || arg.some((p) => typeof p !== "string")) throw new InvalidQueryError("$unset takes an array of paths");
      for (const p of arg as string[]) _validateUpdatePath(op, p);
      continue;
    }
    if (!_isPlainObject(arg)) throw new InvalidQueryError(`${op} takes an object of path → value`);
    for (const p in arg) {
      const v = arg[p];
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

/**
 * A filter compiled once into a predicate (paths split, `$in` sets built, `$contains` needles
 * lower-cased, range tests specialised per operator and operand type); validate the filter first.
 * Evaluating the predicate allocates no closures or regexes.
 */
export function compileFilter(filter: Filter): (doc: Doc) => boolean {
  const parts: Array<(doc: Doc) => boolean> = [];
  for (const key in filter) {
    const cond = filter[key];
    if (key === "$or") {
      parts.push(_anyOf((cond as Filter[]).map(compileFilter)));
      continue;
    }
    const test = _compileCondition(cond);
    if (key === "_id") {
      parts.push((d) => test(d._id));
      continue;
    }
    const get = compilePath(key);
    parts.push((d) => test(get(d)));
  }
  return _allOf(parts);
}

/**
 * Whether `doc` matches a filter made only of scalar equalities on plain field names (no operator,
 * no dotted path, no embedded document): `{ _id, rev: 3, revoked: false }`. The same answer as
 * `compileFilter(filter)(doc)`, without compiling or allocating: the fast path of point lookups.
 * Undefined when the filter has any other shape (validate and compile it then).
 */
export function matchesScalarEquality(doc: Doc, filter: Filter): boolean | undefined {
  if (!_isPlainObject(filter)) return undefined;
  let match = true;
  for (const key in filter) {
    const q = filter[key];
    if (q === undefined || (q !== null && typeof q === "object") || key === "" || key.charCodeAt(0) === 36 /* $ */ || key.includes(".")) return undefined;
    if (!match) continue; // the rest of the filter must still have this shape
    const v = (doc as Record<string, unknown>)[key];
    match = q === null ? v === undefined || v === null || (Array.isArray(v) && v.includes(null)) : v === q || (Array.isArray(v) && v.includes(q));
  }
  return match;
}

/** `getPath` with the path split once. */
export function compilePath(path: string): (doc: unknown) => unknown {
  if (!path.includes(".")) return (doc) => (doc as Record<string, unknown>)[path]; // documents are plain objects
  const segs = path.split(".");
  const numeric = segs.map((seg) => /^\d+$/.test(seg));
  const n = segs.length;
  return (doc) => {
    let cur: unknown = doc;
    for (let i = 0; i < n; i++) {
      const seg = segs[i]!;
      if (typeof cur !== "object" || cur === null) return undefined;
      if (!Array.isArray(cur)) {
        cur = (cur as Record<string, unknown>)[seg];
      } else if (numeric[i]) {
        cur = cur[Number(seg)];
      } else {
        cur = _collect(cur, seg);
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
  /** Orders two documents without allocating. */
  compareDocs(a: Doc, b: Doc): number;
  compareKeys(a: readonly unknown[], b: readonly unknown[]): number;
}

/** A normalized sort compiled once. */
export function compileSort(sort: readonly SortSpec[]): CompiledSort {
  const getters = sort.map((s) => (s.field === "_id" ? (d: unknown) => (d as Doc)._id : compilePath(s.field)));
  const dirs = sort.map((s) => s.direction);
  const n = getters.length;
  let compareDocs: (a: Doc, b: Doc) => number;
  if (n === 1 && sort[0]!.field === "_id") {
    // [_id] alone (_id strings are unique)
    const dir = dirs[0]!;
    compareDocs = (a, b) => (a._id < b._id ? -dir : a._id > b._id ? dir : 0);
  } else if (n === 2 && sort[1]!.field === "_id") {
    // [field, _id]: the common shape, specialised
    const get = getters[0]!;
    const dir0 = dirs[0]!;
    const dir1 = dirs[1]!;
    compareDocs = (a, b) => {
      const c = compareValues(get(a), get(b));
      if (c !== 0) return dir0 === 1 ? c : -c;
      return a._id < b._id ? -dir1 : a._id > b._id ? dir1 : 0;
    };
  } else {
    compareDocs = (a, b) => {
      for (let i = 0; i < n; i++) {
        const g = getters[i]!;
        const c = compareValues(g(a), g(b));
        if (c !== 0) return dirs[i] === 1 ? c : -c;
      }
      return 0;
    };
  }
  return {
    sort,
    keyOf: (doc) => getters.map((g) => g(doc) ?? null),
    compareDocToKey(doc, key) {
      for (let i = 0; i < n; i++) {
        const c = compareValues(getters[i]!(doc), key[i]); // missing and null sort equal
        if (c !== 0) return dirs[i] === 1 ? c : -c;
      }
      return 0;
    },
    compareDocs,
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
        cur = _collect(cur, seg);
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
  const ta = typeof a;
  if (ta === typeof b && (ta === "string" || ta === "number")) return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
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

/** Throws InvalidQueryError unless `doc` is an object with a string `_id` (what `insert` accepts). */
export function assertDocument(doc: Doc): void {
  if (typeof doc !== "object" || doc === null || typeof doc._id !== "string") throw new InvalidQueryError("a document needs a string _id");
}

/** The document an upsert inserts: {equality fields of the filter, $setOnInsert, $set, $inc, minus $unset}, `_id` first. */
export function upsertDocument(filter: Filter, update: Update): Doc {
  const built = applyUpdate(applyUpdate({ _id: "" }, { $set: equalityFields(filter) }, false), update, true);
  if (built._id === "") built._id = newId();
  if (typeof built._id !== "string") throw new InvalidQueryError("a document needs a string _id");
  const { _id, ...rest } = built;
  return { _id, ...rest };
}

/** Throws InvalidQueryError unless `claim`'s owner and lease length are usable. */
export function validateLease(owner: string, leaseMs: number): void {
  if (typeof owner !== "string" || owner === "") throw new InvalidQueryError("a lease owner must be a non-empty string");
  if (typeof leaseMs !== "number" || !Number.isFinite(leaseMs) || leaseMs <= 0) throw new InvalidQueryError("leaseMs must be a positive number");
}

/** Throws InvalidQueryError unless an index spec names at least one field. */
export function validateIndexFields(fields: unknown): void {
  if (!Array.isArray(fields) || fields.length === 0) throw new InvalidQueryError("an index needs at least one field");
}

/**
 * Applies a validated update to `doc` copy-on-write (`inserting`: an upsert's insert, so
 * `$setOnInsert` applies). Never mutates `doc`: the result is a new top-level object; the objects
 * along each updated path are copied, every other field and sub-document is shared with `doc`, and
 * values taken from the update are copied (the caller keeps its own). So the cost is the size of
 * the top level plus what changed, not the size of the document. Throws InvalidQueryError for
 * `$inc` on a non-number or a path through a non-object.
 */
export function applyUpdate(doc: Doc, update: Update, inserting: boolean): Doc {
  const out: Doc = { ...doc };
  const owned = new Set<object>([out]);
  if (inserting) for (const [p, v] of Object.entries(update.$setOnInsert ?? {})) if (v !== undefined) _setPath(out, p, cloneJson(v), owned);
  for (const [p, v] of Object.entries(update.$set ?? {})) if (v !== undefined) _setPath(out, p, cloneJson(v), owned);
  for (const [p, n] of Object.entries(update.$inc ?? {})) {
    const cur = getPath(out, p);
    if (cur === undefined) _setPath(out, p, n, owned);
    else if (typeof cur === "number") _setPath(out, p, cur + n, owned);
    else throw new InvalidQueryError(`$inc target ${p} is not a number`);
  }
  for (const p of update.$unset ?? []) _unsetPath(out, p, owned);
  return out;
}

/** The unique-index key of a document, or null when a sparse index does not cover it. */
export function uniqueKey(doc: Doc, fields: readonly string[], sparse: boolean): string | null {
  if (fields.length === 1) {
    const v = getPath(doc, fields[0]!);
    if (v === undefined && sparse) return null;
    return _keyOfOne(v ?? null);
  }
  const values: unknown[] = [];
  for (const f of fields) {
    const v = getPath(doc, f);
    if (v === undefined && sparse) return null;
    values.push(v ?? null);
  }
  return JSON.stringify(values);
}

/**
 * The key `uniqueKey` gives a document whose index fields hold `values` (a lookup by equality). A
 * single string value not starting with "[" is its own key — the document's own string, nothing
 * allocated or kept twice (an index of 100 000 sign records holds no copy of their keys) —; every
 * other value list is its JSON array text, which always starts with "[", so the two never meet.
 */
export function uniqueKeyOf(values: readonly unknown[]): string {
  return values.length === 1 ? _keyOfOne(values[0]) : JSON.stringify(values);
}

function _keyOfOne(v: unknown): string {
  return typeof v === "string" && v.charCodeAt(0) !== 0x5b /* "[" */ ? v : JSON.stringify([v]);
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

/**
 * A deep copy with JSON's meaning (documents are JSON values by contract): `undefined`, function and
 * symbol fields are dropped (null in arrays), non-finite numbers become null, `toJSON` is honoured.
 * Plain objects, arrays and primitives are copied directly (several times faster than a JSON round
 * trip); anything else (class instances, a `__proto__` key, BigInt…) takes the JSON round trip.
 */
export function cloneJson<T>(value: T): T {
  if (value === undefined) return value;
  const out = _copyJson(value, "");
  return (out === _EXOTIC ? JSON.parse(JSON.stringify(value)) : out) as T;
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
  const bad = path.includes(".") ? path.split(".").some((s) => s === "" || s.startsWith("$")) : path === "" || path.charCodeAt(0) === 36; /* $ */
  if (bad) throw new InvalidQueryError(`invalid path "${path}" in ${op}`);
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
      case "$in":
        tests.push(_compileIn(arg as unknown[]));
        break;
      case "$gt":
      case "$gte":
      case "$lt":
      case "$lte":
        tests.push(_compileRange(op, arg as number | string));
        break;
      case "$exists":
        tests.push(arg ? (v) => v !== undefined : (v) => v === undefined);
        break;
      case "$contains":
        tests.push(_compileContains(arg as string));
        break;
      default:
        throw new InvalidQueryError(`unsupported operator ${op}`);
    }
  }
  // Each operator is tested on its own: on an array, different elements may satisfy different operators.
  return _allOf(tests);
}

/** A conjunction of predicates, evaluated in order without allocating. */
function _allOf<T>(tests: Array<(x: T) => boolean>): (x: T) => boolean {
  const n = tests.length;
  if (n === 0) return () => true;
  if (n === 1) return tests[0]!;
  if (n === 2) {
    const [t0, t1] = tests as [(x: T) => boolean, (x: T) => boolean];
    return (x) => t0(x) && t1(x);
  }
  return (x) => {
    for (let i = 0; i < n; i++) if (!tests[i]!(x)) return false;
    return true;
  };
}

/** A disjunction of predicates, evaluated in order without allocating. */
function _anyOf<T>(tests: Array<(x: T) => boolean>): (x: T) => boolean {
  const n = tests.length;
  if (n === 1) return tests[0]!;
  return (x) => {
    for (let i = 0; i < n; i++) if (tests[i]!(x)) return true;
    return false;
  };
}

/** Equality with `q`: the value itself or (for an array) any element; null also matches missing. */
function _compileEquals(q: unknown): (value: unknown) => boolean {
  if (q === null) return (v) => v === undefined || v === null || (Array.isArray(v) && v.includes(null));
  if (typeof q !== "object") return (v) => v === q || (Array.isArray(v) && v.includes(q));
  return (v) => {
    if (_deepEqual(v, q)) return true;
    if (!Array.isArray(v)) return false;
    for (let i = 0; i < v.length; i++) if (_deepEqual(v[i], q)) return true;
    return false;
  };
}

/**
 * `$in`: equality with any listed value. Scalars go in a Set (SameValueZero, as `===`/`includes`
 * for the JSON values documents hold), null is a flag, embedded documents and arrays are compared deeply.
 */
function _compileIn(list: readonly unknown[]): (value: unknown) => boolean {
  const scalars = new Set<unknown>();
  const objects: unknown[] = [];
  let hasNull = false;
  for (const q of list) {
    if (q === null) hasNull = true;
    else if (typeof q !== "object") scalars.add(q);
    else objects.push(q);
  }
  const nObjects = objects.length;
  const one = (e: unknown): boolean => {
    if (typeof e !== "object") return scalars.has(e);
    if (e === null) return hasNull;
    for (let j = 0; j < nObjects; j++) if (_deepEqual(e, objects[j])) return true;
    return false;
  };
  return (v) => {
    if (v === undefined) return hasNull || scalars.has(undefined);
    if (one(v)) return true;
    if (!Array.isArray(v)) return false;
    for (let i = 0; i < v.length; i++) if (one(v[i])) return true;
    return false;
  };
}

/**
 * A range operator against a number or a string operand (type brackets: numbers with numbers,
 * strings with strings), matching the value or any array element. `$gte`/`$lte` are "not below" /
 * "not above", as `compareValues(v, q) >= 0` / `<= 0` (the same for a NaN operand).
 */
function _compileRange(op: "$gt" | "$gte" | "$lt" | "$lte", q: number | string): (value: unknown) => boolean {
  const type = typeof q;
  let one: (v: unknown) => boolean;
  switch (op) {
    case "$gt":
      one = (v) => typeof v === type && (v as number) > (q as number);
      break;
    case "$gte":
      one = (v) => typeof v === type && !((v as number) < (q as number));
      break;
    case "$lt":
      one = (v) => typeof v === type && (v as number) < (q as number);
      break;
    default:
      one = (v) => typeof v === type && !((v as number) > (q as number));
  }
  return (v) => {
    if (one(v)) return true;
    if (!Array.isArray(v)) return false;
    for (let i = 0; i < v.length; i++) if (one(v[i])) return true;
    return false;
  };
}

/** `$contains`: case-insensitive substring of a string value or of any string element. */
function _compileContains(needle: string): (value: unknown) => boolean {
  const lower = needle.toLowerCase();
  return (v) => {
    if (typeof v === "string") return v.toLowerCase().includes(lower);
    if (!Array.isArray(v)) return false;
    for (let i = 0; i < v.length; i++) {
      const e = v[i];
      if (typeof e === "string" && e.toLowerCase().includes(lower)) return true;
    }
    return false;
  };
}

/** Through an array (non-index segment): the elements' values of `seg`, or undefined when none has one. */
function _collect(arr: readonly unknown[], seg: string): unknown[] | undefined {
  let vals: unknown[] | undefined;
  for (let i = 0; i < arr.length; i++) {
    const e = arr[i];
    if (!_isPlainObject(e)) continue;
    const v = e[seg];
    if (v === undefined) continue;
    (vals ??= []).push(v);
  }
  return vals;
}

function _deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!_deepEqual(a[i], bb[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  // Embedded documents are equal only with the same fields in the same order (MongoDB's rule).
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i] || !_deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
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

/** Sets a dotted path, creating intermediate objects and copying shared ones (not in `owned`) before changing them. */
function _setPath(obj: Record<string, unknown>, path: string, value: unknown, owned: Set<object>): void {
  if (!path.includes(".")) {
    obj[path] = value;
    return;
  }
  const segs = path.split(".");
  let cur: Record<string, unknown> | unknown[] = obj;
  for (let i = 0; i < segs.length - 1; i++) {
    const seg = segs[i]!;
    let next: unknown = Array.isArray(cur) ? cur[Number(seg)] : cur[seg];
    if (next === undefined || next === null) {
      next = {};
      owned.add(next as object);
      _assign(cur, seg, next, path);
    } else if (!_isPlainObject(next) && !Array.isArray(next)) {
      throw new InvalidQueryError(`cannot create field in ${path}: ${segs.slice(0, i + 1).join(".")} is not an object`);
    } else if (!owned.has(next as object)) {
      next = Array.isArray(next) ? next.slice() : { ...(next as Record<string, unknown>) };
      owned.add(next as object);
      _assign(cur, seg, next, path);
    }
    cur = next as Record<string, unknown> | unknown[];
  }
  _assign(cur, segs[segs.length - 1]!, value, path);
}

function _unsetPath(obj: Record<string, unknown>, path: string, owned: Set<object>): void {
  if (!path.includes(".")) {
    delete obj[path];
    return;
  }
  const segs = path.split(".");
  const last = segs[segs.length - 1]!;
  // Find the parent first: nothing is copied when there is nothing to remove.
  let probe: unknown = obj;
  for (let i = 0; i < segs.length - 1; i++) {
    probe = Array.isArray(probe) ? probe[Number(segs[i])] : _isPlainObject(probe) ? probe[segs[i]!] : undefined;
    if (probe === undefined || probe === null) return;
  }
  if (Array.isArray(probe) ? !(/^\d+$/.test(last) && Number(last) < probe.length) : !_isPlainObject(probe) || !(last in probe)) return;
  let cur: Record<string, unknown> | unknown[] = obj;
  for (let i = 0; i < segs.length - 1; i++) {
    const seg = segs[i]!;
    let next = (Array.isArray(cur) ? cur[Number(seg)] : cur[seg]) as Record<string, unknown> | unknown[];
    if (!owned.has(next)) {
      next = Array.isArray(next) ? next.slice() : { ...next };
      owned.add(next);
      if (Array.isArray(cur)) cur[Number(seg)] = next;
      else cur[seg] = next;
    }
    cur = next;
  }
  if (Array.isArray(cur)) cur[Number(last)] = null; // MongoDB leaves null
  else delete cur[last];
}

/** Marks a value `_copyJson` leaves to the JSON round trip. */
const _EXOTIC: unique symbol = Symbol("exotic");

/** `cloneJson` for plain JSON values; `_EXOTIC` when the value needs JSON.stringify's full rules. */
function _copyJson(v: unknown, key: string): unknown {
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      return Number.isFinite(v) ? v + 0 : null; // + 0: -0 becomes 0, as through JSON
    case "object": {
      if (v === null) return null;
      if (Array.isArray(v)) {
        const n = v.length;
        const out = new Array<unknown>(n);
        for (let i = 0; i < n; i++) {
          const e = v[i];
          if (e === undefined || typeof e === "function" || typeof e === "symbol") {
            out[i] = null;
            continue;
          }
          const c = _copyJson(e, String(i));
          if (c === _EXOTIC) return _EXOTIC;
          out[i] = c;
        }
        return out;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        const toJSON = (v as { toJSON?: unknown }).toJSON;
        if (typeof toJSON !== "function") return _EXOTIC;
        const r: unknown = toJSON.call(v, key); // called once, as JSON.stringify does
        return typeof r === "object" && r !== null ? _EXOTIC : _copyJson(r, key);
      }
      if (typeof (v as { toJSON?: unknown }).toJSON === "function") return _EXOTIC;
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v)) {
        const e = (v as Record<string, unknown>)[k];
        if (e === undefined || typeof e === "function" || typeof e === "symbol") continue;
        if (k === "__proto__") return _EXOTIC;
        const c = _copyJson(e, k);
        if (c === _EXOTIC) return _EXOTIC;
        out[k] = c;
      }
      return out;
    }
    default:
      return _EXOTIC; // bigint (JSON.stringify throws); undefined, functions and symbols at the top
  }
}
