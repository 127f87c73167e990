/**
 * Structured logging, with one redaction layer every event passes through. Events are
 * `logger.event("gateway_request_completed", { ... })`: one JSON line each on stdout (format
 * "json", the default), consola's pretty output (format "pretty"), or records handed to a sink
 * (tests). Nothing is written unredacted: keys, authorization headers, passwords, secrets,
 * idempotency keys, bodies and query strings are replaced, and URLs lose their credentials and query.
 *
 * Cost (docs/bench.md, issue 12): a disabled level costs nothing; an enabled JSON event is built
 * straight into its line (`jsonLine`: the same bytes as the JSON of the redacted record, without
 * building the copy), and the line joins the others of the same event-loop turn in one write to
 * stdout (`createLineWriter`), flushed on `flush()` and at process exit. Every event is written:
 * nothing is sampled or deduplicated.
 */
import { createConsola, type ConsolaInstance } from "consola";

export type LogLevel = "silent" | "error" | "warn" | "info" | "debug";
export type LogFields = Record<string, unknown>;

export interface Logger {
  event(name: string, fields?: LogFields): void;
  warn(name: string, fields?: LogFields): void;
  error(name: string, fields?: LogFields): void;
  debug(name: string, fields?: LogFields): void;
  /** Waits until everything written so far has left the process. */
  flush(): Promise<void>;
  /**
   * An event of fixed shape, compiled once (the request path's completion and dependency-call
   * events): its field names in order, and those whose values repeat (a route id, a host: their
   * JSON is remembered). `shape.event(values)` logs what `event(name, record)` logs for the record
   * of `fields[i]: values[i]`, redaction included; a value left undefined leaves its field out (as
   * the JSON line always did).
   */
  shape(name: string, fields: readonly string[], repeating?: readonly string[]): EventShape;
}

