/**
 * The DocumentStore contract's cases for field names a query language could read as escapes: a
 * backslash in a name is that character, never an escape (an embedded store that spliced such a
 * name into a JSON path would address another field, or store text that is not JSON). Part of
 * document-store.contract.ts's CASES.
 */
import * as assert from "uvu/assert";
import type { Doc, DocumentStore } from "../../adapters/ports.ts";

interface NamesCtx {
  store: DocumentStore;
}

/** `a\u0062` spelled with a real backslash: six characters, not "ab". */
const ESCAPED_B = "a\\u0062";
const BACKSLASH_Q = "a\\q";

export const NAMES_CASES: ReadonlyArray<readonly [string, (ctx: NamesCtx) => Promise<void>]> = [
  [
    "field names with a backslash: matched, set and unset as those very names, never as escapes",
    async ({ store }) => {
      const c = store.collection<Doc>("names_with_backslashes");
      await c.insert({ _id: "a", ab: 1, n: 2 });
      await c.insert({ _id: "b", ab: 1, n: 1, [ESCAPED_B]: 5 });
      assert.equal((await c.find({ [ESCAPED_B]: 1 })).items, [], "no document has the six-character name with 1");
      assert.is(await c.count({ [ESCAPED_B]: 5 }), 1);
      assert.is(await c.updateOne({ _id: "a", [ESCAPED_B]: 1 }, { $set: { hit: true } }), false, "a compare-and-set on the name does not match `ab`");
      assert.is(await c.updateOne({ _id: "a" }, { $set: { [ESCAPED_B]: 99, [BACKSLASH_Q]: 1 } }), true);
      assert.is(await c.updateOne({ _id: "b" }, { $unset: [ESCAPED_B] }), true);
      assert.equal(await c.get("a"), { _id: "a", ab: 1, n: 2, [ESCAPED_B]: 99, [BACKSLASH_Q]: 1 }, "`ab` kept; the names written as given");
      assert.equal(await c.get("b"), { _id: "b", ab: 1, n: 1 }, "the unset removed the six-character name, not `ab`");
      assert.is(await c.count({ ab: 1 }), 2, "every document still reads back (no stored text broken)");
    },
  ],
];
