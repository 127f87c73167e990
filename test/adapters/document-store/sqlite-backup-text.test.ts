/**
 * A backup keeps the text index true. The trigram index of a collection's text fields is keyed by
 * the collection table's rowid (adapters/document-store/sqlite/text-index.ts), and the tables have no
 * INTEGER PRIMARY KEY: SQLite documents that VACUUM "may change" such rowids, and a backup is
 * `VACUUM INTO`. After deletes (gaps in the rowids) and updates, the copy — and the copy vacuumed
 * again — must answer every `$contains` exactly as the original did and as a scan of the documents
 * does.
 */
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { backupDatabase } from "../../../adapters/document-store/sqlite/backup.ts";
import { openConnection } from "../../../adapters/document-store/sqlite/connection.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import type { Doc } from "../../../adapters/ports.ts";
import { tempDir } from "../../support/temp.ts";

interface Named extends Doc {
  name: string;
  code: string;
}

const SPEC = { indexes: [{ fields: ["code"] }], textFields: ["name", "code"] };
const NEEDLES = ["acme", "Ltd", "00", "007", "-12", "zenith bank", "nothing like it"];

/** For each needle, the ids of the documents whose name or code contains it, as the store answers. */
async function answers(file: string): Promise<string[][]> {
  const store = await createSqliteDocumentStore({ file });
  try {
    const c = store.collection<Named>("accounts", SPEC);
    const out: string[][] = [];
    for (const needle of NEEDLES) {
      const page = await c.find({ $or: [{ name: { $contains: needle } }, { code: { $contains: needle } }] }, { sort: [{ field: "_id", direction: 1 }] });
      out.push(page.items.map((d) => d._id));
    }
    return out;
  } finally {
    await store.close();
  }
}

test("backup (VACUUM INTO), then VACUUM of the copy: every text search answers as on the original, after deletes and updates", async () => {
  const dir = tempDir("backup-text");
  const file = join(dir, "live.sqlite");
  const names = ["Acme Ltd", "Zenith Bank Plc", "ACME Foods", "Sterling Ltd", "Kuda MFB"];
  const store = await createSqliteDocumentStore({ file });
  const kept = new Map<string, Named>();
  try {
    const c = store.collection<Named>("accounts", SPEC);
    for (let i = 0; i < 600; i++) {
      const doc = { _id: `va-${String(i).padStart(4, "0")}`, name: `${names[i % names.length]} ${i}`, code: `C-${String(i).padStart(5, "0")}` };
      await c.insert(doc);
      kept.set(doc._id, doc);
    }
    for (let i = 0; i < 600; i += 3) {
      await c.deleteMany({ _id: `va-${String(i).padStart(4, "0")}` }); // gaps in the rowids
      kept.delete(`va-${String(i).padStart(4, "0")}`);
    }
    for (let i = 1; i < 600; i += 7) {
      const id = `va-${String(i).padStart(4, "0")}`;
      if (!kept.has(id)) continue;
      await c.updateOne({ _id: id }, { $set: { name: `Zenith Bank renamed ${i}` } });
      kept.set(id, { ...kept.get(id)!, name: `Zenith Bank renamed ${i}` });
    }
  } finally {
    await store.close();
  }
  // What a scan of the documents answers (filter.ts's $contains: case-insensitive substring).
  const expected = NEEDLES.map((needle) =>
    [...kept.values()]
      .filter((d) => d.name.toLowerCase().includes(needle.toLowerCase()) || d.code.toLowerCase().includes(needle.toLowerCase()))
      .map((d) => d._id)
      .sort(),
  );
  assert.ok(expected.some((ids) => ids.length > 100) && expected.at(-1)!.length === 0, "the needles match many, some and none");
  assert.equal(await answers(file), expected, "the original");

  const copy = join(dir, "copy.sqlite");
  backupDatabase(file, copy);
  assert.equal(await answers(copy), expected, "the backup");
  const raw = openConnection({ file: copy, busyTimeoutMs: 1_000, synchronous: "FULL" });
  try {
    raw.exec("VACUUM");
  } finally {
    raw.close();
  }
  assert.equal(await answers(copy), expected, "the backup, vacuumed");
});

test.run();
