import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import { documentStoreContract } from "./document-store.contract.ts";

documentStoreContract("sqlite-memory", async (clock) => {
  const store = await createSqliteDocumentStore({ file: ":memory:", clock });
  return { store, cleanup: () => store.close() };
});
