/**
 * The one-time import of an older release's store folder into the SQLite database
 * (adapters/document-store/sqlite/legacy-import.ts): per-document files and crash-left journals
 * replayed over them, counts per collection, unreadable entries skipped and counted, the folder
 * never written, one transaction with a marker (a second import does nothing; a clash imports nothing).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { importLegacyStore, inspectLegacyFolder } from "../../../adapters/document-store/sqlite/legacy-import.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import type { Doc } from "../../../adapters/ports.ts";
import { folderDigest, legacySegment, writeLegacyFiles, writeLegacyJournal } from "../../support/legacy-store.ts";
import { tempDir } from "../../support/temp.ts";

const LONG_ID = `inv-${"x".repeat(300)}`;

function crashLeftFolder(): string {
  const dir = tempDir("legacy");
  writeLegacyFiles(dir, {
    wallet_accounts: [{ _id: "demo", balanceKobo: 100_000 }, { _id: "other", balanceKobo: 5_000 }],
    "sign.records/v1": [{ _id: "r1", status: "done" }, { _id: "r2", status: "claimed" }, { _id: LONG_ID, status: "done" }],
    stored_invoices: [{ _id: "s1", status: "accepted" }],
  });
  writeFileSync(join(dir, legacySegment("stored_invoices"), "s2"), "{ torn by a crash mid-checkpo");
  // The journal a crash left: r2 finished, s1 deleted, s3 never reached its file, a torn last line.
  writeLegacyJournal(dir, 7, [
    ["sign.records/v1", "r2", { _id: "r2", status: "done" }],
    ["stored_invoices", "s1", null],
    ["stored_invoices", "s3", { _id: "s3", status: "signed" }],
    '["stored_invoices","s4",{"_id":"s4","sta',
  ]);
  return dir;
}

test("an older store's files and crash-left journals: imported with counts per collection, unreadable entries counted, the folder untouched", async () => {
  const dir = crashLeftFolder();
  const before = folderDigest(dir);
  const file = join(tempDir("legacy-db"), "gatehouse.sqlite");
  const report = importLegacyStore({ file, dir, busyTimeoutMs: 1000 });
  assert.is(report.alreadyImported, false);
  assert.equal(report.collections, { "sign.records/v1": 3, stored_invoices: 1, wallet_accounts: 2 });
  assert.is(report.documents, 6);
  assert.is(report.journalChanges, 3);
  assert.equal(report.skipped.sort(), ["@journal-00000007:4", `${legacySegment("stored_invoices")}/s2`]);
  assert.equal(folderDigest(dir), before, "nothing of the old folder was changed");

  const store = await createSqliteDocumentStore({ file });
  try {
    assert.equal(await store.collection<Doc>("sign.records/v1").get("r2"), { _id: "r2", status: "done" }, "the journal's later state wins over the file");
    assert.ok(await store.collection<Doc>("sign.records/v1").get(LONG_ID), "a hashed file name: the document's own _id");
    assert.is(await store.collection<Doc>("stored_invoices").get("s1"), null, "deleted in the journal");
    assert.equal(await store.collection<Doc>("stored_invoices").get("s3"), { _id: "s3", status: "signed" });
    assert.is((await store.collection<Doc>("wallet_accounts").get("demo"))?.balanceKobo, 100_000);
  } finally {
    await store.close();
  }

  const again = importLegacyStore({ file, dir, busyTimeoutMs: 1000 });
  assert.is(again.alreadyImported, true, "once only");
  assert.equal(again.collections, report.collections);
  const reopened = await createSqliteDocumentStore({ file });
  assert.is(await reopened.collection("wallet_accounts").count({}), 2, "nothing imported twice");
  await reopened.close();
});

test("a folder as the older store wrote it (its file names, byte for byte: `.`, `*`, `/`, spaces and non-ASCII escaped; a deleted document's file gone): every document imported", async () => {
  // The paths and contents below are what that store wrote for these inserts and one delete, copied
  // from a folder it left (the encoding is the one test/support/legacy-store.ts reproduces).
  const dir = tempDir("legacy-real");
  const files: Record<string, string> = {
    "keys/k%2E1": '{"_id":"k.1","hash":"sha256:00"}',
    "sign%2Erecords%2Fv1/a%2Ab%20c%2F%C3%A9": '{"_id":"a*b c/é","x":1}',
  };
  for (let i = 0; i < 50; i++) if (i !== 7) files[`invoices/inv-${String(i).padStart(3, "0")}`] = JSON.stringify({ _id: `inv-${String(i).padStart(3, "0")}`, n: i, tags: ["a", "b"] });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path.split("/")[0]!), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  assert.is(legacySegment("sign.records/v1"), "sign%2Erecords%2Fv1", "the helper writes the same names");
  assert.is(legacySegment("a*b c/é"), "a%2Ab%20c%2F%C3%A9");
  const file = join(tempDir("legacy-real-db"), "gatehouse.sqlite");
  const report = importLegacyStore({ file, dir, busyTimeoutMs: 1000 });
  assert.equal(report.collections, { invoices: 49, keys: 1, "sign.records/v1": 1 });
  assert.equal(report.skipped, []);
  const store = await createSqliteDocumentStore({ file });
  const page = await store.collection<Doc>("invoices").find({}, { sort: [{ field: "_id", direction: 1 }], limit: 3 });
  assert.equal(page.items.map((d) => d._id), ["inv-000", "inv-001", "inv-002"]);
  assert.is(await store.collection("invoices").get("inv-007"), null);
  assert.equal(await store.collection("keys").get("k.1"), { _id: "k.1", hash: "sha256:00" });
  assert.equal(await store.collection("sign.records/v1").get("a*b c/é"), { _id: "a*b c/é", x: 1 });
  await store.close();
});

test("a document the database already holds: the import fails whole (nothing imported, no marker)", async () => {
  const dir = crashLeftFolder();
  const file = join(tempDir("legacy-clash"), "gatehouse.sqlite");
  const store = await createSqliteDocumentStore({ file });
  await store.collection("wallet_accounts").insert({ _id: "other", balanceKobo: 1 });
  await store.close();
  assert.throws(() => importLegacyStore({ file, dir, busyTimeoutMs: 1000 }), /"other" of collection "wallet_accounts" is already in .*nothing was imported/);
  const after = await createSqliteDocumentStore({ file });
  assert.is(await after.collection("wallet_accounts").count({}), 1);
  assert.is(await after.collection("sign.records/v1").count({}), 0);
  await after.close();
});

test("inspectLegacyFolder: none, the old layout alone, or mixed with foreign entries; the database's own files ignored", () => {
  assert.equal(inspectLegacyFolder(join(tempDir("none"), "missing")), { kind: "none" });
  const empty = tempDir("empty");
  writeFileSync(join(empty, ".gitkeep"), "");
  assert.equal(inspectLegacyFolder(empty), { kind: "none" });
  const dir = crashLeftFolder();
  writeFileSync(join(dir, "gatehouse.sqlite"), "");
  writeFileSync(join(dir, "gatehouse.sqlite-wal"), "");
  const own = (name: string) => name.startsWith("gatehouse.sqlite");
  const legacy = inspectLegacyFolder(dir, own);
  assert.is(legacy.kind, "legacy");
  assert.equal(legacy.kind === "legacy" && legacy.journals, ["@journal-00000007"]);
  writeFileSync(join(dir, "notes.txt"), "mine");
  mkdirSync(join(dir, "photos.2024"));
  const mixed = inspectLegacyFolder(dir, own);
  assert.equal(mixed.kind === "mixed" && mixed.foreign, ["notes.txt", "photos.2024"]);
});

test.run();
