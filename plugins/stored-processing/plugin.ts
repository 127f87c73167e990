/**
 * Stored mode (spec §1.2, §3.4; DECISIONS.md "Stored mode"): durable intake on a Stored domain's
 * `POST /api/v1/invoice/sign` (202), the background processor that validates, bills, signs and
 * transmits (leases in the document store, p-queue concurrency), the invoice reads, transmission and
 * cancellation by invoice ID, the regulator's inbound deliveries, and invoice webhooks through the
 * outbox. docs/stored-mode.md explains it to merchants and operators.
 *
 * Needs: documentStore, regulator, billing (the same ledger and billing identity as Pass-through),
 * webhooks (the durable outbox). Workers: the processor (unless `stored.processor.enabled` is false),
 * whose heartbeat and backlog appear in /health/dependencies.
 */
import { definePlugin, offer, requirePort, type GatewayPlugin, type PluginKit } from "../../core/plugin.ts";
import { FROZEN_INVOICE_RESOLVER } from "../invoice/offers.ts";
import { STORED_INVOICE_OPERATIONS } from "../invoice/dashboard-offers.ts";
import { storedInvoiceOperations } from "./dashboard-offer.ts";
import { storedAdminRoutes } from "./admin-routes.ts";
import { createInvoiceWebhooks } from "./events.ts";
import { createInboundReceiver, type InboundReceiver } from "./inbound.ts";
import { createStoredProcessor, type ProcessorHooks, type StoredProcessor } from "./processor.ts";
import { storedRoutes } from "./routes.ts";
import { createStoredService } from "./service.ts";
import { BACKLOG_STATUSES, deriveStoredSecret, openStoredStore, type StoredStore } from "./store.ts";
import type { StoredService } from "./types.ts";

export interface StoredProcessingOptions {
  /** Test-only crash points of the processor. */
  hooks?: ProcessorHooks;
  /** The processor's lease owner id (default `<host>:<pid>:<random>`). */
  owner?: string;
}

interface Built {
  store: StoredStore;
  service: StoredService;
  inbound: InboundReceiver;
  processor: StoredProcessor | null;
}

export function createStoredProcessingPlugin(options: StoredProcessingOptions = {}): GatewayPlugin {
  return definePlugin({
    name: "stored-processing",
    needs: ["documentStore", "regulator", "billing", "webhooks"],
    stages: ["auth", "quota", "mode"],
    provides: [FROZEN_INVOICE_RESOLVER, STORED_INVOICE_OPERATIONS],
    setup(kit) {
      const b = _build(kit, options);
      kit.reports.register("storedProcessor", () => _report(b.store));
      return {
        routes: [...storedRoutes(b.service, b.inbound), ...storedAdminRoutes(b.service)],
        workers: b.processor ? [b.processor] : [],
        offers: [offer(FROZEN_INVOICE_RESOLVER, b.service), offer(STORED_INVOICE_OPERATIONS, storedInvoiceOperations(b.service, kit.log))],
      };
    },
  });
}

export const storedProcessing = createStoredProcessingPlugin();

// --- Internal helpers ---

/** A processor on the gateway's ports with the config's `stored.processor` settings (the bench builds one too). */
export function createProcessorFor(kit: PluginKit, options: StoredProcessingOptions = {}): StoredProcessor {
  const p = kit.config.stored.processor;
  return createStoredProcessor({
    store: openStoredStore(kit.ports.documentStore),
    billing: requirePort(kit, "billing"),
    regulator: requirePort(kit, "regulator"),
    webhooks: createInvoiceWebhooks(kit.directory, requirePort(kit, "webhooks")),
    directory: kit.directory,
    log: kit.log,
    secret: deriveStoredSecret(kit.config.regulator.apiSecret),
    concurrency: p.concurrency,
    claimsPerRound: _claimsPerRound(kit.ports.documentStore.kind, p.concurrency),
    pollMs: p.pollMs,
    leaseMs: p.leaseMs ?? 3 * kit.config.regulator.timeoutMs + 30_000,
    backoffBaseMs: p.backoffBaseMs,
    backoffMaxMs: p.backoffMaxMs,
    heartbeatMs: p.heartbeatMs,
    ...(options.owner ? { owner: options.owner } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(kit.ports.alerts ? { alerts: kit.ports.alerts } : {}),
  });
}

/**
 * How many claims a processor asks for together. The SQLite store runs the writes of one turn one
 * after another in one transaction, so a round of claims costs one commit and each claim takes the
 * next free invoice. MongoDB's claim reads the first due invoice and compare-and-sets its lease:
 * claims asked for together would all race for that one invoice and retry (measured on the
 * MongoDB-wire server: 74 claims/s one at a time, 47/s eight at a time, 38/s 64 at a time), so
 * there each claim is awaited before the next. A port operation claiming up to n invoices would
 * serve both.
 */
function _claimsPerRound(storeKind: string, concurrency: number): number {
  return storeKind.startsWith("sqlite") ? concurrency : 1;
}

function _build(kit: PluginKit, options: StoredProcessingOptions): Built {
  const store = openStoredStore(kit.ports.documentStore);
  const secret = deriveStoredSecret(kit.config.regulator.apiSecret);
  const webhooks = createInvoiceWebhooks(kit.directory, requirePort(kit, "webhooks"));
  const processor = kit.config.stored.processor.enabled ? createProcessorFor(kit, options) : null;
  const onDue = () => processor?.wake();
  const service = createStoredService({
    store,
    documentStore: kit.ports.documentStore,
    webhooks,
    log: kit.log,
    secret,
    retryBudget: kit.config.limits.storedRetryBudget,
    onDue,
  });
  const inbound = createInboundReceiver({
    store,
    documentStore: kit.ports.documentStore,
    webhooks,
    log: kit.log,
    regulatorSecret: kit.config.regulator.apiSecret,
    secret,
    toleranceSeconds: kit.config.stored.inbound.toleranceSeconds,
    admission: kit.config.stored.inbound.admission,
    onDue,
  });
  return { store, service, inbound, processor };
}

/**
 * The processor heartbeat for /health/dependencies: every processor seen (any process) with its
 * last loop turn, the backlog per status, the frozen invoices, and the age of the oldest pending one.
 */
async function _report(store: StoredStore): Promise<Record<string, unknown>> {
  const now = Date.now();
  const [beats, counts, frozen, oldest] = await Promise.all([
    store.heartbeats.find({}, { sort: [{ field: "lastTickAt", direction: -1 }], limit: 100 }),
    Promise.all(BACKLOG_STATUSES.map((status) => store.invoices.count({ status }))),
    store.invoices.count({ status: "frozen" }),
    store.invoices.find({ status: "pending" }, { sort: [{ field: "createdAtMs", direction: 1 }], limit: 1 }),
  ]);
  return {
    processors: beats.items.map((b) => ({
      id: b._id,
      host: b.host,
      pid: b.pid,
      startedAt: b.startedAt,
      lastTickAt: new Date(b.lastTickAt).toISOString(),
      lastTickAgeMs: Math.max(0, now - b.lastTickAt),
      inFlight: b.inFlight,
      concurrency: b.concurrency,
      processed: b.processed,
    })),
    backlog: Object.fromEntries(BACKLOG_STATUSES.map((s, i) => [s, counts[i]])),
    frozen,
    oldestPendingAgeMs: oldest.items[0] ? Math.max(0, now - oldest.items[0].createdAtMs) : null,
  };
}
