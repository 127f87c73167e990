/** Paging: opaque cursors tied to a normalized sort, page size and skip. */
import type { SortSpec } from "../../ports.ts";
import { InvalidQueryError } from "../../ports.ts";
import { sortSignature } from "./sort.ts";
import { isPlainObject } from "./values.ts";

/** The largest page `find` returns; also the default page size. */
const MAX_PAGE_SIZE = 1000;

/** Opaque cursor: base64url JSON of the sort signature and the last item's sort values (incl. `_id`). */
export function encodeCursor(sort: readonly SortSpec[], values: readonly unknown[]): string {
  return Buffer.from(JSON.stringify({ s: sortSignature(sort), v: values }), "utf8").toString("base64url");
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
  if (!isPlainObject(parsed) || !Array.isArray(p.v) || p.v.length !== sort.length) throw new InvalidQueryError("invalid cursor");
  if (p.s !== sortSignature(sort)) throw new InvalidQueryError("cursor does not belong to this sort order");
  if (typeof p.v[p.v.length - 1] !== "string") throw new InvalidQueryError("invalid cursor"); // the last key is always _id
  return p.v;
}

/** Page size: 1..MAX_PAGE_SIZE, MAX_PAGE_SIZE when absent or not positive. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit) || limit <= 0) return MAX_PAGE_SIZE;
  return Math.min(Math.floor(limit), MAX_PAGE_SIZE) || 1;
}

/** Rows to skip: 0 when absent; throws InvalidQueryError unless a non-negative integer. */
export function pageSkip(skip: number | undefined): number {
  if (skip === undefined) return 0;
  if (!Number.isInteger(skip) || skip < 0) throw new InvalidQueryError("skip must be a non-negative integer");
  return skip;
}
