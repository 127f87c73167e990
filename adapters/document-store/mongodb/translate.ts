/**
 * Port queries → MongoDB queries: filters (`$contains` → escaped case-insensitive `$regex`), updates
 * with the hidden fields of their result, and "after this cursor" as range clauses per sort key that
 * respect MongoDB's cross-type order for null/missing, numbers, strings, objects and booleans.
 */
import type { Document } from "mongodb";
import { InvalidQueryError, type Filter, type SortSpec, type Update } from "../../ports.ts";
import { validateFilter } from "../query/filter.ts";
import { isOperatorObject } from "../query/values.ts";

/** A MongoDB query document. */
export type MongoQuery = Record<string, unknown>;

/** Validates a port filter and translates it: `$contains` → escaped case-insensitive `$regex`, `{ $eq: scalar }` → scalar. */
export function toMongoFilter(filter: Filter): MongoQuery {
  validateFilter(filter);
  return _translate(filter);
}

/**
 * Adds `extra`'s conditions to `base`, keeping `base`'s top-level equalities top-level (an upsert
 * copies them into the new document); clashing keys go into `$and`.
 */
export function mergeQuery(base: MongoQuery, extra: MongoQuery | null): MongoQuery {
  if (!extra) return base;
  const out: MongoQuery = { ...base };
  for (const [k, v] of Object.entries(extra)) {
    if (!(k in out) && k !== "$and") out[k] = v;
    else out.$and = [...((out.$and as MongoQuery[] | undefined) ?? []), { [k]: v }];
  }
  return out;
}

/** Port update → MongoDB update, plus the hidden fields (new revision, TTL mirror) of the result. */
export function toMongoUpdate(update: Update, hiddenSet: Document, hiddenUnset: string[]): Document {
  const set = { ...definedFields(update.$set), ...hiddenSet };
  const unset: Record<string, ""> = Object.fromEntries([...(update.$unset ?? []), ...hiddenUnset].map((p) => [p, ""]));
  const out: Document = { $set: set };
  if (Object.keys(unset).length > 0) out.$unset = unset;
  if (update.$inc && Object.keys(update.$inc).length > 0) out.$inc = { ...update.$inc };
  return out;
}

/** True when the update changes nothing. */
export function isEmptyUpdate(update: Update): boolean {
  return (
    Object.keys(definedFields(update.$set)).length === 0 &&
    (update.$unset ?? []).length === 0 &&
    Object.keys(update.$inc ?? {}).length === 0
  );
}

/** The entries of `o` whose value is not undefined. */
export function definedFields(o: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o ?? {})) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * The documents strictly after `values` in `sort` order: an `$or` over the sort keys
 * (k1 after v1) | (k1 = v1 and k2 after v2) | … with the last key `_id`.
 */
export function afterCursor(sort: readonly SortSpec[], values: readonly unknown[]): MongoQuery {
  const clauses: MongoQuery[] = [];
  for (let i = 0; i < sort.length; i++) {
    const after = _afterValue(sort[i]!.field, values[i], sort[i]!.direction);
    if (!after) continue;
    const clause: MongoQuery = {};
    const and: MongoQuery[] = [];
    for (let j = 0; j < i; j++) clause[sort[j]!.field] = values[j] ?? null;
    if ("$or" in after) and.push(after);
    else Object.assign(clause, after);
    if (and.length > 0) clause.$and = and;
    clauses.push(clause);
  }
  return clauses.length === 0 ? { _id: { $in: [] } } : { $or: clauses };
}

// --- Internal helpers ---

function _translate(filter: Filter): MongoQuery {
  const out: MongoQuery = {};
  for (const [key, cond] of Object.entries(filter)) {
    if (key === "$or") {
      out.$or = (cond as Filter[]).map(_translate);
      continue;
    }
    if (!isOperatorObject(cond)) {
      out[key] = cond;
      continue;
    }
    const keys = Object.keys(cond);
    // jongodb ignores `{ f: { $eq: v } }` when building an upsert's document; plain equality is the same query.
    if (keys.length === 1 && keys[0] === "$eq" && !_isObjectLike(cond.$eq)) {
      out[key] = cond.$eq;
      continue;
    }
    const ops: MongoQuery = {};
    for (const op of keys) {
      if (op === "$contains") {
        ops.$regex = (cond.$contains as string).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        ops.$options = "i";
      } else {
        ops[op] = cond[op];
      }
    }
    out[key] = ops;
  }
  return out;
}

function _isObjectLike(v: unknown): boolean {
  return typeof v === "object" && v !== null;
}

/** Values of `field` sorting strictly after `v` in `direction`, across MongoDB's type order. */
function _afterValue(field: string, v: unknown, direction: 1 | -1): MongoQuery | null {
  const types = (...t: string[]): MongoQuery[] => t.map((type) => ({ [field]: { $type: type } }));
  const any = (parts: MongoQuery[]): MongoQuery | null => (parts.length === 0 ? null : parts.length === 1 ? parts[0]! : { $or: parts });
  const isNull = v === null || v === undefined;
  if (!isNull && typeof v === "object") throw new InvalidQueryError(`cursor pagination over ${field} needs scalar sort values`);
  if (direction === 1) {
    if (isNull) return { [field]: { $ne: null } };
    if (typeof v === "number") return any([{ [field]: { $gt: v } }, ...types("string", "object", "bool")]);
    if (typeof v === "string") return any([{ [field]: { $gt: v } }, ...types("object", "bool")]);
    return v === false ? { [field]: true } : null;
  }
  if (isNull) return null;
  const nulls = { [field]: null };
  if (typeof v === "number") return any([{ [field]: { $lt: v } }, nulls]);
  if (typeof v === "string") return any([{ [field]: { $lt: v } }, nulls, ...types("number")]);
  return any([...(v === true ? [{ [field]: false }] : []), nulls, ...types("number", "string", "object")]);
}
