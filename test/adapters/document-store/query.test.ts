/**
 * The embedded (SQLite) store's query paths against a plain reference: compiled filters (the JS
 * re-check of rows SQL cannot decide: ranges, `$in`, `$contains`, `$exists`, `$ne`, `$or`, arrays,
 * null/missing, mixed types), and the store's counts and sorted pages (ties, ids appended in and out
 * of order, skip, cursor pagination through every page, TTL, after updates and deletes). The
 * reference matches by the port's stated semantics and sorts by MongoDB's cross-type order (null and
 * missing < numbers < strings < documents < arrays < booleans), two arrays by their JSON text: the
 * SQLite store's documented order among arrays (docs/decisions.md, "Known differences").
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileFilter, getPath, normalizeSort } from "../../../adapters/document-store/filter.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import type { Doc, Filter, SortSpec } from "../../../adapters/ports.ts";

// Deterministic pseudo-random numbers (mulberry32).
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ["alpha", "Beta", "GAMMA", "delta", "Smith", "smithers", "omega"];

function makeDoc(id: string, i: number, r: () => number): Doc {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const doc: Doc = { _id: id };
  const n = r();
  // `n`: numbers mostly, sometimes a string, null, an array or missing (cross-type order)
  if (n < 0.7) doc.n = Math.floor(r() * 50);
  else if (n < 0.78) doc.n = String(Math.floor(r() * 50));
  else if (n < 0.84) doc.n = null;
  else if (n < 0.92) doc.n = [Math.floor(r() * 50), Math.floor(r() * 50)];
  if (r() < 0.9) doc.s = pick(WORDS) + (r() < 0.5 ? ` ${pick(WORDS)}` : "");
  doc.status = pick(["open", "paid", "void", null]);
  if (r() < 0.5) doc.tags = [pick(WORDS), pick(WORDS)];
  doc.nested = { v: Math.floor(r() * 10), w: r() < 0.5 ? pick(WORDS) : null };
  doc.seq = i;
  if (r() < 0.3) doc.items = [{ k: pick(["a", "b"]) }, { k: pick(["b", "c"]) }];
  return doc;
}

const matchesFilter = (doc: Doc, filter: Filter): boolean => compileFilter(filter)(doc);

/** MongoDB's cross-type order; two arrays by the UTF-8 bytes of their JSON text (the SQLite store's order). */
function refCompare(a: unknown, b: unknown): number {
  const rank = (v: unknown): number =>
    v === null || v === undefined ? 1 : typeof v === "number" ? 2 : typeof v === "string" ? 3 : typeof v === "boolean" ? 8 : Array.isArray(v) ? 5 : 4;
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if (ra === 1) return 0;
  if (ra === 2 || ra === 8) return a === b ? 0 : (a as number) < (b as number) ? -1 : 1;
  if (ra === 3) return Buffer.compare(Buffer.from(a as string), Buffer.from(b as string));
  return Buffer.compare(Buffer.from(JSON.stringify(a)), Buffer.from(JSON.stringify(b)));
}

/** The reference order of a page: the normalized sort's values, `_id` last. */
function refSorted(docs: readonly Doc[], sortIn: SortSpec[] | undefined): string[] {
  const sort = normalizeSort(sortIn);
  const keyed = docs.map((d) => ({ d, k: sort.map((s) => getPath(d, s.field) ?? null) }));
  keyed.sort((a, b) => {
    for (let i = 0; i < sort.length; i++) {
      const c = refCompare(a.k[i], b.k[i]);
      if (c !== 0) return sort[i]!.direction === 1 ? c : -c;
    }
    return 0;
  });
  return keyed.map((e) => e.d._id);
}

