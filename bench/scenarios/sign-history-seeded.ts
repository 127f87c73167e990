/**
 * Scenario "sign-history-seeded" (opt-in: `npm run bench -- --only sign-history-seeded`): the
 * memory question of sign-history.ts at a history of 1 000 000 signs, in minutes instead of hours.
 * Signing a million invoices through HTTP takes hours on a shared 2-core machine, so the history is
 * seeded into the gateway's database and only the last signs of each mark go through the gateway.
 *
 * One compiled gateway on the embedded default (the SQLite file), as sign-history.ts starts it.
 * BENCH_SIGN_WARMUP (default 2 000) billed signs go through HTTP first: the rows those signs
 * inserted (every collection that grew by at least a tenth of a row per sign: sign records,
 * ledger entries, idempotency records, …) are the template of "what one sign writes". For each
 * mark of BENCH_SIGN_SEEDED (default "100000,1000000": signs in the history), copies of the
 * template are inserted straight into the file (another connection on it, WAL, while the gateway
 * runs and idles) until the history holds the mark minus BENCH_SIGN_MEASURE (default 20 000)
 * signs; each copy's `_id` and every string field of a unique index gets a suffix of its own, so
 * the copies are distinct documents under the same indexes and TTL as the signs they copy. Then
 * BENCH_SIGN_MEASURE signs go through the gateway (64 connections), and the mark reports the
 * gateway's RSS, its RSS after a full collection and its live heap. Every 201 must have taken one
 * fee; the copies do not move the wallet's balance (they are rows, not debits the ledger applies).
 *
 *   npm run bench -- --only sign-history-seeded
 *   BENCH_SIGN_SEEDED=100000,1000000 BENCH_SIGN_MEASURE=20000 npm run bench -- --only sign-history-seeded
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openConnection, type SqliteConnection } from "../../adapters/document-store/sqlite/connection.ts";
import { ident, tableName } from "../../adapters/document-store/sqlite/keys.ts";
import { fillKeyColumns } from "../sqlite-key-fill.ts";
import type { CollectionSpec } from "../../adapters/ports.ts";
import { collectGarbage, processRss } from "../processes.ts";
import { envInt } from "../report.ts";
import type { BenchScenario, ScenarioOutcome, ScenarioResult } from "../run.ts";
import { creditDemo, demoBalanceKobo, FEE_KOBO, gatewayHeap, loadSigns, onboardDemo, signInvoiceFactory } from "./sign-gateway.ts";
import { startSignGateway } from "./sign-process.ts";

export interface SeededMark {
  /** Signs in the history at this mark (seeded copies and signs through HTTP). */
  history: number;
  seeded: number;
  signed: number;
  seedSeconds: number;
  signsPerSec: number;
  p99Ms: number;
  rssMiB: number;
  gcRssMiB: number;
  liveHeapMiB: number;
  databaseMiB: number;
}

export const signHistorySeededScenario: BenchScenario = {
  names: ["sign-history-seeded"],
  optIn: true,
  async run({ env, progress }) {
    const marks = (env.BENCH_SIGN_SEEDED ?? "100000,1000000").split(",").map((m) => envInt(m.trim(), 0, 10, "BENCH_SIGN_SEEDED"));
    if (marks.some((m, i) => i > 0 && m <= marks[i - 1]!)) throw new Error("bench: BENCH_SIGN_SEEDED must be increasing");
    const warmup = envInt(env.BENCH_SIGN_WARMUP, 2_000, 100, "BENCH_SIGN_WARMUP");
    const measure = envInt(env.BENCH_SIGN_MEASURE, 20_000, 1, "BENCH_SIGN_MEASURE");
    const connections = envInt(env.BENCH_CONNECTIONS, 64, 1, "BENCH_CONNECTIONS");
    return _outcome(await runSeededHistory(marks, warmup, measure, connections, progress));
  },
};

