/**
 * Log events as JSON lines, built straight into their text: `jsonLine` gives the same bytes as the
 * JSON of the redacted record without building the copy, and a compiled event shape (`compileShape`,
 * `shapedLine`) does the same from an array of values, remembering the JSON of values that repeat.
 */
import { NAME_CACHE_SIZE, REDACTED_JSON, isSecretFieldName, redact, redactNested, sanitizeText } from "./redact.ts";
import type { LogFields } from "./types.ts";

/**
 * The JSON line of one event: `JSON.stringify({ time, level, event, ...redact(fields) }) + "\n"`,
 * byte for byte, written without building the redacted copy and the record first. Fields named
 * `time`, `level` or `event` take the general path (they replace the record's own, as the spread does).
 */
export function jsonLine(level: string, name: string, fields: LogFields | undefined): string {
  const time = isoNow();
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
  let out = `{"time":"${isoNow()}${shape.heads[level]}`;
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
export function shapeRecord(shape: CompiledShape, values: readonly unknown[]): LogFields {
  const record: LogFields = {};
  for (let i = 0; i < shape.fields.length; i++) if (values[i] !== undefined) record[shape.fields[i]!] = values[i];
  return record;
}

let _isoMs = 0;
let _isoText = "";
/** `new Date().toISOString()`, computed once per millisecond. */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== _isoMs) {
    _isoMs = ms;
    _isoText = new Date(ms).toISOString();
  }
  return _isoText;
}

// --- Internal helpers ---

/** The JSON of one redacted field value, as `JSON.stringify` writes it in a record (undefined: left out). */
function _valueJson(v: unknown): string | undefined {
  if (typeof v === "string") return PLAIN_TEXT.test(v) ? `"${v}"` : _jsonString(sanitizeText(v));
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (v === null) return "null";
  if (typeof v === "object") return JSON.stringify(redactNested(v, 1));
  return JSON.stringify(v); // undefined, functions and symbols give undefined (left out); bigint throws, as before
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
