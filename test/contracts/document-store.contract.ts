/**
 * THE DocumentStore contract (ARCHITECTURE.md §5): one uvu suite that every implementation passes.
 * Each test gets a fresh store from `make(clock)`; the store must read time from `clock` (TTL and
 * leases are tested by advancing it, never by sleeping).
 *
 *   documentStoreContract("sqlite-memory", async (clock) => {
 *     const store = await createSqliteDocumentStore({ file: ":memory:", clock });
 *     return { store, cleanup: () => store.close() };
 *   });
 *
 * With `options.skip`, every case is registered as skipped (uvu counts them) next to one guard test
 * that proves skipping is allowed here (never under CI=true), and the reason is printed.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { isDuplicateKeyError, type Collection, type Doc, type DocumentStore, type Filter, type Lease } from "../../adapters/ports.ts";
import { isInvalidQueryError } from "../../adapters/document-store/filter.ts";
import { CAS_CASES } from "./document-store-cas.contract.ts";
import { NAMES_CASES } from "./document-store-names.contract.ts";
import { TEXT_CASES } from "./document-store-text.contract.ts";

export interface DocumentStoreFixture {
  store: DocumentStore;
  cleanup(): Promise<void>;
}

export interface TestClock {
  /** Epoch milliseconds (pass this to the store). */
  now: () => number;
  advance(ms: number): void;
}

export interface DocumentStoreContractOptions {
  /** The clock handed to `make`; default: a fresh test clock starting at the real time. */
  clock?: TestClock;
  /** Skip every case, printing this reason. */
  skip?: string;
}

/** A clock that only moves when told to (starts at the real time so server-side TTL never fires early). */
export function createTestClock(start = Date.now()): TestClock {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
  };
}

export function documentStoreContract(
  name: string,
  make: (clock: () => number) => Promise<DocumentStoreFixture>,
  options: DocumentStoreContractOptions = {},
): void {
  const clock = options.clock ?? createTestClock();
  const test = suite<Ctx>(`document-store contract: ${name}`, {} as Ctx);

  if (options.skip !== undefined) {
    const reason = options.skip;
    console.log(`SKIPPED ${name} contract suite: ${reason}`);
    test("skipping is allowed only outside CI, with a reason", () => {
      assert.ok(reason.length > 0);
      assert.is.not(process.env.CI, "true");
    });
    for (const [caseName] of CASES) test.skip(caseName, () => {});
    test.run();
    return;
  }

  let started = 0;
  let caseStarted = 0;
  const durations: Array<[string, number]> = [];
  test.before(() => {
    started = performance.now();
  });
  test.after(() => {
    const slowest = durations.sort((a, b) => b[1] - a[1]).slice(0, 3).map(([n, ms]) => `${Math.round(ms)} ms "${n}"`);
    console.log(`\n[timing] document-store contract ${name}: ${CASES.length} cases in ${Math.round(performance.now() - started)} ms; slowest: ${slowest.join(", ")}`);
  });
  test.before.each(async (ctx) => {
    caseStarted = performance.now();
    const fixture = await make(clock.now);
    ctx.store = fixture.store;
    ctx.cleanup = fixture.cleanup;
    ctx.clock = clock;
  });
  test.after.each(async (ctx) => {
    await ctx.cleanup?.();
    durations.push([(ctx as unknown as { __test__: string }).__test__, performance.now() - caseStarted]);
  });
  for (const [caseName, fn] of CASES) test(caseName, fn);
  test.run();
}

// --- Internal helpers ---

interface Ctx {
  store: DocumentStore;
  cleanup: () => Promise<void>;
  clock: TestClock;
}

type Case = readonly [string, (ctx: Ctx) => Promise<void>];

interface Person extends Doc {
  name?: string;
  email?: string;
  age?: number;
  tags?: string[];
  address?: { city?: string; zip?: string };
  nick?: string | null;
}

const PEOPLE: Person[] = [
  { _id: "p01", name: "Ada Lovelace", email: "ada@example.com", age: 36, tags: ["math", "poetry"], address: { city: "London", zip: "W1" } },
  { _id: "p02", name: "Alan Turing", email: "alan@example.com", age: 41, tags: ["math", "cs"], address: { city: "Wilmslow" } },
  { _id: "p03", name: "Grace Hopper", email: "grace@example.com", age: 85, tags: ["cs", "navy"], nick: "Amazing Grace" },
  { _id: "p04", name: "Edsger Dijkstra", email: "edsger@example.com", age: 72, tags: ["cs"], nick: null },
  { _id: "p05", name: "Barbara Liskov", age: 84, address: { city: "Boston", zip: "02108" } },
  { _id: "p06", name: "(a.k.a.) *Star* [x]", email: "star+1@example.com", age: 36 },
];

async function _people(store: DocumentStore): Promise<Collection<Person>> {
  const c = store.collection<Person>("people", { indexes: [{ fields: ["age"] }] });
  for (const p of PEOPLE) await c.insert(p);
  return c;
}

async function _ids<T extends Doc>(c: Collection<T>, filter: Parameters<Collection<T>["find"]>[0]): Promise<string[]> {
  const page = await c.find(filter, { limit: 1000 });
  return page.items.map((d) => d._id).sort();
}

async function _rejectsWith(p: Promise<unknown>, check: (e: unknown) => boolean, what: string): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    assert.ok(check(e), `expected ${what}, got ${String(e)}`);
    return e;
  }
  assert.unreachable(`expected ${what}, but the call succeeded`);
  return undefined;
}

