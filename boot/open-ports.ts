/**
 * The openers of the configured engines: the document store, the coordination store and the
 * e-mail sender. Drivers other than the embedded default are imported only when configured, so
 * `npm start` never loads the MongoDB or Redis client.
 */
import type { CoordinationStore, DocumentStore, EmailSender } from "../adapters/ports.ts";
import { createMemoryCoordination } from "../adapters/coordination/memory.ts";
import { createUnstorageDocumentStore } from "../adapters/document-store/unstorage.ts";
import { createFolderEmailSender } from "../adapters/email/folder.ts";
import type { Config } from "../config/schema.ts";
import type { Logger } from "../core/log.ts";

export async function openDocumentStore(config: Config, log?: Logger): Promise<DocumentStore> {
  const s = config.storage;
  switch (s.driver) {
    case "memory":
      return createUnstorageDocumentStore({ driver: "memory" });
    case "fs":
      return createUnstorageDocumentStore({
        driver: "fs",
        dir: s.dir,
        // Nothing is lost when the worker is gone; the operator learns the main thread writes the files again.
        onCheckpointFallback: (reason) => log?.warn("document_store_checkpoint_on_main_thread", { reason }),
        // Nothing is lost either while checkpoints fail (the journals keep every change), but the
        // journals grow until the cause (a full disk, permissions) is fixed.
        onCheckpointFailed: (info) => log?.error("document_store_checkpoint_failed", info),
        onCheckpointRecovered: (info) => log?.event("document_store_checkpoint_recovered", info),
      });
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
