/**
 * A request-log record (docs/dashboard.md "Request log"): what a merchant needs to find a request
 * support asked about — method, route template, path, status, public code, request ID, duration,
 * time, host, the credential's id — and never a body, a key, a password or a query value outside
 * SAFE_QUERY_PARAMS (their names stay, their values become "[redacted]"). Records are stored in
 * groups (./group.ts) and read back as entries.
 *
 * The request path keeps a `PendingRequest` (plain fields copied from the request context); the
 * flush redacts it here and stores it in a group, so redaction costs the background worker, not the
 * request.
 */
import type { Doc } from "../../adapters/ports.ts";

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

/** One request as the log gives it back. `_id` is the request ID. */
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

/** The query with every value outside SAFE_QUERY_PARAMS (or not a short plain token) redacted. */
export function safeQuery(search: string): string | null {
  if (search.length <= 1) return null;
  // Clients repeat their query strings: the redacted form is remembered (a bounded map, cleared when full).
  const known = _redactedQueries.get(search);
  if (known !== undefined) return known;
  if (_redactedQueries.size >= MAX_REMEMBERED_QUERIES) _redactedQueries.clear();
  const redacted = _redactQuery(search);
  _redactedQueries.set(search, redacted);
  return redacted;
}

function _redactQuery(search: string): string | null {
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
const MAX_REMEMBERED_QUERIES = 1_000;
const _redactedQueries = new Map<string, string | null>();
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
