/** Updates: validation against the port's operators, copy-on-write application, and the document an upsert inserts. */
import type { Doc, Filter, Update } from "../../ports.ts";
import { InvalidQueryError } from "../../ports.ts";
import { cloneJson } from "./copy.ts";
import { newId } from "./ids.ts";
import { getPath, isOperatorObject, isPlainObject } from "./values.ts";

const UPDATE_OPS = new Set(["$set", "$unset", "$inc", "$setOnInsert"]);

/** Throws InvalidQueryError unless `update` only uses the port's operators and leaves `_id` alone. */
export function validateUpdate(update: Update): void {
  if (!isPlainObject(update)) throw new InvalidQueryError("update must be an object");
  for (const op in update) {
    const arg = (update as Record<string, unknown>)[op];
    if (!UPDATE_OPS.has(op)) throw new InvalidQueryError(`unsupported update operator ${op}`);
    if (arg === undefined) continue;
    if (op === "$unset") {
      if (!Array.isArray(arg) || arg.some((p) => typeof p !== "string")) throw new InvalidQueryError("$unset takes an array of paths");
      for (const p of arg as string[]) _validateUpdatePath(op, p);
      continue;
    }
    if (!isPlainObject(arg)) throw new InvalidQueryError(`${op} takes an object of path → value`);
    for (const p in arg) {
      const v = arg[p];
      if (op === "$setOnInsert" && p === "_id") {
        if (typeof v !== "string") throw new InvalidQueryError("_id must be a string");
        continue;
      }
      _validateUpdatePath(op, p);
      if (op === "$inc" && (typeof v !== "number" || !Number.isFinite(v))) throw new InvalidQueryError(`$inc ${p} takes a finite number`);
    }
  }
}

/**
 * Applies a validated update to `doc` copy-on-write (`inserting`: an upsert's insert, so
 * `$setOnInsert` applies). Never mutates `doc`: the result is a new top-level object; the objects
 * along each updated path are copied, every other field and sub-document is shared with `doc`, and
 * values taken from the update are copied (the caller keeps its own). So the cost is the size of
 * the top level plus what changed, not the size of the document. Throws InvalidQueryError for
 * `$inc` on a non-number or a path through a non-object.
 */
export function applyUpdate(doc: Doc, update: Update, inserting: boolean): Doc {
  const out: Doc = { ...doc };
  const owned = new Set<object>([out]);
  if (inserting) for (const [p, v] of Object.entries(update.$setOnInsert ?? {})) if (v !== undefined) _setPath(out, p, cloneJson(v), owned);
  for (const [p, v] of Object.entries(update.$set ?? {})) if (v !== undefined) _setPath(out, p, cloneJson(v), owned);
  for (const [p, n] of Object.entries(update.$inc ?? {})) {
    const cur = getPath(out, p);
    if (cur === undefined) _setPath(out, p, n, owned);
    else if (typeof cur === "number") _setPath(out, p, cur + n, owned);
    else throw new InvalidQueryError(`$inc target ${p} is not a number`);
  }
  for (const p of update.$unset ?? []) _unsetPath(out, p, owned);
  return out;
}

/** The document an upsert inserts: {equality fields of the filter, $setOnInsert, $set, $inc, minus $unset}, `_id` first. */
export function upsertDocument(filter: Filter, update: Update): Doc {
  const built = applyUpdate(applyUpdate({ _id: "" }, { $set: _equalityFields(filter) }, false), update, true);
  if (built._id === "") built._id = newId();
  if (typeof built._id !== "string") throw new InvalidQueryError("a document needs a string _id");
  const { _id, ...rest } = built;
  return { _id, ...rest };
}

/** The fields an upsert copies from its filter: top-level equalities and `$eq`s (not `$or`). */
function _equalityFields(filter: Filter): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, cond] of Object.entries(filter)) {
    if (key === "$or") continue;
    if (!isOperatorObject(cond)) out[key] = cond;
    else if (Object.keys(cond).length === 1 && "$eq" in cond) out[key] = cond.$eq;
  }
  return out;
}

// --- Internal helpers ---

function _validateUpdatePath(op: string, path: string): void {
  const bad = path.includes(".") ? path.split(".").some((s) => s === "" || s.startsWith("$")) : path === "" || path.charCodeAt(0) === 36; /* $ */
  if (bad) throw new InvalidQueryError(`invalid path "${path}" in ${op}`);
  if (path === "_id" || path.startsWith("_id.")) throw new InvalidQueryError(`${op} cannot change _id`);
}

function _assign(target: Record<string, unknown> | unknown[], seg: string, value: unknown, path: string): void {
  if (Array.isArray(target)) {
    if (!/^\d+$/.test(seg)) throw new InvalidQueryError(`cannot set ${path}: ${seg} is not an array index`);
    target[Number(seg)] = value;
  } else {
    target[seg] = value;
  }
}

/** Sets a dotted path, creating intermediate objects and copying shared ones (not in `owned`) before changing them. */
function _setPath(obj: Record<string, unknown>, path: string, value: unknown, owned: Set<object>): void {
  if (!path.includes(".")) {
    obj[path] = value;
    return;
  }
  const segs = path.split(".");
  let cur: Record<string, unknown> | unknown[] = obj;
  for (let i = 0; i < segs.length - 1; i++) {
    const seg = segs[i]!;
    let next: unknown = Array.isArray(cur) ? cur[Number(seg)] : cur[seg];
    if (next === undefined || next === null) {
      next = {};
      owned.add(next as object);
      _assign(cur, seg, next, path);
    } else if (!isPlainObject(next) && !Array.isArray(next)) {
      throw new InvalidQueryError(`cannot create field in ${path}: ${segs.slice(0, i + 1).join(".")} is not an object`);
    } else if (!owned.has(next as object)) {
      next = Array.isArray(next) ? next.slice() : { ...(next as Record<string, unknown>) };
      owned.add(next as object);
      _assign(cur, seg, next, path);
    }
    cur = next as Record<string, unknown> | unknown[];
  }
  _assign(cur, segs[segs.length - 1]!, value, path);
}

function _unsetPath(obj: Record<string, unknown>, path: string, owned: Set<object>): void {
  if (!path.includes(".")) {
    delete obj[path];
    return;
  }
  const segs = path.split(".");
  const last = segs[segs.length - 1]!;
  // Find the parent first: nothing is copied when there is nothing to remove.
  let probe: unknown = obj;
  for (let i = 0; i < segs.length - 1; i++) {
    probe = Array.isArray(probe) ? probe[Number(segs[i])] : isPlainObject(probe) ? probe[segs[i]!] : undefined;
    if (probe === undefined || probe === null) return;
  }
  if (Array.isArray(probe) ? !(/^\d+$/.test(last) && Number(last) < probe.length) : !isPlainObject(probe) || !(last in probe)) return;
  let cur: Record<string, unknown> | unknown[] = obj;
  for (let i = 0; i < segs.length - 1; i++) {
    const seg = segs[i]!;
    let next = (Array.isArray(cur) ? cur[Number(seg)] : cur[seg]) as Record<string, unknown> | unknown[];
    if (!owned.has(next)) {
      next = Array.isArray(next) ? next.slice() : { ...next };
      owned.add(next);
      if (Array.isArray(cur)) cur[Number(seg)] = next;
      else cur[seg] = next;
    }
    cur = next;
  }
  if (Array.isArray(cur)) cur[Number(last)] = null; // MongoDB leaves null
  else delete cur[last];
}
