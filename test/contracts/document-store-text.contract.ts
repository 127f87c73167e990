/**
 * The DocumentStore contract's cases for `$contains` on declared text fields (`CollectionSpec.textFields`):
 * a store may answer them from an index (the embedded store's trigram index) or ignore the declaration
 * (MongoDB), and the results are filter.ts's either way. Part of document-store.contract.ts's CASES.
 */
import * as assert from "uvu/assert";
import type { Collection, Doc, DocumentStore, Filter } from "../../adapters/ports.ts";

interface TextCtx {
  store: DocumentStore;
}

export const TEXT_CASES: ReadonlyArray<readonly [string, (ctx: TextCtx) => Promise<void>]> = [
  [
    "text fields: $contains answers as without the declaration (short needles, case, regex characters, non-strings)",
    async ({ store }) => {
      const c = await _accounts(store);
      assert.equal(await _ids(c, { name: { $contains: "ACME" } }), ["a1", "a2"]);
      assert.equal(await _ids(c, { name: { $contains: "me" } }), ["a1", "a2", "a4"], "a needle shorter than a trigram");
      assert.equal(await _ids(c, { name: { $contains: "m" } }), ["a1", "a2", "a4", "a6"]);
      assert.equal(await _ids(c, { name: { $contains: "(A.K.A.) *" } }), ["a5"]);
      assert.equal(await _ids(c, { name: { $contains: 'say "hi"' } }), ["a5"], "a double quote in the needle");
      assert.equal(await _ids(c, { name: { $contains: "acme.*" } }), []);
      assert.equal(await _ids(c, { number: { $contains: "00042" } }), ["a2"]);
      assert.equal(await _ids(c, { number: { $contains: "123" } }), [], "never a number");
      assert.equal(await _ids(c, { tags: { $contains: "GOLD" } }), ["a1", "a3"], "array elements");
      assert.equal(await _ids(c, { tags: { $contains: "goldsil" } }), [], "never across two elements");
      assert.equal(await _ids(c, { name: { $contains: "zzz" } }), []);
      assert.is(await c.count({ name: { $contains: "acme" } }), 2);
    },
  ],
  [
    "text fields: non-ASCII text and needles (É, ß)",
    async ({ store }) => {
      const c = await _accounts(store);
      assert.equal(await _ids(c, { name: { $contains: "stanbul" } }), ["a6"]);
      assert.equal(await _ids(c, { name: { $contains: "ÉCOLE" } }), ["a6"]);
      assert.equal(await _ids(c, { name: { $contains: "ecole" } }), [], "É is not e");
      assert.equal(await _ids(c, { name: { $contains: "STRASSE" } }), [], "ß does not upper-case away");
      assert.equal(await _ids(c, { name: { $contains: "straße" } }), ["a6"]);
    },
  ],
  [
    "text fields: $or of $contains over several fields, beside other conditions, counted and paged",
    async ({ store }) => {
      const c = await _accounts(store);
      const search = (s: string): Filter => ({ $or: [{ name: { $contains: s } }, { number: { $contains: s } }, { ref: { $contains: s } }] });
      assert.equal(await _ids(c, search("acme")), ["a1", "a2"]);
      assert.equal(await _ids(c, search("042")), ["a2", "a4"], "a number in one, a reference in another");
      assert.equal(await _ids(c, { ...search("042"), biz: "b1" }), ["a2"]);
      assert.equal(await _ids(c, { $or: [{ name: { $contains: "acme" } }, { ref: { $contains: "REF-9" } }] }), ["a1", "a2", "a5"]);
      assert.equal(await _ids(c, { $or: [{ name: { $contains: "acme" } }, { biz: "b3" }] }), ["a1", "a2", "a5"], "beside a non-text branch");
      assert.is(await c.count({ ...search("0"), biz: "b1" }), 3);
      const page = await c.find(search("a"), { sort: [{ field: "n", direction: -1 }], limit: 2 });
      assert.equal(page.items.map((d) => d._id), ["a6", "a5"]);
    },
  ],
  [
    "text fields: updates, deletes and inserts are found at once",
    async ({ store }) => {
      const c = await _accounts(store);
      await c.updateOne({ _id: "a1" }, { $set: { name: "Zenith Ltd" } });
      assert.equal(await _ids(c, { name: { $contains: "acme" } }), ["a2"]);
      assert.equal(await _ids(c, { name: { $contains: "zenith" } }), ["a1"]);
      await c.findOneAndUpdate({ _id: "a2" }, { $unset: ["name"] });
      assert.equal(await _ids(c, { name: { $contains: "acme" } }), []);
      await c.findOneAndUpdate({ _id: "a9" }, { $set: { name: "Acme Upserted", n: 9 } }, { upsert: true });
      await c.insertMany([{ _id: "a7", name: "Acme Batch", n: 7 }]);
      assert.equal(await _ids(c, { name: { $contains: "ACME" } }), ["a7", "a9"]);
      assert.ok(await c.delete("a9"));
      assert.is(await c.deleteMany({ name: { $contains: "batch" } }), 1);
      assert.equal(await _ids(c, { name: { $contains: "acme" } }), []);
      assert.is(await c.count({ name: { $contains: "zenith" } }), 1);
    },
  ],
  [
    "text fields: declared on a collection that already holds documents (and widened later)",
    async ({ store }) => {
      const plain = store.collection<Doc>("accounts");
      for (const a of ACCOUNTS) await plain.insert(a);
      assert.equal(await _ids(plain, { name: { $contains: "acme" } }), ["a1", "a2"]);
      const c = store.collection<Doc>("accounts", { textFields: ["name"] });
      assert.equal(await _ids(c, { name: { $contains: "acme" } }), ["a1", "a2"]);
      await c.insert({ _id: "a7", name: "ACME North", ref: "acme-7", n: 7 });
      const wider = store.collection<Doc>("accounts", { textFields: ["ref"] });
      assert.equal(await _ids(wider, { $or: [{ name: { $contains: "acme" } }, { ref: { $contains: "acme" } }] }), ["a1", "a2", "a7"]);
      assert.equal(await _ids(wider, { ref: { $contains: "ACME-" } }), ["a7"]);
    },
  ],
  [
    "text fields: needles made of trigrams most documents hold (alone, or beside rarer ones), folded letters, quotes, arrays",
    async ({ store }) => {
      // 40 documents sharing "customer 1000" and "stores": their trigrams are in every document,
      // so a store may look up a needle by its rarer trigrams only and must still answer exactly.
      const docs: Doc[] = Array.from({ length: 40 }, (_, i) => ({
        _id: `c${String(i).padStart(2, "0")}`,
        name: `Customer 1000${String(i).padStart(2, "0")} Stores`,
        number: String(1_000_000_000 + i),
        n: i,
      }));
      docs[3]!.name = "Customer 100003 \u212Aelvin Stores"; // Kelvin sign: lower case "k"
      docs[4]!.name = "Customer 100004 \u0130zmir Stores"; // dotted capital I: lower case "i" + U+0307
      docs[5]!.name = 'Customer 100005 say "hi" Stores';
      docs[6]!.name = "Customer 100006 back\\slash Stores";
      docs[7]!.tags = ["Customer 100007 Gold", "Stores"];
      docs[8]!.tags = ["customer 1000", "08gold"];
      const c = store.collection<Doc>("common_trigrams", { textFields: ["name", "number", "tags"] });
      const plain = store.collection<Doc>("common_trigrams_plain");
      for (const d of docs) {
        await c.insert(d);
        await plain.insert(d);
      }
      const search = (s: string): Filter => ({ $or: [{ name: { $contains: s } }, { number: { $contains: s } }, { tags: { $contains: s } }] });
      const cases: Array<[Filter, string[] | null]> = [
        [search("1000000042"), []],
        [search("1000000017"), ["c17"]],
        [search("100000001"), ["c10", "c11", "c12", "c13", "c14", "c15", "c16", "c17", "c18", "c19"]],
        [search("customer 100017 stores"), ["c17"]],
        [search("customer 1000"), null],
        [search("1000000"), null],
        [search("stores"), null],
        [search("r 100003 kel"), null], // c03 wherever the store folds U+212A as JS does (not jongodb's regex)
        [search("100004 i"), null], // c04, likewise (U+0130)
        [search("100004 iz"), []],
        [search('100005 say "hi'), ["c05"]],
        [search("100006 back\\sl"), ["c06"]],
        [search("100007 gold"), ["c07"]],
        [search("1000 08gold"), []],
        [{ name: { $contains: "CUSTOMER 100021 STO" } }, ["c21"]],
        [{ number: { $contains: "0000003" } }, ["c03", "c30", "c31", "c32", "c33", "c34", "c35", "c36", "c37", "c38", "c39"]],
      ];
      for (const [filter, expected] of cases) {
        const got = await _ids(c, filter);
        assert.equal(got, await _ids(plain, filter), `as without the declaration: ${JSON.stringify(filter)}`);
        if (expected) assert.equal(got, expected, JSON.stringify(filter));
        assert.is(await c.count(filter), got.length, `counted: ${JSON.stringify(filter)}`);
      }
      assert.is((await _ids(c, search("customer 1000"))).length, 40);
      const page = await c.find(search("1000000"), { sort: [{ field: "n", direction: -1 }], limit: 3 });
      assert.equal(page.items.map((d) => d._id), ["c39", "c38", "c37"]);
    },
  ],
];

