/** Sorts: normalisation (the caller's keys, then `_id`), sort values and comparators compiled once. */
import type { Doc, SortSpec } from "../../ports.ts";
import { InvalidQueryError } from "../../ports.ts";
import { compareValues, compilePath, getPath } from "./values.ts";

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

/** The text a cursor carries to tie it to its sort (`field:direction,…`). */
export function sortSignature(sort: readonly SortSpec[]): string {
  return sort.map((s) => `${s.field}:${s.direction}`).join(",");
}
