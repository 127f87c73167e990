/**
 * The gateway's request IDs: UUID version 7 (RFC 9562), a UUID whose first 48 bits are the epoch
 * milliseconds it was made at, the request's start. The time in the ID is what lets the request log
 * find a request by its ID without an index per request (core/request-log/group.ts): the log keeps
 * a business's requests in groups found by time. They are made as operation ids are (core/ids.ts).
 */
import { newId } from "./ids.ts";

/** A new request ID (made when the request arrives). */
export const newRequestId: () => string = newId;

/** The epoch ms a version-7 UUID was made at, or null for anything else (another version, not a UUID). */
export function requestIdTime(id: string): number | null {
  // The layout of a version-7 UUID (the flush reads every logged ID: no regular expression).
  if (id.length !== 36 || id[8] !== "-" || id[13] !== "-" || id[14] !== "7" || id[18] !== "-" || id[23] !== "-") return null;
  const ms = Number(`0x${id.slice(0, 8)}${id.slice(9, 13)}`);
  return Number.isNaN(ms) ? null : ms;
}
