import { mkdtempSync, rmSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createUnstorageDocumentStore } from "../../adapters/document-store/unstorage.ts";
import { isDuplicateKeyError } from "../../adapters/ports.ts";
import { documentStoreContract } from "./document-store.contract.ts";

const tempDir = (): string => mkdtempSync(join(tmpdir(), "gatehouse-docstore-"));

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

persistence.run();
