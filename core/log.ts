/**
 * Structured logging through consola, with one redaction layer every event passes through.
 * Events are `logger.event("gateway_request_completed", { ... })`: one JSON line each (format
 * "json") or consola's pretty output (format "pretty"). Nothing reaches a reporter unredacted:
 * keys, authorization headers, passwords, secrets, idempotency keys, bodies and query strings are
 * replaced, and URLs lose their credentials and query.
 */
import { createConsola, type ConsolaInstance, type ConsolaReporter, type LogObject } from "consola";

export type LogLevel = "silent" | "error" | "warn" | "info" | "debug";
export type LogFields = Record<string, unknown>;

export interface Logger {
  event(name: string, fields?: LogFields): void;
  warn(name: string, fields?: LogFields): void;
  error(name: string, fields?: LogFields): void;
  debug(name: string, fields?: LogFields): void;
  /** Waits until everything written so far has left the process. */
  flush(): Promise<void>;
}

export interface LoggerOptions {
  level?: LogLevel;
  format?: "json" | "pretty";
  /** Receives each redacted record (tests capture logs with it). Replaces stdout. */
  sink?: (record: LogFields) => void;
}

const LEVELS: Record<LogLevel, number> = { silent: -999, error: 0, warn: 1, info: 3, debug: 4 };

/** Field names whose values never reach a log: any name containing one of these parts… */
const SECRET_PARTS = [
  "apikey", "api-key", "api_key", "authorization", "password", "passwd", "secret", "token", "idempotency",
  "privatekey", "private_key", "cookie", "signature", "cryptomaterial", "certificate", "credentials",
];
/** …or exactly one of these names. */
const SECRET_NAMES = new Set(["key", "body", "rawbody", "payload", "query", "search", "querystring", "credential", "credentials"]);

export function isSecretFieldName(name: string): boolean {
  const n = name.toLowerCase();
  return SECRET_NAMES.has(n) || SECRET_PARTS.some((p) => n.includes(p));
}
const MAX_DEPTH = 5;
const REDACTED = "[redacted]";

export function createLogger(options: LoggerOptions = {}): Logger {
  const format = options.format ?? "json";
  const sink = options.sink;
  const jsonReporter: ConsolaReporter = {
    log(obj: LogObject) {
      const [name, fields] = obj.args as [string, LogFields | undefined];
      const record = { time: obj.date.toISOString(), level: obj.type, event: name, ...(fields ?? {}) };
      if (sink) sink(record);
      else process.stdout.write(JSON.stringify(record) + "\n");
    },
  };
  const consola: ConsolaInstance = createConsola({
    level: LEVELS[options.level ?? "info"],
    reporters: format === "json" || sink ? [jsonReporter] : undefined,
    fancy: false,
  });
  const threshold = LEVELS[options.level ?? "info"];
  const KIND_LEVEL = { error: 0, warn: 1, info: 3, debug: 4 } as const;
  // The level is checked before redaction: a disabled event costs nothing on the hot path.
  const emit = (kind: "info" | "warn" | "error" | "debug") => {
    if (KIND_LEVEL[kind] > threshold) return () => {};
    return (name: string, fields?: LogFields) => {
      consola[kind](name, fields ? redact(fields) : undefined);
    };
  };
  return {
    event: emit("info"),
    warn: emit("warn"),
    error: emit("error"),
    debug: emit("debug"),
    flush: () =>
      new Promise<void>((resolve) => {
        if (sink) return resolve();
        process.stdout.write("", () => resolve());
      }),
  };
}

/** Returns a copy of `fields` that is safe to log. */
export function redact(fields: LogFields): LogFields {
  return _redactObject(fields, 0) as LogFields;
}

/**
 * Removes credentials and query from URLs (absolute, and paths starting with "/"), masks
 * connection-string passwords, `password=…`-style pairs, Bearer/Basic credentials and our key
 * formats in free text.
 */
export function sanitizeText(text: string): string {
  // Every pattern below needs one of these; most logged strings (ids, hosts) have none.
  if (!MAY_HOLD_SECRET.test(text)) return text;
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

/** A safe description of an error for logs: name and sanitized message, never the raw object. */
export function describeError(e: unknown): { name: string; message: string } {
  if (e instanceof Error) return { name: e.name, message: sanitizeText(e.message).slice(0, 500) };
  return { name: typeof e, message: "non-error thrown" };
}

// --- Internal helpers ---

function _redactObject(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== "object") {
    return typeof value === "string" ? sanitizeText(value) : value;
  }
  if (depth >= MAX_DEPTH) return "[truncated]";
  if (value instanceof Error) return describeError(value);
  if (Array.isArray(value)) return value.map((v) => _redactObject(v, depth + 1));
  if (value instanceof Headers) return _redactObject(Object.fromEntries(value.entries()), depth);
  const out: LogFields = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretFieldName(k) ? REDACTED : _redactObject(v, depth + 1);
  }
  return out;
}
