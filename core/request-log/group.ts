/**
 * How the request log is stored (docs/dashboard.md "Request log", docs/decisions.md "Request log:
 * groups, not a row per request"): one document per **group** — the requests of one flush that
 * share a business, a status, a code, a route and a second of their end time — with the rest of
 * each request as one line of space-separated fields in a text field (`rows`). A flush of 500 pings
 * is one document, not 500, so the log's write cost per request falls with traffic; one text
 * rather than arrays keeps the document a handful of JSON tokens for the engine to parse and index.
 * A filter of the dashboard (status, code, route, or two of them) names group fields, so it is one
 * indexed query of the groups whatever the mix.
 *
 * Finding a request by its ID needs no index per request: the ID is a UUIDv7 carrying its start
 * time (core/request-id.ts), and each group records the earliest start of its requests
 * (`startMin`), so only groups that were open at that time are read.
 */
import type { CollectionSpec, Doc, DocumentStore } from "../../adapters/ports.ts";
import { requestIdTime } from "../request-id.ts";
import { safePath, safeQuery, type PendingRequest, type RequestLogEntry } from "./entry.ts";

export const REQUEST_LOG_GROUPS = "request_log_groups";

/** A group's requests end within one such window (aligned to it), so `to - from < GROUP_SPAN_MS`. */
export const GROUP_SPAN_MS = 1_000;

/** One group: its requests' shared fields, its time bounds, and one line per request. */
export interface RequestLogGroup extends Doc {
  businessId: string;
  status: number;
  /** "2xx", "4xx"… (the dashboard's status filter). */
  statusClass: string;
  code: string | null;
  /** The route's template, null for requests no route matched. */
  route: string | null;
  /** Earliest and latest end time (epoch ms) of its requests. */
  from: number;
  to: number;
  /** Earliest start of its requests (from their IDs' time; their end time for an ID without one). */
  startMin: number;
  /** How many requests. */
  n: number;
  /**
   * One line per request, in the order they ended, each `id atMs durationUs method path query host
   * credentialId` separated by spaces: `atMs` the ms of its end into the group's second (`from`
   * rounded down to a second), `durationUs` whole µs, "" for no query or no credential. No field can
   * hold a space or a line break (`_append` says why): the text needs one JSON escape per line.
   */
  rows: string;
  expiresAt: number;
}

/**
 * The indexes (each one costs every group written, not every request): the business's groups by
 * end time (the list, a next page, a request ID), one per filter and one per pair of filters with
 * the route, and every business's groups by end time (the operators' request ID search). `from`,
 * `status` and `startMin` trail so a next page, an exact status and a request ID are checked in the
 * index, without reading a group.
 */
export const REQUEST_LOG_GROUPS_SPEC: CollectionSpec = {
  indexes: [
    { fields: ["businessId", "to", "from", "startMin"] },
    { fields: ["businessId", "statusClass", "to", "from", "status"] },
    { fields: ["businessId", "code", "to", "from"] },
    { fields: ["businessId", "route", "to", "from"] },
    { fields: ["businessId", "route", "statusClass", "to", "from", "status"] },
    { fields: ["businessId", "route", "code", "to", "from"] },
    { fields: ["to", "startMin"] },
  ],
  ttlField: "expiresAt",
};

export function openRequestLogGroups(store: DocumentStore) {
  return store.collection<RequestLogGroup>(REQUEST_LOG_GROUPS, REQUEST_LOG_GROUPS_SPEC);
}

/**
 * The groups of a flush's records, redacted, each holding at most `maxPerGroup` requests. A group's
 * `_id` is its first request's ID (unique: each request is in one group).
 */
export function groupRequests(pending: readonly PendingRequest[], retentionMs: number, maxPerGroup: number): RequestLogGroup[] {
  const open = new Map<string, _Building>();
  const done: RequestLogGroup[] = [];
  let last: _Building | null = null;
  for (const p of pending) {
    const at = Math.round(p.at);
    const second = Math.floor(at / GROUP_SPAN_MS);
    // Requests in a row are mostly of one kind: the previous request's group is checked first.
    let key: string | null = null;
    let b: _Building | undefined = last !== null && _sameKind(last, p, second) ? last : open.get((key = _kindKey(p, second)));
    if (b === undefined || b.lines.length >= maxPerGroup) {
      if (b !== undefined) done.push(_finish(b));
      b = { group: _newGroup(p, at, retentionMs), second, lines: [], earliestId: null };
      open.set(key ?? _kindKey(p, second), b);
    }
    _append(b, p, at, retentionMs);
    last = b;
  }
  for (const b of open.values()) done.push(_finish(b));
  return done;
}

