/**
 * The DocumentStore contract's cases for compare-and-set updates by `_id` with equality conditions
 * (the shape of every write on the sign path): a store may run them as one statement (the embedded
 * store's SQL form) or read, match and write; the results are filter.ts's and applyUpdate's either
 * way, with the indexes, TTL and unique keys kept in step. Part of document-store.contract.ts's CASES.
 */
import * as assert from "uvu/assert";
import { isDuplicateKeyError, type Collection, type Doc, type DocumentStore, type Filter } from "../../adapters/ports.ts";

interface CasCtx {
  store: DocumentStore;
  clock: { now: () => number; advance(ms: number): void };
}

export const CAS_CASES: ReadonlyArray<readonly [string, (ctx: CasCtx) => Promise<void>]> = [
  [
    "compare-and-set by _id: equality on an array's element, a number, a boolean, a dotted path, null; type brackets hold",
    async ({ store }) => {
      const c = await _cas(store);
      assert.is(await c.updateOne({ _id: "a", state: "pending" }, { $set: { seen: 1 } }), true, "an array holding the value");
      assert.is(await c.updateOne({ _id: "a", n: 5, flag: true, "sub.s": "v" }, { $set: { state: "debited" } }), true);
      assert.is(await c.updateOne({ _id: "a", n: "5" }, { $set: { state: "x" } }), false, "a string is not a number");
      assert.is(await c.updateOne({ _id: "a", flag: 1 }, { $set: { state: "x" } }), false, "a number is not a boolean");
      assert.is(await c.updateOne({ _id: "a", "sub.s": "w" }, { $set: { state: "x" } }), false);
      assert.is(await c.updateOne({ _id: "a", missing: "v" }, { $set: { state: "x" } }), false, "a missing field");
      assert.is(await c.updateOne({ _id: "a", nul: null, missing: null }, { $set: { checked: true } }), true, "null matches null and missing");
      assert.is(await c.updateOne({ _id: "zz", state: "debited" }, { $set: { state: "x" } }), false, "no such document");
      assert.is(await c.updateOne({ _id: "b", n: 5.5 }, { $set: { state: "confirmed", sub: { x: 2 } } }), true);
      assert.equal(await c.get("a"), { _id: "a", state: "debited", n: 5, flag: true, sub: { s: "v", x: 1 }, nul: null, code: "A", seen: 1, checked: true });
      assert.equal(await c.get("b"), { _id: "b", state: "confirmed", n: 5.5, code: "B", sub: { x: 2 } });
      assert.is(await c.count({}), 2, "nothing upserted");
    },
  ],
  [
    "compare-and-set by _id: the indexed fields it sets, unsets or turns into arrays are found by their new values",
    async ({ store }) => {
      const c = await _cas(store);
      assert.is(await c.updateOne({ _id: "a", code: "A" }, { $set: { state: "debited" } }), true);
      assert.is(await c.updateOne({ _id: "b", n: 5.5 }, { $set: { state: "confirmed", sub: { x: 2 } } }), true);
      assert.equal(await _ids(c, { state: "debited" }), ["a"]);
      assert.equal(await _ids(c, { state: "confirmed" }), ["b"]);
      assert.equal(await _ids(c, { state: "pending" }), []);
      assert.equal(await _ids(c, { "sub.x": 2 }), ["b"]);
      assert.equal(await _ids(c, { "sub.x": { $gte: 1 } }), ["a", "b"]);
      assert.equal(await _ids(c, { sub: { x: 2 } }), ["b"], "an embedded document's key");
      assert.is(await c.updateOne({ _id: "a", state: "debited" }, { $unset: ["state", "sub"] }), true);
      assert.equal(await _ids(c, { state: null }), ["a"]);
      assert.equal(await _ids(c, { "sub.x": null }), ["a"]);
      assert.is(await c.updateOne({ _id: "b", state: "confirmed" }, { $set: { tags: ["t1", "t2"], state: ["s1", "s2"] } }), true);
      assert.equal(await _ids(c, { tags: "t2" }), ["b"], "an array set along an indexed path matches element-wise");
      assert.equal(await _ids(c, { state: "s1" }), ["b"]);
      assert.is(await c.updateOne({ _id: "b", state: "s2" }, { $set: { done: true } }), true);
    },
  ],
  [
    "compare-and-set by _id: a unique clash undoes it; TTL hides the expired; findOneAndUpdate hands back the document after; upsert inserts",
    async ({ store, clock }) => {
      const c = await _cas(store);
      const e = await _rejectsDuplicate(c.updateOne({ _id: "b", n: 5.5 }, { $set: { code: "A", state: "moved" } }));
      assert.is((e as { index: string }).index, "code_1");
      assert.equal(await c.get("b"), { _id: "b", state: "pending", n: 5.5, code: "B" }, "nothing of it kept");
      assert.is(await c.updateOne({ _id: "a", code: "A" }, { $unset: ["code"] }), true);
      assert.is(await c.updateOne({ _id: "b", code: "B" }, { $set: { code: "A" } }), true, "the key is free once unset");
      assert.equal(
        await c.findOneAndUpdate({ _id: "b", code: "A" }, { $set: { "7": "seven", state: "z", exp: clock.now() + 1000 }, $unset: ["n"] }),
        { _id: "b", state: "z", code: "A", "7": "seven", exp: clock.now() + 1000 },
      );
      assert.equal(await _ids(c, { "7": "seven" }), ["b"]);
      assert.is(await c.findOneAndUpdate({ _id: "b", state: "y" }, { $set: { state: "q" } }), null);
      clock.advance(1001);
      assert.is(await c.updateOne({ _id: "b", state: "z" }, { $set: { state: "late" } }), false, "expired");
      assert.equal(await c.findOneAndUpdate({ _id: "u", state: "new" }, { $set: { n: 1 } }, { upsert: true }), { _id: "u", state: "new", n: 1 });
      assert.equal(await _ids(c, { state: "new" }), ["u"]);
    },
  ],
];

// --- Internal helpers ---

async function _cas(store: DocumentStore): Promise<Collection<Doc>> {
  const c = store.collection<Doc>("cas", {
    indexes: [{ fields: ["state"] }, { fields: ["sub.x"] }, { fields: ["sub"] }, { fields: ["tags"] }, { fields: ["code"], unique: true, sparse: true }],
    ttlField: "exp",
  });
  await c.insert({ _id: "a", state: ["pending", "held"], n: 5, flag: true, sub: { s: "v", x: 1 }, nul: null, code: "A" });
  await c.insert({ _id: "b", state: "pending", n: 5.5, code: "B" });
  return c;
}

async function _ids<T extends Doc>(c: Collection<T>, filter: Filter): Promise<string[]> {
  const page = await c.find(filter, { limit: 1000 });
  return page.items.map((d) => d._id).sort();
}

async function _rejectsDuplicate(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    assert.ok(isDuplicateKeyError(e), `expected DuplicateKeyError, got ${String(e)}`);
    return e;
  }
  assert.unreachable("expected DuplicateKeyError, but the call succeeded");
  return undefined;
}
