/**
 * Scenario "start-ready" (opt-in: `npm run bench -- --only start-ready`; building the database takes
 * minutes): how long `npm start` takes to listen on a large embedded database. A database of
 * START_READY_MB megabytes (default 1024) is built in a temporary folder: the Stored invoices
 * collection declared as the product declares it (openStoredInvoices, so the start finds every
 * index it declares already there), then filled in bulk on one connection (one INSERT … SELECT per
 * 100 000 rows of ~1.5 KB documents, its indexes kept by SQLite as rows go in). Then `node --import
 * tsx boot/main.ts` (what `npm start` runs) with the demo config on that file, timed from launch to
 * its "listening" line, START_READY_RUNS times (default 3; the first also pays a cold page cache
 * for whatever the start reads), then as many times on a new, empty database: the difference is
 * what the database's size costs, the rest is the process starting on a machine as busy as it is.
 * Then the same starts of the compiled gateway (`npm run build` → `npm run start:dist`, plain node).
 *
 * Goal (docs/bench.md "SQLite engine"): ready ≤ 3 s with a 1 GB database.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openConnection } from "../../adapters/document-store/sqlite/connection.ts";
import { ident, tableName } from "../../adapters/document-store/sqlite/keys.ts";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import { STORED_INVOICES_COLLECTION, openStoredInvoices } from "../../plugins/invoice/stored-invoices.ts";
import { buildDist } from "../../scripts/build.ts";
import { DEMO_RAW } from "../../test/support/gateway.ts";
import { BUILD_DIR, serverNodeFlags } from "../build.ts";
import { fillKeyColumns } from "../sqlite-key-fill.ts";
import { ROOT, processCpuMs } from "../processes.ts";
import { envInt } from "../report.ts";
import type { BenchScenario, ScenarioResult } from "../run.ts";

/** Bytes of document text per row (the padding is hex, two characters per random byte). */
const ROW_BYTES = 1_500;

