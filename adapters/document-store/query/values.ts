/**
 * Reading document values the way MongoDB does: dotted paths (through arrays, collecting the
 * elements' values) and embedded-document equality. Shared by the filter, sort, update and key
 * helpers beside this file. (The order across types, null/missing < numbers < strings < documents <
 * arrays < booleans, is the SQLite store's key order: sqlite/keys.ts.)
 */

/** Reads a (possibly dotted) path; through an array, collects the elements' values. */
export function getPath(doc: unknown, path: string): unknown {
  if (!path.includes(".")) return isPlainObject(doc) ? doc[path] : undefined;
  let cur: unknown = doc;
  for (const seg of path.split(".")) {
    if (Array.isArray(cur)) {
      if (/^\d+$/.test(seg)) {
        cur = cur[Number(seg)];
      } else {
        cur = _collect(cur, seg);
      }
    } else if (isPlainObject(cur)) {
      cur = cur[seg];
    } else {
      return undefined;
    }
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** `getPath` with the path split once. */
export function compilePath(path: string): (doc: unknown) => unknown {
  if (!path.includes(".")) return (doc) => (doc as Record<string, unknown>)[path]; // documents are plain objects
  const segs = path.split(".");
  const numeric = segs.map((seg) => /^\d+$/.test(seg));
  const n = segs.length;
  return (doc) => {
    let cur: unknown = doc;
    for (let i = 0; i < n; i++) {
      const seg = segs[i]!;
      if (typeof cur !== "object" || cur === null) return undefined;
      if (!Array.isArray(cur)) {
        cur = (cur as Record<string, unknown>)[seg];
      } else if (numeric[i]) {
        cur = cur[Number(seg)];
      } else {
        cur = _collect(cur, seg);
      }
      if (cur === undefined) return undefined;
    }
    return cur;
  };
}

/** True for a plain object (a JSON object: prototype Object.prototype or null), not an array. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** True for `{ $op: … }` objects (every key an operator). */
export function isOperatorObject(v: unknown): v is Record<string, unknown> {
  if (!isPlainObject(v)) return false;
  const keys = Object.keys(v);
  return keys.length > 0 && keys[0]!.startsWith("$");
}

/** Deep equality of JSON values; embedded documents are equal only with the same fields in the same order. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], bb[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  // Embedded documents are equal only with the same fields in the same order (MongoDB's rule).
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i] || !deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

// --- Internal helpers ---

/** Through an array (non-index segment): the elements' values of `seg`, or undefined when none has one. */
function _collect(arr: readonly unknown[], seg: string): unknown[] | undefined {
  let vals: unknown[] | undefined;
  for (let i = 0; i < arr.length; i++) {
    const e = arr[i];
    if (!isPlainObject(e)) continue;
    const v = e[seg];
    if (v === undefined) continue;
    (vals ??= []).push(v);
  }
  return vals;
}
