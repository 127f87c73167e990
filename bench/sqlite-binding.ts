/**
 * The binding micro-bench behind docs/decisions.md "SQLite binding" (not a test): one connection,
 * WAL, synchronous=FULL, a table of JSON documents with two generated key columns and one index on
 * them; single autocommit writes, batched writes, point reads, indexed finds and counts.
 *
 *   npx tsx bench/sqlite-binding.ts                 libsql (the project's binding)
 *   npx tsx bench/sqlite-binding.ts better-sqlite3  any binding with the same API, resolved from the
 *                                                   current folder's node_modules
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
const requireHere = createRequire(process.cwd() + "/");
const name = process.argv[2] ?? "libsql";
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const Database = requireHere(name) as new (file: string) => any;
const dir = mkdtempSync(join(tmpdir(), "sqlite-binding-"));
const file = join(dir, "bench.db");
const db = new Database(file);
db.exec("PRAGMA journal_mode=WAL"); db.exec("PRAGMA synchronous=FULL");
db.exec(`CREATE TABLE t(_id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL)`);
db.exec(`ALTER TABLE t ADD COLUMN k_b GENERATED ALWAYS AS (ifnull(doc ->> '$."b"', -9e999)) VIRTUAL`);
db.exec(`ALTER TABLE t ADD COLUMN k_c GENERATED ALWAYS AS (ifnull(doc ->> '$."c"', -9e999)) VIRTUAL`);
db.exec(`CREATE INDEX t_bc ON t(k_b, k_c)`);
const ins = db.prepare("INSERT INTO t(_id, doc) VALUES (?, ?)");
const doc = (i: number): string => JSON.stringify({ _id: `id${String(i).padStart(8, "0")}`, b: `biz${i % 100}`, c: i, status: "pending", payload: "x".repeat(600) });
const rate = (n: number, ms: number): number => Math.round((n / ms) * 1000);
const out: Record<string, number> = {};
// single writes: one autocommit transaction (one fsync) each
let n = 300, t = performance.now();
for (let i = 0; i < n; i++) ins.run(`id${String(i).padStart(8, "0")}`, doc(i));
out.singleWritesPerSec = rate(n, performance.now() - t);
// batched: 100 inserts per transaction
const batch = db.transaction((from: number) => { for (let i = from; i < from + 100; i++) ins.run(`id${String(i).padStart(8, "0")}`, doc(i)); });
n = 0; t = performance.now();
for (let from = 1000; from < 51000; from += 100) { batch(from); n += 100; }
out.batchedWritesPerSec = rate(n, performance.now() - t);
const total = 300 + n;
// point reads by _id
const get = db.prepare("SELECT doc FROM t WHERE _id = ?").raw();
n = 50000; t = performance.now();
for (let i = 0; i < n; i++) { const r = get.get(`id${String(1000 + (i * 7919) % 50000).padStart(8, "0")}`); if (!r) throw new Error("miss"); JSON.parse(r[0]); }
out.pointReadsPerSec = rate(n, performance.now() - t);
// indexed finds: 20 newest of one business via index (k_b, k_c)
const find = db.prepare("SELECT doc FROM t WHERE k_b = ? ORDER BY k_c DESC LIMIT 20").raw();
n = 5000; t = performance.now();
for (let i = 0; i < n; i++) { const rows = find.all(`biz${i % 100}`); if (rows.length !== 20) throw new Error("short"); for (const r of rows) JSON.parse(r[0]); }
out.indexedFindsPerSec = rate(n, performance.now() - t);
// indexed count
const cnt = db.prepare("SELECT count(*) FROM t WHERE k_b = ?").raw();
n = 5000; t = performance.now();
for (let i = 0; i < n; i++) cnt.get(`biz${i % 100}`);
out.indexedCountsPerSec = rate(n, performance.now() - t);
console.log(JSON.stringify({ binding: name, documents: total, ...out }));
db.close();
rmSync(dir, { recursive: true, force: true });
