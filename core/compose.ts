/**
 * The composition root: the one place that turns config into implementations — the document
 * store, the coordination store (each wrapped in its resilience policy), the logger and the
 * plugin list — and hands them to createGateway. The rest of core never imports an adapter or a
 * plugin.
 */
import type { Config } from "../config/schema.ts";
import type { CoordinationStore, DocumentStore } from "../adapters/ports.ts";
import { createPolicyRegistry, type PolicyRegistry } from "../adapters/policies.ts";
import { guardCoordination, guardDocumentStore, type DependencyCallEvent } from "../adapters/guarded-stores.ts";
import { createMemoryCoordination } from "../adapters/coordination/memory.ts";
import { createUnstorageDocumentStore } from "../adapters/document-store/unstorage.ts";
import { createHttpRegulatorClient } from "../adapters/regulator/http-client.ts";
import { createWebhookOutbox } from "../adapters/webhooks/outbox.ts";
import { createFolderEmailSender } from "../adapters/email/folder.ts";
import { createSandboxPaymentProcessor, PROCESSOR_REDELIVERY_MS } from "../adapters/payments/sandbox.ts";
import { createDocumentLedger } from "../adapters/billing/ledger.ts";
import type { EmailSender } from "../adapters/ports.ts";
import { plugins as defaultPlugins } from "../plugins/index.ts";
import { createGateway, type Gateway } from "./create-gateway.ts";
import { openDirectory } from "./directory.ts";
import { ngnTextToKobo } from "./money.ts";
import type { LogFields, Logger } from "./log.ts";

/** Implementations that run inside the gateway process. */
const IN_PROCESS_KINDS = new Set(["memory", "unstorage-memory", "unstorage-fs"]);
import type { GatewayPlugin, Ports } from "./plugin.ts";

export interface ComposeOptions {
  log: Logger;
  plugins?: readonly GatewayPlugin[];
  policies?: PolicyRegistry;
  /** Use these ports instead of building them from config (tests). */
  ports?: Partial<Ports>;
  /** Make the directory's store match the config file exactly (`npm start -- --sync`) instead of seeding it. */
  syncDirectory?: boolean;
  /** Regulator base URLs known only at runtime (the demo simulator on a free port). */
  regulatorBaseUrls?: { TEST?: string; LIVE?: string };
  now?: () => number;
}

export async function composeGateway(config: Config, options: ComposeOptions): Promise<Gateway> {
  const { log } = options;
  const policies =
    options.policies ??
    createPolicyRegistry({
      onStateChange: (state, dependency) => log.warn("gateway_circuit_state_changed", { dependency, state }),
    });
  const onCall = (e: DependencyCallEvent) => {
    if (e.outcome === "failure") log.warn("gateway_dependency_call", e as unknown as LogFields);
    else log.debug("gateway_dependency_call", e as unknown as LogFields);
  };
  // Remote engines get the configured deadline; in-process ones (the embedded default) cannot
  // hang on a network and skip the per-call timer (their outcomes still feed the circuit).
  const deadlineFor = (kind: string) => (IN_PROCESS_KINDS.has(kind) ? Infinity : config.dependencies.storeTimeoutMs);
  const rawStore = options.ports?.documentStore ?? (await openDocumentStore(config));
  const documentStore = guardDocumentStore(
    rawStore,
    policies.create({ dependency: "documentStore", timeoutMs: deadlineFor(rawStore.kind) }),
    { onCall },
  );
  const rawCoordination = options.ports?.coordination ?? (await openCoordination(config));
  const coordination = guardCoordination(
    rawCoordination,
    policies.create({ dependency: "coordination", timeoutMs: deadlineFor(rawCoordination.kind) }),
    { onCall },
  );
  const directory = await openDirectory({ config, store: documentStore, coordination, log, now: options.now, sync: options.syncDirectory });
  const regulator =
    options.ports?.regulator ??
    createHttpRegulatorClient({
      baseUrls: { ...config.regulator.baseUrls, ...options.regulatorBaseUrls },
      apiKey: config.regulator.apiKey,
      apiSecret: config.regulator.apiSecret,
      timeoutMs: config.regulator.timeoutMs,
      policies,
      log,
    });
  const outbox = options.ports?.webhooks
    ? null
    : createWebhookOutbox({
        store: documentStore,
        log,
        timeoutMs: config.webhooks.timeoutMs,
        pollMs: config.webhooks.pollMs,
        concurrency: config.webhooks.concurrency,
      });
  return createGateway({
    config,
    ports: {
      documentStore,
      coordination,
      regulator,
      webhooks: options.ports?.webhooks ?? outbox!,
      email: options.ports?.email ?? (await openEmail(config)),
      payments: options.ports?.payments ?? createSandboxPaymentProcessor({ redeliverAfterMs: PROCESSOR_REDELIVERY_MS }),
      billing:
        options.ports?.billing ??
        createDocumentLedger({
          store: documentStore,
          openingBalances: Object.fromEntries(
            config.businesses.map((b) => [b.id, ngnTextToKobo(b.gateway?.wallet.openingBalance ?? "0.00")]),
          ),
        }),
    },
    workers: outbox ? [outbox.worker] : [],
    plugins: options.plugins ?? defaultPlugins,
    log,
    policies,
    directory,
    now: options.now,
  });
}

export async function openDocumentStore(config: Config): Promise<DocumentStore> {
  const s = config.storage;
  switch (s.driver) {
    case "memory":
      return createUnstorageDocumentStore({ driver: "memory" });
    case "fs":
      return createUnstorageDocumentStore({ driver: "fs", dir: s.dir });
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

