import { spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createUnstorageDocumentStore } from "../../adapters/document-store/unstorage.ts";
import { isDuplicateKeyError } from "../../adapters/ports.ts";
import { documentStoreContract } from "./document-store.contract.ts";

const tempDir = (): string => mkdtempSync(join(tmpdir(), "gatehouse-docstore-"));
const ROOT = new URL("../../", import.meta.url).pathname;

documentStoreContract("unstorage-fs", async (clock) => {
  const dir = tempDir();
  const store = await createUnstorageDocumentStore({ driver: "fs", dir, clock });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

const persistence = suite("unstorage-fs persistence");

persistence("data, unique indexes and TTL survive closing and reopening the store", async () => {
  const dir = tempDir();
  let now = Date.now();
  const clock = (): number => now;
  try {
    const first = await createUnstorageDocumentStore({ driver: "fs", dir, clock });
    const users = first.collection("users", { indexes: [{ fields: ["email"], unique: true }] });
    const sessions = first.collection("sessions", { ttlField: "exp" });
    await users.insert({ _id: "u1", email: "a@x", n: 0 });
    await users.insert({ _id: "we:ird/id..", email: "b@x" });
    await Promise.all(Array.from({ length: 20 }, () => users.findOneAndUpdate({ _id: "u1" }, { $inc: { n: 1 } })));
    await users.insert({ _id: "gone", email: "c@x" });
    await users.delete("gone");
    await sessions.insert({ _id: "s1", exp: now + 1000 });
    await sessions.insert({ _id: "s2", exp: now + 100_000 });
    await first.close();

    now += 5000;
    const second = await createUnstorageDocumentStore({ driver: "fs", dir, clock });
    assert.equal(second.loadReport(), { documents: 4, skipped: [] });
    const users2 = second.collection("users", { indexes: [{ fields: ["email"], unique: true }] });
    assert.equal(await users2.get("u1"), { _id: "u1", email: "a@x", n: 20 }, "the last write won on disk");
    assert.equal(await users2.get("we:ird/id.."), { _id: "we:ird/id..", email: "b@x" });
    assert.is(await users2.get("gone"), null);
    try {
      await users2.insert({ _id: "u9", email: "a@x" });
      assert.unreachable("the reloaded unique index must hold");
    } catch (e) {
      assert.ok(isDuplicateKeyError(e));
    }
    const sessions2 = second.collection("sessions", { ttlField: "exp" });
    assert.is(await sessions2.get("s1"), null, "expired while the store was closed");
    assert.ok(await sessions2.get("s2"));
    await second.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

persistence("an unreadable file is skipped at load and reported, not fatal", async () => {
  const dir = tempDir();
  try {
    const first = await createUnstorageDocumentStore({ driver: "fs", dir });
    await first.collection("c").insert({ _id: "ok", v: 1 });
    await first.close();
    mkdirSync(join(dir, "c"), { recursive: true });
    writeFileSync(join(dir, "c", "torn"), '{"_id":"torn","v":');
    assert.equal(readdirSync(join(dir, "c")).sort(), ["ok", "torn"]);
    const second = await createUnstorageDocumentStore({ driver: "fs", dir });
    assert.equal(second.loadReport(), { documents: 1, skipped: ["c:torn"] });
    assert.equal(await second.collection("c").get("ok"), { _id: "ok", v: 1 });
    await second.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

persistence("acknowledged changes survive a crash (SIGKILL, no close): the journal is replayed over the checkpointed files", async () => {
  const dir = tempDir();
  try {
    const child = spawnSync(process.execPath, ["--import", "tsx", "test/support/journal-crash-process.ts", dir], { cwd: ROOT, encoding: "utf8" });
    assert.is(child.signal, "SIGKILL", child.stderr);
    assert.match(child.stdout, /ACKNOWLEDGED/);
    assert.ok(readdirSync(dir).some((f) => f.startsWith("@journal-")), "the crash left journal files");
    assert.ok(readdirSync(join(dir, "crash")).length >= 150, "a checkpoint wrote the inserts to their files");
    const store = await createUnstorageDocumentStore({ driver: "fs", dir });
    const c = store.collection("crash", { indexes: [{ fields: ["k"], unique: true }] });
    assert.equal(store.loadReport(), { documents: 150, skipped: [] });
    const all = (await c.find({}, { limit: 1000 })).items;
    assert.is(all.length, 150, "the 50 deletes held");
    assert.ok(all.every((d) => d.v === (Number(d.k) < 100 ? 1 : 0)), "the 100 updates held, once each");
    await _rejects(c.insert({ _id: "x", k: 5 }), isDuplicateKeyError);
    await store.close();
    assert.equal(readdirSync(dir).filter((f) => f.startsWith("@journal-")), [], "a clean close checkpoints and drops the journals");
    assert.is(readdirSync(join(dir, "crash")).length, 150);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

persistence("a torn journal line (a crash mid-append) is skipped and reported; every earlier change is kept", async () => {
  const dir = tempDir();
  try {
    const child = spawnSync(process.execPath, ["--import", "tsx", "test/support/journal-crash-process.ts", dir], { cwd: ROOT, encoding: "utf8" });
    assert.is(child.signal, "SIGKILL", child.stderr);
    const journal = readdirSync(dir).filter((f) => f.startsWith("@journal-")).sort().pop()!;
    appendFileSync(join(dir, journal), '["crash","d999",{"_id":"d999","k":9');
    const store = await createUnstorageDocumentStore({ driver: "fs", dir });
    const report = store.loadReport();
    assert.is(report.documents, 150);
    assert.equal(report.skipped.length, 1);
    assert.match(report.skipped[0]!, /^@journal-\d+:\d+$/);
    assert.is(await store.collection("crash").get("d999"), null);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

persistence("a checkpoint writes each changed document once, in its own file, and drops the journals it covers", async () => {
  const dir = tempDir();
  try {
    const store = await createUnstorageDocumentStore({ driver: "fs", dir, checkpointMs: 20 });
    const c = store.collection("cp");
    await c.insert({ _id: "a", n: 0 });
    for (let i = 0; i < 50; i++) await c.updateOne({ _id: "a" }, { $inc: { n: 1 } });
    // The checkpoint runs every 20 ms (its first one starts the worker thread): wait for it, up to 5 s.
    const journals = () => readdirSync(dir).filter((f) => f.startsWith("@journal-")).length;
    const written = (): boolean => {
      try {
        return (JSON.parse(readFileSync(join(dir, "cp", "a"), "utf8")) as { n: number }).n === 50;
      } catch {
        return false; // not written yet (or mid-write)
      }
    };
    for (const end = Date.now() + 5_000; !(written() && journals() === 1) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    assert.equal(JSON.parse(readFileSync(join(dir, "cp", "a"), "utf8")), { _id: "a", n: 50 });
    assert.is(readdirSync(dir).filter((f) => f.startsWith("@journal-")).length, 1, "only the current journal is left");
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

persistence.run();

async function _rejects(p: Promise<unknown>, is: (e: unknown) => boolean): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.ok(is(e), String(e));
    return;
  }
  assert.unreachable("expected a rejection");
}
