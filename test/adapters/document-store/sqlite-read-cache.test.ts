/**
 * The sole writer's remembered point reads (adapters/document-store/sqlite/read-cache.ts,
 * docs/decisions.md "SQLite read cache"): answered from memory until a write to the collection
 * settles, never for a collection with a TTL field, each caller given its own copy; only when the
 * store is told it is the file's only writer.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openWriterConnection } from "../../../adapters/document-store/sqlite/commit-loop.ts";
import { ident, tableName } from "../../../adapters/document-store/sqlite/keys.ts";
import { createReadCache, filterKey } from "../../../adapters/document-store/sqlite/read-cache.ts";
import { createSqliteDocumentStore, type SqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { createInlineWriter } from "../../../adapters/document-store/sqlite/writer.ts";
import { isDependencyUnavailableError, isDuplicateKeyError, type Doc } from "../../../adapters/ports.ts";
import { withSqliteFile } from "../../support/sqlite-file.ts";
import { tempDir } from "../../support/temp.ts";

const tempFile = (): string => join(tempDir("sqlite-read-cache"), "gatehouse.db");

const test = suite("sqlite read cache");

/** Changes `_id`'s `v` behind the store's back, through a connection of its own. */
function changeBehind(file: string, collection: string, id: string, v: number): void {
  withSqliteFile(file, (conn) => conn.run(`UPDATE ${ident(tableName(collection))} SET doc = json_set(doc, '$.v', ?) WHERE _id = ?`, [v, id]), "write");
}

async function readThrice(store: SqliteDocumentStore, id: string): Promise<Doc | null> {
  const things = store.collection("things");
  await things.get(id);
  await things.get(id);
  return things.get(id);
}

test("a sole writer answers repeated reads from memory, so a change made behind its back is not seen: the reason it needs the exclusive lock", async () => {
  const file = tempFile();
  const sole = await createSqliteDocumentStore({ file, soleWriter: true });
  try {
    await sole.collection("things").insert({ _id: "a", v: 1 });
    await readThrice(sole, "a");
    const before = (await sole.stats()).readCache!;
    changeBehind(file, "things", "a", 2);
    assert.is((await sole.collection("things").get("a"))?.v, 1, "remembered");
    assert.is((await sole.stats()).readCache!.hits, before.hits + 1);
  } finally {
    await sole.close();
  }

  const shared = await createSqliteDocumentStore({ file });
  try {
    await readThrice(shared, "a");
    changeBehind(file, "things", "a", 3);
    assert.is((await shared.collection("things").get("a"))?.v, 3, "every read asks SQLite");
    assert.is((await shared.stats()).readCache, undefined);
  } finally {
    await shared.close();
  }
});

test("a settled write is seen by the next get, findOne and count, and so is a failed one's collection forgotten", async () => {
  for (const file of [":memory:", tempFile()]) {
    const store = await createSqliteDocumentStore({ file, soleWriter: true });
    try {
      const things = store.collection("things", { indexes: [{ fields: ["code"], unique: true }] });
      await things.insert({ _id: "a", v: 1, code: "x" });
      for (let i = 0; i < 3; i++) {
        assert.is((await things.get("a"))?.v, 1);
        assert.is((await things.findOne({ v: 1 }))?._id, "a");
        assert.is(await things.count({ v: 1 }), 1);
        assert.is(await things.count({ _id: "a", v: 1 }), 1);
      }
      assert.ok((await store.stats()).readCache!.hits >= 7, file);

      assert.ok(await things.updateOne({ _id: "a" }, { $set: { v: 2 } }));
      assert.is((await things.get("a"))?.v, 2, file);
      assert.is(await things.findOne({ v: 1 }), null);
      assert.is(await things.count({ v: 1 }), 0);
      assert.is(await things.count({ _id: "a", v: 1 }), 0);
      assert.is(await things.count({ v: 2 }), 1);

      assert.is(await things.findOne({ code: "y" }), null);
      const clash = await things.insert({ _id: "b", code: "x" }).catch((e: unknown) => e);
      assert.ok(isDuplicateKeyError(clash));
      assert.is((await store.stats()).readCache!.entries, 0, "the failed insert forgot the collection's answers");
      assert.is(await things.findOne({ code: "y" }), null);
    } finally {
      await store.close();
    }
  }
});

test("a collection with a TTL field is never remembered: its documents expire with the clock, without a write", async () => {
  let now = 1_000_000;
  const store = await createSqliteDocumentStore({ file: ":memory:", clock: () => now, sweepIntervalMs: 3_600_000 });
  try {
    const leases = store.collection("leases", { ttlField: "expiresAtMs" });
    await leases.insert({ _id: "l", expiresAtMs: now + 1000 });
    for (let i = 0; i < 3; i++) assert.ok(await leases.get("l"));
    assert.is(await leases.count({ _id: "l" }), 1);
    now += 2000;
    assert.is(await leases.get("l"), null);
    assert.is(await leases.count({ _id: "l" }), 0);
    assert.is((await store.stats()).readCache!.entries, 0);
  } finally {
    await store.close();
  }
});

