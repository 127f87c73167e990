import { createUnstorageDocumentStore } from "../../adapters/document-store/unstorage.ts";
import { documentStoreContract } from "./document-store.contract.ts";

documentStoreContract("unstorage-memory", async (clock) => {
  const store = await createUnstorageDocumentStore({ driver: "memory", clock });
  return { store, cleanup: () => store.close() };
});
