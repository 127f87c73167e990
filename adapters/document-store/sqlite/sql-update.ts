/**
 * A compare-and-set written as one statement, `UPDATE … SET doc = json_set(doc, …) WHERE _id = ?
 * AND <the filter's equalities> AND <visible>`: no row read, no parse, no match, no stringify in JS.
 * It is used only where SQL does exactly what filter.ts and `applyUpdate` do; everything else (and
 * a statement that changes no row) goes to the writer's JS path (./writes.ts), which decides as
 * before:
 * - The filter pins `_id` to a string; its other fields are equalities with a string, a finite
 *   number or a boolean, each tested on the field's JSON text (`doc -> '$."state"' = '"pending"'`).
 *   Equal JSON texts are equal values, so a row SQL matches is one filter.ts matches. What SQL
 *   does not match (an array holding the value, a number written another way, an expired or
 *   missing row) goes to the JS path: no match, an upsert, or a match after all.
 * - The update is `$set` and `$unset` of top-level fields whose names a JS object keeps in
 *   insertion order (no integer-like name, no `__proto__`): json_set replaces a member where it
 *   stands and appends a new one last, as `{ ...doc, [f]: v }` then JSON.stringify do; `$unset` is
 *   json_remove, applied after `$set` as `applyUpdate` does; `$setOnInsert` leaves an existing row
 *   alone. The values are the operation's JSON (JSON.stringify's text, kept verbatim by SQLite).
 * - A value holding an array under a field where an indexed path still has its array marker goes
 *   to the JS path, which drops the marker first.
 * The key columns (and sparse paths' presence columns) of the paths under a set or unset field are
 * set from the value's own JSON (the same expressions as ./rows.ts): the indexes on the other
 * columns are not touched.
 *
 * The statement's text is built once per schema and shape (filter fields, set and unset fields).
 */
import type { Filter } from "../../ports.ts";
import type { SqlParam } from "./connection.ts";
import { NULL_KEY, isSqlPath, jsonPath, keyExprAt } from "./keys.ts";
import type { WriteOp } from "./protocol.ts";
import type { CollectionSchema } from "./schema.ts";

/** The statement of an update SQL can do alone, and its parameters. */
export interface SqlUpdate {
  sql: string;
  params: SqlParam[];
}

/** The one-statement form of `op`, or null when SQL cannot do it exactly (the JS path then does). */
export function sqlUpdate(schema: CollectionSchema, op: Extract<WriteOp, { kind: "update" }>): SqlUpdate | null {
  const id = op.filter._id;
  if (typeof id !== "string" || !schema.exists) return null;
  const update = op.update as Record<string, unknown>;
  for (const k in update) if (k !== "$set" && k !== "$unset" && k !== "$setOnInsert") return null;
  const set = (update.$set ?? {}) as Record<string, unknown>;
  const unset = (update.$unset ?? []) as string[];
  const setFields = Object.keys(set);
  if (setFields.length === 0 && unset.length === 0) return null;
  const filterFields = _filterFields(op.filter);
  if (!filterFields) return null;
  const shape = _shape(schema, filterFields, setFields, unset, op.returnDoc);
  if (!shape) return null;
  const params: SqlParam[] = [id];
  for (const f of setFields) {
    const text = JSON.stringify(set[f]);
    if (shape.marked.has(f) && text.includes("[")) return null;
    params.push(text);
  }
  for (const f of filterFields) params.push(JSON.stringify(op.filter[f]));
  if (schema.ttl) params.push(op.now);
  return { sql: shape.sql, params };
}

// --- Internal helpers ---

interface _Shape {
  sql: string;
  /** Set fields under which an indexed path still has its array marker. */
  marked: Set<string>;
}

/** Statements per schema object, by shape (null: a shape SQL cannot do). */
const _shapes = new WeakMap<CollectionSchema, Map<string, _Shape | null>>();

/** The filter's fields other than `_id`, when every one is an equality SQL can test by JSON text. */
function _filterFields(filter: Filter): string[] | null {
  const out: string[] = [];
  for (const f in filter) {
    if (f === "_id") continue;
    const v = filter[f];
    if (typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) out.push(f);
    else return null; // an operator, an embedded document, null, $or
  }
  return out;
}

function _shape(schema: CollectionSchema, filterFields: string[], setFields: string[], unset: string[], returnDoc: boolean): _Shape | null {
  let byShape = _shapes.get(schema);
  if (!byShape) {
    byShape = new Map();
    _shapes.set(schema, byShape);
  }
  const key = JSON.stringify([filterFields, setFields, unset, returnDoc]);
  let shape = byShape.get(key);
  if (shape === undefined) {
    shape = _buildShape(schema, filterFields, setFields, unset, returnDoc);
    byShape.set(key, shape);
  }
  return shape;
}

/** Parameters: ?1 `_id`, then each set field's JSON, then each filter field's JSON, then `now` (TTL). */
function _buildShape(schema: CollectionSchema, filterFields: string[], setFields: string[], unset: string[], returnDoc: boolean): _Shape | null {
  if (!filterFields.every(_isFilterPath) || !setFields.every(_isPlainField) || !unset.every(_isPlainField)) return null;
  const valueParam = new Map(setFields.map((f, i) => [f, `?${i + 2}`]));
  let doc = "doc";
  if (setFields.length > 0) doc = `json_set(doc, ${setFields.map((f) => `${jsonPath(f)}, json(${valueParam.get(f)})`).join(", ")})`;
  if (unset.length > 0) doc = `json_remove(${doc}, ${unset.map(jsonPath).join(", ")})`;
  const sets = [`doc = ${doc}`];
  const marked = new Set<string>();
  for (const [path, column] of schema.columns) {
    const dot = path.indexOf(".");
    const field = dot < 0 ? path : path.slice(0, dot);
    const presence = schema.presence.get(path);
    if (unset.includes(field)) {
      sets.push(`${column} = ${NULL_KEY}`);
      if (presence) sets.push(`${presence} = 0`);
    } else if (valueParam.has(field)) {
      const at = dot < 0 ? "'$'" : jsonPath(path.slice(dot + 1));
      sets.push(`${column} = ${keyExprAt(valueParam.get(field)!, at)}`);
      if (presence) sets.push(`${presence} = (json_type(${valueParam.get(field)!}, ${at}) IS NOT NULL)`);
    } else {
      continue;
    }
    if (schema.scalar.has(path)) marked.add(field);
  }
  const where = ["_id = ?1"];
  let n = setFields.length + 2;
  for (const f of filterFields) where.push(`doc -> ${jsonPath(f)} = ?${n++}`);
  if (schema.ttl) where.push(`NOT (${schema.ttl.column} > ${NULL_KEY} AND ${schema.ttl.column} < ?${n++})`);
  const sql = `UPDATE ${schema.table} SET ${sets.join(", ")} WHERE ${where.join(" AND ")}${returnDoc ? " RETURNING doc" : ""}`;
  return { sql, marked };
}

/** A filter path SQL's JSON path addresses as filter.ts does for a document without arrays. */
function _isFilterPath(path: string): boolean {
  return isSqlPath(path) && path.split(".").every((s) => s !== "" && s !== "__proto__");
}

/** A top-level field a JS object keeps in insertion order (not an array index), not `_id`. */
function _isPlainField(field: string): boolean {
  return isSqlPath(field) && field !== "" && !field.includes(".") && field !== "_id" && field !== "__proto__" && !/^\d+$/.test(field);
}
