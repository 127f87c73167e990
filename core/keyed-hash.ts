/**
 * Keyed hashes for values the gateway must recognise but never store or log in clear (idempotency
 * keys, content fingerprints of invoices and credentials). Each use derives its own HMAC key
 * (HKDF-SHA256) from a deployment secret, so every process of a deployment derives the same key
 * and nothing secret is written to a store.
 */
import { createHmac, hkdfSync } from "node:crypto";

/** The HMAC key for one purpose (e.g. "signing-idempotency-v1"); rotate by changing the purpose. */
export function deriveKey(deploymentSecret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", deploymentSecret, "gatehouse", purpose, 32));
}

export function keyedHash(key: Buffer, value: string): string {
  return createHmac("sha256", key).update(value, "utf8").digest("base64url");
}

/**
 * Deterministic JSON: object keys sorted at every level (fingerprints of equal documents agree).
 * The output is byte for byte what it always was (stored fingerprints must keep matching).
 *
 * A plain JSON value (what JSON.parse gives: plain objects, arrays, strings, finite numbers,
 * booleans, null) is copied with its keys in sorted order and serialised by one JSON.stringify: the
 * same serialiser writes the same leaves, and a plain object's string keys serialise in insertion
 * order. Keys JSON.stringify would not keep in insertion order (array-index keys such as "10",
 * which V8 orders numerically; `__proto__`) and values it treats differently (undefined in arrays,
 * functions, class instances, toJSON) take the step-by-step writer, `_canonicalSlow`. It runs on
 * every sign (the fingerprint of the invoice).
 */
export function canonicalJson(value: unknown): string {
  const sorted = _sortedCopy(value);
  return sorted === _SLOW ? _canonicalSlow(value) : JSON.stringify(sorted);
}

const _SLOW: unique symbol = Symbol("slow");

/** `value` with every object's keys in sorted order, or `_SLOW` when JSON.stringify of it would not give the canonical text. */
function _sortedCopy(value: unknown): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
    case "number": // JSON.stringify writes non-finite numbers as null, as `_canonicalSlow` does
      return value;
    case "object": {
      if (value === null) return null;
      if (Array.isArray(value)) {
        const n = value.length;
        const out = new Array<unknown>(n);
        for (let i = 0; i < n; i++) {
          const c = _sortedCopy(value[i]);
          if (c === _SLOW) return _SLOW;
          out[i] = c;
        }
        return out;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return _SLOW;
      const keys = Object.keys(value).sort();
      const out: Record<string, unknown> = {};
      for (const k of keys) {
        const first = k.charCodeAt(0);
        if ((first >= 48 && first <= 57) || k === "__proto__") return _SLOW; // a digit: maybe an array index
        const v = (value as Record<string, unknown>)[k];
        if (v === undefined) continue;
        const c = _sortedCopy(v);
        if (c === _SLOW) return _SLOW;
        out[k] = c;
      }
      return out;
    }
    default:
      return _SLOW; // undefined, function, symbol, bigint
  }
}

/** Canonical JSON written step by step (string appends, no per-key arrays or closures). */
function _canonicalSlow(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += (i === 0 ? "" : ",") + _canonicalSlow(value[i]);
    return out + "]";
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let out = "{";
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out += (first ? "" : ",") + JSON.stringify(k) + ":" + _canonicalSlow(v);
    first = false;
  }
  return out + "}";
}
