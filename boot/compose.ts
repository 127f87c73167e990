/**
 * The composition root: turns config into implementations — the document store and the
 * coordination store (each wrapped in its resilience policy), the alert engine, the regulator
 * client, the webhook outbox, e-mail, payments and the billing ledger — and hands them, the stage
 * list and the plugin list to createGateway. Only boot/ imports adapters, pipeline and plugins
 * together.
 */
import { createAlertEngine, type AlertEngine } from "../adapters/alerts/engine.ts";
import { createEd25519Attestor, guardAttestor } from "../adapters/attestation/ed25519.ts";
import { createDocumentLedger } from "../adapters/billing/ledger.ts";
import { guardCoordination, guardDocumentStore, type DependencyCallEvent } from "../adapters/guarded-stores.ts";
import { createSandboxPaymentProcessor, PROCESSOR_REDELIVERY_MS } from "../adapters/payments/sandbox.ts";
import { createPolicyRegistry, type PolicyRegistry } from "../adapters/policies.ts";
import type { AlertChannel, CoordinationStore, DocumentStore, IdentityAttestor } from "../adapters/ports.ts";
import { createHttpRegulatorClient } from "../adapters/regulator/http-client.ts";
import type { RegulatorClient } from "../adapters/regulator/port.ts";
import { OUTBOX_COLLECTION, createWebhookOutbox } from "../adapters/webhooks/outbox.ts";
import type { Config } from "../config/schema.ts";
import { createGateway, type Gateway } from "../core/create-gateway.ts";
import { openDirectory } from "../core/directory.ts";
import { createHopMarker, type HopMarker } from "../core/http/hop.ts";
import type { LogFields, Logger } from "../core/log.ts";
import { createGatewayMetrics, type CounterSeries, type GatewayMetrics } from "../core/metrics.ts";
import { ngnTextToKobo } from "../core/money.ts";
import type { GatewayPlugin, Ports } from "../core/plugin.ts";
import { STAGES } from "../pipeline/stages.ts";
import { plugins as defaultPlugins } from "../plugins/index.ts";
import { instrumentLedger } from "./instrument-ledger.ts";
import { openCoordination, openDocumentStore, openEmail } from "./open-ports.ts";

/**
 * Implementations that run inside the gateway process and cannot wait on anything outside it: they
 * get no per-call deadline. The SQLite file store is not one of them: a write can wait on another
 * process's lock on the file (or on a stalled disk), so its calls get the store deadline like a
 * remote engine's.
 */