/** The reference matcher: one condition on one value, the module's semantics written out plainly. */
function refCond(v: unknown, cond: unknown): boolean {
  const isOps = typeof cond === "object" && cond !== null && !Array.isArray(cond) && Object.keys(cond).length > 0 && Object.keys(cond)[0]!.startsWith("$");
  const anyOf = (f: (x: unknown) => boolean): boolean => f(v) || (Array.isArray(v) && v.some(f));
  const eq = (q: unknown): boolean =>
    q === null ? v === undefined || anyOf((x) => x === null) : anyOf((x) => JSON.stringify(x) === JSON.stringify(q) && typeof x === typeof q);
  if (!isOps) return eq(cond);
  return Object.entries(cond as Record<string, unknown>).every(([op, q]) => {
    const range = (ok: (c: number) => boolean): boolean =>
      anyOf((x) => typeof x === typeof q && (typeof x === "number" || typeof x === "string") && ok((x as number) < (q as number) ? -1 : (x as number) > (q as number) ? 1 : 0));
    switch (op) {
      case "$eq":
        return eq(q);
      case "$ne":
        return !eq(q);
      case "$in":
        return (q as unknown[]).some(eq);
      case "$gt":
        return range((c) => c > 0);
      case "$gte":
        return range((c) => c >= 0);
      case "$lt":
        return range((c) => c < 0);
      case "$lte":
        return range((c) => c <= 0);
      case "$exists":
        return (v !== undefined) === q;
      case "$contains":
        return anyOf((x) => typeof x === "string" && x.toLowerCase().includes((q as string).toLowerCase()));
      default:
        throw new Error(op);
    }
  });
}

function refMatches(doc: Doc, filter: Filter): boolean {
  return Object.entries(filter).every(([k, c]) => (k === "$or" ? (c as Filter[]).some((f) => refMatches(doc, f)) : refCond(getPath(doc, k), c)));
}

const FILTERS: Filter[] = [
  {},
  { n: { $gte: 10, $lt: 30 } },
  { n: { $gt: "2" } },
  { n: { $lte: 5 } },
  { n: null },
  { n: { $ne: null } },
  { n: { $exists: false } },
  { n: { $in: [1, 2, 3, "4", null] } },
  { n: { $in: [[1, 2]] } },
  { status: { $in: ["open", "paid"] }, n: { $gt: 20 } },
  { status: "paid" },
  { s: { $contains: "SMITH" } },
  { tags: { $contains: "ALP" } },
  { tags: "Beta" },
  { "nested.v": { $gte: 3, $lte: 6 } },
  { "nested.w": { $contains: "ga" } },
  { nested: { v: 4, w: null } },
  { "items.k": "c" },
  { "items.k": { $in: ["a"] }, "items.0.k": "b" },
  { $or: [{ s: { $contains: "omega" } }, { n: { $lt: 3 } }] },
  { $or: [{ status: null }, { tags: { $exists: true } }], n: { $gte: 0 } },
  { s: { $gte: "GAMMA", $lt: "smith" } },
  { seq: { $gte: 100, $lt: 2900 }, status: { $ne: "void" } },
];

const SORTS: Array<SortSpec[] | undefined> = [
  undefined,
  [{ field: "_id", direction: -1 }],
  [{ field: "n", direction: 1 }],
  [{ field: "n", direction: -1 }],
  [{ field: "seq", direction: -1 }],
  [{ field: "seq", direction: 1 }],
  [{ field: "status", direction: 1 }, { field: "n", direction: -1 }],
  [{ field: "nested.w", direction: -1 }, { field: "_id", direction: -1 }],
  [{ field: "s", direction: 1 }],
];

