/**
 * Reading document values the way MongoDB does: dotted paths (through arrays, collecting the
 * elements' values), MongoDB's cross-type value order and embedded-document equality. Shared by the
 * filter, sort, update and key helpers beside this file.
 *
 * Order across types: null/missing < numbers < strings < objects < arrays < booleans; null and
 * missing sort equal. Strings compare by UTF-16 code units (MongoDB: UTF-8 bytes; they differ only for
 * characters above U+FFFF against U+E000–U+FFFF).
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

/** MongoDB's cross-type order (see the module comment). */
export function compareValues(a: unknown, b: unknown): number {
  const ta = typeof a;
  if (ta === typeof b && (ta === "string" || ta === "number")) return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
  const ra = _typeRank(a);
  const rb = _typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 1:
      return 0;
    case 2:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 3:
      return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
    case 4: {
      const ea = Object.entries(a as object);
      const eb = Object.entries(b as object);
      for (let i = 0; i < Math.min(ea.length, eb.length); i++) {
        const [ka, va] = ea[i]!;
        const [kb, vb] = eb[i]!;
        const c = compareValues(va, vb);
        if (c !== 0) return c;
        if (ka !== kb) return ka < kb ? -1 : 1;
      }
      return Math.sign(ea.length - eb.length);
    }
    case 5: {
      const aa = a as unknown[];
      const ab = b as unknown[];
      for (let i = 0; i < Math.min(aa.length, ab.length); i++) {
        const c = compareValues(aa[i], ab[i]);
        if (c !== 0) return c;
      }
      return Math.sign(aa.length - ab.length);
    }
    default:
      return a === b ? 0 : a ? 1 : -1;
  }
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

function _typeRank(v: unknown): number {
  if (v === null || v === undefined) return 1;
  switch (typeof v) {
    case "number":
      return 2;
    case "string":
      return 3;
    case "boolean":
      return 8;
    default:
      return Array.isArray(v) ? 5 : 4;
  }
}
