/**
 * Micro-benchmark of the embedded document store's query paths (not a test): seeds 100 000
 * documents, oldest first, into the unstorage memory store and times the in-memory scans.
 *
 *   npx tsx bench/document-store-100k.ts
 *   DS_BENCH_COUNT=20000 DS_BENCH_RUNS=50 npx tsx bench/document-store-100k.ts
 *
 * Each query runs DS_BENCH_WARMUP times (default 5, discarded), then DS_BENCH_RUNS times (default
 * 20); median / min / mean ms are printed. Every answer is checked against a plain-JavaScript
 * reference computed over the seeded documents (a fast wrong answer measures nothing).
 */
import { performance } from "node:perf_hooks";
import { createUnstorageDocumentStore } from "../adapters/document-store/unstorage.ts";
import type { Doc, Filter, FindOptions } from "../adapters/ports.ts";

const COUNT = Number(process.env.DS_BENCH_COUNT ?? 100_000);
const RUNS = Number(process.env.DS_BENCH_RUNS ?? 20);
const WARMUP = Number(process.env.DS_BENCH_WARMUP ?? 5);
const START = Date.parse("2026-01-01T00:00:00.000Z");
const STEP_MS = 60_000;
const STATUSES = ["pending", "paid", "expired", "cancelled"] as const;
const NAMES = ["Ada Lovelace", "Grace Hopper", "John Smith", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov", "Mary Smithers", "Ken Thompson"];

interface BenchDoc extends Doc {
  createdAt: string;
  status: string;
  amount: number;
  reference: string;
  accountName: string;
  tags: string[];
}

const store = await createUnstorageDocumentStore({ driver: "memory" });
const col = store.collection<BenchDoc>("bench_docs");

const seeded: BenchDoc[] = [];
const seedStart = performance.now();
for (let i = 0; i < COUNT; i++) {
  const doc: BenchDoc = {
    _id: `d${String(i).padStart(8, "0")}`, // ascending with creation time, as generated ids are
    createdAt: new Date(START + i * STEP_MS).toISOString(),
    status: STATUSES[(i * 7) % STATUSES.length]!,
    amount: (i * 7919) % 100_000,
    reference: `INV-${(i * 104_729) % 1_000_003}`,
    accountName: NAMES[(i * 13) % NAMES.length]!,
    tags: i % 3 === 0 ? ["vip", "eu"] : ["eu"],
  };
  seeded.push(doc);
  await col.insert(doc);
}
const seedMs = performance.now() - seedStart;

const at = (i: number): string => new Date(START + i * STEP_MS).toISOString();
const rangeLo = at(Math.floor(COUNT * 0.25));
const rangeHi = at(Math.floor(COUNT * 0.75));

interface Case {
  name: string;
  run: () => Promise<unknown>;
  expect: () => unknown;
}

const byCreatedDesc = (a: BenchDoc, b: BenchDoc): number =>
  a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a._id < b._id ? -1 : a._id > b._id ? 1 : 0;
const ids = (page: { items: BenchDoc[] }): string[] => page.items.map((d) => d._id);
const find = async (filter: Filter, options: FindOptions): Promise<string[]> => ids(await col.find(filter, options));

const search = "smith";
const searchFilter: Filter = {
  $or: [{ reference: { $contains: search } }, { accountName: { $contains: search } }],
};
const searchHit = (d: BenchDoc): boolean => d.reference.toLowerCase().includes(search) || d.accountName.toLowerCase().includes(search);
const inRange = (d: BenchDoc): boolean => d.createdAt >= rangeLo && d.createdAt < rangeHi;

const cases: Case[] = [
  {
    name: "count createdAt range (50 %)",
    run: () => col.count({ createdAt: { $gte: rangeLo, $lt: rangeHi } }),
    expect: () => seeded.filter(inRange).length,
  },
  {
    name: "count amount range + $in status",
    run: () => col.count({ amount: { $gt: 10_000, $lte: 60_000 }, status: { $in: ["paid", "pending"] } }),
    expect: () => seeded.filter((d) => d.amount > 10_000 && d.amount <= 60_000 && (d.status === "paid" || d.status === "pending")).length,
  },
  {
    name: "find newest 50 (createdAt DESC)",
    run: () => find({}, { sort: [{ field: "createdAt", direction: -1 }], limit: 50 }),
    expect: () => [...seeded].sort(byCreatedDesc).slice(0, 50).map((d) => d._id),
  },
  {
    name: "find oldest 50 (createdAt ASC)",
    run: () => find({}, { sort: [{ field: "createdAt", direction: 1 }], limit: 50 }),
    expect: () => seeded.slice(0, 50).map((d) => d._id),
  },
  {
    name: "find newest 50, skip 500 (DESC)",
    run: () => find({}, { sort: [{ field: "createdAt", direction: -1 }], limit: 50, skip: 500 }),
    expect: () => [...seeded].sort(byCreatedDesc).slice(500, 550).map((d) => d._id),
  },
  {
    name: "find $contains search (default sort)",
    run: () => find(searchFilter, { limit: 50 }),
    expect: () => seeded.filter(searchHit).slice(0, 50).map((d) => d._id),
  },
  {
    name: "find $contains search (createdAt DESC)",
    run: () => find(searchFilter, { sort: [{ field: "createdAt", direction: -1 }], limit: 50 }),
    expect: () => seeded.filter(searchHit).sort(byCreatedDesc).slice(0, 50).map((d) => d._id),
  },
  {
    name: "count $contains search",
    run: () => col.count(searchFilter),
    expect: () => seeded.filter(searchHit).length,
  },
  {
    name: "find status + range (createdAt DESC)",
    run: () => find({ status: "paid", createdAt: { $gte: rangeLo, $lt: rangeHi } }, { sort: [{ field: "createdAt", direction: -1 }], limit: 50 }),
    expect: () => seeded.filter((d) => d.status === "paid" && inRange(d)).sort(byCreatedDesc).slice(0, 50).map((d) => d._id),
  },
  {
    name: "find status + range (default sort)",
    run: () => find({ status: "paid", createdAt: { $gte: rangeLo, $lt: rangeHi } }, { limit: 50 }),
    expect: () => seeded.filter((d) => d.status === "paid" && inRange(d)).slice(0, 50).map((d) => d._id),
  },
  {
    name: "find newest 50 by _id DESC",
    run: () => find({}, { sort: [{ field: "_id", direction: -1 }], limit: 50 }),
    expect: () => seeded.slice(-50).reverse().map((d) => d._id),
  },
];

process.stdout.write(`seeded ${COUNT} documents in ${(seedMs / 1000).toFixed(1)} s; ${WARMUP} warm-up + ${RUNS} measured runs per query\n\n`);
const rows: string[][] = [["query", "median ms", "min ms", "mean ms"]];
let wrong = 0;
for (const c of cases) {
  const expected = JSON.stringify(c.expect());
  const got = JSON.stringify(await c.run());
  if (got !== expected) {
    wrong++;
    process.stdout.write(`WRONG ANSWER: ${c.name}\n  expected ${expected.slice(0, 200)}\n  got      ${got.slice(0, 200)}\n`);
  }
  for (let i = 0; i < WARMUP; i++) await c.run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await c.run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  rows.push([c.name, median.toFixed(2), times[0]!.toFixed(2), mean.toFixed(2)]);
}
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
for (const r of rows) process.stdout.write(r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ") + "\n");
await store.close();
if (wrong > 0) {
  process.stdout.write(`\n${wrong} wrong answer(s)\n`);
  process.exitCode = 1;
}
