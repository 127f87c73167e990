/**
 * Structured logging, with one redaction layer every event passes through. Events are
 * `logger.event("gateway_request_completed", { ... })`: one JSON line each on stdout (format
 * "json", the default), consola's pretty output (format "pretty"), or records handed to a sink
 * (tests). Nothing is written unredacted: keys, authorization headers, passwords, secrets,
 * idempotency keys, bodies and query strings are replaced, and URLs lose their credentials and query.
 *
 * Cost (docs/bench.md): a disabled level costs nothing; an enabled JSON event is built
 * straight into its line (`jsonLine`: the same bytes as the JSON of the redacted record, without
 * building the copy), and the line joins the others of the same event-loop turn in one write to
 * stdout (`createLineWriter`), flushed on `flush()` and at process exit. Every event is written:
 * nothing is sampled or deduplicated.
 *
 * The parts: core/log/redact.ts (what is never logged), core/log/json-line.ts (events as JSON
 * lines), core/log/line-writer.ts (batched writes to stdout); this file builds the Logger.
 */
import { createConsola, type ConsolaInstance } from "consola";
import type { LogFields, LogLevel, Logger, LoggerOptions } from "./log/types.ts";
import { compileShape, isoNow, jsonLine, shapeRecord, shapedLine, type CompiledShape } from "./log/json-line.ts";
import { stdoutLines } from "./log/line-writer.ts";
import { redact } from "./log/redact.ts";

export type { EventShape, LogFields, LogLevel, Logger, LoggerOptions } from "./log/types.ts";
export { describeError, isSecretFieldName, redact, sanitizeText } from "./log/redact.ts";
export { compileShape, jsonLine, shapedLine, type CompiledShape } from "./log/json-line.ts";
export { createLineWriter, stdoutLines, type LineWriter } from "./log/line-writer.ts";

const LEVELS: Record<LogLevel, number> = { silent: -999, error: 0, warn: 1, info: 3, debug: 4 };

export function createLogger(options: LoggerOptions = {}): Logger {
  const format = options.format ?? "json";
  const sink = options.sink;
  const threshold = LEVELS[options.level ?? "info"];
  const KIND_LEVEL = { error: 0, warn: 1, info: 3, debug: 4 } as const;
  let write: (kind: LogKind, name: string, fields: LogFields | undefined) => void;
  /** How a compiled event is written (the JSON line built from the values, or the record). */
  let writeShaped: (kind: LogKind, shape: CompiledShape, values: readonly unknown[]) => void = (kind, shape, values) =>
    write(kind, shape.name, shapeRecord(shape, values));
  if (sink) {
    write = (kind, name, fields) => sink({ time: isoNow(), level: kind, event: name, ...(fields ? redact(fields) : {}) });
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
