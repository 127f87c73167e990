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
 * Built in one pass with string appends (no per-key arrays or closures): it runs on every sign.
 * The output is byte for byte what it always was (stored fingerprints must keep matching).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += (i === 0 ? "" : ",") + canonicalJson(value[i]);
    return out + "]";
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let out = "{";
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out += (first ? "" : ",") + JSON.stringify(k) + ":" + canonicalJson(v);
    first = false;
  }
  return out + "}";
}
