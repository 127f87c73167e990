/**
 * What only the SQLite document store has to prove (the shared contract suite runs in
 * test/contracts/document-store-sqlite-*.test.ts): acknowledgements follow the commit's fsync, on
 * the writer thread; group commit; atomicity across processes sharing one file; the array markers
 * that keep indexed queries exact; JS re-checks; EXPLAIN QUERY PLAN; busy timeouts.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openConnection } from "../../../adapters/document-store/sqlite/connection.ts";
import { ident, tableName } from "../../../adapters/document-store/sqlite/keys.ts";
import type { SqlParam } from "../../../adapters/document-store/sqlite/connection.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { textMatchSql, type TextIndex } from "../../../adapters/document-store/sqlite/text-index.ts";
import { isDependencyUnavailableError, type Doc, type Filter } from "../../../adapters/ports.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const CHILD = join(ROOT, "test/adapters/document-store/sqlite-child.ts");
const dirs: string[] = [];
const tempFile = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "sqlite-engine-"));
  dirs.push(dir);
  return join(dir, "gatehouse.db");
};

const test = suite("sqlite document store engine");
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("an acknowledgement follows its commit: onCommit runs before the write's promise settles", async () => {
  for (const file of [":memory:", tempFile()]) {
    const events: string[] = [];
    const store = await createSqliteDocumentStore({ file, onCommit: (c) => events.push(`commit ${c.operations}`) });
    try {
      const c = store.collection<Doc>("acks");
      await c.insert({ _id: "a" }).then(() => events.push("acknowledged a"));
      await Promise.all([c.insert({ _id: "b" }).then(() => events.push("acknowledged b")), c.insert({ _id: "c" }).then(() => events.push("acknowledged c"))]);
      assert.equal(events, ["commit 1", "acknowledged a", "commit 2", "acknowledged b", "acknowledged c"], file);
    } finally {
      await store.close();
    }
  }
});

test("fsync evidence: the writer thread fsyncs the WAL after writing the commit's frames, and only then does the process acknowledge", () => {
  if (spawnSync("strace", ["-V"]).status !== 0) {
    console.log("SKIPPED the strace trace: strace is not installed (apt-get install -y strace)");
    return;
  }
  const file = tempFile();
  const traceFile = `${file}.strace`;
  const run = spawnSync("strace", ["-f", "-y", "-e", "trace=fsync,fdatasync,write,pwrite64", "-o", traceFile, process.execPath, "--import", "tsx", CHILD, file, "fsync"], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
  assert.is(run.status, 0, run.stderr);
  assert.is(run.stdout, "BEFORE-INSERT\nACKNOWLEDGED\n");
  const lines = readFileSync(traceFile, "utf8").split("\n");
  const before = lines.findIndex((l) => l.includes('"BEFORE-INSERT\\n"'));
  const ack = lines.findIndex((l) => l.includes('"ACKNOWLEDGED\\n"'));
  assert.ok(before >= 0 && ack > before, "both markers traced, in order");
  const mainTid = lines[ack]!.split(/\s+/)[0];
  const window = lines.slice(before + 1, ack);
  const isWal = (l: string): boolean => l.includes(`${file}-wal>`);
  const frames = window.map((l, i) => (isWal(l) && l.includes("pwrite64(") ? i : -1)).filter((i) => i >= 0);
  const syncs = window.map((l, i) => (isWal(l) && /\b(fsync|fdatasync)\(/.test(l) ? i : -1)).filter((i) => i >= 0);
  assert.ok(frames.length > 0, "the commit's frames were written to the WAL between the markers");
  assert.ok(syncs.length > 0, "the WAL was fsync'd between the markers");
  assert.ok(syncs[syncs.length - 1]! > frames[frames.length - 1]!, "the fsync follows the last frame written before the acknowledgement");
  for (const i of [...frames, ...syncs]) assert.is.not(window[i]!.split(/\s+/)[0], mainTid, `not on the main thread: ${window[i]}`);
});

test("a write takes its values when called: changing them before it settles changes nothing stored", async () => {
  for (const file of [":memory:", tempFile()]) {
    const store = await createSqliteDocumentStore({ file });
    try {
      const c = store.collection<Doc>("copies");
      const doc: Doc = { _id: "x", tags: ["a"] };
      const inserted = c.insert(doc);
      (doc.tags as string[]).push("late");
      await inserted;
      const update = { $set: { tags: ["b"] } };
      const filter: Doc = { _id: "x" };
      const updated = c.updateOne(filter, update);
      update.$set.tags.push("late");
      filter._id = "y";
      assert.ok(await updated);
      assert.equal(await c.get("x"), { _id: "x", tags: ["b"] }, file);
    } finally {
      await store.close();
    }
  }
});

test("group commit: 500 concurrent writes share far fewer commits, and every one is there", async () => {
  const store = await createSqliteDocumentStore({ file: tempFile() });
  try {
    const c = store.collection<Doc>("burst", { indexes: [{ fields: ["k"], unique: true }] });
    await c.insert({ _id: "warm-up", k: -1 });
    const before = store.writerStats();
    await Promise.all(Array.from({ length: 500 }, (_, i) => c.insert({ _id: `d${i}`, k: i })));
    const after = store.writerStats();
    assert.is(after.operations - before.operations, 500);
    assert.ok(after.commits - before.commits <= 50, `500 writes in ${after.commits - before.commits} commits`);
    assert.is(await c.count({}), 501);
  } finally {
    await store.close();
  }
});

test("pipelined batches: writes asked for while a commit runs go to the writer at once, share its next transaction, and keep their order", async () => {
  const store = await createSqliteDocumentStore({ file: tempFile() });
  try {
    const c = store.collection<Doc>("pipelined", { indexes: [{ fields: ["k"], unique: true }] });
    await c.insert({ _id: "last", v: -1 });
    const before = store.writerStats();
    // A batch of 4 000 inserts commits for tens of milliseconds; each of the next two turns sends
    // one update of the same document while it runs (a turn's batch goes out in its setImmediate).
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    const big = Promise.all(Array.from({ length: 4000 }, (_, i) => c.insert({ _id: `d${i}`, k: i, pad: "x".repeat(200) })));
    await nextTurn();
    const first = c.updateOne({ _id: "last" }, { $set: { v: 1 } });
    await nextTurn();
    const second = c.updateOne({ _id: "last" }, { $set: { v: 2 } });
    await nextTurn();
    assert.is(store.writerStats().commits, before.commits, "the big batch was still committing");
    assert.ok((await first) && (await second));
    await big;
    const after = store.writerStats();
    assert.is(after.batches - before.batches, 3, "each turn's writes went out as its own batch");
    const commits = after.commits - before.commits;
    assert.ok(commits < 3, `batches that waited for a commit share a transaction (${commits} commits)`);
    assert.is((await c.get("last"))?.v, 2, "applied in the order asked");
    assert.is(await c.count({}), 4001);
  } finally {
    await store.close();
  }
});

test("two processes on one file: compare-and-set, unique keys, upserts and lease claims stay atomic", async () => {
  const file = tempFile();
  const setup = await createSqliteDocumentStore({ file });
  const jobs = setup.collection<Doc>("jobs", { indexes: [{ fields: ["status"] }] });
  await setup.collection<Doc>("counters").insert({ _id: "c", n: 0 });
  await Promise.all(Array.from({ length: 200 }, (_, i) => jobs.insert({ _id: `j${String(i).padStart(3, "0")}`, status: "pending" })));
  await setup.close();

  const children = ["A", "B"].map((who) => _child(file, who));
  await Promise.all(children.map((c) => c.ready));
  for (const c of children) c.proc.stdin!.end("go\n");
  const [a, b] = (await Promise.all(children.map((c) => c.result))) as Array<{ won: number; duplicates: number; claimed: string[]; casRetries: number }>;

  const check = await createSqliteDocumentStore({ file });
  try {
    assert.is((await check.collection<Doc>("counters").get("c"))?.n, 200, "no lost compare-and-set increment");
    assert.is(a!.won + b!.won, 100, "each unique key inserted once");
    assert.is(a!.duplicates + b!.duplicates, 100, "every loser got DuplicateKeyError");
    assert.is(await check.collection<Doc>("keys").count({}), 100);
    const hits = await check.collection<Doc>("hits").find({});
    assert.is(hits.items.length, 1, "one upserted document");
    assert.is(hits.items[0]!.n, 100, "every upsert's increment applied");
    const claimed = [...a!.claimed, ...b!.claimed];
    assert.is(claimed.length, 200, "every job claimed");
    assert.is(new Set(claimed).size, 200, "no job claimed twice");
    console.log(`[race] A: ${a!.claimed.length} claims, ${a!.won} keys, ${a!.casRetries} CAS retries; B: ${b!.claimed.length} claims, ${b!.won} keys, ${b!.casRetries} CAS retries`);
  } finally {
    await check.close();
  }
});

test("arrays along an indexed path: the first one drops the marker, and queries stay exact, also for a reader that read the schema before", async () => {
  const file = tempFile();
  const first = await createSqliteDocumentStore({ file });
  const second = await createSqliteDocumentStore({ file });
  try {
    const spec = { indexes: [{ fields: ["tag"] }, { fields: ["meta.kind"] }] };
    const c1 = first.collection<Doc>("tagged", spec);
    const c2 = second.collection<Doc>("tagged", spec);
    await c1.insert({ _id: "s1", tag: "red", meta: { kind: "x" } });
    await c2.insert({ _id: "s2", tag: "blue" });
    assert.equal((await c1.find({ tag: "red" })).items.map((d) => d._id), ["s1"]);
    assert.ok(first.explain("tagged", { tag: "red" }).usesIndex, "scalar: the index answers");
    assert.not.ok(first.explain("tagged", { tag: "red" }).jsCheck);
    await c2.insert({ _id: "s3", tag: ["red", "green"] });
    await c2.insert({ _id: "s4", meta: [{ kind: "x" }, { kind: "y" }] });
    // `first` cached the schema with both markers: its statements fail to re-prepare, it re-reads and asks again.
    assert.equal((await c1.find({ tag: "red" })).items.map((d) => d._id), ["s1", "s3"]);
    assert.equal((await c1.find({ "meta.kind": "x" })).items.map((d) => d._id), ["s1", "s4"]);
    assert.is(await c1.count({ tag: { $in: ["green"] } }), 1);
    assert.is(await c1.count({ tag: { $ne: "red" } }), 2);
    assert.ok(first.explain("tagged", { tag: "red" }).jsCheck, "the array rows are re-checked in JS now");
  } finally {
    await first.close();
    await second.close();
  }
});

test("$contains: ASCII needles in SQL (U+0130 and U+212A as JS lowercases them), others re-checked in JS", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  try {
    const c = store.collection<Doc>("names", { indexes: [{ fields: ["name"] }] });
    const names = ["İstanbul", "\u212aelvin", "ÉCOLE", "école", "plain"];
    for (const [i, name] of names.entries()) await c.insert({ _id: `n${i}`, name });
    const ids = async (needle: string): Promise<string[]> => (await c.find({ name: { $contains: needle } })).items.map((d) => d._id);
    assert.equal(await ids("i\u0307st"), ["n0"]);
    assert.equal(await ids("kel"), ["n1"]);
    assert.equal(await ids("stan"), ["n0"]);
    assert.equal(await ids("éco"), ["n2", "n3"]);
    assert.equal(await ids("COLE"), ["n2", "n3"]);
    assert.not.ok(store.explain("names", { name: { $contains: "cole" } }).jsCheck);
    assert.ok(store.explain("names", { name: { $contains: "éco" } }).jsCheck);
  } finally {
    await store.close();
  }
});

test("text fields: trigram lookups for printable ASCII needles of three characters or more (JS's lower case of U+0130 and U+212A), a scan otherwise", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  try {
    const c = store.collection<Doc>("names", { indexes: [{ fields: ["biz", "n"] }], textFields: ["name", "code"] });
    const names = ["İstanbul", "\u212aelvin", "ÉCOLE", "école", "plain"];
    for (const [i, name] of names.entries()) await c.insert({ _id: `n${i}`, biz: "b", n: i, name, code: `C-${i}00` });
    const ids = async (needle: string): Promise<string[]> => (await c.find({ name: { $contains: needle } })).items.map((d) => d._id);
    assert.equal(await ids("istanbul"), [], "İ lowers to i + U+0307 in JS");
    assert.equal(await ids("i\u0307stanbul"), ["n0"]);
    assert.equal(await ids("kelvin"), ["n1"], "U+212A lowers to k");
    assert.equal(await ids("stan"), ["n0"]);
    assert.equal(await ids("COLE"), ["n2", "n3"]);
    const lookup = (filter: Filter, count = false) => store.explain("names", filter, { count, sort: [{ field: "n", direction: -1 }] });
    const search: Filter = { biz: "b", $or: [{ name: { $contains: "cole" } }, { code: { $contains: "cole" } }] };
    for (const plan of [lookup(search), lookup(search, true), lookup({ name: { $contains: "kelvin" } })]) {
      assert.ok(plan.plan.some((l) => / VIRTUAL TABLE INDEX \d+:M/.test(l)), plan.plan.join(" | "));
      assert.ok(plan.plan.some((l) => l.includes("USING INTEGER PRIMARY KEY (rowid=?)")), `rows read by rowid: ${plan.plan.join(" | ")}`);
      assert.is(plan.scan, "none");
      assert.not.ok(plan.jsCheck);
    }
    for (const needle of ["co", "éco", "tab\there"]) assert.not.ok(lookup({ name: { $contains: needle } }).plan.some((l) => l.includes("VIRTUAL TABLE")), needle);
  } finally {
    await store.close();
  }
});

test("text fields: a needle's trigrams held by most rows are left out of the lookup, its candidates re-checked in SQL: still exact (folded letters, quotes, arrays)", async () => {
  const params: SqlParam[] = [];
  const text: TextIndex = { table: '"t/text"', columns: new Map([["number", "k_n"]]), densities: { at: 0, range: null, values: new Map() } };
  const common = { share: (t: string) => (t === "100" || t === "000" ? 0.9 : 0.001), rows: () => 1_000_000, countUpTo: () => 1119 };
  const sql = textMatchSql(text, "number", { $contains: "1000500000" }, params, common)!;
  assert.equal(params.slice(0, 1), ['{k_n} : ("00500")'], "the runs of rarer trigrams");
  assert.ok(sql.includes("instr("), sql);
  params.length = 0;
  textMatchSql(text, "number", { $contains: "1000500" }, params, { share: (t) => (t === "000" ? 0.9 : 0.001), rows: () => 1_000_000, countUpTo: () => 1 });
  assert.equal(params, ['{k_n} : ("1000500")'], "one common trigram: the whole needle, exact");
  params.length = 0;
  textMatchSql(text, "number", { $contains: "1000500000" }, params, { share: (t) => (t === "100" || t === "000" ? 0.9 : 0.01), rows: () => 1_000_000, countUpTo: (_q, limit) => limit });
  assert.equal(params, ['{k_n} : ("1000500000")'], "dense candidates: the whole needle, exact");
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  try {
    const c = store.collection<Doc>("common_trigrams", { indexes: [{ fields: ["n"] }], textFields: ["name", "number", "tags"] });
    const names: Record<number, string> = { 3: "Customer 100003 \u212aelvin Stores", 4: "Customer 100004 \u0130zmir Stores", 5: 'Customer 100005 say "hi" Stores' };
    for (let i = 0; i < 40; i++) {
      const name = names[i] ?? `Customer 1000${String(i).padStart(2, "0")} Stores`;
      await c.insert({ _id: `c${String(i).padStart(2, "0")}`, n: i, name, number: String(1_000_000_000 + i), ...(i === 7 ? { tags: ["x", "customer 100007 gold"] } : {}) });
    }
    const search = (s: string): Filter => ({ $or: [{ name: { $contains: s } }, { number: { $contains: s } }, { tags: { $contains: s } }] });
    const ids = async (needle: string): Promise<string[]> => (await c.find(search(needle), { sort: [{ field: "n", direction: 1 }] })).items.map((d) => d._id);
    assert.equal(await ids("1000000017"), ["c17"]);
    assert.equal(await ids("customer 100003 kel"), ["c03"], "U+212A lowers to k");
    assert.equal(await ids("customer 100004 i"), ["c04"], "U+0130 lowers to i + U+0307");
    assert.equal(await ids("customer 100004 iz"), []);
    assert.equal(await ids('customer 100005 say "h'), ["c05"]);
    assert.equal(await ids("customer 100007 gold"), ["c07"]);
    assert.is(await c.count(search("customer 1000")), 40);
    assert.is(await c.count(search("100000003")), 10);
  } finally {
    await store.close();
  }
});

test("text fields: a text index missing a trigger (its table rebuilt) is rebuilt at the next declaration", async () => {
  const file = tempFile();
  const spec = { textFields: ["name"] };
  const first = await createSqliteDocumentStore({ file });
  await first.collection<Doc>("people", spec).insert({ _id: "a1", name: "Acme One" });
  await first.close();
  const raw = openConnection({ file, busyTimeoutMs: 1000, synchronous: "FULL" });
  try {
    raw.exec(`DROP TRIGGER ${ident(`${tableName("people")}/text/insert`)}`);
  } finally {
    raw.close();
  }
  const store = await createSqliteDocumentStore({ file });
  try {
    const c = store.collection<Doc>("people", spec);
    await c.insert({ _id: "a2", name: "Acme Two" });
    assert.equal((await c.find({ name: { $contains: "acme" } })).items.map((d) => d._id), ["a1", "a2"]);
    assert.ok(store.explain("people", { name: { $contains: "acme" } }).plan.some((l) => l.includes("VIRTUAL TABLE")), "answered from the index");
  } finally {
    await store.close();
  }
});

test("EXPLAIN QUERY PLAN: equality and range on indexes, sorts in index order, sparse unique lookups; unindexed filters scan", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  try {
    store.collection<Doc>("invoices", {
      indexes: [{ fields: ["businessId", "createdAt"] }, { fields: ["irn"], unique: true, sparse: true }, { fields: ["status"] }],
      ttlField: "expiresAt",
    });
    await store.collection<Doc>("invoices").insert({ _id: "i1", businessId: "b1", createdAt: 1, irn: "X" });
    const list = store.explain("invoices", { businessId: "b1" }, { sort: [{ field: "createdAt", direction: -1 }], limit: 50 });
    assert.ok(list.usesIndex, list.plan.join(" | "));
    assert.is(list.scan, "none");
    assert.is.not(list.sorts, "full", "rows come in index order (only the _id tie-break is sorted)");
    const range = store.explain("invoices", { businessId: "b1", createdAt: { $gte: 5, $lt: 10 } });
    assert.ok(range.usesIndex, range.plan.join(" | "));
    const byIrn = store.explain("invoices", { irn: "X" });
    assert.ok(byIrn.usesIndex && byIrn.plan.some((l) => l.includes("irn_1/unique/sparse")), byIrn.plan.join(" | "));
    const count = store.explain("invoices", { status: { $in: ["a", "b"] } }, { count: true });
    assert.ok(count.usesIndex, count.plan.join(" | "));
    const unindexed = store.explain("invoices", { customer: "c" });
    assert.not.ok(unindexed.usesIndex);
    assert.is.not(unindexed.scan, "none", "walks every row (here in _id order, the default sort)");
    const byId = store.explain("invoices", { _id: { $in: ["i1", "i2"] } });
    assert.ok(byId.usesIndex, byId.plan.join(" | "));
    // In memory the reader is the writer's connection: an EXPLAIN must not block the marker's DROP.
    await store.collection<Doc>("invoices").insert({ _id: "i2", businessId: "b1", status: ["a", "z"] });
    assert.equal((await store.collection<Doc>("invoices").find({ status: "z" })).items.map((d) => d._id), ["i2"]);
  } finally {
    await store.close();
  }
});

test("the TTL sweep deletes expired documents; unique keys of expired documents are free at once", async () => {
  let now = Date.now();
  const store = await createSqliteDocumentStore({ file: tempFile(), clock: () => now, sweepIntervalMs: 50 });
  try {
    const c = store.collection<Doc>("sessions", { ttlField: "exp", indexes: [{ fields: ["token"], unique: true }] });
    await c.insert({ _id: "s1", token: "T", exp: now + 10 });
    now += 11;
    await c.insert({ _id: "s2", token: "T", exp: now + 10 }); // clashes with the expired s1: swept, then inserted
    now += 11;
    await new Promise((r) => setTimeout(r, 300));
    const raw = openConnection({ file: store.file, busyTimeoutMs: 1000, synchronous: "FULL", readOnly: true });
    try {
      assert.is(raw.all(`SELECT _id FROM ${ident(tableName("sessions"))}`).length, 0, "swept from the file");
    } finally {
      raw.close();
    }
  } finally {
    await store.close();
  }
});

test("another process holding the write lock past the busy timeout → DependencyUnavailableError (timeout), then writes work again", async () => {
  const file = tempFile();
  const store = await createSqliteDocumentStore({ file, busyTimeoutMs: 200 });
  const c = store.collection<Doc>("locked");
  await c.insert({ _id: "first" });
  const holder = openConnection({ file, busyTimeoutMs: 0, synchronous: "FULL" });
  try {
    holder.begin("IMMEDIATE");
    const started = Date.now();
    const e = await c.insert({ _id: "blocked" }).then(() => null, (err: unknown) => err);
    assert.ok(isDependencyUnavailableError(e), `got ${String(e)}`);
    assert.is((e as { failureClass: string }).failureClass, "timeout");
    assert.ok(Date.now() - started >= 150, "it waited for the lock");
    holder.rollback();
    await c.insert({ _id: "after" });
    assert.is(await c.count({}), 2);
  } finally {
    holder.close();
    await store.close();
  }
});

test("SIGKILL while writing: every acknowledged write is in the file when it is opened again", async () => {
  const file = tempFile();
  const proc = spawn(process.execPath, ["--import", "tsx", CHILD, file, "stream"], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  await new Promise<void>((resolve) => {
    proc.stdout!.on("data", (d: Buffer) => {
      out += d.toString("utf8");
      if (out.split("\n").length > 800) resolve();
    });
    proc.on("exit", () => resolve());
  });
  proc.kill("SIGKILL");
  await new Promise((r) => proc.once("exit", r));
  const acknowledged = out.split("\n").filter((l) => /^s\d+$/.test(l));
  assert.ok(acknowledged.length >= 800, `${acknowledged.length} acknowledged before the kill`);
  const store = await createSqliteDocumentStore({ file });
  try {
    const c = store.collection<Doc>("stream");
    const missing: string[] = [];
    for (const id of acknowledged) if (!(await c.get(id))) missing.push(id);
    assert.equal(missing, [], "no acknowledged write lost");
    console.log(`[sigkill] ${acknowledged.length} acknowledged, ${await c.count({})} in the file`);
  } finally {
    await store.close();
  }
});

test("a file that is not a SQLite database: opening fails naming the cause, and the file is left as it was", async () => {
  const file = tempFile();
  writeFileSync(file, "this is not a database, it is a note\n".repeat(200));
  const before = readFileSync(file);
  const e = await createSqliteDocumentStore({ file }).then(
    (s) => s.close().then(() => null),
    (err: unknown) => err,
  );
  assert.ok(e instanceof Error && /NOTADB|not a database/i.test(e.message), `got ${String(e)}`);
  assert.ok(readFileSync(file).equals(before), "nothing overwritten");
});

test.run();

// --- Internal helpers ---

/** A child process racing on `file` (./sqlite-child.ts): ready once it printed READY, then its JSON result. */
function _child(file: string, who: string): { proc: ChildProcess; ready: Promise<void>; result: Promise<unknown> } {
  const proc = spawn(process.execPath, ["--import", "tsx", CHILD, file, "race", who], { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  let onReady: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  const result = new Promise<unknown>((resolve, reject) => {
    proc.stdout!.on("data", (d: Buffer) => {
      out += d.toString("utf8");
      if (out.startsWith("READY\n")) onReady();
    });
    proc.on("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (code === 0 && line) resolve(JSON.parse(line));
      else reject(new Error(`child ${who} exited with ${code}: ${out}`));
    });
  });
  return { proc, ready, result };
}
