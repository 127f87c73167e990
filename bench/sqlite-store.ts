/**
 * Micro-benchmark of the SQLite document store (not a test): the operations the gateway leans on,
 * on a file (writer thread, WAL, synchronous=FULL) and in memory, with the commits they took and
 * how long the main thread's event loop stalled meanwhile.
 *
 *   npx tsx bench/sqlite-store.ts
 *   SQLITE_BENCH_DOCS=20000 SQLITE_BENCH_SECONDS=2 npx tsx bench/sqlite-store.ts
 *
 * Seeds SQLITE_BENCH_DOCS documents (default 50 000; ~700 bytes, 100 businesses) through the store,
 * then runs each operation for SQLITE_BENCH_SECONDS (default 3):
 * - single writes: one insert at a time, each awaited (one commit, one fsync each);
 * - concurrent writes: 64 inserts in flight (group commit: operations per commit printed);
 * - concurrent CAS: 64 conditional `updateOne` ($inc where a version matches) in flight;
 * - point reads (`get` by _id), indexed finds (20 newest of a business), indexed counts, all on the
 *   main thread's read connection;
 * - a round trip to the writer thread (a `ping`: what a read would cost there at the least).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { createSqliteDocumentStore, type SqliteDocumentStore } from "../adapters/document-store/sqlite/store.ts";
import type { Doc } from "../adapters/ports.ts";

const DOCS = Number(process.env.SQLITE_BENCH_DOCS ?? 50_000);
const SECONDS = Number(process.env.SQLITE_BENCH_SECONDS ?? 3);
const BUSINESSES = 100;

interface Row {
  store: string;
  operation: string;
  opsPerSec: number;
  p50Us: number;
  p99Us: number;
  opsPerCommit: number | null;
  maxLoopStallMs: number;
}

const rows: Row[] = [];
const dir = mkdtempSync(join(tmpdir(), "sqlite-bench-"));
try {
  for (const file of [join(dir, "bench.db"), ":memory:"]) await _benchStore(file);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.table(rows);
console.log(JSON.stringify({ docs: DOCS, seconds: SECONDS, rows }));

async function _benchStore(file: string): Promise<void> {
  const store = await createSqliteDocumentStore({ file });
  const c = store.collection<Doc>("bench", { indexes: [{ fields: ["businessId", "createdAt"] }, { fields: ["ref"], unique: true }] });
  const label = store.kind;
  const seedStart = performance.now();
  for (let i = 0; i < DOCS; i += 1000) await Promise.all(Array.from({ length: Math.min(1000, DOCS - i) }, (_, j) => c.insert(_doc(i + j))));
  console.log(`${label}: seeded ${DOCS} documents in ${Math.round(performance.now() - seedStart)} ms`);
  let next = DOCS;
  await _measure(store, label, "single writes (awaited one by one)", 1, () => c.insert(_doc(next++)));
  await _measure(store, label, "concurrent writes (64 in flight)", 64, () => c.insert(_doc(next++)));
  await c.insert({ _id: "counter", v: 0 });
  let version = 0;
  await _measure(store, label, "concurrent CAS updateOne (64 in flight)", 64, async () => {
    if (await c.updateOne({ _id: "counter", v: version }, { $inc: { v: 1 } })) version++;
  });
  let k = 0;
  await _measure(store, label, "point reads (get by _id)", 1, async () => {
    if (!(await c.get(_id((k = (k + 7919) % DOCS))))) throw new Error("missing");
  });
  await _measure(store, label, "indexed finds (20 newest of a business)", 1, async () => {
    const page = await c.find({ businessId: `b${k++ % BUSINESSES}` }, { sort: [{ field: "createdAt", direction: -1 }], limit: 20 });
    if (page.items.length !== 20) throw new Error("short page");
  });
  await _measure(store, label, "indexed counts (one business)", 1, async () => {
    await c.count({ businessId: `b${k++ % BUSINESSES}` });
  });
  await _measure(store, label, "writer round trip (ping)", 1, () => store.ping());
  await store.close();
}

/** Runs `op` with `inFlight` concurrent loops for SECONDS; records throughput, latency and loop stalls. */
async function _measure(store: SqliteDocumentStore, label: string, operation: string, inFlight: number, op: () => Promise<unknown>): Promise<void> {
  const latencies: number[] = [];
  const before = store.writerStats();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const end = performance.now() + SECONDS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        await op();
        latencies.push(performance.now() - t);
        done++;
      }
    }),
  );
  loop.disable();
  const after = store.writerStats();
  const commits = after.commits - before.commits;
  latencies.sort((a, b) => a - b);
  const q = (p: number): number => Math.round(1000 * latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!);
  rows.push({
    store: label,
    operation,
    opsPerSec: Math.round(done / SECONDS),
    p50Us: q(0.5),
    p99Us: q(0.99),
    opsPerCommit: commits > 0 ? Math.round(((after.operations - before.operations) / commits) * 10) / 10 : null,
    maxLoopStallMs: Math.round(loop.max / 1e5) / 10,
  });
}

function _id(i: number): string {
  return `d${String(i).padStart(9, "0")}`;
}

function _doc(i: number): Doc {
  return {
    _id: _id(i),
    businessId: `b${i % BUSINESSES}`,
    createdAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    ref: `ref-${i}`,
    status: i % 3 === 0 ? "paid" : "pending",
    amountKobo: (i * 37) % 1_000_000,
    customer: { name: `Customer ${i % 977}`, email: `c${i % 977}@example.com` },
    note: "x".repeat(400),
  };
}