/** A compiled event (`Logger.shape`): the values in the order of its fields. */
export interface EventShape {
  event(values: readonly unknown[]): void;
  warn(values: readonly unknown[]): void;
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
const NAME_CACHE_SIZE = 4096;
const _secretNames = new Map<string, boolean>();
const MAX_DEPTH = 5;
const REDACTED = "[redacted]";
const REDACTED_JSON = JSON.stringify(REDACTED);

export function createLogger(options: LoggerOptions = {}): Logger {
  const format = options.format ?? "json";
  const sink = options.sink;
  const threshold = LEVELS[options.level ?? "info"];
  const KIND_LEVEL = { error: 0, warn: 1, info: 3, debug: 4 } as const;
  let write: (kind: LogKind, name: string, fields: LogFields | undefined) => void;
  /** How a compiled event is written (the JSON line built from the values, or the record). */
  let writeShaped: (kind: LogKind, shape: CompiledShape, values: readonly unknown[]) => void = (kind, shape, values) =>
    write(kind, shape.name, _record(shape, values));
  if (sink) {
    write = (kind, name, fields) => sink({ time: _isoNow(), level: kind, event: name, ...(fields ? redact(fields) : {}) });
  } else if (format === "json") {
    // One JSON line per event, written to stdout in one batch per event-loop turn (stdoutLines).
    write = (kind, name, fields) => stdoutLines().write(jsonLine(kind, name, fields));
    writeShaped = (kind, shape, values) => stdoutLines().write(shapedLine(shape, kind, values));
  } else {
    // "pretty": consola's human output (the CLI, a developer's terminal).
    const consola: ConsolaInstance = createConsola({ level: threshold, fancy: false });
    write = (kind, name, fields) => consola[kind](name, fields ? redact(fields) : undefined);
  }
  // The level is checked before redaction: a disabled event costs nothing on the hot path.
  const emit = (kind: LogKind) => {
    if (KIND_LEVEL[kind] > threshold) return () => {};
    return (name: string, fields?: LogFields) => write(kind, name, fields);
  };
  const emitShaped = (kind: LogKind, shape: CompiledShape) => {
    if (KIND_LEVEL[kind] > threshold) return () => {};
    return (values: readonly unknown[]) => writeShaped(kind, shape, values);
  };
  return {
    event: emit("info"),
    warn: emit("warn"),
    error: emit("error"),
    debug: emit("debug"),
    flush: () =>
      new Promise<void>((resolve) => {
        if (sink || format !== "json") return resolve();
        stdoutLines().flush();
        process.stdout.write("", () => resolve());
      }),
    shape(name, fields, repeating = []) {
      const shape = compileShape(name, fields, repeating);
      return { event: emitShaped("info", shape), warn: emitShaped("warn", shape) };
    },
  };
}

type LogKind = "info" | "warn" | "error" | "debug";

/** Lines buffered for a stream and written together: one `write` per event-loop turn, not per line. */
export interface LineWriter {
  write(line: string): void;
  /** Writes what is buffered now (synchronous for files and pipes: Node writes stdout synchronously there). */
  flush(): void;
}

/**
 * A LineWriter for `stream`. Lines queue until the end of the current event-loop turn (setImmediate:
 * every request answered in one poll phase shares one write), or until 64 KiB are queued; `flush()`
 * and the process's `exit` write the rest at once, so a line logged before exit is never lost.
 * Order is kept: lines leave in the order they were written.
 */
export function createLineWriter(stream: { write(chunk: string): unknown }): LineWriter {
  let pending: string[] = [];
  let bytes = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.length === 1 ? pending[0]! : pending.join("");
    pending = [];
    bytes = 0;
    stream.write(text);
  };
  process.once("exit", flush);
  return {
    write(line) {
      pending.push(line);
      bytes += line.length;
      if (bytes >= LINE_BATCH_BYTES) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

const LINE_BATCH_BYTES = 64 * 1024;
let _stdoutLines: LineWriter | null = null;

/** The process's one LineWriter for stdout (every logger shares it, so lines keep their order). */
export function stdoutLines(): LineWriter {
  return (_stdoutLines ??= createLineWriter(process.stdout));
}

/**
 * The JSON line of one event: `JSON.stringify({ time, level, event, ...redact(fields) }) + "\n"`,
 * byte for byte, written without building the redacted copy and the record first. Fields named
 * `time`, `level` or `event` take the general path (they replace the record's own, as the spread does).
 */
export function jsonLine(level: string, name: string, fields: LogFields | undefined): string {
  const time = _isoNow();
  if (fields !== undefined && (Object.hasOwn(fields, "time") || Object.hasOwn(fields, "level") || Object.hasOwn(fields, "event")))
    return JSON.stringify({ time, level, event: name, ...redact(fields) }) + "\n";
  let out = `{"time":"${time}","level":${JSON.stringify(level)},"event":${JSON.stringify(name)}`;
  if (fields !== undefined) {
    for (const k in fields) {
      if (!Object.hasOwn(fields, k)) continue;
      const field = _field(k);
      if (field.secret) {
        out += field.prefix + REDACTED_JSON;
        continue;
      }
      const text = _valueJson(fields[k]);
      if (text !== undefined) out += field.prefix + text;
    }
  }
  return out + "}\n";
}

/** A compiled event shape (`compileShape`): per field its `,"name":` prefix, whether it is secret, and its memo. */
export interface CompiledShape {
  readonly name: string;
  readonly fields: readonly string[];
  /** `"event":"<name>"` preceded by the level, per level: the line's fixed head after its time. */
  readonly heads: Readonly<Record<string, string>>;
  readonly prefixes: readonly string[];
  readonly secret: readonly boolean[];
  /** For the repeating fields: the JSON of each string value seen (bounded), else null. */
  readonly memos: ReadonlyArray<Map<string, string> | null>;
  /** Per field, the last value remembered and its JSON (most requests repeat the one before). */
  readonly last: Array<string | undefined>;
  readonly lastJson: Array<string | undefined>;
}

/** Compiles an event shape (Logger.shape). Fields named `time`, `level` or `event` are refused. */
export function compileShape(name: string, fields: readonly string[], repeating: readonly string[] = []): CompiledShape {
  for (const f of fields)
    if (f === "time" || f === "level" || f === "event") throw new RangeError(`[log] a compiled event cannot have a field named "${f}"`);
  const heads: Record<string, string> = {};
  for (const level of ["error", "warn", "info", "debug"]) heads[level] = `","level":${JSON.stringify(level)},"event":${JSON.stringify(name)}`;
  return {
    name,
    fields,
    heads,
    prefixes: fields.map((f) => `,${JSON.stringify(f)}:`),
    secret: fields.map((f) => isSecretFieldName(f)),
    memos: fields.map((f) => (repeating.includes(f) ? new Map<string, string>() : null)),
    last: fields.map(() => undefined),
    lastJson: fields.map(() => undefined),
  };
}

/**
 * The JSON line of a compiled event: byte for byte `jsonLine(level, shape.name, record)` of the
 * record its values make (undefined values left out), without building the record; the JSON of a
 * repeating field's string value is remembered (bounded per field).
 */
export function shapedLine(shape: CompiledShape, level: string, values: readonly unknown[]): string {
  let out = `{"time":"${_isoNow()}${shape.heads[level]}`;
  const { prefixes, secret, memos, last, lastJson } = shape;
  for (let i = 0; i < prefixes.length; i++) {
    const v = values[i];
    if (v === undefined) continue;
    if (secret[i]) {
      out += prefixes[i]! + REDACTED_JSON;
      continue;
    }
    const memo = memos[i]!;
    let text: string | undefined;
    if (memo !== null && typeof v === "string") {
      text = v === last[i] ? lastJson[i] : memo.get(v);
      if (text === undefined) {
        text = _valueJson(v)!;
        if (memo.size >= SHAPE_MEMO_SIZE) memo.clear();
        memo.set(v, text);
      }
      last[i] = v;
      lastJson[i] = text;
    } else text = _valueJson(v);
    if (text !== undefined) out += prefixes[i]! + text;
  }
  return out + "}\n";
}

const SHAPE_MEMO_SIZE = 1024;

/** The record of a compiled event's values (for a sink, or the pretty output): undefined values left out. */
function _record(shape: CompiledShape, values: readonly unknown[]): LogFields {
  const record: LogFields = {};
  for (let i = 0; i < shape.fields.length; i++) if (values[i] !== undefined) record[shape.fields[i]!] = values[i];
  return record;
}

/** The JSON of one redacted field value, as `JSON.stringify` writes it in a record (undefined: left out). */
function _valueJson(v: unknown): string | undefined {
  if (typeof v === "string") return PLAIN_TEXT.test(v) ? `"${v}"` : _jsonString(sanitizeText(v));
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (v === null) return "null";
  if (typeof v === "object") return JSON.stringify(_redactObject(v, 1));
  return JSON.stringify(v); // undefined, functions and symbols give undefined (left out); bigint throws, as before
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
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    const v = (value as LogFields)[k];
    out[k] = isSecretFieldName(k) ? REDACTED : typeof v === "string" ? sanitizeText(v) : v === null || typeof v !== "object" ? v : _redactObject(v, depth + 1);
  }
  return out;
}

/** Characters JSON.stringify escapes in a string (quote, backslash, controls, surrogates). */
const JSON_ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify(text)`: plain text (ids, hosts, codes) is quoted as it is. */
function _jsonString(text: string): string {
  return JSON_ESCAPED.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * Text that neither redaction (sanitizeText's patterns all need one of `:=?@_`, or "bearer"/"basic")
 * nor JSON escaping can change: quoted as it is, one regex test instead of two.
 */
const PLAIN_TEXT = /^(?![^]*(?:bearer|basic))[^:=?@_"\\\u0000-\u001f\ud800-\udfff]*$/i;

const _fields = new Map<string, { prefix: string; secret: boolean }>();
/** `,"key":` and whether the field is secret, per field name (remembered: names are mostly constants). */
function _field(key: string): { prefix: string; secret: boolean } {
  let field = _fields.get(key);
  if (field === undefined) {
    field = { prefix: `,${JSON.stringify(key)}:`, secret: isSecretFieldName(key) };
    if (_fields.size >= NAME_CACHE_SIZE) _fields.clear();
    _fields.set(key, field);
  }
  return field;
}

let _isoMs = 0;
let _isoText = "";
/** `new Date().toISOString()`, computed once per millisecond. */
function _isoNow(): string {
  const ms = Date.now();
  if (ms !== _isoMs) {
    _isoMs = ms;
    _isoText = new Date(ms).toISOString();
  }
  return _isoText;
}
