/**
 * Filters: validation against the port's operators, and in-memory matching with MongoDB's semantics
 * (restricted to what the port offers), compiled once into a predicate.
 *
 * - Equality with `null` matches null and missing fields; `$ne: null` matches present, non-null fields.
 * - An array field matches an equality / `$in` / range / `$contains` condition when the array itself
 *   or any element matches (no nested-array flattening).
 * - Range operators compare numbers with numbers and strings with strings only (type brackets).
 */
import type { Doc, Filter } from "../../ports.ts";
import { InvalidQueryError } from "../../ports.ts";
import { compilePath, deepEqual, isOperatorObject, isPlainObject } from "./values.ts";

const FIELD_OPS = new Set(["$eq", "$ne", "$in", "$gt", "$gte", "$lt", "$lte", "$exists", "$contains"]);

/** Throws InvalidQueryError unless `filter` only uses the port's operators with well-typed operands. */
export function validateFilter(filter: Filter): void {
  if (!isPlainObject(filter)) throw new InvalidQueryError("filter must be an object");
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

// --- Internal helpers ---

function _validateCondition(field: string, cond: unknown): void {
  if (cond === undefined) throw new InvalidQueryError(`filter value for ${field} is undefined`);
  if (!isPlainObject(cond)) return;
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

function _compileCondition(cond: unknown): (value: unknown) => boolean {
  if (!isOperatorObject(cond)) return _compileEquals(cond);
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
    if (deepEqual(v, q)) return true;
    if (!Array.isArray(v)) return false;
    for (let i = 0; i < v.length; i++) if (deepEqual(v[i], q)) return true;
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
    for (let j = 0; j < nObjects; j++) if (deepEqual(e, objects[j])) return true;
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