const IN_PROCESS_KINDS = new Set(["memory", "sqlite-memory"]);

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
  const observed = _observedCalls(config, options, metrics);
  // Every outbound call carries the deployment's signed hop marker (the routing-loop stage recognises it).
  const hopMarker = createHopMarker(config.regulator.apiSecret, options.now);
  const stores = await _openStores(config, options, observed);
  const alerts = options.ports?.alerts ? null : _createAlertEngine(config, options, stores, observed.policies, metrics, hopMarker);
  const alertChannel = options.ports?.alerts ?? alerts!;
  // Store calls and circuit changes feed the gateway's own engine (a channel given by a test does not see them).
  if (alerts) observed.bindAlerts(alerts);
  const { documentStore, coordination } = stores;
  const email = options.ports?.email ?? (await openEmail(config));
  const directory = await openDirectory({ config, store: documentStore, coordination, log, now: options.now, sync: options.syncDirectory, email });
  const outbox = options.ports?.webhooks
    ? null
    : createWebhookOutbox({
        store: documentStore,
        log,
        timeoutMs: config.webhooks.timeoutMs,
        pollMs: config.webhooks.pollMs,
        concurrency: config.webhooks.concurrency,
        hopMarker,
        // Attempts read the directory endpoint's current URL and secrets, and report outcomes (auto-disable).
        endpoints: directory.webhooks,
      });
  // An outbox given by a test reads the directory's endpoints too.
  options.ports?.webhooks?.useEndpoints?.(directory.webhooks);
  const gateway = createGateway({
    config,
    stages: STAGES,
    ports: {
      documentStore,
      coordination,
      regulator: options.ports?.regulator ?? _createRegulator(config, options, observed, alertChannel, hopMarker),
      webhooks: options.ports?.webhooks ?? outbox!,
      email,
      payments: options.ports?.payments ?? createSandboxPaymentProcessor({ redeliverAfterMs: PROCESSOR_REDELIVERY_MS, store: documentStore }),
      billing: instrumentLedger(options.ports?.billing ?? _createLedger(config, documentStore), metrics),
      alerts: alertChannel,
      attestation: options.ports?.attestation ?? _createAttestor(config, observed.policies),
    },
    workers: [...(outbox ? [outbox.worker] : []), ...(alerts ? [alerts.worker] : [])],
    plugins: options.plugins ?? defaultPlugins,
    log,
    policies: observed.policies,
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

// --- Internal helpers ---

/** The in-process Ed25519 attestor keyed from config, behind its resilience policy ("attestation"). */
function _createAttestor(config: Config, policies: PolicyRegistry): IdentityAttestor {
  const c = config.attestation;
  const signer = createEd25519Attestor({ keyId: c.keyId, ...(c.seed ? { seed: c.seed } : {}) });
  return guardAttestor(signer, () => policies.get("attestation") ?? policies.create({ dependency: "attestation", timeoutMs: c.timeoutMs }));
}

/** The resilience policies and what every dependency call reports: a log line, a metric, the alert engine. */
interface ObservedCalls {
  policies: PolicyRegistry;
  onCall(e: DependencyCallEvent): void;
  count(dependency: string, outcome: string): void;
  /** The alert engine needs the guarded stores, which need the policies: bound once it exists. */
  bindAlerts(alerts: AlertChannel): void;
}

function _observedCalls(config: Config, options: ComposeOptions, metrics: GatewayMetrics): ObservedCalls {
  const { log } = options;
  let alerts: AlertChannel | null = null;
  const policies =
    options.policies ??
    createPolicyRegistry({
      onStateChange: (state, dependency) => {
        log.warn("gateway_circuit_state_changed", { dependency, state });
        if (state === "open") alerts?.raise({ signal: "circuit_opened", dependency, failureClass: "circuit_open" });
      },
    });
  const count = _dependencyCallCounter(metrics);
  return {
    policies,
    count,
    onCall(e) {
      if (e.outcome === "failure") log.warn("gateway_dependency_call", e as unknown as LogFields);
      else log.debug("gateway_dependency_call", e as unknown as LogFields);
      count(e.dependency, e.outcome === "ok" ? "success" : e.failureClass === "circuit_open" ? "refused" : "failure");
      alerts?.observeCall(e.dependency, e.operation, e.outcome === "failure", e.failureClass === undefined ? undefined : { failureClass: e.failureClass });
    },
    bindAlerts(a) {
      alerts = a;
    },
  };
}

interface OpenedStores {
  raw: { documentStore: DocumentStore; coordination: CoordinationStore };
  documentStore: DocumentStore;
  coordination: CoordinationStore;
}

/**
 * The document and coordination stores, each behind its policy. Remote engines get the configured
 * deadline; in-process ones (the embedded default) cannot hang on a network and skip the per-call
 * timer (their outcomes still feed the circuit).
 */
async function _openStores(config: Config, options: ComposeOptions, observed: ObservedCalls): Promise<OpenedStores> {
  const deadlineFor = (kind: string) => (IN_PROCESS_KINDS.has(kind) ? Infinity : config.dependencies.storeTimeoutMs);
  const onCall = (e: DependencyCallEvent) => observed.onCall(e);
  const rawStore = options.ports?.documentStore ?? (await openDocumentStore(config, options.log));
  const rawCoordination = options.ports?.coordination ?? (await openCoordination(config));
  return {
    raw: { documentStore: rawStore, coordination: rawCoordination },
    documentStore: guardDocumentStore(rawStore, observed.policies.create({ dependency: "documentStore", timeoutMs: deadlineFor(rawStore.kind) }), { onCall }),
    coordination: guardCoordination(rawCoordination, observed.policies.create({ dependency: "coordination", timeoutMs: deadlineFor(rawCoordination.kind) }), { onCall }),
  };
}

function _createAlertEngine(config: Config, options: ComposeOptions, stores: OpenedStores, policies: PolicyRegistry, metrics: GatewayMetrics, hopMarker: HopMarker): AlertEngine {
  return createAlertEngine({
    environment: config.alerts.environment ?? (config.demo ? "demo" : "production"),
    // The engine's own calls are not observed (its flushes would count as activity forever).
    coordination: guardCoordination(stores.raw.coordination, policies.get("coordination")!),
    store: guardDocumentStore(stores.raw.documentStore, policies.get("documentStore")!),
    log: options.log,
    webhook: config.alerts.webhook ? { ...config.alerts.webhook, hopMarker } : null,
    flushMs: config.alerts.flushMs,
    runbookBase: config.alerts.runbookBaseUrl,
    ...(options.now ? { clock: options.now } : {}),
    onAlert: (a) => metrics.alerts.series(a.signal, a.kind).inc(),
    onDeadLetter: (a) => metrics.alertDeadLetters.series(a.signal).inc(),
  });
}

function _createRegulator(config: Config, options: ComposeOptions, observed: ObservedCalls, alerts: AlertChannel, hopMarker: HopMarker): RegulatorClient {
  return createHttpRegulatorClient({
    baseUrls: { ...config.regulator.baseUrls, ...options.regulatorBaseUrls },
    apiKey: config.regulator.apiKey,
    apiSecret: config.regulator.apiSecret,
    ...(config.regulator.next ? { next: config.regulator.next } : {}),
    contractVersions: config.regulator.contractVersions,
    timeoutMs: config.regulator.timeoutMs,
    policies: observed.policies,
    log: options.log,
    alerts,
    hopMarker,
    onCall: (c) => {
      observed.count(c.dependency, c.outcome);
      if (c.outcome === "success" || c.outcome === "failure")
        alerts.observeCall(c.dependency, c.operation, c.outcome === "failure", { failureClass: c.failureClass, requestId: c.requestId });
    },
  });
}

function _createLedger(config: Config, store: DocumentStore) {
  return createDocumentLedger({
    store,
    openingBalances: Object.fromEntries(config.businesses.map((b) => [b.id, ngnTextToKobo(b.gateway?.wallet.openingBalance ?? "0.00")])),
  });
}

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
