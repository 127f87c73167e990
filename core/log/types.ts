/**
 * The logger's types: what a caller logs (an event name and its fields) and through what.
 */

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
