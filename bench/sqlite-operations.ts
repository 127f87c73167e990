/**
 * What an operator waits for on a large SQLite database (not a test; docs/decisions.md "SQLite
 * deployments"): a database of SQLITE_OPS_MB megabytes (default 1024) is built in a temporary
 * folder (documents of ~700 bytes with an indexed business field, written in bulk on one
 * connection), then timed:
 * - opening the store (the writer thread, the read connection) and its first indexed read;
 * - `npm start` on it: boot/main.ts from launch to "listening" (the demo config, this database);
 * - `npx gatehouse backup` (VACUUM INTO, checked) while nothing writes, and the backup's size;
 * - `restoreDatabase` of that backup over the database.
 *
 *   npx tsx bench/sqlite-operations.ts
 *   SQLITE_OPS_MB=256 npx tsx bench/sqlite-operations.ts
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backupDatabase, restoreDatabase } from "../adapters/document-store/sqlite/backup.ts";
import { openConnection } from "../adapters/document-store/sqlite/connection.ts";
import { ident, tableName } from "../adapters/document-store/sqlite/keys.ts";
import { createSqliteDocumentStore } from "../adapters/document-store/sqlite/store.ts";
import { gatewayReadyMs } from "./scenarios/start-ready.ts";
import { fillKeyColumns } from "./sqlite-key-fill.ts";

const MB = Number(process.env.SQLITE_OPS_MB ?? 1024);
const dir = mkdtempSync(join(tmpdir(), "sqlite-ops-"));
const file = join(dir, "gatehouse.sqlite");

try {
  const built = await _build();
  const opened = await _timed(async () => {
    const store = await createSqliteDocumentStore({ file });
    await store.collection("bench_docs").find({ businessId: "b7" }, { limit: 20 });
    return store;
  });
  await opened.value.close();
  const ready = await gatewayReadyMs(file, dir);
  const backup = join(dir, "backup.sqlite");
  const b = await _timed(async () => backupDatabase(file, backup));
  const r = await _timed(async () => restoreDatabase(file, backup));
  const rows: Array<[string, string]> = [
    ["database", `${_mb(statSync(file).size)} MiB, ${built.docs} documents (built in ${built.ms} ms)`],
    ["open the store + first indexed read", `${opened.ms} ms`],
    ["npm start (boot/main.ts) to listening", `${ready} ms`],
    ["backup (VACUUM INTO + fsync + quick_check)", `${b.ms} ms, ${_mb(b.value.bytes)} MiB`],
    ["restore (check + copy + fsync)", `${r.ms} ms`],
  ];
  for (const [what, value] of rows) process.stdout.write(`${what.padEnd(44)} ${value}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// --- Internal helpers ---

/** Declares the collection through the store, then fills it on one connection in one statement per 100 000 documents. */
async function _build(): Promise<{ docs: number; ms: number }> {
  const started = performance.now();
  const store = await createSqliteDocumentStore({ file });
  await store.collection("bench_docs", { indexes: [{ fields: ["businessId", "createdAt"] }] }).insert({ _id: "seed", businessId: "b0", createdAt: 0 });
  await store.close();
  const conn = openConnection({ file, busyTimeoutMs: 5_000, synchronous: "OFF" });
  const table = ident(tableName("bench_docs"));
  const docs = Math.round((MB * 1024 * 1024) / 800);
  for (let from = 0; from < docs; from += 100_000) {
    const n = Math.min(100_000, docs - from);
    conn.exec(
      `WITH RECURSIVE c(x) AS (SELECT ${from} UNION ALL SELECT x + 1 FROM c WHERE x + 1 < ${from + n}) ` +
        `INSERT INTO ${table} (_id, doc) SELECT printf('d%09d', x), json_object('_id', printf('d%09d', x), 'businessId', 'b' || (x % 100), 'createdAt', x, 'text', hex(randomblob(300))) FROM c`,
    );
  }
  fillKeyColumns(conn, "bench_docs");
  conn.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  conn.close();
  return { docs, ms: Math.round(performance.now() - started) };
}

async function _timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: Math.round(performance.now() - started) };
}

function _mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(0);
}