test("compiled filters match the reference on every document", () => {
  const r = rng(7);
  const docs = Array.from({ length: 600 }, (_, i) => makeDoc(`x${i}`, i, r));
  for (const f of FILTERS) {
    for (const d of docs) assert.is(matchesFilter(d, f), refMatches(d, f), `${JSON.stringify(f)} on ${JSON.stringify(d)}`);
  }
  // Edge operands: a NaN bound and `$in` with undefined keep their former meaning.
  const d = { _id: "a", n: 3 };
  assert.is(matchesFilter(d, { n: { $gte: Number.NaN } }), true);
  assert.is(matchesFilter(d, { n: { $gt: Number.NaN } }), false);
  assert.is(matchesFilter(d, { n: { $lte: Number.NaN } }), true);
  assert.is(matchesFilter(d, { m: { $in: [undefined] } }), true);
  assert.is(matchesFilter(d, { m: { $in: [null] } }), true);
  assert.is(matchesFilter(d, { m: { $in: [0] } }), false);
});

test("lists sorted by one field (the sorted index: ties, skip, cursor, both directions) match the reference, also after updates, deletes and out-of-order inserts", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  try {
    const col = store.collection("grow");
    const docs: Doc[] = [];
    // ids not in insertion order, days growing with ties (five documents a day), a filter on parity
    for (let i = 0; i < 2000; i++) {
      const doc: Doc = { _id: `g${String((i * 7919) % 2000).padStart(5, "0")}`, day: Math.floor(i / 5), odd: i % 2 === 1, seq: i };
      docs.push(doc);
      await col.insert(doc);
    }
    const check = async (what: string): Promise<void> => {
      for (const filter of [{}, { odd: true }] as Filter[]) {
        for (const direction of [-1, 1] as const) {
          const expected = refSorted(docs.filter((d) => matchesFilter(d, filter)), [{ field: "day", direction }]);
          const label = `${what}: ${JSON.stringify(filter)} day ${direction}`;
          for (const [limit, skip] of [[1, 0], [7, 0], [7, 3], [50, 1300], [1000, 0]] as const) {
            const page = await col.find(filter, { sort: [{ field: "day", direction }], limit, skip });
            assert.equal(page.items.map((d) => d._id), expected.slice(skip, skip + limit), `${label} limit ${limit} skip ${skip}`);
            assert.is(page.nextCursor !== null, expected.length > skip + limit, `${label} cursor`);
          }
          const seen: string[] = [];
          let cursor: string | null = null;
          do {
            const page: { items: Doc[]; nextCursor: string | null } = await col.find(filter, { sort: [{ field: "day", direction }], limit: 333, cursor });
            seen.push(...page.items.map((d) => d._id));
            cursor = page.nextCursor;
          } while (cursor);
          assert.equal(seen, expected, `${label}: every page through the cursor`);
        }
      }
    };
    await check("growing");
    // An update that moves a document's day back, a delete, then inserts with an older day and a
    // day shared with others: still exact.
    const moved = { ...docs[1500]!, day: 3 };
    await col.findOneAndUpdate({ _id: moved._id }, { $set: { day: 3 } });
    docs[1500] = moved;
    await check("after an update");
    // Updates that leave the day alone (the sorted index keeps the position and takes the new
    // version): lists see the new values.
    for (const i of [0, 700, 1999]) {
      await col.updateOne({ _id: docs[i]!._id }, { $set: { odd: !docs[i]!.odd, seq: -i } });
      docs[i] = { ...docs[i]!, odd: !docs[i]!.odd, seq: -i };
    }
    await check("after updates that keep the day");
    const listed = new Map<string, unknown>();
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page: { items: Doc[]; nextCursor: string | null } = await col.find({}, { sort: [{ field: "day", direction: 1 }], limit: 1000, cursor });
      for (const d of page.items) listed.set(d._id, d.seq);
      cursor = page.nextCursor;
    }
    for (const i of [0, 700, 1999]) assert.is(listed.get(docs[i]!._id), -i, "the sorted list holds the new version");
    await col.delete(docs[10]!._id);
    docs.splice(10, 1);
    await col.updateOne({ _id: docs[20]!._id }, { $unset: ["day"] });
    const { day: _gone, ...unset } = docs[20]!;
    docs[20] = unset as Doc;
    await check("after a delete and an unset");
    for (const late of [{ _id: "g-late", day: 10, odd: true, seq: 2000 }, { _id: "a-early", day: 10, odd: false, seq: 2001 }] as Doc[]) {
      await col.insert(late);
      docs.push(late);
    }
    await check("after older inserts");
  } finally {
    await store.close();
  }
});

