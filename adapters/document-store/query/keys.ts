/**
 * Unique-index keys and index names. A missing field counts as null (a non-sparse unique index admits
 * one such document); arrays are indexed as whole values, not per element (no multikey indexes).
 */
import { InvalidQueryError } from "../../ports.ts";
import type { Doc } from "../../ports.ts";
import { getPath } from "./values.ts";

/** The unique-index key of a document, or null when a sparse index does not cover it. */
export function uniqueKey(doc: Doc, fields: readonly string[], sparse: boolean): string | null {
  if (fields.length === 1) {
    const v = getPath(doc, fields[0]!);
    if (v === undefined && sparse) return null;
    return _keyOfOne(v ?? null);
  }
  const values: unknown[] = [];
  for (const f of fields) {
    const v = getPath(doc, f);
    if (v === undefined && sparse) return null;
    values.push(v ?? null);
  }
  return JSON.stringify(values);
}

/** MongoDB's default index name (`a_1_b.c_1`), used by both stores in DuplicateKeyError.index. */
export function indexName(fields: readonly string[]): string {
  return fields.map((f) => `${f}_1`).join("_");
}

/** Throws InvalidQueryError unless an index spec names at least one field. */
export function validateIndexFields(fields: unknown): void {
  if (!Array.isArray(fields) || fields.length === 0) throw new InvalidQueryError("an index needs at least one field");
}

// --- Internal helpers ---

function _keyOfOne(v: unknown): string {
  return typeof v === "string" && v.charCodeAt(0) !== 0x5b /* "[" */ ? v : JSON.stringify([v]);
}
