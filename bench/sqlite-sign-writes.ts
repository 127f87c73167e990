/**
 * The store's writes of billed signs, alone (not a test): what the SQLite writer costs per sign,
 * without HTTP, the regulator or the ledger's logic. Each sign writes what a billed sign writes on
 * the sign-attempts and ledger-entries collections (their real indexes and TTL field): the attempt
 * record inserted, the debit entry inserted, the entry finished (pending → debited), the record
 * marked dispatching, the entry confirmed, the record finished with the regulator's answer; each
 * update a compare-and-set on `_id` and the state, as the product's. SIGNS_PER_COMMIT signs take
 * each step together (one batch, one commit), as the writer batches concurrent signs.
 *
 *   npx tsx bench/sqlite-sign-writes.ts                    12 000 signs, 6 per commit
 *   SIGN_WRITES_COUNT=6000 SIGN_WRITES_PER_COMMIT=1 npx tsx bench/sqlite-sign-writes.ts
 *
 * Prints the process's CPU per sign (the main thread, and the other threads: the writer's, with
 * V8's and libuv's helpers), wall time per sign, commits, and the bytes written per sign (write
 * syscalls: the WAL's frames and the checkpoints' pages), on a new file under the temp folder.
 */
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createSqliteDocumentStore } from "../adapters/document-store/sqlite/store.ts";
import { openLedgerCollections } from "../adapters/billing/ledger/documents.ts";
import type { Collection, Doc } from "../adapters/ports.ts";
import { newId } from "../core/ids.ts";
import { openSignAttempts } from "../plugins/invoice/sign-attempts.ts";
import { tempDir } from "../test/support/temp.ts";

const COUNT = Number(process.env.SIGN_WRITES_COUNT ?? 12_000);
const PER_COMMIT = Number(process.env.SIGN_WRITES_PER_COMMIT ?? 6);

async function main(): Promise<void> {
  const file = join(tempDir("sign-writes"), "gatehouse.db");
  const store = await createSqliteDocumentStore({ file });
  // The product's own collections and indexes: the sign records and the ledger's entries.
  const records = openSignAttempts(store) as unknown as Collection<Doc>;
  const entries = openLedgerCollections(store).entries as unknown as Collection<Doc>;
  await records.count({});
  await entries.count({});
  const answer = Buffer.alloc(1500, 65).toString("base64");
  const now = Date.now();
  const steps: Array<(i: number) => Promise<unknown>> = [
    (i) =>
      records.insert({
        _id: _recordId(i),
        businessId: "demo",
        route: "/api/v1/invoice/sign",
        fingerprint: "f".repeat(64),
        attemptKey: `TEST|demo|sub-01|B${i}X-94ND90NR-20240611|1`,
        operationId: newId(),
        status: "in_progress",
        phase: "claimed",
        owner: crypto.randomUUID(),
        startedAtMs: now + i,
        completedAtMs: null,
        answer: null,
        money: "none",
        expiresAtMs: now + i + 2.6e9,
      }),
    (i) =>
      entries.insert({
        _id: _entryId(i),
        businessId: "demo",
        type: "debit",
        amountKobo: 5000,
        state: "pending",
        round: 1,
        applied: false,
        fingerprint: "f".repeat(64),
        billingIdentity: { subBusinessId: "sub-01", domain: "demo", irn: `B${i}X-94ND90NR-20240611`, attemptNumber: 1 },
        createdAt: new Date(now + i).toISOString(),
        updatedAt: new Date(now + i).toISOString(),
      }),
    (i) => entries.updateOne({ _id: _entryId(i), state: "pending" }, { $set: { state: "debited", applied: true, updatedAt: new Date(now + i + 1).toISOString() } }),
    (i) => records.updateOne({ _id: _recordId(i), phase: "claimed" }, { $set: { phase: "dispatching", money: "debited" } }),
    (i) => entries.updateOne({ _id: _entryId(i), state: "debited" }, { $set: { state: "confirmed", updatedAt: new Date(now + i + 2).toISOString() } }),
    (i) =>
      records.updateOne(
        { _id: _recordId(i), status: "in_progress" },
        { $set: { status: "completed", completedAtMs: now + i + 3, money: "confirmed", answer: { kind: "regulator", status: 201, contentType: "application/json", bodyBase64: answer, headers: {} } } },
      ),
  ];
  const cpu0 = _threadCpu();
  const io0 = _writtenBytes();
  const commits0 = store.writerStats().commits;
  const wall0 = performance.now();
  for (let s = 0; s < COUNT; s += PER_COMMIT) {
    const group = Array.from({ length: Math.min(PER_COMMIT, COUNT - s) }, (_, k) => s + k);
    for (const step of steps) {
      const done = await Promise.all(group.map(step));
      if (done.some((d) => d === false)) throw new Error("a compare-and-set found nothing");
    }
  }
  const wallUs = (performance.now() - wall0) * 1000;
  const cpu = _threadCpu();
  const written = _writtenBytes() - io0;
  const commits = store.writerStats().commits - commits0;
  await store.close();
  const mainUs = cpu.main - cpu0.main;
  const otherUs = cpu.other - cpu0.other;
  const per = (x: number): string => (x / COUNT).toFixed(0);
  console.log(
    `${COUNT} signs, ${PER_COMMIT} per commit (${commits} commits): CPU ${per(mainUs + otherUs)} µs/sign (main ${per(mainUs)}, other threads ${per(otherUs)}), ` +
      `wall ${per(wallUs)} µs/sign, written ${(written / COUNT / 1024).toFixed(1)} KB/sign, file ${(statSync(file).size / COUNT / 1024).toFixed(2)} KB/sign`,
  );
}

// --- Internal helpers ---

/** Ids in no particular order, as the product's (hashes, random UUIDs). */
function _entryId(i: number): string {
  return `debit:${createHash("sha256").update(`entry ${i}`).digest("hex")}`;
}

function _recordId(i: number): string {
  return createHash("sha256").update(`record ${i}`).digest("hex").slice(0, 32);
}

/** CPU microseconds of this process's main thread and of its other threads (/proc, Linux). */
function _threadCpu(): { main: number; other: number } {
  const tick = 1e6 / 100; // USER_HZ
  let main = 0;
  let other = 0;
  for (const tid of readdirSync("/proc/self/task")) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    } catch {
      continue; // a thread that ended
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const us = (Number(fields[11]) + Number(fields[12])) * tick;
    if (Number(tid) === process.pid) main += us;
    else other += us;
  }
  return { main, other };
}

/** Bytes this process wrote through write syscalls (`wchar` of /proc/self/io). */
function _writtenBytes(): number {
  const line = readFileSync("/proc/self/io", "utf8").split("\n").find((l) => l.startsWith("wchar:"));
  return Number(line?.split(/\s+/)[1] ?? 0);
}

await main();
