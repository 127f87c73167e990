/**
 * Cursor paging of the onboarding lists: oldest first by createdAt, then _id; the cursor is the
 * last item's pair, base64url-encoded JSON. A cursor that is not one of ours is a 422 on `cursor`.
 */
import { gwError } from "../../core/errors/gateway-error.ts";
import type { Collection, Doc, Filter } from "../../adapters/ports.ts";
import { DEFAULT_LIST_LIMIT, type ListInput } from "./schemas.ts";

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** One page of `filter`'s documents, oldest first (createdAt, then _id), from `input.cursor` on. */
export async function pageByCreatedAt<T extends Doc & { createdAt: string }>(coll: Collection<T>, filter: Filter, input: ListInput): Promise<Page<T>> {
  const limit = input.limit ?? DEFAULT_LIST_LIMIT;
  if (input.cursor !== undefined) {
    const [t, id] = _decodeCursor(input.cursor);
    filter = { ...filter, $or: [{ createdAt: { $gt: t } }, { createdAt: t, _id: { $gt: id } }] };
  }
  const page = await coll.find(filter, { sort: [{ field: "createdAt", direction: 1 }], limit: limit + 1 });
  const items = page.items.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: page.items.length > limit && last ? _encodeCursor(last.createdAt, last._id) : null };
}

// --- Internal helpers ---

function _encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id]), "utf8").toString("base64url");
}

function _decodeCursor(cursor: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && typeof v[1] === "string" && v[0].length <= 40 && v[1].length <= 600)
      return [v[0], v[1]];
  } catch {
    // fall through
  }
  throw gwError("GW_REQUEST_VALIDATION_FAILED", {
    detail: "The request has invalid values; see errors.",
    violations: [{ location: "query", field: "cursor", code: "FORMAT", detail: "not a cursor returned as nextCursor" }],
  });
}
