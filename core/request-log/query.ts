/**
 * Reading the request log (stored in groups, ./group.ts): a request by its ID within a business
 * (another business's request ID reads as not found, never as someone else's record), a business's
 * requests newest first with filters and a cursor, and a request ID across every business for the
 * operators. Every read walks one index of the groups.
 *
 * A page merges groups: groups of several flushes (or several processes) may overlap in time, so
 * groups are read newest end first, and a request is given out only once every group that could
 * hold a newer one has been read (all unread groups end no later than the last one read).
 */
import { InvalidQueryError, type Collection, type DocumentStore, type Filter } from "../../adapters/ports.ts";
import { requestIdTime } from "../request-id.ts";
import type { RequestLogEntry } from "./entry.ts";
import { GROUP_SPAN_MS, entriesOf, findInGroup, openRequestLogGroups, type RequestLogGroup } from "./group.ts";

export interface RequestLogFilters {
  /** An exact status ("404") or a class ("4xx"). */
  status?: string;
  /** A public error code (GW_…), or "none" for requests answered without one. */
  code?: string;
  /** A route template as stored (`/invoices/:id`), or "unmatched" for requests no route matched. */
  route?: string;
}

export interface RequestLogPage {
  items: RequestLogEntry[];
  nextCursor: string | null;
}

export interface RequestLog {
  /** The business's request with this ID, or null (none, expired, another business's, or not a gateway request ID). */
  find(businessId: string, requestId: string): Promise<RequestLogEntry | null>;
  /** A request by ID whatever its business (operators only). */
  findAny(requestId: string): Promise<RequestLogEntry | null>;
  /** The business's requests, newest first. Throws InvalidQueryError on a cursor no page gave. */
  list(businessId: string, filters: RequestLogFilters, page: { limit: number; cursor?: string | null }): Promise<RequestLogPage>;
}

/** A status filter: "200"…"599" or "1xx"…"5xx". */
export const STATUS_FILTER = /^[1-5](\d\d|xx)$/;

/**
 * How long after its start a request can still be found by its ID: a request that took longer is
 * in the log (and in the lists) but its ID search does not reach it (docs/dashboard.md).
 */
const LONGEST_FOUND_REQUEST_MS = 15 * 60_000;

export function createRequestLog(store: DocumentStore): RequestLog {
  const groups = openRequestLogGroups(store);
  return {
    find: (businessId, requestId) => _findById(groups, { businessId }, requestId),
    findAny: (requestId) => _findById(groups, {}, requestId),
    list: (businessId, filters, page) => _list(groups, _groupFilter(businessId, filters), page.limit, page.cursor ?? null),
  };
}

// --- Internal helpers ---

type _Groups = Collection<RequestLogGroup>;

/** The store filter of a list's groups. */
function _groupFilter(businessId: string, f: RequestLogFilters): Filter {
  const filter: Filter = { businessId };
  if (f.status !== undefined) {
    // An exact status narrows by its class first (the index), then by itself.
    filter.statusClass = `${f.status[0]}xx`;
    if (!f.status.endsWith("xx")) filter.status = Number(f.status);
  }
  if (f.code !== undefined) filter.code = f.code === "none" ? null : f.code;
  if (f.route !== undefined) filter.route = f.route === "unmatched" ? null : f.route;
  return filter;
}

/**
 * Groups read by the first query of a page or a search; a page's further queries read as many as its
 * missing requests need at the groups' size so far (at least twice as many), a search's twice as
 * many; never more than the most.
 */
const FIRST_READ = 2;
const MOST_READ = 256;
/** Slack for the two clocks a record's times come from (the ID's wall clock, the end's monotonic one). */
const CLOCK_SLACK_MS = 1_000;
const NEWEST_GROUP_FIRST = [{ field: "to", direction: -1 as const }];
const OLDEST_GROUP_FIRST = [{ field: "to", direction: 1 as const }];