export const startReadyScenario: BenchScenario = {
  names: ["start-ready"],
  optIn: true,
  async run({ env, progress }) {
    const mb = envInt(env.START_READY_MB, 1024, 1, "START_READY_MB");
    const runs = envInt(env.START_READY_RUNS, 3, 1, "START_READY_RUNS");
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-start-ready-"));
    try {
      const file = join(dir, "gatehouse.sqlite");
      progress(`start-ready: building a ${mb} MiB database`);
      const built = await buildInvoiceDatabase(file, mb);
      const fileMiB = Math.round(statSync(file).size / 1048576);
      progress(`start-ready: ${fileMiB} MiB, ${built.rows} invoices, built in ${(built.ms / 1000).toFixed(0)} s`);
      const times: number[] = [];
      const cpu = { tsx: [] as number[], tsxEmpty: [] as number[], dist: [] as number[], distEmpty: [] as number[] };
      for (let i = 0; i < runs; i++) times.push(await gatewayReadyMs(file, dir, undefined, cpu.tsx));
      // The same start on a new, empty database: what the process itself takes on this machine now.
      const empty: number[] = [];
      for (let i = 0; i < runs; i++) empty.push(await gatewayReadyMs(join(dir, `empty-${i}.sqlite`), dir, undefined, cpu.tsxEmpty));
      // The compiled gateway (`npm run build`, then `npm run start:dist`): no loader compiling TypeScript at start.
      const dist = (await buildDist(join(BUILD_DIR, "gatehouse-start"))).main;
      const compiled: number[] = [];
      for (let i = 0; i < runs; i++) compiled.push(await gatewayReadyMs(file, dir, dist, cpu.dist));
      const compiledEmpty: number[] = [];
      for (let i = 0; i < runs; i++) compiledEmpty.push(await gatewayReadyMs(join(dir, `empty-dist-${i}.sqlite`), dir, dist, cpu.distEmpty));
      const worst = Math.max(...times);
      const result: ScenarioResult = {
        name: "start-ready/gateway",
        scenario: "start-ready",
        server: "gateway",
        role: "subject",
        description: `npm start (boot/main.ts under tsx) to listening, on a ${fileMiB} MiB SQLite file`,
        path: "-",
        requestsPerSec: 0,
        latency: { mean: times.reduce((a, b) => a + b, 0) / runs, p50: [...times].sort((a, b) => a - b)[Math.floor(runs / 2)]!, p90: Number.NaN, p99: worst, max: worst },
        requests: runs,
        status2xx: runs,
        non2xx: 0,
        errors: 0,
        timeouts: 0,
        seconds: times.reduce((a, b) => a + b, 0) / 1000,
        extra: {
          databaseMiB: fileMiB,
          invoices: built.rows,
          worstReadyMs: worst,
          emptyWorstReadyMs: Math.max(...empty),
          compiledWorstReadyMs: Math.max(...compiled),
          compiledEmptyWorstReadyMs: Math.max(...compiledEmpty),
        },
      };
      const notes = [
        `start-ready: ${fileMiB} MiB database (${built.rows} Stored invoices): npm start listening after ${times.join(", ")} ms (CPU ${cpu.tsx.join(", ")} ms); on an empty database ${empty.join(", ")} ms (CPU ${cpu.tsxEmpty.join(", ")} ms)`,
        `start-ready: compiled (npm run start:dist) on the same database: ${compiled.join(", ")} ms (CPU ${cpu.dist.join(", ")} ms); on an empty database ${compiledEmpty.join(", ")} ms (CPU ${cpu.distEmpty.join(", ")} ms)`,
      ];
      return { results: [result], notes, problems: [] };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** Declares the Stored invoices collection through the store, then fills it in bulk to about `mb` MiB. */
export async function buildInvoiceDatabase(file: string, mb: number): Promise<{ rows: number; ms: number }> {
  const started = performance.now();
  const store = await createSqliteDocumentStore({ file });
  await openStoredInvoices(store).count({});
  await store.close();
  const conn = openConnection({ file, busyTimeoutMs: 5_000, synchronous: "OFF" });
  const table = ident(tableName(STORED_INVOICES_COLLECTION));
  const rows = Math.round((mb * 1048576) / (ROW_BYTES * 1.15)); // ~15 % for the indexes and page slack
  const now = Date.now();
  for (let from = 0; from < rows; from += 100_000) {
    const n = Math.min(100_000, rows - from);
    conn.exec(
      `WITH RECURSIVE c(x) AS (SELECT ${from} UNION ALL SELECT x + 1 FROM c WHERE x + 1 < ${from + n}) ` +
        `INSERT INTO ${table} (_id, doc) SELECT printf('inv-%09d', x), json_object(` +
        `'_id', printf('inv-%09d', x), 'businessId', 'b' || (x % 50), 'subBusinessId', 's' || (x % 500), 'direction', 'outbound', ` +
        `'status', CASE WHEN x % 10 < 6 THEN 'transmitted' ELSE 'signed' END, 'createdAtMs', ${now} - ${rows} * 1000 + x * 1000, ` +
        `'irnLock', printf('TEST|IRN%09d', x), 'dueAt', NULL, 'rev', 1, ` +
        `'document', json_object('irn', printf('IRN%09d-94ND90NR-20240611', x), 'note', hex(randomblob(${Math.round((ROW_BYTES - 400) / 2)})))) FROM c`,
    );
  }
  fillKeyColumns(conn, STORED_INVOICES_COLLECTION);
  conn.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  conn.close();
  return { rows, ms: Math.round(performance.now() - started) };
}

/**
 * Starts boot/main.ts on the database (demo config, free ports) and answers the milliseconds to
 * "listening": under tsx as `npm start` runs it, or the compiled `dist` entry as `npm run start:dist`.
 */
export async function gatewayReadyMs(file: string, dir: string, dist?: string, cpuMs?: number[]): Promise<number> {
  const raw = structuredClone(DEMO_RAW) as Record<string, any>;
  raw.server = { ...raw.server, port: 0 };
  raw.storage = { driver: "sqlite", file };
  raw.regulator.simulator = { ...raw.regulator.simulator, port: 0 };
  raw.email = { driver: "folder", dir: join(dir, "mail") };
  raw.log = { level: "warn", format: "json" };
  const config = join(dir, "config.json");
  writeFileSync(config, JSON.stringify(raw));
  const started = performance.now();
  const args = dist ? [...serverNodeFlags(), dist, "--config", config] : ["--import", "tsx", "boot/main.ts", "--config", config];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  const ms = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      if (!/listening on/.test(out)) return;
      cpuMs?.push(processCpuMs(child.pid!)); // the start's CPU (all threads): what the machine's load does not stretch
      resolve(Math.round(performance.now() - started));
    });
    child.once("exit", (code) => reject(new Error(`gateway exited ${code}: ${out}`)));
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
  return ms;
}
