/** Sorts: normalisation (the caller's keys, then `_id`), a document's sort values, a cursor's signature. */
import type { Doc, SortSpec } from "../../ports.ts";
import { InvalidQueryError } from "../../ports.ts";
import { getPath } from "./values.ts";

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

/** The text a cursor carries to tie it to its sort (`field:direction,…`). */
export function sortSignature(sort: readonly SortSpec[]): string {
  return sort.map((s) => `${s.field}:${s.direction}`).join(",");
}
