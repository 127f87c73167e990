/**
 * The request log's stored record (docs/dashboard.md "Request log"): one document per API request
 * of a business, kept `retentionDays` by the store's TTL. What it holds is what a merchant needs to
 * find a request support asked about — method, route template, path, status, public code, request
 * ID, duration, time, host, the credential's id — and never a body, a key, a password or a query
 * value outside SAFE_QUERY_PARAMS (their names stay, their values become "[redacted]").
 *
 * The request path keeps a `PendingRequest` (plain fields copied from the request context); the
 * flush turns it into an entry here, so redaction costs the background worker, not the request.
 */
import type { CollectionSpec, Doc, DocumentStore } from "../../adapters/ports.ts";

export const REQUEST_LOG_COLLECTION = "request_log";

/**
 * The list's newest-first order with each filter narrowed by an index: (businessId, at) for the
 * plain list, one (businessId, <filter>, at) per filter (an exact status goes through its class).
 * A request ID lookup is the `_id` key. Each index costs every write (docs/bench.md "Request log").
 */
export const REQUEST_LOG_SPEC: CollectionSpec = {
  indexes: [
    { fields: ["businessId", "at"] },
    { fields: ["businessId", "statusClass", "at"] },
    { fields: ["businessId", "code", "at"] },
    { fields: ["businessId", "route", "at"] },
  ],
  ttlField: "expiresAt",
};

/**
 * Query parameters whose values are kept: the list filters and paging of the public routes, whose
 * values are enumerations, dates or numbers. Every other parameter (search text, references,
 * account numbers, cursors, anything unknown) keeps its name only.
 */
export const SAFE_QUERY_PARAMS: ReadonlySet<string> = new Set([
  "limit",
  "page",
  "status",
  "direction",
  "createdFrom",
  "createdTo",
  "startDate",
  "endDate",
  "accountType",
  "currency",
  "sort",
]);

/** What the request path keeps of a request (copied from its context, nothing derived). */
export interface PendingRequest {
  requestId: string;
  businessId: string;
  /** Epoch ms the response was ready. */
  at: number;
  method: string;
  /** The route's template (`/invoices/:id`), null when no route matched. */
  route: string | null;
  /** Wire path, no query. */
  path: string;
  /** The query string with its "?", or "" (redacted at flush). */
  search: string;
  status: number;
  code: string | null;
  durationMs: number;
  host: string;
  credentialId: string | null;
}

/** One stored request. `_id` is the request ID. */
export interface RequestLogEntry extends Doc {
  businessId: string;
  at: number;
  method: string;
  route: string | null;
  path: string;
  /** "?limit=20&search=[redacted]", or null without a query. */
  query: string | null;
  status: number;
  /** "2xx", "4xx", "5xx"… (the dashboard's status filter). */
  statusClass: string;
  code: string | null;
  durationMs: number;
  host: string;
  /** The credential's non-secret id (never the key). */
  credentialId: string | null;
  expiresAt: number;
}

export function openRequestLogCollection(store: DocumentStore) {
  return store.collection<RequestLogEntry>(REQUEST_LOG_COLLECTION, REQUEST_LOG_SPEC);
}

/** The stored entry of a pending request, redacted. */
export function toEntry(p: PendingRequest, retentionMs: number): RequestLogEntry {
  return {
    _id: p.requestId,
    businessId: p.businessId,
    at: Math.round(p.at),
    method: p.method,
    route: p.route,
    path: safePath(p.path),
    query: safeQuery(p.search),
    status: p.status,
    statusClass: `${Math.floor(p.status / 100)}xx`,
    code: p.code,
    durationMs: Math.round(p.durationMs * 1000) / 1000,
    host: p.host,
    credentialId: p.credentialId,
    expiresAt: Math.round(p.at) + retentionMs,
  };
}

/** The query with every value outside SAFE_QUERY_PARAMS (or not a short plain token) redacted. */
export function safeQuery(search: string): string | null {
  if (search.length <= 1) return null;
  const parts: string[] = [];
  for (const pair of search.slice(1).split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const name = _decode(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? "" : _decode(pair.slice(eq + 1));
    if (name === null || !PARAM_NAME.test(name)) {
      parts.push(REDACTED);
      continue;
    }
    const keep = SAFE_QUERY_PARAMS.has(name) && value !== null && SAFE_VALUE.test(value);
    parts.push(`${name}=${keep ? value : REDACTED}`);
    if (parts.length >= MAX_PARAMS) break;
  }
  return parts.length === 0 ? null : `?${parts.join("&")}`;
}

/** The path, capped, with any segment shaped like a credential redacted. */
export function safePath(path: string): string {
  const capped = path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}…` : path;
  if (!SECRET_SHAPED.test(capped)) return capped;
  return capped
    .split("/")
    .map((s) => (SECRET_SEGMENT.test(_decode(s) ?? s) ? REDACTED : s))
    .join("/");
}

// --- Internal helpers ---

const REDACTED = "[redacted]";
const MAX_PATH = 512;
const MAX_PARAMS = 20;
const PARAM_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,39}$/;
const SAFE_VALUE = /^[A-Za-z0-9._:+-]{0,64}$/;
/** Key prefixes of the gateway's credentials (API keys, bearer secrets, operator keys, webhook secrets). */
const SECRET_SEGMENT = /^(gw|sk|pk|admin|whsec)_/i;
const SECRET_SHAPED = /(^|\/)(gw|sk|pk|admin|whsec)(_|%5f)/i;

function _decode(s: string): string | null {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return null;
  }
}