test("each caller gets its own copy of a remembered document", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  try {
    const things = store.collection("things");
    await things.insert({ _id: "a", tags: ["x"] });
    await things.get("a");
    const first = (await things.get("a"))!;
    (first.tags as string[]).push("changed");
    first.extra = true;
    assert.equal(await things.get("a"), { _id: "a", tags: ["x"] });
    assert.equal(await things.findOne({ _id: "a" }), { _id: "a", tags: ["x"] });
  } finally {
    await store.close();
  }
});

test("the writer tells which collections a reply wrote before the first of its operations settles", async () => {
  const conn = openWriterConnection(":memory:", 1000, "OFF");
  const events: string[] = [];
  const writer = createInlineWriter(conn, { kind: "t", onWritten: (c) => events.push(`written ${c}`) });
  try {
    const ops = ["a", "b"].map((id) =>
      writer.write({ kind: "insert", collection: id === "a" ? "x" : "y", id, text: JSON.stringify({ _id: id }), now: 0 }).then(() => events.push(`settled ${id}`)),
    );
    await Promise.all(ops);
    assert.equal(events, ["written x", "written y", "settled a", "settled b"]);
  } finally {
    await writer.close();
    conn.close();
  }
});

test("a writer thread that dies after a commit, before its answer: its operations fail as unavailable and their collections are forgotten", async () => {
  const file = tempFile();
  const writerEntry = new URL("./dying-writer-thread.ts", import.meta.url);
  const store = await createSqliteDocumentStore({ file, soleWriter: true, writerEntry });
  try {
    const things = store.collection("things");
    await things.insert({ _id: "a", v: 1 });
    assert.is((await readThrice(store, "a"))?.v, 1, "remembered");
    // One batch: the update commits, then the thread dies before answering.
    const [update, marker] = await Promise.allSettled([things.updateOne({ _id: "a" }, { $set: { v: 2 } }), store.collection("dying_writer").insert({ _id: "x" })]);
    assert.ok(update.status === "rejected" && isDependencyUnavailableError(update.reason), "the update is not acknowledged");
    assert.ok(marker.status === "rejected" && isDependencyUnavailableError(marker.reason));
    assert.is((await things.get("a"))?.v, 2, "the committed change is read from the file, not from memory");
    // A thread started again that cannot open the file fails the write, rather than keeping it waiting.
    writeFileSync(`${file}.refuse-open`, "");
    const refused = await things.updateOne({ _id: "a" }, { $set: { v: 3 } }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(isDependencyUnavailableError(refused) && /could not open/.test(refused.message), String(refused));
    rmSync(`${file}.refuse-open`);
    await things.updateOne({ _id: "a" }, { $set: { v: 3 } });
    assert.is((await things.get("a"))?.v, 3, "the next write starts a new writer thread");
  } finally {
    await store.close();
  }
});

test("the cache keeps within its budget and forgets one collection at a time", () => {
  const cache = createReadCache(100);
  cache.remember("a", "k1", "x".repeat(40));
  cache.remember("b", "k2", 3);
  assert.is(cache.get("a", "k1"), "x".repeat(40));
  assert.equal(cache.stats(), { hits: 1, misses: 0, entries: 2, chars: 52 });
  cache.written("a");
  assert.is(cache.get("a", "k1"), undefined);
  assert.is(cache.get("b", "k2"), 3);
  cache.remember("b", "k3", "y".repeat(90)); // over the budget with what is held: starts again empty
  assert.is(cache.get("b", "k2"), undefined);
  assert.is(cache.get("b", "k3"), "y".repeat(90));
  cache.remember("b", "k4", "z".repeat(200)); // larger than the whole budget: not held
  assert.is(cache.get("b", "k4"), undefined);
  assert.equal(cache.stats().entries, 1);
});

test("only a filter that is plain JSON has a cache key: one text, one question", () => {
  assert.is(filterKey({ _id: "a", rev: 2, revoked: false, expiresAt: null, tags: { $in: ["x"] } }), '{"_id":"a","rev":2,"revoked":false,"expiresAt":null,"tags":{"$in":["x"]}}');
  for (const filter of [
    { at: new Date(0) },
    { name: /a/ },
    { nested: { gone: undefined } },
    { n: Number.NaN },
    { n: Number.POSITIVE_INFINITY },
    { list: [1, , 2] }, // eslint-disable-line no-sparse-arrays
    { made: new (class Thing {})() },
    { big: 1n },
  ]) {
    assert.is(filterKey(filter), null, String(Object.keys(filter)[0]));
  }
});

test.run();
