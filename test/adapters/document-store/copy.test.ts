/**
 * The embedded store's copies (adapters/document-store/filter.ts): `cloneJson` keeps JSON's meaning
 * while copying plain values directly, and `applyUpdate` builds the next version copy-on-write (never
 * changing the stored version, sharing what the update does not touch).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { applyUpdate, cloneJson } from "../../../adapters/document-store/filter.ts";
import type { Doc } from "../../../adapters/ports.ts";

const viaJson = (v: unknown) => JSON.parse(JSON.stringify(v));

class Money {
  constructor(readonly kobo: number) {}
  toJSON() {
    return `NGN ${this.kobo / 100}`;
  }
}
class Plain {
  a = 1;
  b = { c: [1, 2] };
}

test("cloneJson gives exactly what a JSON round trip gives, for plain and exotic values", () => {
  const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { x: 1 });
  const samples: unknown[] = [
    { _id: "a", n: 1, s: "x", t: true, f: false, z: null, nested: { arr: [1, "2", null, { deep: [[]] }] } },
    { u: undefined, fn: () => 1, sym: Symbol("s"), keep: 1 },
    [undefined, () => 1, Symbol("s"), 1],
    { nan: Number.NaN, inf: Number.POSITIVE_INFINITY, negZero: -0, arr: [Number.NaN, -0] },
    { when: new Date("2030-01-01T00:00:00.000Z"), money: new Money(5_050), plain: new Plain() },
    { custom: { toJSON: () => ({ replaced: true }) } },
    { classWithObjectJson: { toJSON: () => new Date(0) } },
    JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}'),
    nullProto,
    [1, , 3], // a hole
    "text",
    42,
    null,
    { "1": "a", b: "b", "0": "c" }, // integer-like keys first, as JSON orders them
  ];
  for (const v of samples) {
    const copy = cloneJson(v);
    assert.equal(copy, viaJson(v), JSON.stringify(v));
    assert.is(JSON.stringify(copy), JSON.stringify(viaJson(v)), "same key order");
  }
  assert.ok(Object.is(cloneJson(-0), 0), "-0 becomes 0");
  assert.throws(() => cloneJson({ big: 10n }), TypeError);
  assert.is(({} as { polluted?: unknown }).polluted, undefined, "no prototype pollution");
});

test("cloneJson shares nothing mutable with its input", () => {
  const input = { a: { b: [1, { c: 2 }] } };
  const copy = cloneJson(input);
  (copy.a.b[1] as { c: number }).c = 99;
  copy.a.b.push(3);
  assert.equal(input, { a: { b: [1, { c: 2 }] } });
});

test("applyUpdate never changes the document it starts from and shares what it does not touch", () => {
  const stored: Doc = { _id: "w", balance: 10, big: { list: [1, 2, 3] }, profile: { color: "red", size: { w: 1 } }, gone: 1 };
  const frozen = _deepFreeze(cloneJson(stored));
  const next = applyUpdate(frozen, { $set: { "profile.size.h": 2, note: { text: "n" } }, $inc: { balance: -5 }, $unset: ["gone", "missing.path"] }, false);
  assert.equal(next, { _id: "w", balance: 5, big: { list: [1, 2, 3] }, profile: { color: "red", size: { w: 1, h: 2 } }, note: { text: "n" } });
  assert.equal(frozen, stored, "the starting version is unchanged (it is frozen: any write would have thrown)");
  assert.ok(next.big === frozen.big, "an untouched sub-document is shared, not copied");
  assert.ok(next.profile !== frozen.profile && (next.profile as { size: unknown }).size !== (frozen.profile as { size: unknown }).size, "the updated path is copied");
  // Values taken from the update are the document's own.
  const value = { items: ["a"] };
  const withValue = applyUpdate(frozen, { $set: { value } }, false);
  value.items.push("changed");
  assert.equal(withValue.value, { items: ["a"] });
  // Unsetting inside an array leaves null (MongoDB's rule), on a copy.
  const arr = applyUpdate(_deepFreeze({ _id: "a", xs: [1, 2, 3] }), { $unset: ["xs.1"] }, false);
  assert.equal(arr.xs, [1, null, 3]);
});

test.run();

function _deepFreeze<T>(v: T): T {
  if (typeof v === "object" && v !== null) {
    for (const k of Object.keys(v)) _deepFreeze((v as Record<string, unknown>)[k]);
    Object.freeze(v);
  }
  return v;
}