export async function runSeededHistory(
  marks: readonly number[],
  warmup: number,
  measure: number,
  connections: number,
  progress: (line: string) => void,
): Promise<{ marks: SeededMark[]; problems: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-sign-seeded-"));
  const file = join(dir, "data", "gatehouse.sqlite");
  const running = await startSignGateway({ store: "sqlite", dir }).catch((e: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  });
  const conn = openConnection({ file, busyTimeoutMs: 30_000, synchronous: "OFF" });
  try {
    const { url, child, output } = running.gateway;
    const sub = await onboardDemo(url);
    await creditDemo(url, ((warmup + marks.length * measure) * FEE_KOBO) / 100);
    const invoices = signInvoiceFactory(sub);
    const before = _tables(conn);
    await loadSigns(url, invoices, warmup, connections);
    const template = _template(conn, before, warmup);
    progress(`sign-history-seeded: one sign writes ${template.map((t) => `${(t.rows / warmup).toFixed(2)} ${t.collection}`).join(", ")} (from ${warmup} signs)`);
    const problems: string[] = [];
    const out: SeededMark[] = [];
    let history = warmup;
    let seeded = 0;
    let copy = 0;
    let ok = 0;
    const balanceBefore = await demoBalanceKobo(url);
    for (const mark of marks) {
      const t = performance.now();
      while (history + warmup <= mark - measure) {
        _insertCopy(conn, template, ++copy);
        history += warmup;
        seeded += warmup;
        if (copy % 50 === 0) progress(`sign-history-seeded: … ${history.toLocaleString("en-US")} signs in the history`);
      }
      const seedSeconds = (performance.now() - t) / 1000;
      conn.exec("PRAGMA wal_checkpoint(PASSIVE)");
      progress(`sign-history-seeded: history ${history.toLocaleString("en-US")} (seeded in ${seedSeconds.toFixed(0)} s); ${measure} signs through the gateway (pid ${child.pid})`);
      const run = await loadSigns(url, invoices, measure, connections);
      if (run.non2xx > 0 || run.errors > 0) problems.push(`sign-history-seeded: ${run.non2xx} non-2xx (first ${run.firstBad}) and ${run.errors} errors before ${mark}`);
      ok += run.status2xx;
      history += measure;
      const rss = processRss(child.pid!).rssMiB;
      await collectGarbage(output);
      const heap = await gatewayHeap(url);
      const m: SeededMark = {
        history,
        seeded,
        signed: history - seeded,
        seedSeconds,
        signsPerSec: run.status2xx / run.seconds,
        p99Ms: run.latency.p99,
        rssMiB: rss,
        gcRssMiB: processRss(child.pid!).rssMiB,
        liveHeapMiB: heap.usedMiB,
        databaseMiB: statSync(file).size / 1048576,
      };
      out.push(m);
      progress(formatSeededMark(m));
    }
    const fees = (balanceBefore - (await demoBalanceKobo(url))) / FEE_KOBO;
    if (fees !== ok) problems.push(`sign-history-seeded: the wallet took ${fees} fees for ${ok} signed invoices`);
    return { marks: out, problems };
  } finally {
    conn.close();
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatSeededMark(m: SeededMark): string {
  return (
    `sign-history-seeded: history ${m.history.toLocaleString("en-US")} signs (${m.seeded.toLocaleString("en-US")} seeded, ${m.signed.toLocaleString("en-US")} through HTTP; ` +
    `database ${m.databaseMiB.toFixed(0)} MiB): last stage ${Math.round(m.signsPerSec)} signs/s, p99 ${m.p99Ms} ms; ` +
    `RSS ${m.rssMiB.toFixed(0)} MiB, after a full GC ${m.gcRssMiB.toFixed(0)} MiB (live heap ${m.liveHeapMiB.toFixed(0)} MiB)`
  );
}

// --- Internal helpers ---

interface _Table {
  collection: string;
  table: string;
  maxRowid: number;
  uniquePaths: string[];
}

interface _Template {
  collection: string;
  table: string;
  from: number;
  to: number;
  rows: number;
  uniquePaths: string[];
}

/** Every collection's table, its last rowid and the string paths of its unique indexes. */
function _tables(conn: SqliteConnection): Map<string, _Table> {
  const out = new Map<string, _Table>();
  for (const [name, raw] of conn.all("SELECT name, spec FROM gatehouse_collections") as Array<[string, string]>) {
    const spec = JSON.parse(raw) as CollectionSpec;
    const table = ident(tableName(name));
    const maxRowid = (conn.get(`SELECT coalesce(max(rowid), 0) FROM ${table}`)![0] as number) ?? 0;
    const uniquePaths = [...new Set((spec.indexes ?? []).filter((ix) => ix.unique).flatMap((ix) => ix.fields).filter((f) => f !== "_id"))];
    out.set(name, { collection: name, table, maxRowid, uniquePaths });
  }
  return out;
}

/** The rows the warm-up signs inserted, per collection that grows with signs. */
function _template(conn: SqliteConnection, before: Map<string, _Table>, signs: number): _Template[] {
  const out: _Template[] = [];
  for (const t of _tables(conn).values()) {
    const from = before.get(t.collection)?.maxRowid ?? 0;
    const rows = conn.get(`SELECT count(*) FROM ${t.table} WHERE rowid > ? AND rowid <= ?`, [from, t.maxRowid])![0] as number;
    if (rows < signs / 10) continue;
    out.push({ collection: t.collection, table: t.table, from, to: t.maxRowid, rows, uniquePaths: t.uniquePaths });
  }
  return out;
}

/** One copy of the template in one transaction: new `_id`s and unique string fields, suffixed `~<copy>`. */
function _insertCopy(conn: SqliteConnection, template: readonly _Template[], copy: number): void {
  const suffix = `'~${copy}'`; // digits only: safe as a literal
  conn.begin("IMMEDIATE");
  try {
    for (const t of template) {
      // Each unique path: suffixed where the document holds a string there, left as it is elsewhere.
      let doc = `json_set(doc, '$._id', _id || ${suffix})`;
      for (const path of t.uniquePaths) {
        const p = `'$.${path.replace(/'/g, "''")}'`;
        doc = `CASE WHEN json_type(${doc}, ${p}) = 'text' THEN json_set(${doc}, ${p}, json_extract(${doc}, ${p}) || ${suffix}) ELSE ${doc} END`;
      }
      const last = (conn.get(`SELECT max(rowid) FROM ${t.table}`)![0] as number | null) ?? 0;
      conn.run(`INSERT INTO ${t.table} (_id, doc) SELECT _id || ${suffix}, ${doc} FROM ${t.table} WHERE rowid > ? AND rowid <= ?`, [t.from, t.to]);
      fillKeyColumns(conn, t.collection, last);
    }
    conn.commit();
  } catch (e) {
    conn.rollback();
    throw e;
  }
}

function _outcome(r: { marks: SeededMark[]; problems: string[] }): ScenarioOutcome {
  const results: ScenarioResult[] = r.marks.map((m) => ({
    name: `sign-history-seeded/gateway@${m.history}`,
    scenario: "sign-history-seeded",
    server: `gateway@${m.history}`,
    role: "subject",
    description: `billed signs on the SQLite file with ${m.history} signs in the history (${m.seeded} seeded)`,
    path: "/api/v1/invoice/sign",
    requestsPerSec: m.signsPerSec,
    latency: { mean: Number.NaN, p50: Number.NaN, p90: Number.NaN, p99: m.p99Ms, max: Number.NaN },
    requests: m.signed,
    status2xx: m.signed,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    seconds: 0,
    rssMiB: m.rssMiB,
    extra: { signs: m.history, history: m.history, seeded: m.seeded, gcRssMiB: Math.round(m.gcRssMiB), liveHeapMiB: Math.round(m.liveHeapMiB), databaseMiB: Math.round(m.databaseMiB) },
  }));
  return { results, notes: r.marks.map(formatSeededMark), problems: r.problems, extra: r.marks };
}
