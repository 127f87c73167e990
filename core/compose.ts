/**
 * The composition root: the one place that turns config into implementations — the document
 * store, the coordination store (each wrapped in its resilience policy), the logger and the
 * plugin list — and hands them to createGateway. The rest of core never imports an adapter or a
 * plugin.
 */
import type { Config } from "../config/schema.ts";
import type { BillingLedger, CoordinationStore, DocumentStore } from "../adapters/ports.ts";
import { createAlertEngine, type AlertEngine } from "../adapters/alerts/engine.ts";
import { createPolicyRegistry, type PolicyRegistry } from "../adapters/policies.ts";
import { guardCoordination, guardDocumentStore, type DependencyCallEvent } from "../adapters/guarded-stores.ts";
import { createMemoryCoordination } from "../adapters/coordination/memory.ts";
import { createUnstorageDocumentStore } from "../adapters/document-store/unstorage.ts";
import { createHttpRegulatorClient } from "../adapters/regulator/http-client.ts";
import { OUTBOX_COLLECTION, createWebhookOutbox } from "../adapters/webhooks/outbox.ts";
import { createFolderEmailSender } from "../adapters/email/folder.ts";
import { createSandboxPaymentProcessor, PROCESSOR_REDELIVERY_MS } from "../adapters/payments/sandbox.ts";
import { createDocumentLedger } from "../adapters/billing/ledger.ts";
import type { EmailSender } from "../adapters/ports.ts";
import { plugins as defaultPlugins } from "../plugins/index.ts";
import { STAGES } from "../pipeline/stages.ts";
import { createGateway, type Gateway } from "./create-gateway.ts";
import { createGatewayMetrics, type CounterSeries, type GatewayMetrics } from "./metrics.ts";
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
  const metrics = createGatewayMetrics();
  // The alert engine needs the guarded coordination store, which needs the policies: bound late.
  let alerts: AlertEngine | null = null;
  const policies =
    options.policies ??
    createPolicyRegistry({
      onStateChange: (state, dependency) => {
        log.warn("gateway_circuit_state_changed", { dependency, state });
        if (state === "open") alerts?.raise({ signal: "circuit_opened", dependency, failureClass: "circuit_open" });
      },
    });
  const dependencyCalls = _dependencyCallCounter(metrics);
  const onCall = (e: DependencyCallEvent) => {
    if (e.outcome === "failure") log.warn("gateway_dependency_call", e as unknown as LogFields);
    else log.debug("gateway_dependency_call", e as unknown as LogFields);
    dependencyCalls(e.dependency, e.outcome === "ok" ? "success" : e.failureClass === "circuit_open" ? "refused" : "failure");
    alerts?.observeCall(e.dependency, e.operation, e.outcome === "failure", e.failureClass === undefined ? undefined : { failureClass: e.failureClass });
  };
  // Remote engines get the configured deadline; in-process ones (the embedded default) cannot
  // hang on a network and skip the per-call timer (their outcomes still feed the circuit).
  const deadlineFor = (kind: string) => (IN_PROCESS_KINDS.has(kind) ? Infinity : config.dependencies.storeTimeoutMs);
  const rawStore = options.ports?.documentStore ?? (await openDocumentStore(config, log));
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
  alerts = options.ports?.alerts
    ? null
    : createAlertEngine({
        environment: config.alerts.environment ?? (config.demo ? "demo" : "production"),
        // The engine's own calls are not observed (its flushes would count as activity forever).
        coordination: guardCoordination(rawCoordination, policies.get("coordination")!),
        store: guardDocumentStore(rawStore, policies.get("documentStore")!),
        log,
        webhook: config.alerts.webhook ?? null,
        flushMs: config.alerts.flushMs,
        runbookBase: config.alerts.runbookBaseUrl,
        ...(options.now ? { clock: options.now } : {}),
        onAlert: (a) => metrics.alerts.series(a.signal, a.kind).inc(),
        onDeadLetter: (a) => metrics.alertDeadLetters.series(a.signal).inc(),
      });
  const alertChannel = options.ports?.alerts ?? alerts!;
  const directory = await openDirectory({ config, store: documentStore, coordination, log, now: options.now, sync: options.syncDirectory });
  const regulator =
    options.ports?.regulator ??
    createHttpRegulatorClient({
      baseUrls: { ...config.regulator.baseUrls, ...options.regulatorBaseUrls },
      apiKey: config.regulator.apiKey,
      apiSecret: config.regulator.apiSecret,
      ...(config.regulator.next ? { next: config.regulator.next } : {}),
      contractVersions: config.regulator.contractVersions,
      timeoutMs: config.regulator.timeoutMs,
      policies,
      log,
      alerts: alertChannel,
      onCall: (c) => {
        dependencyCalls(c.dependency, c.outcome);
        if (c.outcome === "success" || c.outcome === "failure")
          alertChannel.observeCall(c.dependency, c.operation, c.outcome === "failure", { failureClass: c.failureClass, requestId: c.requestId });
      },
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
  const gateway = createGateway({
    config,
    stages: STAGES,
    ports: {
      documentStore,
      coordination,
      regulator,
      webhooks: options.ports?.webhooks ?? outbox!,
      email: options.ports?.email ?? (await openEmail(config)),
      payments: options.ports?.payments ?? createSandboxPaymentProcessor({ redeliverAfterMs: PROCESSOR_REDELIVERY_MS, store: documentStore }),
      billing: instrumentLedger(
        options.ports?.billing ??
          createDocumentLedger({
            store: documentStore,
            openingBalances: Object.fromEntries(
              config.businesses.map((b) => [b.id, ngnTextToKobo(b.gateway?.wallet.openingBalance ?? "0.00")]),
            ),
          }),
        metrics,
      ),
      alerts: alertChannel,
    },
    workers: [...(outbox ? [outbox.worker] : []), ...(alerts ? [alerts.worker] : [])],
    plugins: options.plugins ?? defaultPlugins,
    log,
    policies,
    directory,
    metrics,
    now: options.now,
  });
  if (outbox) {
    const messages = documentStore.collection(OUTBOX_COLLECTION);
    gateway.kit.reports.register("webhookOutbox", async () => {
      const [pending, dead] = await Promise.all([messages.count({ status: "pending" }), messages.count({ status: "dead" })]);
      return { pending, dead };
    });
  }
  return gateway;
}

/**
 * The billing port with its movements counted (gatehouse_wallet_movements_total): new debits and
 * credits with their amounts, reversals and confirmations that completed.
 */
export function instrumentLedger(ledger: BillingLedger, metrics: GatewayMetrics): BillingLedger {
  const m = metrics.walletMovements;
  const amount = metrics.walletAmountKobo;
  const debits = m.series("debit");
  const debitKobo = amount.series("debit");
  const credits = m.series("credit");
  const creditKobo = amount.series("credit");
  const reversals = m.series("reversal");
  const confirms = m.series("confirm");
  return {
    async debit(businessId, identity, amountKobo, fingerprint) {
      const r = await ledger.debit(businessId, identity, amountKobo, fingerprint);
      if (r.kind === "debited") {
        debits.inc();
        debitKobo.inc(amountKobo);
      }
      return r;
    },
    async reverse(businessId, identity, reason) {
      const r = await ledger.reverse(businessId, identity, reason);
      reversals.inc();
      return r;
    },
    async confirm(businessId, identity) {
      await ledger.confirm(businessId, identity);
      confirms.inc();
    },
    async credit(businessId, amountKobo, reference) {
      const r = await ledger.credit(businessId, amountKobo, reference);
      if (r.created) {
        credits.inc();
        creditKobo.inc(amountKobo);
      }
      return r;
    },
    wallet: (businessId, limit) => ledger.wallet(businessId, limit),
  };
}

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


// --- Internal helpers ---

/** gatehouse_dependency_calls_total, its series resolved on first use per dependency and outcome. */
function _dependencyCallCounter(metrics: GatewayMetrics): (dependency: string, outcome: string) => void {
  const byDependency = new Map<string, Map<string, CounterSeries>>();
  return (dependency, outcome) => {
    let byOutcome = byDependency.get(dependency);
    if (byOutcome === undefined) byDependency.set(dependency, (byOutcome = new Map()));
    let s = byOutcome.get(outcome);
    if (s === undefined) byOutcome.set(outcome, (s = metrics.dependencyCalls.series(dependency, outcome)));
    s.inc();
  };
}