/** A group's requests as entries, in the order they ended. */
export function entriesOf(g: RequestLogGroup): RequestLogEntry[] {
  if (typeof g.rows !== "string") return []; // not a group this version wrote
  return g.rows.split("\n").map((line) => _entry(g, line));
}

/** The group's request with this ID (a gateway request ID: no space, no line break), or null. */
export function findInGroup(g: RequestLogGroup, requestId: string): RequestLogEntry | null {
  if (typeof g.rows !== "string") return null;
  let start = 0;
  if (!g.rows.startsWith(`${requestId} `)) {
    const line = g.rows.indexOf(`\n${requestId} `);
    if (line < 0) return null;
    start = line + 1;
  }
  const end = g.rows.indexOf("\n", start);
  return _entry(g, g.rows.slice(start, end < 0 ? undefined : end));
}

// --- Internal helpers ---

/** A group being filled: its lines are joined once, when it is complete. */
interface _Building {
  group: RequestLogGroup;
  /** Its second (epoch ms / GROUP_SPAN_MS). */
  second: number;
  lines: string[];
  /** The smallest UUIDv7 among its IDs (UUIDv7 text sorts by time): the earliest start. */
  earliestId: string | null;
}

function _kindKey(p: PendingRequest, second: number): string {
  return `${p.businessId}\n${p.status}\n${p.code ?? ""}\n${p.route ?? ""}\n${second}`;
}

function _sameKind(b: _Building, p: PendingRequest, second: number): boolean {
  const g = b.group;
  return b.second === second && g.status === p.status && g.route === p.route && g.code === p.code && g.businessId === p.businessId;
}

function _finish(b: _Building): RequestLogGroup {
  const g = b.group;
  g.n = b.lines.length;
  g.rows = b.lines.join("\n");
  const started = b.earliestId === null ? null : requestIdTime(b.earliestId);
  if (started !== null && started < g.startMin) g.startMin = started;
  return g;
}

function _newGroup(p: PendingRequest, at: number, retentionMs: number): RequestLogGroup {
  return {
    _id: p.requestId,
    businessId: p.businessId,
    status: p.status,
    statusClass: `${Math.floor(p.status / 100)}xx`,
    code: p.code,
    route: p.route,
    from: at,
    to: at,
    startMin: at,
    n: 0,
    rows: "",
    expiresAt: at + retentionMs,
  };
}

/**
 * Adds a request, redacted (its path and query through ./entry.ts's rules). Its end time is written
 * as ms into the group's second, its duration in whole µs: small integers, quick to write. The ID (a
 * UUID), the numbers, the redacted query, the method (an HTTP token), the host (an approved domain)
 * and the credential id cannot hold a space or a line break; nor can a URL's path, which is
 * percent-encoded regardless.
 */
function _append(b: _Building, p: PendingRequest, at: number, retentionMs: number): void {
  const offset = at - b.second * GROUP_SPAN_MS;
  b.lines.push(`${p.requestId} ${offset} ${Math.round(p.durationMs * 1000)} ${p.method} ${_field(safePath(p.path))} ${safeQuery(p.search) ?? ""} ${p.host} ${p.credentialId ?? ""}`);
  const g = b.group;
  if (at < g.from) g.from = at;
  if (at > g.to) {
    g.to = at;
    g.expiresAt = at + retentionMs;
  }
  const id = p.requestId;
  if (id.length === 36 && id.charCodeAt(14) === 55 /* "7" */ && (b.earliestId === null || id < b.earliestId)) b.earliestId = id;
}

function _entry(g: RequestLogGroup, line: string): RequestLogEntry {
  const f = line.split(" ");
  const at = Math.floor(g.from / GROUP_SPAN_MS) * GROUP_SPAN_MS + Number(f[1]);
  return {
    _id: f[0]!,
    businessId: g.businessId,
    at,
    method: f[3]!,
    route: g.route,
    path: f[4]!,
    query: f[5] || null,
    status: g.status,
    statusClass: g.statusClass,
    code: g.code,
    durationMs: Number(f[2]) / 1000,
    host: f[6]!,
    credentialId: f[7] || null,
    expiresAt: at + (g.expiresAt - g.to),
  };
}

/** A path as it goes into a line: a space or a line break (a URL's path has none) percent-encoded. */
function _field(value: string): string {
  return SEPARATORS.test(value) ? value.replace(SEPARATORS_ALL, (c) => encodeURIComponent(c)) : value;
}

const SEPARATORS = /[ \r\n]/;
const SEPARATORS_ALL = /[ \r\n]/g;
