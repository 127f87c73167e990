/**
 * The writer's operations and results. Each operation is written as JSON text when it is asked
 * for (that is also the copy with JSON's meaning the port promises), and a batch travels to the
 * writer as one string, its operations' texts joined (`encodeBatch`): one string copy instead of a
 * structured clone of every filter and update. `now` is the main thread's clock when the operation was asked
 * for (TTL and leases are judged at that instant, as the port's clock says).
 */
import type { CollectionSpec, Filter, SortSpec, Update } from "../../ports.ts";
import { DependencyUnavailableError, DuplicateKeyError, InvalidQueryError } from "../../ports.ts";

export type WriteOp =
  | { kind: "ensure"; collection: string; spec: CollectionSpec }
  | { kind: "insert"; collection: string; id: string; text: string; now: number }
  /**
   * `text`: the documents as one JSON array, inserted by one statement: all kept, or none on a
   * clash. `arrays`: some document holds an array somewhere (the marker check then runs).
   */
  | { kind: "insertMany"; collection: string; text: string; count: number; arrays: boolean; now: number }
  /** findOneAndUpdate (`returnDoc`) and updateOne. */
  | { kind: "update"; collection: string; filter: Filter; update: Update; upsert: boolean; returnDoc: boolean; now: number }
  | { kind: "claim"; collection: string; filter: Filter; owner: string; leaseMs: number; sort: SortSpec[]; now: number }
  | { kind: "release"; collection: string; id: string; owner: string }
  | { kind: "delete"; collection: string; id: string; now: number }
  | { kind: "deleteMany"; collection: string; filter: Filter; now: number }
  | { kind: "sweep"; collection: string; now: number }
  | { kind: "ping" };

/** What an operation answers: a document's JSON text, a flag, a count, or nothing. */
export type WriteValue = string | boolean | number | null;

export type WriteResult = { ok: true; value: WriteValue } | { ok: false; error: WriteFailure };

export type WriteFailure =
  | { kind: "duplicate"; collection: string; index: string }
  | { kind: "invalid"; message: string }
  | { kind: "unavailable"; message: string; failureClass: "timeout" | "server_error" };

/** A batch posted to the writer thread and its answer. */
export interface BatchMessage {
  seq: number;
  /** The text of the batch's WriteOps (`encodeBatch`). */
  ops: string;
}

/** The answer to every batch one transaction held. */
export interface BatchReply {
  batches: Array<{ seq: number; results: WriteResult[] }>;
  commit: CommitInfo;
}

export interface CommitInfo {
  /** Operations in the transaction (it may hold several batches). */
  operations: number;
  /** Milliseconds from BEGIN IMMEDIATE to the end of COMMIT (the fsync included). */
  ms: number;
}

/**
 * One operation's text, for `encodeBatch` (throws what JSON.stringify throws: a cycle, a BigInt):
 * its JSON, and for an operation carrying documents' JSON text (insert, insertMany) that text after
 * a U+0001, outside the JSON, so that it is copied as it is rather than escaped into a JSON string
 * here and unescaped by the writer. JSON text never holds a raw U+0000 or U+0001 (JSON.stringify
 * escapes every control character), so the separators cannot be confused with the contents.
 */
export function encodeOp(op: WriteOp): string {
  if (op.kind !== "insert" && op.kind !== "insertMany") return JSON.stringify(op);
  const { text, ...rest } = op;
  return `${JSON.stringify(rest)}${_TEXT}${text}`;
}

/** The batch text of operations encoded by `encodeOp`: joined by U+0000. */
export function encodeBatch(ops: readonly string[]): string {
  return ops.join(_OP);
}

/** The operations of a batch text. */
export function decodeBatch(ops: string): WriteOp[] {
  if (ops === "") return [];
  const out: WriteOp[] = [];
  for (const part of ops.split(_OP)) {
    const at = part.indexOf(_TEXT);
    if (at < 0) {
      out.push(JSON.parse(part) as WriteOp);
      continue;
    }
    const op = JSON.parse(part.slice(0, at)) as WriteOp & { text: string };
    op.text = part.slice(at + 1);
    out.push(op);
  }
  return out;
}

/** The error a failure stands for, on the main thread. */
export function failureError(f: WriteFailure, kind: string): Error {
  switch (f.kind) {
    case "duplicate":
      return new DuplicateKeyError(f.collection, f.index);
    case "invalid":
      return new InvalidQueryError(f.message);
    default:
      return new DependencyUnavailableError(kind, f.message, f.failureClass);
  }
}

// --- Internal helpers ---

/** Between two operations of a batch text, and before an operation's documents text. */
const _OP = "\u0000";
const _TEXT = "\u0001";