// --- Internal helpers ---

const ACCOUNTS: Doc[] = [
  { _id: "a1", biz: "b1", name: "Acme Stores", number: "1000000001", ref: "REF-1", tags: ["gold", "silver"], n: 1 },
  { _id: "a2", biz: "b1", name: "ACME Ventures", number: "1000000042", ref: "REF-2", n: 2 },
  { _id: "a3", biz: "b2", name: "Bolt", number: "1000000003", ref: "REF-3", tags: ["Gold"], n: 3 },
  { _id: "a4", biz: "b2", name: "Mercy Home", number: 1234, ref: "REF-042", n: 4 },
  { _id: "a5", biz: "b3", name: '(a.k.a.) *star* say "hi"', number: "1000000005", ref: "ref-9", n: 5 },
  { _id: "a6", biz: "b1", name: "\u0130stanbul \u212Aelvin \u00C9cole Stra\u00DFe Tam", number: "1000000006", ref: "REF-6", n: 6 },
];

async function _accounts(store: DocumentStore): Promise<Collection<Doc>> {
  const c = store.collection<Doc>("accounts", { indexes: [{ fields: ["biz", "n"] }], textFields: ["name", "number", "ref", "tags"] });
  for (const a of ACCOUNTS) await c.insert(a);
  return c;
}

async function _ids<T extends Doc>(c: Collection<T>, filter: Filter): Promise<string[]> {
  const page = await c.find(filter, { limit: 1000 });
  return page.items.map((d) => d._id).sort();
}