for (const [label, ordered] of [
  ["ids appended in order", true],
  ["ids appended out of order", false],
] as const) {
  test(`find pages (skip, cursor, every sort) match the reference: ${label}`, async () => {
    const r = rng(ordered ? 11 : 12);
    const clock = { now: 1_000_000 };
    const store = await createSqliteDocumentStore({ file: ":memory:", clock: () => clock.now });
    try {
      const col = store.collection("q", { ttlField: "expiresAt" });
      const all: Doc[] = [];
      const COUNT = 1500;
      for (let i = 0; i < COUNT; i++) {
        const id = ordered ? `id${String(i).padStart(6, "0")}` : `id${String((i * 7919) % COUNT).padStart(6, "0")}`;
        const doc = makeDoc(id, i, r);
        if (i % 17 === 0) doc.expiresAt = clock.now - 1; // expired: invisible
        else if (i % 19 === 0) doc.expiresAt = clock.now + 1_000;
        all.push(doc);
        await col.insert(doc);
      }
      // A delete (keeps `_id` order); out of order, also a re-insert at the end of the Map.
      await col.delete(all[5]!._id);
      if (ordered) all.splice(5, 1);
      else await col.insert(all[5]!);
      const visible = all.filter((d) => !(typeof d.expiresAt === "number" && d.expiresAt < clock.now));
      const byId = new Map(visible.map((d) => [d._id, d]));

      for (const f of FILTERS) {
        const matching = [...byId.values()].filter((d) => refMatches(d, f));
        assert.is(await col.count(f), matching.length, `count ${JSON.stringify(f)}`);
        for (const sortIn of SORTS) {
          const expected = refSorted(matching, sortIn);
          const what = `${JSON.stringify(f)} sort ${JSON.stringify(sortIn)}`;
          for (const limit of [1, 7, 50]) {
            const first = await col.find(f, { sort: sortIn, limit });
            assert.equal(first.items.map((d) => d._id), expected.slice(0, limit), `${what} limit ${limit}`);
            assert.is(first.nextCursor !== null, expected.length > limit, `${what} limit ${limit} cursor`);
            for (const skip of [3, 600]) {
              const page = await col.find(f, { sort: sortIn, limit, skip });
              assert.equal(page.items.map((d) => d._id), expected.slice(skip, skip + limit), `${what} limit ${limit} skip ${skip}`);
            }
          }
          // Every page through the cursor, 400 at a time.
          const seen: string[] = [];
          let cursor: string | null = null;
          do {
            const page: { items: Doc[]; nextCursor: string | null } = await col.find(f, { sort: sortIn, limit: 400, cursor });
            seen.push(...page.items.map((d) => d._id));
            cursor = page.nextCursor;
          } while (cursor);
          assert.equal(seen, expected, `${what} cursor pages`);
        }
      }
    } finally {
      await store.close();
    }
  });
}

test("claim takes the first free document in sort order", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:", clock: () => 1_000 });
  try {
    const col = store.collection("jobs");
    for (let i = 0; i < 3000; i++) await col.insert({ _id: `j${String(i).padStart(5, "0")}`, prio: i % 10, seq: i });
    const a = await col.claim({ prio: { $gte: 5 } }, "w", 1000, [{ field: "seq", direction: -1 }]);
    assert.is(a?._id, "j02999");
    const b = await col.claim({ prio: { $gte: 5 } }, "w", 1000, [{ field: "prio", direction: 1 }, { field: "seq", direction: -1 }]);
    assert.is(b?._id, "j02995");
    const c = await col.claim({}, "w", 1000);
    assert.is(c?._id, "j00000");
  } finally {
    await store.close();
  }
});

test.run();
