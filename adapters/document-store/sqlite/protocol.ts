/**
 * The writer's operations and results: plain data, posted to the writer thread (structured clone)
 * or handed to the inline writer as they are. `now` is the main thread's clock when the operation
 * was asked for (TTL and leases are judged at that instant, as the port's clock says).
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
  ops: WriteOp[];
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
