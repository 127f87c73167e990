/**
 * `npm start` (boot/main.ts) on a database file it must not use: a corrupted file, another
 * program's SQLite database, a folder it cannot write. Each stops the start with exit 1 and one
 * message naming the file and what to do (no stack trace); the file is left byte for byte as it was.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnTs, trackChild } from "../support/child-process.ts";
import { DEMO_RAW } from "../support/gateway.ts";
import { tempDir } from "../support/temp.ts";

async function startOn(storage: Record<string, unknown>): Promise<{ code: number | null; out: string }> {
  const dir = tempDir("sqlite-start");
  const raw = structuredClone(DEMO_RAW) as Record<string, any>;
  raw.server = { ...raw.server, port: 0 };
  raw.storage = storage;
  raw.regulator.simulator = { enabled: false };
  raw.email = { driver: "folder", dir: join(dir, "mail") };
  const config = join(dir, "config.json");
  writeFileSync(config, JSON.stringify(raw));
  const child = spawnTs("boot/main.ts", ["--config", config]);
  trackChild(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c)));
  return { code, out };
}

test("a corrupted file: exit 1, the file named with what to do (restore a backup), nothing overwritten", async () => {
  const file = join(tempDir("corrupt"), "gatehouse.sqlite");
  // An SQLite header followed by garbage: what a torn copy or a damaged disk leaves.
  const bytes = Buffer.concat([Buffer.from("SQLite format 3\u0000"), Buffer.alloc(8192 - 16, 0xa5)]);
  writeFileSync(file, bytes);
  const r = await startOn({ driver: "sqlite", file });
  assert.is(r.code, 1, r.out);
  assert.ok(r.out.includes(file), r.out);
  assert.match(r.out, /not a readable SQLite database.*left untouched.*npx gatehouse restore/s);
  assert.not.match(r.out, /\n\s+at /, "no stack trace");
  assert.ok(readFileSync(file).equals(bytes), "byte for byte as it was");
});

test("not a database at all (a text file at the path): exit 1 with the same advice, the file untouched", async () => {
  const file = join(tempDir("notes"), "gatehouse.sqlite");
  writeFileSync(file, "my notes, not a database\n".repeat(100));
  const before = readFileSync(file);
  const r = await startOn({ driver: "sqlite", file });
  assert.is(r.code, 1, r.out);
  assert.match(r.out, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is not a readable SQLite database`));
  assert.ok(readFileSync(file).equals(before));
});

test("another program's SQLite database: exit 1 naming it, untouched", async () => {
  const file = join(tempDir("foreign"), "app.db");
  const Database = createRequire(import.meta.url)("libsql");
  const db = new Database(file);
  db.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('Ada')");
  db.close();
  const before = readFileSync(file);
  const r = await startOn({ driver: "sqlite", file });
  assert.is(r.code, 1, r.out);
  assert.ok(r.out.includes(file));
  assert.match(r.out, /another program.*left untouched.*storage\.file/s);
  assert.ok(readFileSync(file).equals(before));
});

test("the database path is a folder: exit 1 naming it and what to check", async () => {
  const file = join(tempDir("dir-as-file"), "gatehouse.sqlite");
  mkdirSync(file);
  const r = await startOn({ driver: "sqlite", file });
  assert.is(r.code, 1, r.out);
  assert.ok(r.out.includes(file), r.out);
  assert.match(r.out, /cannot be opened for writing.*Check that it is a file/s);
  assert.not.match(r.out, /\n\s+at /);
});

test.run();
