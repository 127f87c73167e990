/**
 * core/keyed-hash.ts: canonical JSON is stable byte for byte (stored sign fingerprints depend on it)
 * and keyed hashes depend on the derived key.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { canonicalJson, deriveKey, keyedHash } from "../../core/keyed-hash.ts";

test("canonical JSON: keys sorted at every level, undefined fields dropped, arrays kept in order", () => {
  const value = { b: 1, a: [3, undefined, { z: null, y: undefined, x: "é\"" }], c: { "10": true, "2": false }, d: [] };
  assert.is(canonicalJson(value), '{"a":[3,null,{"x":"é\\"","z":null}],"b":1,"c":{"10":true,"2":false},"d":[]}');
  assert.is(canonicalJson({ a: 1, b: 2 }), canonicalJson({ b: 2, a: 1 }), "key order does not matter");
  assert.is(canonicalJson("x"), '"x"');
  assert.is(canonicalJson(null), "null");
  assert.is(canonicalJson(undefined), "null");
  assert.is(canonicalJson([]), "[]");
  assert.is(canonicalJson({}), "{}");
});

test("keyed hashes: same key and value → same hash; another purpose → another hash", () => {
  const k1 = deriveKey("secret", "purpose-1");
  const k2 = deriveKey("secret", "purpose-2");
  assert.is(keyedHash(k1, "v"), keyedHash(deriveKey("secret", "purpose-1"), "v"));
  assert.is.not(keyedHash(k1, "v"), keyedHash(k2, "v"));
  assert.match(keyedHash(k1, "v"), /^[A-Za-z0-9_-]{43}$/);
});

test.run();
