/**
 * The direct-route relay rules: which requests may be relayed (method, a plain path under /api/v1/,
 * a body only where the method carries one), the log name of a relayed call, and which headers of a
 * regulator answer may be passed through to the caller (spec §4.2 rule 3).
 */
import type { RegulatorResponse, RelayRequest } from "../port.ts";
import { check } from "./options.ts";
import { JSON_TYPE, type RawResponse, type Wire } from "./transport.ts";

/** The request a relay sends; a request the rules forbid is a wiring error (RangeError). */
export function relayWire(request: RelayRequest): Wire {
  const { method, path } = request;
  check(RELAY_METHODS.has(method), `relay method must be one of ${[...RELAY_METHODS].join(", ")}`);
  check(
    typeof path === "string" && path.startsWith("/api/v1/") && path.length <= 2048 && RELAY_PATH_CHARS.test(path) && !RELAY_PATH_TRAVERSAL.test(path),
    "relay path must be a plain regulator path under /api/v1/ (encoded parameters, no query, no dot segments)",
  );
  const wire: Wire = { method, path: path + _queryOf(request) };
  if (request.body !== undefined) {
    check(method === "POST" || method === "PUT" || method === "PATCH", "relay body only on POST, PUT or PATCH");
    const b = request.body;
    wire.body = b instanceof Uint8Array || typeof b === "string" ? b : JSON.stringify(b);
    wire.contentType = request.contentType ?? JSON_TYPE;
  }
  return wire;
}

/** The `operation` log field of a relayed call: the caller's name when it is a safe token, else one derived from the path. */
export function relayOperationName(request: RelayRequest): string {
  return request.operation !== undefined && OPERATION_NAME.test(request.operation) ? request.operation : _operationOfPath(request.path);
}

/** A 2xx answer as passed through: its status, content type, body, and only the safe headers. */
export function passThroughResponse(raw: RawResponse): RegulatorResponse {
  const ct = raw.headers["content-type"];
  const contentType = typeof ct === "string" && ct !== "" ? ct : "application/octet-stream";
  const headers: Record<string, string> = {};
  for (const name of SAFE_RESPONSE_HEADERS) {
    const v = raw.headers[name];
    if (typeof v === "string" && !/[\r\n]/.test(v)) headers[name] = v;
  }
  return { status: raw.status, contentType, body: raw.body, headers };
}

// --- Internal helpers ---

const RELAY_METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);
const RELAY_PATH_CHARS = /^[A-Za-z0-9\-._~%!$&'()*+,;=:@/]+$/;
const RELAY_PATH_TRAVERSAL = /\/\/|\/\.{1,2}(\/|$)|%2e|%2f|%5c/i;
const OPERATION_NAME = /^[A-Za-z0-9._:-]{1,64}$/;
/** Response headers that may be passed through to the caller (spec §4.2 rule 3). */
const SAFE_RESPONSE_HEADERS = ["content-disposition", "content-language", "etag", "last-modified"] as const;

/** "?a=1&b=2" from the request's query, or "" when it has none (or an empty one). */
function _queryOf(request: RelayRequest): string {
  if (request.query === undefined) return "";
  const params = request.query instanceof URLSearchParams ? request.query : new URLSearchParams();
  if (!(request.query instanceof URLSearchParams)) {
    for (const [k, v] of Object.entries(request.query)) {
      if (v === undefined) continue;
      for (const item of Array.isArray(v) ? v : [v]) params.append(k, String(item));
    }
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

/** The log name of a direct route, from its path (the path itself is never logged: it holds IRNs). */
function _operationOfPath(path: string): string {
  const m = /^\/api\/v1\/invoice\/(resources|confirm|download|update|irn)\//.exec(path);
  if (!m) return "relay";
  return m[1] === "irn" ? "relay.irn-validate" : `relay.${m[1]}`;
}