/** The groups that were open when the request started (began no later, ended no earlier), oldest end first. */
async function _findById(groups: _Groups, scope: Filter, requestId: string): Promise<RequestLogEntry | null> {
  const started = requestIdTime(requestId);
  if (started === null) return null;
  const filter: Filter = {
    ...scope,
    to: { $gte: started - CLOCK_SLACK_MS, $lte: started + LONGEST_FOUND_REQUEST_MS + GROUP_SPAN_MS },
    startMin: { $lte: started },
  };
  let cursor: string | null = null;
  let limit = FIRST_READ;
  do {
    const page = await groups.find(filter, { sort: OLDEST_GROUP_FIRST, limit, cursor });
    for (const g of page.items) {
      const hit = findInGroup(g, requestId);
      if (hit !== null) return hit;
    }
    cursor = page.nextCursor;
    limit = Math.min(limit * 2, MOST_READ);
  } while (cursor !== null);
  return null;
}

interface _Position {
  at: number;
  id: string;
}

async function _list(groups: _Groups, base: Filter, limit: number, cursor: string | null): Promise<RequestLogPage> {
  const after = cursor === null ? null : _decodeCursor(cursor);
  // A group holding a request before the cursor began no later than it, and ended within a span after.
  const scoped: Filter = after === null ? base : { ...base, from: { $lte: after.at } };
  const out: RequestLogEntry[] = [];
  let waiting: RequestLogEntry[] = [];
  /** Every group not read yet ends no later than this. */
  let upper = after === null ? Infinity : after.at + GROUP_SPAN_MS;
  /** The groups read that end exactly at `upper` (the next query, `to <= upper`, gives them first again). */
  const readAtUpper = new Set<string>();
  let read = FIRST_READ;
  let groupsRead = 0;
  let requestsRead = 0;
  let exhausted = false;
  for (;;) {
    waiting.sort(_newestFirst);
    let given = 0;
    while (given < waiting.length && out.length <= limit && (exhausted || waiting[given]!.at > upper)) out.push(waiting[given++]!);
    waiting = waiting.slice(given);
    if (out.length > limit || exhausted) break;
    const want = read + readAtUpper.size;
    const page = await groups.find(upper === Infinity ? scoped : { ...scoped, to: { $lte: upper } }, { sort: NEWEST_GROUP_FIRST, limit: want });
    for (const g of page.items) {
      if (readAtUpper.has(g._id)) continue;
      const entries = entriesOf(g);
      groupsRead += 1;
      requestsRead += entries.length;
      for (const e of entries) if (after === null || _isBefore(e, after)) waiting.push(e);
    }
    exhausted = page.nextCursor === null;
    if (!exhausted) {
      upper = page.items[page.items.length - 1]!.to;
      readAtUpper.clear();
      for (const g of page.items) if (g.to === upper) readAtUpper.add(g._id);
    }
    const missing = limit + 1 - out.length - waiting.length;
    const perGroup = requestsRead / Math.max(1, groupsRead);
    read = Math.min(Math.max(read * 2, Math.ceil(missing / Math.max(1, perGroup)) + 1), MOST_READ);
  }
  const more = out.length > limit;
  if (more) out.length = limit;
  return { items: out, nextCursor: more ? _encodeCursor(out[out.length - 1]!) : null };
}

/** Newest end first; the later request ID first at the same millisecond (IDs grow with time). */
function _newestFirst(a: RequestLogEntry, b: RequestLogEntry): number {
  return b.at - a.at || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);
}

function _isBefore(e: RequestLogEntry, p: _Position): boolean {
  return e.at < p.at || (e.at === p.at && e._id < p.id);
}

function _encodeCursor(e: RequestLogEntry): string {
  return Buffer.from(`${e.at} ${e._id}`).toString("base64url");
}

function _decodeCursor(cursor: string): _Position {
  const text = Buffer.from(cursor, "base64url").toString();
  const space = text.indexOf(" ");
  const at = Number(text.slice(0, space));
  const id = text.slice(space + 1);
  if (space <= 0 || !Number.isFinite(at) || id.length === 0 || id.length > 200) throw new InvalidQueryError("the cursor is not one this list gave");
  return { at, id };
}
