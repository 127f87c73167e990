/**
 * The redaction every log event passes through: field names whose values never reach a log, and
 * the sanitizing of free text (URLs lose their credentials and query; passwords, tokens, Bearer and
 * Basic credentials and our key formats are masked). Results are remembered for the names and the
 * short strings that repeat on every request.
 */
import type { LogFields } from "./types.ts";

/** What a secret value is replaced with, and its JSON. */
export const REDACTED = "[redacted]";
export const REDACTED_JSON = JSON.stringify(REDACTED);
/** How many field names the name caches keep (names are mostly code constants). */
export const NAME_CACHE_SIZE = 4096;

/** Field names whose values never reach a log: any name containing one of these parts… */
const SECRET_PARTS = [
  "apikey", "api-key", "api_key", "authorization", "password", "passwd", "secret", "token", "idempotency",
  "privatekey", "private_key", "cookie", "signature", "cryptomaterial", "certificate", "credentials",
];
/** …or exactly one of these names. */
const SECRET_NAMES = new Set(["key", "body", "rawbody", "payload", "query", "search", "querystring", "credential", "credentials"]);

export function isSecretFieldName(name: string): boolean {
  let secret = _secretNames.get(name);
  if (secret === undefined) {
    const n = name.toLowerCase();
    secret = SECRET_NAMES.has(n) || SECRET_PARTS.some((p) => n.includes(p));
    // Field names are mostly code constants; the bound only matters for objects keyed by data.
    if (_secretNames.size >= NAME_CACHE_SIZE) _secretNames.clear();
    _secretNames.set(name, secret);
  }
  return secret;
}

/** Returns a copy of `fields` that is safe to log. */
export function redact(fields: LogFields): LogFields {
  return redactNested(fields, 0) as LogFields;
}

/**
 * Removes credentials and query from URLs (absolute, and paths starting with "/"), masks
 * connection-string passwords, `password=…`-style pairs, Bearer/Basic credentials and our key
 * formats in free text.
 */
export function sanitizeText(text: string): string {
  // Every pattern below needs one of these; most logged strings (ids, hosts) have none.
  if (!MAY_HOLD_SECRET.test(text)) return text;
  // Short strings that do (route ids "GET /x/:name", codes "GW_…") repeat on every request: the
  // result of the pure function below is remembered for them.
  if (text.length > SANITIZED_CACHE_MAX_LENGTH) return _sanitize(text);
  let clean = _sanitized.get(text);
  if (clean === undefined) {
    clean = _sanitize(text);
    if (_sanitized.size >= SANITIZED_CACHE_SIZE) _sanitized.clear();
    _sanitized.set(text, clean);
  }
  return clean;
}

/** A safe description of an error for logs: name and sanitized message, never the raw object. */
export function describeError(e: unknown): { name: string; message: string } {
  if (e instanceof Error) return { name: e.name, message: sanitizeText(e.message).slice(0, 500) };
  return { name: typeof e, message: "non-error thrown" };
}

/**
 * A redacted copy of a value found at `depth` in a record: secret fields replaced, strings
 * sanitized, errors described, nesting cut at a fixed depth.
 */
export function redactNested(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== "object") {
    return typeof value === "string" ? sanitizeText(value) : value;
  }
  if (depth >= MAX_DEPTH) return "[truncated]";
  if (value instanceof Error) return describeError(value);
  if (Array.isArray(value)) return value.map((v) => redactNested(v, depth + 1));
  if (value instanceof Headers) return redactNested(Object.fromEntries(value.entries()), depth);
  const out: LogFields = {};
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    const v = (value as LogFields)[k];
    out[k] = isSecretFieldName(k) ? REDACTED : typeof v === "string" ? sanitizeText(v) : v === null || typeof v !== "object" ? v : redactNested(v, depth + 1);
  }
  return out;
}

// --- Internal helpers ---

const _secretNames = new Map<string, boolean>();
const MAX_DEPTH = 5;

const SANITIZED_CACHE_SIZE = 2048;
const SANITIZED_CACHE_MAX_LENGTH = 256;
const _sanitized = new Map<string, string>();

function _sanitize(text: string): string {
  return text
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi, "$1[redacted]@")
    .replace(/(https?:\/\/[^\s?#]*)\?[^\s#]*/gi, "$1?[redacted]")
    .replace(/(^|[\s"'(=])(\/[^\s?#"'()]*)\?[^\s#"')]+/g, "$1$2?[redacted]")
    .replace(/\b(Bearer|Basic)\s+[^\s"',;]+/gi, "$1 [redacted]")
    .replace(SECRET_PAIR, "$1$2[redacted]")
    .replace(/\b(gw|sk|admin|whsec)_[A-Za-z0-9_]{6,}\b/g, "[redacted-key]");
}

const MAY_HOLD_SECRET = /[:=?@_]|bearer|basic/i;

/** `password=x`, `"apiSecret": "x"`, `token: x`: a secret-looking name, then = or :, then the value. */
const SECRET_PAIR =
  /\b([A-Za-z0-9_-]*(?:password|passwd|pwd|secret|token|api[_-]?key|authorization|signature|credentials|idempotency[_-]?key|private[_-]?key))(["']?\s*[:=]\s*["']?)(?!\[redacted|(?:Bearer|Basic) )[^\s"'&,;)}]+/gi;
