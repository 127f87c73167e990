/**
 * The openers of the configured engines: the document store (the embedded SQLite file by default:
 * ./open-sqlite.ts), the coordination store and the e-mail sender. Drivers other than the embedded
 * default are imported only when configured, so `npm start` never loads the MongoDB or Redis client.
 */
import type { CoordinationStore, DocumentStore, EmailSender } from "../adapters/ports.ts";
import { createMemoryCoordination } from "../adapters/coordination/memory.ts";
import { createSqliteDocumentStore } from "../adapters/document-store/sqlite/store.ts";
import { createFolderEmailSender } from "../adapters/email/folder.ts";
import type { Config } from "../config/schema.ts";
import type { Logger } from "../core/log.ts";
import { openSqliteStore, sqliteLocation } from "./open-sqlite.ts";

export async function openDocumentStore(config: Config, log?: Logger): Promise<DocumentStore> {
  const s = config.storage;
  switch (s.driver) {
    case "memory":
      // Tests and benches: the same engine in memory, nothing kept.
      return createSqliteDocumentStore({ file: ":memory:" });
    case "sqlite":
    case "fs":
      return openSqliteStore(config, sqliteLocation(s)!, log);
    case "mongodb": {
      // Loaded only when configured: the embedded default never loads the MongoDB driver.
      const { createMongoDocumentStore } = await import("../adapters/document-store/mongodb.ts");
      return createMongoDocumentStore({ uri: s.uri, dbName: s.dbName });
    }
  }
}

export async function openCoordination(config: Config): Promise<CoordinationStore> {
  const c = config.coordination;
  switch (c.driver) {
    case "memory":
      return createMemoryCoordination();
    case "redis": {
      const { createRedisCoordination } = await import("../adapters/coordination/redis.ts");
      return createRedisCoordination({ url: c.url, keyPrefix: c.keyPrefix, commandTimeoutMs: c.commandTimeoutMs });
    }
  }
}

export async function openEmail(config: Config): Promise<EmailSender> {
  const e = config.email;
  if (e.driver === "folder") return createFolderEmailSender({ dir: e.dir, from: e.from });
  const { createSmtpEmailSender } = await import("../adapters/email/smtp.ts");
  return createSmtpEmailSender({
    host: e.host,
    port: e.port,
    secure: e.secure,
    from: e.from,
    auth: e.user ? { user: e.user, pass: e.password ?? "" } : undefined,
  });
}
