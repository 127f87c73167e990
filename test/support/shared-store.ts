/**
 * The document stores a cross-process suite runs on (ARCHITECTURE.md §6: the same suites run
 * against each deployment): the MongoDB-wire server (jongodb, or MONGODB_URI) and an SQLite file
 * on this host, each shared by every process of the suite (with Redis for coordination). A suite
 * loops over `sharedStores()` and registers one uvu suite per store.
 *
 * `pause()` makes the store stop answering writes for a while, as each engine can: the MongoDB-wire
 * server is SIGSTOPped (nothing answers); on SQLite this process takes the file's write lock
 * (BEGIN IMMEDIATE on a connection of its own) and holds it until `resume()`, as another process
 * holding the lock past the deadline would (reads go on: WAL).
 */
import { join } from "node:path";
import { openConnection, sqliteCode, type SqliteConnection } from "../../adapters/document-store/sqlite/connection.ts";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import { createMongoDocumentStore } from "../../adapters/document-store/mongodb.ts";
import type { DocumentStore } from "../../adapters/ports.ts";
import { isMongoSkip, startMongoServer, type MongoServerHandle } from "./mongo-server.ts";
import { reportRedisSkip } from "./redis-server.ts";
import { tempDir } from "./temp.ts";

export type SharedStoreKind = "mongodb" | "sqlite";

export interface SharedStore {
  kind: SharedStoreKind;
  /** The `storage` section of the config every process of the suite runs on. */
  storage: Record<string, unknown>;
  /** A connection of this process to the shared store (inspection). */
  open(): Promise<DocumentStore>;
  /** False when the store cannot be paused here (a MONGODB_URI server this test does not own). */
  pausable: boolean;
  pause(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** One shared store per engine available here (a missing MongoDB-wire server is reported as a skip). */
export async function sharedStores(what: string): Promise<SharedStore[]> {
  const out: SharedStore[] = [];
  const mongo = await startMongoServer();
  if (isMongoSkip(mongo)) reportRedisSkip(`${what} (MongoDB-compatible server missing)`, mongo.skip);
  else out.push(mongoSharedStore(mongo));
  out.push(sqliteSharedStore());
  return out;
}

/** A fresh database on a MongoDB-wire server; `stop()` stops the server. */
export function mongoSharedStore(mongo: MongoServerHandle): SharedStore {
  const dbName = mongo.dbName();
  return {
    kind: "mongodb",
    storage: { driver: "mongodb", uri: mongo.uri, dbName },
    open: () => createMongoDocumentStore({ uri: mongo.uri, dbName }),
    pausable: mongo.owned,
    pause: () => mongo.pause(),
    resume: () => mongo.resume(),
    stop: () => mongo.stop(),
  };
}

/** An SQLite file in a fresh folder, shared by the suite's processes. */
export function sqliteSharedStore(): SharedStore {
  const file = join(tempDir("shared-sqlite"), "gatehouse.sqlite");
  // The connection that takes the write lock, opened ahead (with the inspection store), and a pause
  // that retries BEGIN IMMEDIATE without sleeping: it starts within one commit of the gateways', as
  // a SIGSTOP does at once (SQLite's busy handler sleeps between tries and can lose the race to the
  // gateways' writers for tens of milliseconds).
  let holder: SqliteConnection | null = null;
  const connect = (): SqliteConnection => (holder ??= openConnection({ file, busyTimeoutMs: 0, synchronous: "FULL" }));
  return {
    kind: "sqlite",
    storage: { driver: "sqlite", file },
    async open() {
      const store = await createSqliteDocumentStore({ file });
      connect();
      return store;
    },
    pausable: true,
    async pause() {
      const conn = connect();
      for (const deadline = Date.now() + 10_000; ; ) {
        try {
          conn.begin("IMMEDIATE");
          return;
        } catch (e) {
          if (!sqliteCode(e).startsWith("SQLITE_BUSY") || Date.now() > deadline) throw e;
        }
      }
    },
    async resume() {
      holder?.rollback();
    },
    async stop() {
      holder?.close();
      holder = null;
    },
  };
}
