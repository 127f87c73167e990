/**
 * A database file is Gatehouse's before anything writes to it (connection.ts): a new file gets the
 * application id; one created without it that holds only this store's tables gets it too; another
 * program's SQLite database is refused, byte for byte untouched, with a code the startup maps to a
 * clear message.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { APPLICATION_ID, FOREIGN_DATABASE } from "../../../adapters/document-store/sqlite/connection.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { tempDir } from "../../support/temp.ts";

const Database = createRequire(import.meta.url)("libsql");

function applicationId(file: string): number {
  const db = new Database(file);
  try {
    return Number(db.prepare("PRAGMA application_id").raw(true).get()[0]);
  } finally {
    db.close();
  }
}

test("a new database carries Gatehouse's application id", async () => {
  const file = join(tempDir("ident"), "gatehouse.sqlite");
  const store = await createSqliteDocumentStore({ file });
  await store.collection("a").insert({ _id: "1" });
  await store.close();
  assert.is(applicationId(file), APPLICATION_ID);
});

test("a database without the id holding only this store's tables is claimed (one an earlier build created)", async () => {
  const file = join(tempDir("ident-old"), "gatehouse.sqlite");
  const db = new Database(file);
  db.exec("CREATE TABLE gatehouse_collections (name TEXT PRIMARY KEY NOT NULL, spec TEXT NOT NULL)");
  db.close();
  const store = await createSqliteDocumentStore({ file });
  await store.collection("a").insert({ _id: "1" });
  await store.close();
  assert.is(applicationId(file), APPLICATION_ID);
});

test("another program's SQLite database: refused with its code, nothing written", async () => {
  const file = join(tempDir("ident-foreign"), "notes.db");
  const db = new Database(file);
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('mine')");
  db.close();
  const before = readFileSync(file);
  const e = await createSqliteDocumentStore({ file }).then(
    (s) => s.close().then(() => null),
    (err: unknown) => err as Error & { code?: string },
  );
  assert.ok(e, "refused");
  assert.is(e!.code, FOREIGN_DATABASE);
  assert.match(e!.message, /another program/);
  assert.ok(readFileSync(file).equals(before), "byte for byte as it was");
});

test.run();
