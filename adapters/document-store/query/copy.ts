/** Deep copies of document values with JSON's meaning. */

/**
 * A deep copy with JSON's meaning (documents are JSON values by contract): `undefined`, function and
 * symbol fields are dropped (null in arrays), non-finite numbers become null, `toJSON` is honoured.
 * Plain objects, arrays and primitives are copied directly (several times faster than a JSON round
 * trip); anything else (class instances, a `__proto__` key, BigInt…) takes the JSON round trip.
 */
export function cloneJson<T>(value: T): T {
  if (value === undefined) return value;
  const out = _copyJson(value, "");
  return (out === _EXOTIC ? JSON.parse(JSON.stringify(value)) : out) as T;
}

// --- Internal helpers ---

/** Marks a value `_copyJson` leaves to the JSON round trip. */
const _EXOTIC: unique symbol = Symbol("exotic");

/** `cloneJson` for plain JSON values; `_EXOTIC` when the value needs JSON.stringify's full rules. */
function _copyJson(v: unknown, key: string): unknown {
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      return Number.isFinite(v) ? v + 0 : null; // + 0: -0 becomes 0, as through JSON
    case "object": {
      if (v === null) return null;
      if (Array.isArray(v)) {
        const n = v.length;
        const out = new Array<unknown>(n);
        for (let i = 0; i < n; i++) {
          const e = v[i];
          if (e === undefined || typeof e === "function" || typeof e === "symbol") {
            out[i] = null;
            continue;
          }
          const c = _copyJson(e, String(i));
          if (c === _EXOTIC) return _EXOTIC;
          out[i] = c;
        }
        return out;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        const toJSON = (v as { toJSON?: unknown }).toJSON;
        if (typeof toJSON !== "function") return _EXOTIC;
        const r: unknown = toJSON.call(v, key); // called once, as JSON.stringify does
        return typeof r === "object" && r !== null ? _EXOTIC : _copyJson(r, key);
      }
      if (typeof (v as { toJSON?: unknown }).toJSON === "function") return _EXOTIC;
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v)) {
        const e = (v as Record<string, unknown>)[k];
        if (e === undefined || typeof e === "function" || typeof e === "symbol") continue;
        if (k === "__proto__") return _EXOTIC;
        const c = _copyJson(e, k);
        if (c === _EXOTIC) return _EXOTIC;
        out[k] = c;
      }
      return out;
    }
    default:
      return _EXOTIC; // bigint (JSON.stringify throws); undefined, functions and symbols at the top
  }
}
