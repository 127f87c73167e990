/**
 * The contract suite on the SQLite store over a database file: the writer on its own thread, WAL,
 * every acknowledged write committed with fsync. Each case gets a new file. The store is opened as
 * `npm start` opens it, as the file's sole writer (its point reads remembered between writes).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import { documentStoreContract } from "./document-store.contract.ts";

documentStoreContract("sqlite-file", async (clock) => {
  const dir = mkdtempSync(join(tmpdir(), "sqlite-contract-"));
  const store = await createSqliteDocumentStore({ file: join(dir, "gatehouse.db"), clock, soleWriter: true });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
