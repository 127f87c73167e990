/**
 * The embedded store as a deployment opens it (boot/open-sqlite.ts, through openDocumentStore): the
 * storage forms (sqlite file, the fs folder of older configs, memory), the one-time import of an
 * older release's folder at first start with its counts in a log event, the process lock by
 * coordination, and startup errors that name the file and what to do, leaving it untouched.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isStorageOpenError, sqliteLocation } from "../../boot/open-sqlite.ts";
import { openDocumentStore } from "../../boot/open-ports.ts";
import { loadConfig } from "../../config/load.ts";
import type { Config } from "../../config/schema.ts";
import { createLogger, type LogFields } from "../../core/log.ts";
import { DEMO_RAW } from "../support/gateway.ts";
import { folderDigest, writeLegacyFiles, writeLegacyJournal } from "../support/legacy-store.ts";
import { tempDir } from "../support/temp.ts";

function config(storage: Record<string, unknown>, coordination: Record<string, unknown> = { driver: "memory" }): Config {
  return loadConfig({ raw: { ...structuredClone(DEMO_RAW), storage, coordination }, env: {} });
}

function logged(): { log: ReturnType<typeof createLogger>; records: LogFields[] } {
  const records: LogFields[] = [];
  return { log: createLogger({ level: "debug", sink: (r) => records.push(r) }), records };
}

async function openError(c: Config): Promise<Error> {
  const e = await openDocumentStore(c).then(
    (s) => s.close().then(() => null),
    (err: unknown) => err as Error,
  );
  assert.ok(e, "the open was refused");
  return e!;
}

function legacyDigest(dir: string): Record<string, string> {
  return Object.fromEntries(Object.entries(folderDigest(dir)).filter(([path]) => !path.startsWith("gatehouse.sqlite")));
}

test("storage forms: sqlite names the file; fs a folder holding gatehouse.sqlite; the default is .data/gatehouse.sqlite; memory is SQLite in memory", async () => {
  const dir = tempDir("forms");
  assert.equal(sqliteLocation(config({ driver: "sqlite", file: join(dir, "x.db") }).storage), { file: join(dir, "x.db"), legacyDir: dir });
  assert.equal(sqliteLocation(config({ driver: "fs", dir }).storage), { file: join(dir, "gatehouse.sqlite"), legacyDir: dir });
  const raw = structuredClone(DEMO_RAW);
  delete raw.storage;
  assert.equal(loadConfig({ raw, env: {} }).storage, { driver: "sqlite", file: ".data/gatehouse.sqlite" });
  assert.equal(loadConfig({ raw: structuredClone(DEMO_RAW), env: { SQLITE_FILE: "/srv/gh/db.sqlite" } }).storage, { driver: "sqlite", file: "/srv/gh/db.sqlite" });
  const memory = await openDocumentStore(config({ driver: "memory" }));
  assert.is(memory.kind, "sqlite-memory");
  await memory.close();
  const file = await openDocumentStore(config({ driver: "fs", dir }));
  assert.is(file.kind, "sqlite-file");
  await file.collection("a").insert({ _id: "1" });
  await file.close();
  assert.ok(readFileSync(join(dir, "gatehouse.sqlite")).length > 0);
});

test("first start on an older release's .data/: imported once, counts per collection in document_store_imported, the old files untouched", async () => {
  const dir = tempDir("import-boot");
  writeLegacyFiles(dir, { wallet_accounts: [{ _id: "demo", balanceKobo: 7 }], stored_invoices: [{ _id: "s1" }, { _id: "s2" }] });
  writeLegacyJournal(dir, 3, [["stored_invoices", "s3", { _id: "s3" }]]);
  const before = legacyDigest(dir);
  const first = logged();
  const store = await openDocumentStore(config({ driver: "fs", dir }), first.log);
  await first.log.flush();
  const event = first.records.find((r) => r.event === "document_store_imported" || r.msg === "document_store_imported");
  assert.ok(event, JSON.stringify(first.records));
  assert.equal(event!.collections, { stored_invoices: 3, wallet_accounts: 1 });
  assert.is(event!.documents, 4);
  assert.is(event!.from, dir);
  assert.is((await store.collection("wallet_accounts").get("demo"))?.balanceKobo, 7);
  await store.collection("stored_invoices").insert({ _id: "s4" });
  await store.close();
  assert.equal(legacyDigest(dir), before, "the old files are as they were");

  const second = logged();
  const again = await openDocumentStore(config({ driver: "sqlite", file: join(dir, "gatehouse.sqlite") }), second.log);
  await second.log.flush();
  assert.not.ok(second.records.some((r) => JSON.stringify(r).includes("document_store_imported")), "imported once only");
  assert.is(await again.collection("stored_invoices").count({}), 4);
  await again.close();
});

test("a folder holding other entries beside the old layout: not imported at start, a warning says how", async () => {
  const dir = tempDir("import-mixed");
  writeLegacyFiles(dir, { keys: [{ _id: "k1" }] });
  writeFileSync(join(dir, "README.txt"), "my notes");
  const { log, records } = logged();
  const store = await openDocumentStore(config({ driver: "fs", dir }), log);
  await log.flush();
  assert.ok(records.some((r) => JSON.stringify(r).includes("document_store_import_skipped") && JSON.stringify(r).includes("npx gatehouse import")));
  assert.is(await store.collection("keys").count({}), 0);
  await store.close();
});

test("old files appearing beside a database already in use: not imported at start (their ids could clash), a warning says how", async () => {
  const dir = tempDir("import-in-use");
  const first = await openDocumentStore(config({ driver: "fs", dir }));
  await first.collection("keys").insert({ _id: "k1", mine: true });
  await first.close();
  writeLegacyFiles(dir, { keys: [{ _id: "k1" }, { _id: "k2" }] });
  const { log, records } = logged();
  const store = await openDocumentStore(config({ driver: "fs", dir }), log);
  await log.flush();
  assert.ok(records.some((r) => JSON.stringify(r).includes("document_store_import_skipped") && JSON.stringify(r).includes("already holds data")), JSON.stringify(records));
  assert.equal(await store.collection("keys").get("k1"), { _id: "k1", mine: true });
  assert.is(await store.collection("keys").count({}), 1);
  await store.close();
});

test("in-process coordination: a second opener of the same file is refused, naming the file and what to do; with Redis coordination openers share it", async () => {
  const file = join(tempDir("lock-boot"), "gatehouse.sqlite");
  const alone = await openDocumentStore(config({ driver: "sqlite", file }));
  const e = await openError(config({ driver: "sqlite", file }));
  assert.ok(isStorageOpenError(e));
  assert.ok(e.message.includes(file));
  assert.match(e.message, /in-process coordination.*"redis"/s);
  const shared = await openError(config({ driver: "sqlite", file }, { driver: "redis", url: "redis://127.0.0.1:1" }));
  assert.match(shared.message, /in use by a process with in-process coordination/);
  await alone.close();
  const redis = { driver: "redis", url: "redis://127.0.0.1:1" };
  const a = await openDocumentStore(config({ driver: "sqlite", file }, redis));
  const b = await openDocumentStore(config({ driver: "sqlite", file }, redis));
  await a.collection("x").insert({ _id: "from-a" });
  assert.ok(await b.collection("x").get("from-a"), "both see one database");
  assert.match((await openError(config({ driver: "sqlite", file }))).message, /in use by another process/);
  await a.close();
  await b.close();
  const again = await openDocumentStore(config({ driver: "sqlite", file }));
  await again.close();
});

test("a corrupted or foreign file at start: a StorageOpenError naming the file and what to do; the file untouched", async () => {
  const dir = tempDir("bad-file");
  const garbage = join(dir, "gatehouse.sqlite");
  writeFileSync(garbage, Buffer.alloc(8192, 0x5a));
  const e = await openError(config({ driver: "sqlite", file: garbage }));
  assert.ok(isStorageOpenError(e));
  assert.ok(e.message.includes(garbage));
  assert.match(e.message, /not a readable SQLite database.*left untouched.*npx gatehouse restore/s, e.message);
  assert.ok(readFileSync(garbage).equals(Buffer.alloc(8192, 0x5a)));

  const foreign = join(dir, "other.db");
  const db = new (createRequire(import.meta.url)("libsql"))(foreign);
  db.exec("CREATE TABLE t (x)");
  db.close();
  const bytes = readFileSync(foreign);
  const f = await openError(config({ driver: "sqlite", file: foreign }));
  assert.match(f.message, /another program.*left untouched.*storage\.file/s, f.message);
  assert.ok(readFileSync(foreign).equals(bytes));
});

test.run();
