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

/** The canonical JSON as it was first written (stored fingerprints were made with it): the reference. */
function reference(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return "[" + value.map((v) => reference(v)).join(",") + "]";
  const obj = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(obj).sort()) if (obj[k] !== undefined) parts.push(JSON.stringify(k) + ":" + reference(obj[k]));
  return "{" + parts.join(",") + "}";
}

test("canonical JSON is the reference byte for byte: parsed invoices and odd values (index-like keys, __proto__, undefined, functions, dates, -0, NaN, unicode)", () => {
  let seed = 42;
  const rnd = (n: number): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  const keys = ["a", "B", "z", "é", "_id", "tin", "10", "2", "1a", "", "a b", "\u2028", "constructor", "toString"];
  const gen = (depth: number): unknown => {
    switch (rnd(depth > 3 ? 4 : 7)) {
      case 0: return rnd(2) === 0 ? rnd(100000) / 7 : -rnd(50);
      case 1: return ["x", "é\"\\", "\ud800", "line\nbreak", ""][rnd(5)];
      case 2: return rnd(2) === 0;
      case 3: return null;
      case 4: return Array.from({ length: rnd(4) }, () => gen(depth + 1));
      default: {
        const o: Record<string, unknown> = {};
        for (let i = rnd(6); i > 0; i--) o[keys[rnd(keys.length)]!] = gen(depth + 1);
        return o;
      }
    }
  };
  for (let i = 0; i < 2_000; i++) {
    const v = JSON.parse(JSON.stringify(gen(0)) ?? "null");
    assert.is(canonicalJson(v), reference(v), JSON.stringify(v));
  }
  const odd: unknown[] = [
    { b: undefined, a: [undefined, () => 1, Symbol("s")], c: () => 1 },
    JSON.parse('{"__proto__": {"x": 1}, "a": 2}'),
    { d: new Date(0), n: -0, m: Number.NaN, i: Infinity },
    Object.assign(Object.create(null), { z: 1, y: { "0": "a", "1": "b" } }),
    { nested: { toJSON: () => "replaced", k: 1 }, plain: { toJSON: "not a function" } },
    [1, [2, [3, { b: 1, a: 2 }]]],
  ];
  for (const v of odd) assert.is(canonicalJson(v), reference(v));
});

test("keyed hashes: same key and value → same hash; another purpose → another hash", () => {
  const k1 = deriveKey("secret", "purpose-1");
  const k2 = deriveKey("secret", "purpose-2");
  assert.is(keyedHash(k1, "v"), keyedHash(deriveKey("secret", "purpose-1"), "v"));
  assert.is.not(keyedHash(k1, "v"), keyedHash(k2, "v"));
  assert.match(keyedHash(k1, "v"), /^[A-Za-z0-9_-]{43}$/);
});

test.run();
