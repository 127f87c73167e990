/**
 * Micro-benchmark of the wallet ledger alone (not a test, not part of `npm run bench`): the billing
 * part of COUNT signs — `debit` then `confirm`, each its own billing identity — from CONCURRENCY
 * concurrent callers into ONE wallet, in process, on the document store wrapped in its resilience
 * policy exactly as `boot/compose.ts` wraps it. It isolates the ledger's cost from HTTP, the
 * pipeline and the regulator.
 *
 *   npx tsx bench/ledger-debits.ts                       sqlite, memory and mongodb (jongodb or MONGODB_URI)
 *   LEDGER_BENCH_STORES=memory LEDGER_BENCH_COUNT=20000 npx tsx bench/ledger-debits.ts
 *
 * Stores: `sqlite` (an SQLite file in a temporary folder: the writer thread, fsync per commit),
 * `memory` (SQLite in memory), `mongodb`.
 * env: LEDGER_BENCH_COUNT (default 100000; mongodb: LEDGER_BENCH_MONGO_COUNT, default 10000),
 * LEDGER_BENCH_CONCURRENCY (default 64), LEDGER_BENCH_STORES (default "sqlite,memory,mongodb").
 * Reported per store: debits/s over the run, of the first and of the last tenth (at most 10 000),
 * their ratio, wallet writes (the wallet's version) and whether the balance is exact.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createDocumentLedger, openLedgerCollections } from "../adapters/billing/ledger.ts";
import { createMongoDocumentStore } from "../adapters/document-store/mongodb.ts";
import { createSqliteDocumentStore } from "../adapters/document-store/sqlite/store.ts";
import { guardDocumentStore } from "../adapters/guarded-stores.ts";
import { createPolicyRegistry } from "../adapters/policies.ts";
import type { DocumentStore } from "../adapters/ports.ts";
import { isMongoSkip, startMongoServer } from "../test/support/mongo-server.ts";

const FEE = 5_000;
const CONCURRENCY = Number(process.env.LEDGER_BENCH_CONCURRENCY ?? 64);
const STORES = (process.env.LEDGER_BENCH_STORES ?? "sqlite,memory,mongodb").split(",").map((s) => s.trim());

async function measure(name: string, raw: DocumentStore, count: number): Promise<void> {
  const store = guardDocumentStore(raw, createPolicyRegistry().create({ dependency: "documentStore", timeoutMs: raw.kind === "sqlite-memory" ? Infinity : 5000 }));
  const ledger = createDocumentLedger({ store, openingBalances: { demo: count * FEE } });
  const done = new Float64Array(count);
  let next = 0;
  let n = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) {
        const identity = { subBusinessId: "sub-1", domain: "passthrough.demo.localhost", irn: `INV${i}-94ND90NR-20240611`, attemptNumber: 1 };
        await ledger.debit("demo", identity, FEE, `fp-${i}`);
        await ledger.confirm("demo", identity);
        done[n++] = performance.now();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const w = Math.min(10_000, Math.floor(count / 10));
  const first = (w / (done[w - 1]! - started)) * 1000;
  const last = (w / (done[count - 1]! - done[count - w - 1]!)) * 1000;
  const wallet = await openLedgerCollections(raw).wallets.get("demo");
  const rate = (x: number) => Math.round(x).toLocaleString("en-US");
  console.log(
    `${name.padEnd(8)} ${rate(count / seconds)} debits/s over ${count.toLocaleString("en-US")} (debit + confirm, ${CONCURRENCY} callers); ` +
      `first ${w.toLocaleString("en-US")} ${rate(first)}/s, last ${rate(last)}/s, last/first ${(last / first).toFixed(2)}; ` +
      `wallet writes ${wallet?.version ?? "?"}; balance ${wallet?.balanceKobo === 0 ? "exact (0)" : `WRONG (${wallet?.balanceKobo})`}`,
  );
}

for (const name of STORES) {
  if (name === "memory") {
    const store = await createSqliteDocumentStore({ file: ":memory:" });
    await measure(name, store, Number(process.env.LEDGER_BENCH_COUNT ?? 100_000));
    await store.close();
  } else if (name === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-ledger-bench-"));
    try {
      const store = await createSqliteDocumentStore({ file: join(dir, "gatehouse.sqlite") });
      await measure(name, store, Number(process.env.LEDGER_BENCH_COUNT ?? 100_000));
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } else if (name === "mongodb") {
    const server = await startMongoServer();
    if (isMongoSkip(server)) {
      console.log(`mongodb  skipped: ${server.skip}`);
      continue;
    }
    try {
      const store = await createMongoDocumentStore({ uri: server.uri, dbName: server.dbName() });
      await measure(name, store, Number(process.env.LEDGER_BENCH_MONGO_COUNT ?? 10_000));
      await store.close();
    } finally {
      await server.stop();
    }
  } else {
    throw new Error(`unknown store ${name}`);
  }
}