const CASES: Case[] = [
  ...TEXT_CASES,
  ...CAS_CASES,
  ...NAMES_CASES,
  [
    "countNow, where offered (the embedded store), answers what count answers, synchronously; point lookups included",
    async ({ store }) => {
      const c = await _people(store);
      if (!c.countNow) {
        assert.not.ok(store.kind.startsWith("sqlite"), "the embedded store offers the synchronous variant");
        return;
      }
      const filters: Filter[] = [
        {},
        { _id: "p01" },
        { _id: "p01", age: 36, name: "Ada Lovelace" },
        { _id: "p01", age: 37 },
        { _id: "p04", nick: null },
        { _id: "p05", nick: null, email: null },
        { _id: "p03", nick: null },
        { _id: "p02", tags: "cs" },
        { _id: "p02", tags: "poetry" },
        { _id: "zz" },
        { _id: "zz", age: 1 },
        { _id: "p01", "address.city": "London" },
        { _id: "p01", address: { city: "London", zip: "W1" } },
        { _id: "p01", age: { $gte: 30 } },
        { age: 36 },
        { tags: { $in: ["navy", "poetry"] } },
      ];
      for (const f of filters) {
        const now = c.countNow(f);
        assert.not.ok((now as unknown) instanceof Promise, "no promise");
        assert.is(now, await c.count(f), JSON.stringify(f));
      }
      for (const bad of [{ _id: "p01", age: undefined }, { _id: "p01", $and: [] }, { _id: "p01", age: { $where: "1" } }] as Filter[])
        assert.throws(() => c.countNow!(bad), isInvalidQueryError, `InvalidQueryError for ${JSON.stringify(bad)}`);
    },
  ],
  [
    "insert returns the document; get reads it; a missing id reads null; results are copies",
    async ({ store }) => {
      const c = store.collection<Person>("people");
      const doc: Person = { _id: "a1", name: "Ada", address: { city: "London" }, tags: ["x"] };
      const inserted = await c.insert(doc);
      assert.equal(inserted, doc);
      const got = await c.get("a1");
      assert.equal(got, doc);
      got!.address!.city = "Paris";
      inserted.tags!.push("mutated");
      doc.name = "changed after insert";
      assert.equal(await c.get("a1"), { _id: "a1", name: "Ada", address: { city: "London" }, tags: ["x"] });
      assert.is(await c.get("nope"), null);
      assert.is(c.name, "people");
      assert.is(store.collection("people"), store.collection("people"), "collection() returns the same handle");
      await store.ping();
    },
  ],
  [
    "a collection read before its first write (nothing there yet) sees that write afterwards",
    async ({ store }) => {
      const c = store.collection<Doc>("fresh");
      assert.is(await c.get("f1"), null);
      assert.is(await c.count({}), 0);
      assert.equal((await c.find({ n: 1 })).items, []);
      await c.insert({ _id: "f1", n: 1 });
      assert.equal(await c.get("f1"), { _id: "f1", n: 1 });
      assert.is(await c.count({}), 1);
      assert.equal((await c.find({ n: 1 })).items, [{ _id: "f1", n: 1 }]);
      assert.is((await c.findOne({ n: 1 }))?._id, "f1");
    },
  ],
  [
    "ids with odd characters round-trip",
    async ({ store }) => {
      const c = store.collection<Doc>("odd ids/: .");
      const ids = ["a:b", "a/b", "..", ".", "x?y#z", "üñí©ødé", "%2F", "x".repeat(300)];
      for (const id of ids) await c.insert({ _id: id, v: id.length });
      for (const id of ids) assert.equal(await c.get(id), { _id: id, v: id.length }, id);
      assert.is(await c.count({}), ids.length);
    },
  ],
  [
    "insertMany inserts a batch in one call (count back, each readable, in a TTL collection); an empty batch is 0; a clash is DuplicateKeyError",
    async ({ store }) => {
      const c = store.collection<Doc>("batched", { indexes: [{ fields: ["tenant", "at"] }], ttlField: "expiresAt" });
      const far = Date.now() + 3_600_000;
      const docs = Array.from({ length: 50 }, (_, i) => ({ _id: `b${String(i).padStart(2, "0")}`, tenant: i % 2 ? "t1" : "t2", at: i, expiresAt: far }));
      assert.is(await c.insertMany(docs), 50);
      assert.is(await c.insertMany([]), 0);
      assert.is(await c.count({ tenant: "t1" }), 25);
      assert.equal(await c.get("b07"), docs[7]);
      const page = await c.find({ tenant: "t2" }, { sort: [{ field: "at", direction: -1 }], limit: 2 });
      assert.equal(page.items.map((d) => d._id), ["b48", "b46"]);
      await _rejectsWith(c.insertMany([{ _id: "b01", tenant: "t1", at: 1, expiresAt: far }]), isDuplicateKeyError, "DuplicateKeyError");
      assert.is(await c.count({ tenant: "t1" }), 25, "the clashing batch added nothing");
      // An array along an indexed path, first written by a batch: still matched element by element.
      const tagged = store.collection<Doc>("batched_tags", { indexes: [{ fields: ["tags"] }] });
      await tagged.insertMany([{ _id: "s1", tags: "solo" }]);
      assert.is(await tagged.count({ tags: "solo" }), 1);
      await tagged.insertMany([{ _id: "m1", tags: ["a", "b"] }, { _id: "m2", tags: "a" }]);
      assert.equal((await tagged.find({ tags: "a" })).items.map((d) => d._id), ["m1", "m2"]);
    },
  ],
  [
    "duplicate _id → DuplicateKeyError (typed, index _id_)",
    async ({ store }) => {
      const c = store.collection<Person>("people");
      await c.insert({ _id: "a1", name: "Ada" });
      const e = await _rejectsWith(c.insert({ _id: "a1", name: "Other" }), isDuplicateKeyError, "DuplicateKeyError");
      assert.is((e as Error).name, "DuplicateKeyError");
      assert.is((e as { index: string }).index, "_id_");
      assert.is((e as { collection: string }).collection, "people");
      assert.equal(await c.get("a1"), { _id: "a1", name: "Ada" }, "the first document is untouched");
    },
  ],
  [
    "unique index: clash → DuplicateKeyError naming the index; non-unique indexes allow repeats",
    async ({ store }) => {
      const c = store.collection<Person>("users", { indexes: [{ fields: ["email"], unique: true }, { fields: ["age"] }] });
      await c.insert({ _id: "u1", email: "a@x", age: 30 });
      await c.insert({ _id: "u2", email: "b@x", age: 30 });
      const e = await _rejectsWith(c.insert({ _id: "u3", email: "a@x" }), isDuplicateKeyError, "DuplicateKeyError");
      assert.is((e as { index: string }).index, "email_1");
      assert.is(await c.get("u3"), null);
      assert.is(await c.count({}), 2);
      // A non-sparse unique index treats a missing field as null: one such document only.
      await c.insert({ _id: "u4", age: 1 });
      await _rejectsWith(c.insert({ _id: "u5", age: 2 }), isDuplicateKeyError, "DuplicateKeyError for a second missing email");
      // Freed keys can be reused.
      assert.ok(await c.delete("u1"));
      await c.insert({ _id: "u6", email: "a@x" });
    },
  ],
  [
    "compound unique index",
    async ({ store }) => {
      const c = store.collection<Doc>("refs", { indexes: [{ fields: ["tenant", "ref"], unique: true }] });
      await c.insert({ _id: "r1", tenant: "t1", ref: "A" });
      await c.insert({ _id: "r2", tenant: "t1", ref: "B" });
      await c.insert({ _id: "r3", tenant: "t2", ref: "A" });
      const e = await _rejectsWith(c.insert({ _id: "r4", tenant: "t1", ref: "A" }), isDuplicateKeyError, "DuplicateKeyError");
      assert.is((e as { index: string }).index, "tenant_1_ref_1");
      assert.is(await c.count({}), 3);
    },
  ],
  [
    "single-field unique index: values of different types, and strings that look like JSON, are different keys",
    async ({ store }) => {
      const c = store.collection<Doc>("keys", { indexes: [{ fields: ["k"], unique: true }] });
      // The embedded store keys a single string by itself and everything else by its JSON array text:
      // none of these may be taken for another.
      const values: unknown[] = ["1", 1, "[1]", '["1"]', "", "[]", true, "true", null];
      for (const [i, k] of values.entries()) await c.insert({ _id: `k${i}`, k });
      for (const [i, k] of values.entries()) {
        assert.is((await c.findOne({ k }))?._id, `k${i}`, `findOne by ${JSON.stringify(k)}`);
        await _rejectsWith(c.insert({ _id: `again${i}`, k }), isDuplicateKeyError, `DuplicateKeyError on ${JSON.stringify(k)}`);
      }
      assert.is(await c.count({}), values.length);
      // A key given up by an update is free again; the new one is held.
      assert.ok(await c.updateOne({ _id: "k2" }, { $set: { k: "[2]" } }));
      await c.insert({ _id: "reuse", k: "[1]" });
      await _rejectsWith(c.insert({ _id: "clash", k: "[2]" }), isDuplicateKeyError, "DuplicateKeyError on the updated key");
    },
  ],
  [
    "sparse unique index: only documents having every field are constrained",
    async ({ store }) => {
      const c = store.collection<Doc>("sparse", { indexes: [{ fields: ["code"], unique: true, sparse: true }, { fields: ["a", "b"], unique: true, sparse: true }] });
      await c.insert({ _id: "s1" });
      await c.insert({ _id: "s2" });
      await c.insert({ _id: "s3", code: "X", a: 1 });
      await c.insert({ _id: "s4", code: "Y", a: 1 });
      await c.insert({ _id: "s5", a: 1, b: 2 });
      await _rejectsWith(c.insert({ _id: "s6", code: "X" }), isDuplicateKeyError, "DuplicateKeyError on code");
      await _rejectsWith(c.insert({ _id: "s7", a: 1, b: 2 }), isDuplicateKeyError, "DuplicateKeyError on (a, b)");
      await c.insert({ _id: "s8", a: 2, b: 2 });
      assert.is(await c.count({}), 6);
    },
  ],
  [
    "findOne / find: equality, $eq, $ne, $in, range operators, $exists",
    async ({ store }) => {
      const c = await _people(store);
      assert.is((await c.findOne({ email: "grace@example.com" }))?._id, "p03");
      assert.is(await c.findOne({ email: "nobody@example.com" }), null);
      assert.equal(await _ids(c, { age: 36 }), ["p01", "p06"]);
      assert.equal(await _ids(c, { age: { $eq: 36 } }), ["p01", "p06"]);
      assert.equal(await _ids(c, { age: { $ne: 36 } }), ["p02", "p03", "p04", "p05"]);
      assert.equal(await _ids(c, { age: { $in: [41, 72, 1000] } }), ["p02", "p04"]);
      assert.equal(await _ids(c, { age: { $gt: 72 } }), ["p03", "p05"]);
      assert.equal(await _ids(c, { age: { $gte: 72 } }), ["p03", "p04", "p05"]);
      assert.equal(await _ids(c, { age: { $lt: 41 } }), ["p01", "p06"]);
      assert.equal(await _ids(c, { age: { $lte: 41 } }), ["p01", "p02", "p06"]);
      assert.equal(await _ids(c, { age: { $gt: 36, $lt: 84 } }), ["p02", "p04"]);
      assert.equal(await _ids(c, { name: { $gte: "B", $lt: "G" } }), ["p04", "p05"], "string ranges compare strings");
      assert.equal(await _ids(c, { age: { $gt: "10" } }), [], "a string bound never matches numbers");
      assert.equal(await _ids(c, { email: { $exists: false } }), ["p05"]);
      assert.equal(await _ids(c, { nick: { $exists: true } }), ["p03", "p04"], "$exists counts an explicit null");
      assert.equal(await _ids(c, { nick: null }), ["p01", "p02", "p04", "p05", "p06"], "null equality matches null and missing");
      assert.equal(await _ids(c, { nick: { $ne: null } }), ["p03"]);
      assert.equal(await _ids(c, { nick: { $in: [null, "Amazing Grace"] } }), ["p01", "p02", "p03", "p04", "p05", "p06"]);
      assert.equal(await _ids(c, { tags: "cs" }), ["p02", "p03", "p04"], "equality matches an array element");
      assert.equal(await _ids(c, { tags: { $in: ["poetry", "navy"] } }), ["p01", "p03"]);
      assert.equal(await _ids(c, { age: 36, email: "ada@example.com" }), ["p01"], "fields are ANDed");
      assert.equal(await _ids(c, {}), ["p01", "p02", "p03", "p04", "p05", "p06"]);
    },
  ],
  [
    "$contains is a case-insensitive literal substring (regex characters are not special)",
    async ({ store }) => {
      const c = await _people(store);
      assert.equal(await _ids(c, { name: { $contains: "ALAN" } }), ["p02"]);
      assert.equal(await _ids(c, { name: { $contains: "a" } }), ["p01", "p02", "p03", "p04", "p05", "p06"]);
      assert.equal(await _ids(c, { name: { $contains: "ace" } }), ["p01", "p03"]);
      assert.equal(await _ids(c, { name: { $contains: "(a.k.a.) *star* [X]" } }), ["p06"]);
      assert.equal(await _ids(c, { name: { $contains: "." } }), ["p06"]);
      assert.equal(await _ids(c, { email: { $contains: "+1@" } }), ["p06"]);
      assert.equal(await _ids(c, { name: { $contains: "a.*e" } }), []);
      assert.equal(await _ids(c, { age: { $contains: "3" } }), [], "$contains never matches non-strings");
      assert.equal(await _ids(c, { tags: { $contains: "POE" } }), ["p01"], "$contains matches array elements");
    },
  ],
  [
    "$or (also nested, also beside other fields) and dotted paths",
    async ({ store }) => {
      const c = await _people(store);
      assert.equal(await _ids(c, { $or: [{ age: 41 }, { name: { $contains: "hopper" } }] }), ["p02", "p03"]);
      assert.equal(await _ids(c, { age: { $lt: 80 }, $or: [{ tags: "cs" }, { email: { $exists: false } }, { age: 36 }] }), ["p01", "p02", "p04", "p06"]);
      assert.equal(await _ids(c, { $or: [{ $or: [{ age: 85 }, { age: 84 }] }, { _id: "p01" }] }), ["p01", "p03", "p05"]);
      assert.equal(await _ids(c, { "address.city": "London" }), ["p01"]);
      assert.equal(await _ids(c, { "address.zip": { $exists: true } }), ["p01", "p05"]);
      assert.equal(await _ids(c, { "address.city": { $in: ["Boston", "Wilmslow"] } }), ["p02", "p05"]);
      assert.equal(await _ids(c, { "address.city": { $contains: "LOW" } }), ["p02"]);
      assert.equal(await _ids(c, { "address.city": null }), ["p03", "p04", "p06"]);
      assert.equal(await _ids(c, { address: { city: "Wilmslow" } }), ["p02"], "a plain object is whole-document equality");
      assert.equal(await _ids(c, { _id: { $in: ["p02", "p05", "zz"] } }), ["p02", "p05"]);
      assert.equal(await _ids(c, { _id: { $gt: "p04" } }), ["p05", "p06"]);
    },
  ],
  [
    "invalid filters, updates and cursors are refused with InvalidQueryError",
    async ({ store }) => {
      const c = await _people(store);
      const bad = (p: Promise<unknown>, what: string) => _rejectsWith(p, isInvalidQueryError, `InvalidQueryError for ${what}`);
      await bad(c.find({ age: { $where: "1" } }), "an unknown operator");
      await bad(c.find({ $and: [{ age: 1 }] }), "an unknown top-level operator");
      await bad(c.findOne({ $or: [] }), "an empty $or");
      await bad(c.count({ age: { $in: 5 } }), "$in without an array");
      await bad(c.findOne({ email: undefined }), "an undefined value (would match everything)");
      await bad(c.find({}, { cursor: "not-a-cursor" }), "a garbage cursor");
      const page = await c.find({}, { limit: 2, sort: [{ field: "age", direction: 1 }] });
      await bad(c.find({}, { cursor: page.nextCursor, sort: [{ field: "name", direction: 1 }] }), "a cursor of another sort");
      await bad(c.findOneAndUpdate({ _id: "p01" }, { $set: { _id: "other" } }), "a change of _id");
      await bad(c.findOneAndUpdate({ _id: "p01" }, { $inc: { age: "1" as unknown as number } }), "$inc with a string");
      await bad(c.findOneAndUpdate({ _id: "p01" }, { $rename: { a: "b" } } as never), "an unknown update operator");
      assert.equal(await c.get("p01"), PEOPLE[0]);
    },
  ],
  [
    "find: multi-field sort in both directions, _id as the final tie-breaker, limit",
    async ({ store }) => {
      const c = await _people(store);
      const byAgeDesc = await c.find({}, { sort: [{ field: "age", direction: -1 }] });
      assert.equal(byAgeDesc.items.map((d) => d._id), ["p03", "p05", "p04", "p02", "p01", "p06"]);
      assert.is(byAgeDesc.nextCursor, null);
      const byAgeAscNameDesc = await c.find({}, { sort: [{ field: "age", direction: 1 }, { field: "name", direction: -1 }] });
      assert.equal(byAgeAscNameDesc.items.map((d) => d._id), ["p01", "p06", "p02", "p04", "p05", "p03"]);
      const limited = await c.find({ age: { $lt: 80 } }, { sort: [{ field: "name", direction: 1 }], limit: 2 });
      assert.equal(limited.items.map((d) => d._id), ["p06", "p01"]);
      assert.type(limited.nextCursor, "string");
      const byCityDesc = await c.find({}, { sort: [{ field: "address.city", direction: -1 }] });
      assert.equal(byCityDesc.items.map((d) => d._id), ["p02", "p01", "p05", "p03", "p04", "p06"], "missing sorts last descending, ties by _id");
      const byIdDesc = await c.find({}, { sort: [{ field: "_id", direction: -1 }], limit: 3 });
      assert.equal(byIdDesc.items.map((d) => d._id), ["p06", "p05", "p04"]);
      const defaultOrder = await c.find({ age: 36 });
      assert.equal(defaultOrder.items.map((d) => d._id), ["p01", "p06"], "default order is _id ascending");
    },
  ],
  [
    "cursor pagination walks every page with no duplicates or misses (mixed types, missing fields, both directions)",
    async ({ store }) => {
      const c = store.collection<Doc>("items");
      const all: Doc[] = [];
      for (let i = 0; i < 57; i++) {
        const doc: Doc = { _id: `i${String(i).padStart(3, "0")}`, group: i % 4 === 3 ? undefined : `g${i % 3}`, score: i % 5 };
        if (i % 11 === 0) doc.score = `s${i % 2}`; // strings sort after numbers
        if (doc.group === undefined) delete doc.group; // missing sorts first ascending
        all.push(doc);
        await c.insert(doc);
      }
      for (const sort of [
        [{ field: "group", direction: 1 as const }, { field: "score", direction: -1 as const }],
        [{ field: "score", direction: 1 as const }, { field: "group", direction: -1 as const }],
        [{ field: "score", direction: -1 as const }],
        undefined,
      ]) {
        const full = await c.find({}, { sort, limit: 1000 });
        assert.is(full.items.length, 57);
        const walked: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page: Awaited<ReturnType<typeof c.find>> = await c.find({}, { sort, limit: 10, cursor });
          walked.push(...page.items.map((d) => d._id));
          cursor = page.nextCursor;
          pages++;
          assert.ok(pages < 20, "pagination terminates");
        } while (cursor);
        assert.is(pages, 6, `57 items in pages of 10 (${JSON.stringify(sort)})`);
        assert.equal(walked, full.items.map((d) => d._id), `walked order equals the full query (${JSON.stringify(sort)})`);
      }
      const filtered: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<typeof c.find>> = await c.find({ score: { $in: [0, 1] } }, { limit: 4, cursor, sort: [{ field: "score", direction: -1 }] });
        filtered.push(...page.items.map((d) => d._id));
        cursor = page.nextCursor;
      } while (cursor);
      const expected = all.filter((d) => d.score === 0 || d.score === 1);
      assert.is(filtered.length, expected.length);
      assert.is(new Set(filtered).size, filtered.length);
    },
  ],
  [
    "cursor pagination stays exact while documents are inserted between pages",
    async ({ store }) => {
      const c = store.collection<Doc>("feed");
      for (let i = 0; i < 30; i++) await c.insert({ _id: `d${String(i * 2).padStart(3, "0")}`, n: i * 2 });
      const seen: string[] = [];
      let cursor: string | null = null;
      let extra = 0;
      do {
        const page: Awaited<ReturnType<typeof c.find>> = await c.find({}, { limit: 7, cursor, sort: [{ field: "n", direction: 1 }] });
        seen.push(...page.items.map((d) => d._id));
        cursor = page.nextCursor;
        // One document before the cursor (must not appear) and one after it (must appear).
        const lastN = (page.items[page.items.length - 1]?.n as number | undefined) ?? 0;
        await c.insert({ _id: `before${extra}`, n: lastN - 1.5 });
        if (cursor) await c.insert({ _id: `after${extra}`, n: lastN + 0.5 });
        extra++;
      } while (cursor);
      assert.is(new Set(seen).size, seen.length, "no duplicates");
      assert.ok(seen.every((id) => !id.startsWith("before")), "nothing inserted behind the cursor shows up");
      for (let i = 0; i < 30; i++) assert.ok(seen.includes(`d${String(i * 2).padStart(3, "0")}`), `original d${i * 2} seen`);
      const afters = seen.filter((id) => id.startsWith("after"));
      assert.is(afters.length, extra - 1, "everything inserted ahead of the cursor shows up");
    },
  ],
  [
    "skip pagination and count; limit is capped at 1000",
    async ({ store }) => {
      const c = store.collection<Doc>("many");
      await Promise.all(Array.from({ length: 1005 }, (_, i) => c.insert({ _id: `m${String(i).padStart(4, "0")}`, even: i % 2 === 0, i })));
      assert.is(await c.count({}), 1005);
      assert.is(await c.count({ even: true }), 503);
      assert.is(await c.count({ i: { $gte: 1000 } }), 5);
      const capped = await c.find({}, { limit: 5000 });
      assert.is(capped.items.length, 1000);
      assert.type(capped.nextCursor, "string");
      const rest = await c.find({}, { cursor: capped.nextCursor });
      assert.equal(rest.items.map((d) => d._id), ["m1000", "m1001", "m1002", "m1003", "m1004"]);
      assert.is(rest.nextCursor, null);
      const sort = [{ field: "i", direction: -1 as const }];
      const p1 = await c.find({ even: false }, { sort, limit: 3, skip: 0 });
      const p2 = await c.find({ even: false }, { sort, limit: 3, skip: 3 });
      const last = await c.find({ even: false }, { sort, limit: 3, skip: 501 });
      assert.equal(p1.items.map((d) => d.i), [1003, 1001, 999]);
      assert.equal(p2.items.map((d) => d.i), [997, 995, 993]);
      assert.equal(last.items.map((d) => d.i), [1]);
      assert.is(last.nextCursor, null);
      assert.equal((await c.find({}, { skip: 2000 })).items, []);
    },
  ],
  [
    "findOneAndUpdate: $set (dotted), $inc, $unset; no match → null; unique clash → DuplicateKeyError",
    async ({ store }) => {
      const c = store.collection<Doc>("accounts", { indexes: [{ fields: ["handle"], unique: true }] });
      await c.insert({ _id: "a1", handle: "ann", balance: 10, profile: { color: "red" }, temp: 1 });
      await c.insert({ _id: "a2", handle: "bob", balance: 0 });
      const updated = await c.findOneAndUpdate({ handle: "ann" }, { $set: { "profile.size": "L", "meta.created.by": "me" }, $inc: { balance: 5, visits: 1 }, $unset: ["temp", "nothing.here"] });
      assert.equal(updated, { _id: "a1", handle: "ann", balance: 15, profile: { color: "red", size: "L" }, meta: { created: { by: "me" } }, visits: 1 });
      assert.equal(await c.get("a1"), updated);
      assert.is(await c.findOneAndUpdate({ handle: "nobody" }, { $set: { x: 1 } }), null);
      assert.is(await c.count({ x: 1 }), 0, "no upsert without the option");
      const e = await _rejectsWith(c.findOneAndUpdate({ _id: "a2" }, { $set: { handle: "ann" } }), isDuplicateKeyError, "DuplicateKeyError");
      assert.is((e as { index: string }).index, "handle_1");
      assert.is((await c.get("a2"))?.handle, "bob");
      assert.equal(await c.findOneAndUpdate({ _id: "a2" }, { $inc: { balance: -2.5 } }), { _id: "a2", handle: "bob", balance: -2.5 });
      assert.equal(await c.findOneAndUpdate({ _id: "a2" }, {}), { _id: "a2", handle: "bob", balance: -2.5 }, "an empty update reads");
    },
  ],
  [
    "findOneAndUpdate is a compare-and-set: of two updates expecting the same version, one applies",
    async ({ store }) => {
      const c = store.collection<Doc>("cas");
      for (let round = 0; round < 10; round++) {
        await c.insert({ _id: `x${round}`, version: 1, state: "new" });
        const results = await Promise.all(
          ["A", "B", "C", "D"].map((who) => c.findOneAndUpdate({ _id: `x${round}`, version: 1 }, { $set: { state: who }, $inc: { version: 1 } })),
        );
        const winners = results.filter((r) => r !== null);
        assert.is(winners.length, 1, `round ${round}: exactly one of four applies`);
        assert.is(winners[0]!.version, 2);
        assert.equal(await c.get(`x${round}`), winners[0]);
      }
      await c.insert({ _id: "x", version: 2, state: "A" });
      assert.is(await c.findOneAndUpdate({ _id: "x", version: 1 }, { $set: { state: "late" } }), null, "a stale version never applies");
      assert.is(await c.findOneAndUpdate({ _id: "x", state: { $in: ["A", "B"] } }, { $set: { state: "done" } }).then((d) => d?.state), "done");
    },
  ],
  [
    "updateOne: a conditional update that hands nothing back; no match → false; unique clash → DuplicateKeyError; expired → false",
    async ({ store, clock }) => {
      const c = store.collection<Doc>("wallets", { indexes: [{ fields: ["handle"], unique: true }], ttlField: "exp" });
      await c.insert({ _id: "w1", handle: "ann", balance: 10, profile: { color: "red" }, temp: 1 });
      await c.insert({ _id: "w2", handle: "bob", balance: 0 });
      const profile = { size: "L" };
      assert.is(await c.updateOne({ _id: "w1", balance: { $gte: 10 } }, { $set: { "profile.size": profile.size, tags: ["a"] }, $inc: { balance: -10, n: 1 }, $unset: ["temp"] }), true);
      assert.equal(await c.get("w1"), { _id: "w1", handle: "ann", balance: 0, profile: { color: "red", size: "L" }, tags: ["a"], n: 1 });
      assert.is(await c.updateOne({ _id: "w1", balance: { $gte: 10 } }, { $inc: { balance: -10 } }), false, "the condition no longer holds");
      assert.is(await c.updateOne({ handle: "nobody" }, { $set: { x: 1 } }), false, "no match, no upsert");
      assert.is(await c.count({ x: 1 }), 0);
      const e = await _rejectsWith(c.updateOne({ _id: "w2" }, { $set: { handle: "ann" } }), isDuplicateKeyError, "DuplicateKeyError");
      assert.is((e as { index: string }).index, "handle_1");
      assert.is((await c.get("w2"))?.handle, "bob");
      await _rejectsWith(c.updateOne({ _id: "w2" }, { $inc: { handle: 1 } }), isInvalidQueryError, "InvalidQueryError");
      await _rejectsWith(c.updateOne({ _id: "w2" }, { $set: { _id: "x" } }), isInvalidQueryError, "InvalidQueryError");
      // The update's values are copied: changing them afterwards changes nothing stored.
      const tags = ["x"];
      await c.updateOne({ _id: "w2" }, { $set: { tags } });
      tags.push("mutated");
      assert.equal((await c.get("w2"))?.tags, ["x"]);
      // TTL: an expired document is not updated; setting, extending and removing the expiry work.
      await c.updateOne({ _id: "w2" }, { $set: { exp: clock.now() + 1000 } });
      await c.updateOne({ _id: "w1" }, { $set: { exp: clock.now() + 1000 } });
      assert.is(await c.updateOne({ _id: "w1" }, { $inc: { exp: 10_000 } }), true);
      clock.advance(1001);
      assert.is(await c.updateOne({ _id: "w2" }, { $set: { x: 1 } }), false, "expired");
      assert.is(await c.get("w2"), null);
      assert.ok(await c.get("w1"), "extended by $inc");
      assert.is(await c.updateOne({ _id: "w1" }, { $unset: ["exp"] }), true);
      clock.advance(50_000);
      assert.ok(await c.get("w1"), "no expiry any more");
      assert.is(await c.updateOne({ _id: "w1" }, {}), true, "an empty update only matches");
    },
  ],
  [
    "updateOne is atomic: one of four compare-and-sets applies; 40 racing conditional debits never overdraw (10 rounds)",
    async ({ store }) => {
      const c = store.collection<Doc>("atomic");
      for (let round = 0; round < 10; round++) {
        await c.insert({ _id: `v${round}`, version: 1, state: "new" });
        const results = await Promise.all(
          ["A", "B", "C", "D"].map((who) => c.updateOne({ _id: `v${round}`, version: 1 }, { $set: { state: who }, $inc: { version: 1 } })),
        );
        assert.is(results.filter(Boolean).length, 1, `round ${round}: exactly one of four applies`);
        assert.is((await c.get(`v${round}`))?.version, 2);
        // A balance of 100 covers 20 debits of 5; 40 race for it.
        await c.insert({ _id: `b${round}`, balance: 100 });
        const debits = await Promise.all(
          Array.from({ length: 40 }, () => c.updateOne({ _id: `b${round}`, balance: { $gte: 5 } }, { $inc: { balance: -5, debits: 1 } })),
        );
        assert.is(debits.filter(Boolean).length, 20, `round ${round}: exactly 20 debits succeed`);
        const after = await c.get(`b${round}`);
        assert.is(after?.balance, 0, `round ${round}: never below zero`);
        assert.is(after?.debits, 20);
      }
    },
  ],
  [
    "upsert inserts {equality fields, $setOnInsert, $set, $inc} once, then updates without $setOnInsert",
    async ({ store }) => {
      const c = store.collection<Doc>("counters", { indexes: [{ fields: ["key"], unique: true }] });
      const first = await c.findOneAndUpdate(
        { key: "k1", kind: { $eq: "daily" }, n: { $gte: 0 }, "scope.tenant": "t1" },
        { $setOnInsert: { createdBy: "upsert" }, $set: { touched: true }, $inc: { n: 1 } },
        { upsert: true },
      );
      assert.ok(first);
      assert.type(first!._id, "string");
      assert.ok(first!._id.length > 0);
      const { _id, ...rest } = first!;
      assert.equal(rest, { key: "k1", kind: "daily", scope: { tenant: "t1" }, createdBy: "upsert", touched: true, n: 1 });
      const second = await c.findOneAndUpdate({ key: "k1" }, { $setOnInsert: { createdBy: "again" }, $inc: { n: 1 } }, { upsert: true });
      assert.equal(second, { ...first!, n: 2 });
      assert.is(await c.count({}), 1);
      const withId = await c.findOneAndUpdate({ _id: "fixed" }, { $set: { key: "k2" } }, { upsert: true });
      assert.equal(withId, { _id: "fixed", key: "k2" });
      const idFromSetOnInsert = await c.findOneAndUpdate({ key: "k3" }, { $setOnInsert: { _id: "chosen" } }, { upsert: true });
      assert.equal(idFromSetOnInsert, { _id: "chosen", key: "k3" });
      const other = await c.findOneAndUpdate({ key: "k4" }, { $set: { v: 1 } }, { upsert: true });
      assert.is.not(other!._id, first!._id, "generated ids differ");
      // The would-be insert clashes with a unique key held by a document the filter does not match.
      await _rejectsWith(c.findOneAndUpdate({ key: "k1", n: 99 }, { $set: { v: 1 } }, { upsert: true }), isDuplicateKeyError, "DuplicateKeyError");
    },
  ],
  [
    "delete and deleteMany",
    async ({ store }) => {
      const c = await _people(store);
      assert.is(await c.delete("p01"), true);
      assert.is(await c.delete("p01"), false);
      assert.is(await c.delete("nope"), false);
      assert.is(await c.get("p01"), null);
      assert.is(await c.deleteMany({ tags: "cs" }), 3);
      assert.is(await c.deleteMany({ tags: "cs" }), 0);
      assert.equal(await _ids(c, {}), ["p05", "p06"]);
      await c.insert({ _id: "p01", name: "back" });
      assert.is(await c.deleteMany({}), 3);
      assert.is(await c.count({}), 0);
    },
  ],
  [
    "TTL: expired documents are invisible to every read and free their keys",
    async ({ store, clock }) => {
      const c = store.collection<Doc>("sessions", { ttlField: "expiresAt", indexes: [{ fields: ["token"], unique: true }] });
      const t0 = clock.now();
      await c.insert({ _id: "s1", token: "T1", expiresAt: t0 + 1000 });
      await c.insert({ _id: "s2", token: "T2", expiresAt: t0 + 5000 });
      await c.insert({ _id: "s3", token: "T3" });
      await c.insert({ _id: "s4", token: "T4", expiresAt: "not a number" });
      await c.insert({ _id: "s6", token: "T6", expiresAt: t0 + 1000 });
      assert.is(await c.count({}), 5);
      clock.advance(1000);
      assert.ok(await c.get("s1"), "visible until the expiry instant");
      clock.advance(1);
      assert.is(await c.get("s1"), null);
      assert.is(await c.findOne({ token: "T1" }), null);
      assert.equal((await c.find({})).items.map((d) => d._id), ["s2", "s3", "s4"]);
      assert.is(await c.count({}), 3);
      assert.is(await c.count({ token: "T1" }), 0);
      assert.is(await c.findOneAndUpdate({ _id: "s1" }, { $set: { x: 1 } }), null);
      assert.is(await c.claim({ _id: "s1" }, "w", 1000), null);
      assert.is(await c.delete("s1"), false);
      assert.is(await c.deleteMany({ token: "T1" }), 0);
      // Expired documents no longer hold their unique keys or their _id.
      await c.insert({ _id: "s5", token: "T1" });
      await c.insert({ _id: "s6", token: "T6b", expiresAt: t0 + 10_000 });
      assert.equal(await c.get("s6"), { _id: "s6", token: "T6b", expiresAt: t0 + 10_000 });
      clock.advance(4000);
      assert.is(await c.get("s2"), null);
      const up = await c.findOneAndUpdate({ token: "T2" }, { $set: { expiresAt: clock.now() + 1000 } }, { upsert: true });
      assert.ok(up && up._id !== "s2", "an upsert over an expired key inserts a new document");
      // Extending a TTL keeps the document; $unset makes it permanent.
      assert.ok(await c.findOneAndUpdate({ _id: "s6" }, { $inc: { expiresAt: 100_000 } }));
      assert.ok(await c.findOneAndUpdate({ _id: "s5" }, { $set: { expiresAt: clock.now() + 10 } }));
      assert.ok(await c.findOneAndUpdate({ _id: "s5" }, { $unset: ["expiresAt"] }));
      clock.advance(50_000);
      assert.ok(await c.get("s6"));
      assert.ok(await c.get("s5"));
      assert.ok(await c.get("s4"), "a non-numeric ttl value never expires");
      assert.is(await c.get(up!._id), null);
      assert.equal((await c.find({})).items.map((d) => d._id).sort(), ["s3", "s4", "s5", "s6"]);
    },
  ],
  [
    "leases: claim, second claim → null, expired lease claimable by another owner, release only by the holder",
    async ({ store, clock }) => {
      const c = store.collection<Doc & { status: string; priority?: number }>("jobs");
      await c.insert({ _id: "j2", status: "pending", priority: 1 });
      await c.insert({ _id: "j1", status: "pending", priority: 5 });
      await c.insert({ _id: "j3", status: "done" });
      const t0 = clock.now();
      const a = await c.claim({ status: "pending" }, "worker-a", 30_000);
      assert.is(a?._id, "j1", "oldest _id first");
      assert.equal(a?.lease, { owner: "worker-a", until: t0 + 30_000 });
      assert.equal((await c.get("j1"))?.lease, { owner: "worker-a", until: t0 + 30_000 });
      const b = await c.claim({ status: "pending" }, "worker-b", 30_000);
      assert.is(b?._id, "j2");
      assert.is(await c.claim({ status: "pending" }, "worker-c", 30_000), null, "everything pending is leased");
      assert.is(await c.claim({ _id: "j1" }, "worker-c", 30_000), null);
      assert.is(await c.release("j1", "worker-b"), false, "a non-owner cannot release");
      assert.equal((await c.get("j1"))?.lease, { owner: "worker-a", until: t0 + 30_000 });
      clock.advance(30_001);
      const stolen = await c.claim({ _id: "j1" }, "worker-c", 10_000);
      assert.equal(stolen?.lease, { owner: "worker-c", until: clock.now() + 10_000 });
      assert.is(await c.release("j1", "worker-a"), false, "the previous holder's release is a no-op");
      assert.is((await c.get("j1"))?.lease && ((await c.get("j1"))!.lease as Lease).owner, "worker-c");
      assert.is(await c.release("j1", "worker-c"), true);
      assert.is((await c.get("j1"))?.lease, undefined);
      assert.is(await c.release("j1", "worker-c"), false);
      assert.is(await c.release("nope", "worker-c"), false);
      const bySort = await c.claim({ $or: [{ status: "pending" }, { status: "done" }] }, "worker-d", 1000, [{ field: "priority", direction: 1 }]);
      assert.is(bySort?._id, "j3", "missing priority sorts first ascending");
      const byPriority = await c.claim({}, "worker-d", 1000, [{ field: "priority", direction: -1 }]);
      assert.is(byPriority?._id, "j1");
    },
  ],
  [
    "concurrency: 50 parallel inserts of one unique key → exactly one wins",
    async ({ store }) => {
      const c = store.collection<Doc>("idem", { indexes: [{ fields: ["key"], unique: true }] });
      const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => c.insert({ _id: `r${i}`, key: "same" })));
      const won = results.filter((r) => r.status === "fulfilled");
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      assert.is(won.length, 1);
      assert.is(lost.length, 49);
      assert.ok(lost.every((r) => isDuplicateKeyError(r.reason)), "every loser gets DuplicateKeyError");
      assert.is(await c.count({ key: "same" }), 1);
      const sameId = await Promise.allSettled(Array.from({ length: 50 }, () => c.insert({ _id: "one", key: "other" })));
      assert.is(sameId.filter((r) => r.status === "fulfilled").length, 1);
    },
  ],
  [
    "concurrency: 50 parallel upserts with $inc of one filter → one document, counter 50",
    async ({ store }) => {
      const c = store.collection<Doc>("hits", { indexes: [{ fields: ["day", "route"], unique: true }] });
      const results = await Promise.all(
        Array.from({ length: 50 }, () => c.findOneAndUpdate({ day: "2025-01-01", route: "/x" }, { $inc: { n: 1 }, $setOnInsert: { first: true } }, { upsert: true })),
      );
      assert.ok(results.every((r) => r !== null));
      assert.is(await c.count({}), 1);
      const doc = await c.findOne({ day: "2025-01-01", route: "/x" });
      assert.is(doc?.n, 50);
      assert.is(doc?.first, true);
      assert.equal(results.map((r) => r!.n).sort((x, y) => (x as number) - (y as number)), Array.from({ length: 50 }, (_, i) => i + 1), "each upsert saw its own increment");
    },
  ],
  [
    "concurrency: two workers racing claim for one document → exactly one holder (20 rounds)",
    async ({ store }) => {
      const c = store.collection<Doc>("race");
      for (let round = 0; round < 20; round++) {
        await c.insert({ _id: `job${round}`, round });
        const [a, b] = await Promise.all([c.claim({ round }, "A", 60_000), c.claim({ round }, "B", 60_000)]);
        const holders = [a, b].filter((x) => x !== null);
        assert.is(holders.length, 1, `round ${round}`);
        assert.is((await c.get(`job${round}`))?.lease && ((await c.get(`job${round}`))!.lease as Lease).owner, holders[0]!.lease.owner);
      }
    },
  ],
];
