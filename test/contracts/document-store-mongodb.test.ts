import { MongoClient } from "mongodb";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createMongoDocumentStore } from "../../adapters/document-store/mongodb.ts";
import { isDependencyUnavailableError } from "../../adapters/ports.ts";
import { isMongoSkip, startMongoServer } from "../support/mongo-server.ts";
import { documentStoreContract } from "./document-store.contract.ts";

const server = await startMongoServer();

if (isMongoSkip(server)) {
  documentStoreContract("mongodb", async () => Promise.reject(new Error("skipped")), { skip: server.skip });
} else {
  documentStoreContract("mongodb", async (clock) => {
    const dbName = server.dbName();
    const store = await createMongoDocumentStore({ uri: server.uri, dbName, clock });
    return {
      store,
      cleanup: async () => {
        await store.close();
        // A real server keeps data: drop the per-test database (jongodb has no dropDatabase; it dies with the run).
        if (!server.owned) await MongoClient.connect(server.uri).then(async (c) => (await c.db(dbName).dropDatabase(), c.close()));
      },
    };
  });

  const specifics = suite("mongodb adapter specifics");

  specifics("indexes are created at open: default names, unique, partial for sparse, TTL on the Date mirror; hidden fields never leak", async () => {
    const dbName = server.dbName();
    const store = await createMongoDocumentStore({ uri: server.uri, dbName });
    const c = store.collection("sessions", {
      ttlField: "expiresAt",
      indexes: [{ fields: ["token"], unique: true }, { fields: ["tenant", "ref"], unique: true, sparse: true }, { fields: ["status"] }],
    });
    const doc = { _id: "s1", token: "t", expiresAt: Date.now() + 60_000 };
    assert.equal(await c.insert(doc), doc);
    assert.equal(await c.get("s1"), doc);
    const client = await MongoClient.connect(server.uri);
    try {
      const raw = client.db(dbName).collection("sessions");
      const byName = Object.fromEntries((await raw.indexes()).map((ix) => [ix.name, ix]));
      assert.equal(byName["token_1"]?.key, { token: 1 });
      assert.is(byName["token_1"]?.unique, true);
      assert.equal(byName["tenant_1_ref_1"]?.partialFilterExpression, { tenant: { $exists: true }, ref: { $exists: true } });
      assert.ok(byName["status_1"] && !byName["status_1"].unique);
      assert.is(byName["_gh_expiresAt_ttl"]?.expireAfterSeconds, 0);
      const stored = await raw.findOne({ _id: "s1" as never });
      assert.ok(stored?._gh_expiresAt instanceof Date, "the TTL mirror is a BSON Date");
      assert.is((stored!._gh_expiresAt as Date).getTime(), doc.expiresAt);
    } finally {
      await client.close();
      await store.close();
    }
  });

  specifics("an unreachable server → DependencyUnavailableError (connect and later calls)", async () => {
    try {
      await createMongoDocumentStore({ uri: "mongodb://127.0.0.1:1/x", connectTimeoutMs: 300 });
      assert.unreachable("connect must fail");
    } catch (e) {
      assert.ok(isDependencyUnavailableError(e), String(e));
      assert.is((e as { dependency: string }).dependency, "mongodb");
      assert.ok(!String((e as Error).message).includes("mongodb://127"), "no connection string in the message");
    }
    if (!server.owned) return; // a server we do not own cannot be killed
    const own = await startMongoServer();
    if (isMongoSkip(own)) return;
    const store = await createMongoDocumentStore({ uri: own.uri, connectTimeoutMs: 500 });
    const c = store.collection("x");
    await c.insert({ _id: "a" });
    await own.stop();
    for (const call of [() => c.get("a"), () => c.insert({ _id: "b" }), () => store.ping()]) {
      try {
        await call();
        assert.unreachable("the server is gone");
      } catch (e) {
        assert.ok(isDependencyUnavailableError(e), String(e));
        assert.ok(["transport", "timeout"].includes((e as { failureClass: string }).failureClass));
      }
    }
    await store.close();
  });

  specifics.run();
}
