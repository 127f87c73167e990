/**
 * Reading the request log: a request by its ID within a business (another business's request ID
 * reads as not found, never as someone else's record), a business's requests newest first with
 * filters and a cursor, and a request ID across every business for the operators. Every read is
 * one indexed query of ./entry.ts's collection.
 */
import type { DocumentStore, Filter } from "../../adapters/ports.ts";
import { openRequestLogCollection, type RequestLogEntry } from "./entry.ts";

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
  /** The business's request with this ID, or null (none, expired, or another business's). */
  find(businessId: string, requestId: string): Promise<RequestLogEntry | null>;
  /** A request by ID whatever its business (operators only). */
  findAny(requestId: string): Promise<RequestLogEntry | null>;
  /** The business's requests, newest first. Throws InvalidQueryError on a cursor no page gave. */
  list(businessId: string, filters: RequestLogFilters, page: { limit: number; cursor?: string | null }): Promise<RequestLogPage>;
}

/** A status filter: "200"…"599" or "1xx"…"5xx". */
export const STATUS_FILTER = /^[1-5](\d\d|xx)$/;

export function createRequestLog(store: DocumentStore): RequestLog {
  const entries = openRequestLogCollection(store);
  return {
    find: (businessId, requestId) => entries.findOne({ _id: requestId, businessId }),
    findAny: (requestId) => entries.get(requestId),
    list: (businessId, filters, page) => entries.find(listFilter(businessId, filters), { sort: NEWEST_FIRST, limit: page.limit, cursor: page.cursor ?? null }),
  };
}

/** The store filter of a list (exported for the query-plan test and the bench). */
export function listFilter(businessId: string, f: RequestLogFilters): Filter {
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

// --- Internal helpers ---

const NEWEST_FIRST = [{ field: "at", direction: -1 as const }];
