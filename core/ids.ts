/**
 * Identifiers the gateway makes for requests (core/request-id.ts) and operations (the operationId
 * of a sign, a transmission, a Stored invoice): UUID version 7 (RFC 9562), whose first 48 bits are
 * the epoch milliseconds it was made at. Ids made one after another sort one after another, so an
 * index on them grows at its right edge and a commit's inserts share its last pages; a random UUID
 * (version 4) puts each insert on a page of its own, which the commit then writes whole
 * (docs/bench.md "Round 9"). Invoice ids stay version 4 (docs/decisions.md "Operation ids").
 */
import { v7 } from "uuid";

/** A new identifier, ordered by the time it was made. */
export function newId(): string {
  return v7();
}
