import { MongoClient } from "mongodb";
import { createMongoDocumentStore } from "../../adapters/document-store/mongodb.ts";
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
}
