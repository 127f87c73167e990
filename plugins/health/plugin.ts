/**
 * Health: /health and /health/live (the process answers), /health/ready (local readiness plus
 * the coordination-store safety check; turns not_ready as soon as draining starts),
 * /health/dependencies (operator key; a cached snapshot refreshed in the background, so a
 * request never fans out to dependencies) and /metrics (operator key; Prometheus text format).
 * `workers` holds the status reports plugins register (PluginKit.reports: the Stored processor's
 * heartbeats and backlog, the webhook outbox, the recovery jobs); the gauges of /metrics read the
 * same cached snapshot.
 *
 * Statuses: "healthy", "unhealthy", or "unknown" — no trustworthy observation (nothing observed yet,
 * or the last observation is older than OBSERVATION_FRESH_MS). "unknown" is not healthy.
 */
import type { AlertChannelStatus } from "../../adapters/ports.ts";
import { REGULATOR_ADAPTERS, REGULATOR_STATES } from "../../adapters/regulator/port.ts";
import type { DependencySnapshot } from "../../adapters/ports.ts";
import { definePlugin, type PluginKit, type RouteDeclaration, type ServiceFacet, type ServiceObservation, type Worker } from "../../core/plugin.ts";
import type { Sample } from "../../core/metrics.ts";
import { json } from "../../core/respond.ts";
import { describeError } from "../../core/log.ts";
import { VERSION } from "../../core/version.ts";

/** An observation older than this is not trustworthy ("unknown"). */
export const OBSERVATION_FRESH_MS = 5 * 60_000;

const PUBLIC_SKIPS = ["admission", "capacity-guard", "auth", "ip-allowlist", "quota", "mode"] as const;
const READY_CACHE_MS = 1_000;
const PING_TIMEOUT_MS = 1_000;

export interface DependencyStatus {
  name: string;
  status: "healthy" | "unhealthy" | "unknown";
  checkedAt: string | null;
  latencyMs: number | null;
  failureClass?: string;
}

export const health = definePlugin({
  name: "health",
  needs: ["coordination", "documentStore"],
  setup(kit) {
    const checker = createHealthChecker(kit);
    const liveness = (path: string): RouteDeclaration => ({
      method: "GET",
      path,
      service: "gateway",
      hosts: "any",
      auth: "none",
      skip: PUBLIC_SKIPS,
      summary: "Liveness: the process answers",
      responses: { 200: "{ status: ok }" },
      handler: (ctx) => json(ctx, 200, { status: "ok" }),
    });
    const metricsRoute: RouteDeclaration = {
      method: "GET",
      path: "/metrics",
      service: "gateway",
      hosts: "any",
      auth: "admin",
      quota: "none",
      skip: ["admission", "capacity-guard", "ip-allowlist", "mode"],
      summary: "Prometheus metrics (operators; text format 0.0.4)",
      description:
        "Requests by route and code with latency histograms, dependency calls, circuit states, quota refusals, capacity in use, processor and outbox backlogs, dead letters, wallet movements, alerts and recovery actions. Gauges read the cached dependency snapshot: a scrape never fans out to dependencies.",
      responses: { 200: "text/plain; version=0.0.4" },
      handler: async (ctx) => {
        const text = await kit.metrics.text();
        return new Response(text, { status: 200, headers: { "content-type": kit.metrics.contentType, "cache-control": "no-store", "x-request-id": ctx.requestId } });
      },
    };
    const routes: RouteDeclaration[] = [
      ...(kit.config.metrics.enabled ? [metricsRoute] : []),
      liveness("/health"),
      liveness("/health/live"),
      {
        method: "GET",
        path: "/health/ready",
        service: "gateway",
        hosts: "any",
        auth: "none",
        skip: PUBLIC_SKIPS,
        summary: "Readiness: local readiness plus the coordination-store check",
        responses: { 200: "{ status: ready }", 503: "{ status: not_ready, reasons }" },
        handler: async (ctx) => {
          const reasons = await checker.readiness();
          return reasons.length === 0
            ? json(ctx, 200, { status: "ready" })
            : json(ctx, 503, { status: "not_ready", reasons });
        },
      },
      {
        method: "GET",
        path: "/health/dependencies",
        service: "gateway",
        hosts: "any",
        auth: "admin",
        quota: "none",
        skip: ["admission", "capacity-guard", "ip-allowlist", "mode"],
        summary: "Cached dependency snapshot (operators)",
        responses: { 200: "The snapshot" },
        handler: (ctx) => json(ctx, 200, checker.snapshot()),
      },
    ];
    return { routes, workers: [createHealthWorker(kit, checker)] };
  },
});

// --- Internal helpers ---

interface HealthChecker {
  readiness(): Promise<string[]>;
  snapshot(): Record<string, unknown>;
  refresh(): Promise<void>;
}

function createHealthChecker(kit: PluginKit): HealthChecker {
  let readyAt = 0;
  let readyReasons: string[] = [];
  let readyPending: Promise<string[]> | null = null;
  const statuses = new Map<string, DependencyStatus>([
    ["coordination", { name: "coordination", status: "unknown", checkedAt: null, latencyMs: null }],
    ["documentStore", { name: "documentStore", status: "unknown", checkedAt: null, latencyMs: null }],
  ]);
  let generatedAt: string | null = null;
  let workers: Record<string, unknown> = {};
  let alertChannel: AlertChannelStatus | null = null;

  const ping = async (name: string, fn: () => Promise<void>): Promise<DependencyStatus> => {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        fn(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error("ping timed out")), PING_TIMEOUT_MS);
        }),
      ]);
      return { name, status: "healthy", checkedAt: new Date().toISOString(), latencyMs: Math.round(performance.now() - started) };
    } catch (e) {
      const failureClass = (e as { failureClass?: string }).failureClass ?? describeError(e).name;
      return { name, status: "unhealthy", checkedAt: new Date().toISOString(), latencyMs: null, failureClass };
    } finally {
      clearTimeout(timer);
    }
  };

  const checker: HealthChecker = {
    async readiness() {
      const local: string[] = [];
      if (kit.runtime.isDraining()) local.push("draining");
      else if (!kit.runtime.isReady()) local.push("starting");
      if (local.length > 0) return local;
      if (Date.now() - readyAt < READY_CACHE_MS) return readyReasons;
      readyPending ??= ping("coordination", () => kit.ports.coordination.ping()).then((s) => {
        statuses.set("coordination", s);
        readyReasons = s.status === "healthy" ? [] : ["coordination_store_unavailable"];
        readyAt = Date.now();
        readyPending = null;
        return readyReasons;
      });
      return readyPending;
    },
    async refresh() {
      const [coordination, documentStore, reports, alerts] = await Promise.all([
        ping("coordination", () => kit.ports.coordination.ping()),
        ping("documentStore", () => kit.ports.documentStore.ping()),
        kit.reports.collect(),
        kit.ports.alerts ? kit.ports.alerts.status().catch(() => null) : Promise.resolve(null),
      ]);
      statuses.set("coordination", coordination);
      statuses.set("documentStore", documentStore);
      workers = reports;
      alertChannel = alerts;
      generatedAt = new Date().toISOString();
    },
    snapshot() {
      const now = Date.now();
      const circuits = kit.dependencyHealth.snapshot();
      const circuitOf = (name: string) => circuits.find((c) => c.dependency === name);
      const docStore = { kind: kit.ports.documentStore.kind, ...statuses.get("documentStore")! };
      const coord = { kind: kit.ports.coordination.kind, ...statuses.get("coordination")! };
      const services = kit.runtime.services();
      const facet = (name: ServiceFacet) => _facet(services[name], docStore.status, now);
      const capacity = kit.config.limits.capacity;
      const dependencies = {
        documentStore: { ...docStore, circuit: circuitOf("documentStore")?.state ?? null },
        coordination: { ...coord, circuit: circuitOf("coordination")?.state ?? null },
        domainRegistry: facet("domainRegistry"),
        tenantAuthorization: facet("tenantAuthorization"),
        managementService: facet("managementService"),
        administratorService: facet("administratorService"),
        ...Object.fromEntries(REGULATOR_STATES.map((state) => [`regulator:${state}`, _regulator(kit, state, circuitOf(`regulator:${state}`), now)])),
        alertChannel: alertChannel ?? { status: kit.ports.alerts ? "unknown" : "unhealthy", channels: kit.ports.alerts ? [] : ["none"] },
      };
      // The worst of every dependency: "unknown" (no trustworthy observation) is not healthy either.
      const statusOf = Object.entries(dependencies as Record<string, { status?: string }>).map(([name, d]) => [name, d.status ?? "unknown"] as const);
      const unhealthy = statusOf.filter(([, st]) => st === "unhealthy").map(([name]) => name);
      const unknown = statusOf.filter(([, st]) => !["healthy", "unhealthy", "not_configured"].includes(st)).map(([name]) => name);
      return {
        status: unhealthy.length > 0 ? "unhealthy" : unknown.length > 0 ? "unknown" : "healthy",
        unhealthy,
        unknown,
        generatedAt,
        version: VERSION,
        ready: kit.runtime.isReady(),
        draining: kit.runtime.isDraining(),
        inFlight: kit.runtime.inFlight(),
        capacity: { inFlight: kit.runtime.inFlight().total, total: capacity.total, perDomain: capacity.perDomain },
        dependencies,
        stores: { documentStore: docStore, coordination: coord },
        circuits,
        processorHeartbeat: workers.storedProcessor ?? null,
        recovery: workers.recovery ?? null,
        workers,
      };
    },
  };
  _registerGauges(kit, () => workers, () => alertChannel);
  return checker;
}

/**
 * A service the directory serves from the document store: this process's requests' evidence when
 * it is fresh (a failure code, or a request that got past it), else the store's own ping.
 */
function _facet(o: ServiceObservation, storeStatus: string | undefined, now: number) {
  const at = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  const lastFailure = o.lastFailureAt ?? -Infinity;
  const lastSuccess = o.lastSuccessAt ?? -Infinity;
  const latest = Math.max(lastFailure, lastSuccess);
  const fresh = latest !== -Infinity && now - latest <= OBSERVATION_FRESH_MS;
  const status = fresh ? (lastFailure > lastSuccess ? "unhealthy" : "healthy") : (storeStatus ?? "unknown");
  return {
    status,
    basis: fresh ? "requests" : "documentStore_ping",
    backedBy: "documentStore",
    lastSuccessAt: at(o.lastSuccessAt),
    lastFailureAt: at(o.lastFailureAt),
    lastFailureCode: o.lastFailureCode,
  };
}

/** A regulator state: its circuit and last observation; "unknown" without a fresh one (not healthy). */
function _regulator(kit: PluginKit, state: string, c: DependencySnapshot | undefined, now: number) {
  const info = kit.ports.regulator?.describe?.().find((t) => t.state === state);
  const version = kit.config.regulator.contractVersions[state as "TEST" | "LIVE"];
  const base = {
    configured: info !== undefined,
    contractVersion: info?.contractVersion ?? version,
    interfaceVersion: info?.interfaceVersion ?? REGULATOR_ADAPTERS[version]?.interfaceVersion ?? null,
    stagedPairs: info ? { inUse: info.credentials, nextStaged: info.staged } : null,
  };
  // A state without a base URL is not a dependency of this deployment (its businesses get GW_REGULATOR_UNAVAILABLE).
  if (!info) return { status: "not_configured", ...base, circuit: null, lastObservation: null };
  if (!c) return { status: "unknown", ...base, circuit: null, lastObservation: null };
  const success = c.lastSuccessAt ? Date.parse(c.lastSuccessAt) : -Infinity;
  const failure = c.lastFailureAt ? Date.parse(c.lastFailureAt) : -Infinity;
  const latest = Math.max(success, failure);
  const lastObservation =
    latest === -Infinity ? null : { at: new Date(latest).toISOString(), outcome: failure > success ? "failure" : "success", ...(failure > success && c.lastFailureClass ? { failureClass: c.lastFailureClass } : {}) };
  const status =
    c.state === "open" ? "unhealthy" : lastObservation === null || now - latest > OBSERVATION_FRESH_MS ? "unknown" : lastObservation.outcome === "failure" ? "unhealthy" : "healthy";
  return { status, ...base, circuit: c.state, window: { calls: c.windowCalls, failures: c.windowFailures, failureRatio: c.failureRatio }, lastObservation };
}

const CIRCUIT_VALUE = { closed: 0, half_open: 1, open: 2 } as const;

/** The gauges of /metrics: read at scrape time from in-memory state and the cached snapshot only. */
function _registerGauges(kit: PluginKit, workers: () => Record<string, unknown>, alerts: () => AlertChannelStatus | null): void {
  const m = kit.metrics;
  m.collected("gatehouse_circuit_state", "Circuit state per dependency: 0 closed, 1 half-open, 2 open.", "gauge", () =>
    kit.dependencyHealth.snapshot().map((c) => ({ labels: { dependency: c.dependency }, value: CIRCUIT_VALUE[c.state] })),
  );
  m.collected("gatehouse_inflight_requests", "Requests in flight in this process (the capacity guard's count).", "gauge", () => [
    { labels: {}, value: kit.runtime.inFlight().total },
  ]);
  m.collected("gatehouse_capacity_limit", "The capacity guard's in-flight limits.", "gauge", () => [
    { labels: { scope: "total" }, value: kit.config.limits.capacity.total },
    { labels: { scope: "per_domain" }, value: kit.config.limits.capacity.perDomain },
  ]);
  m.collected("gatehouse_stored_backlog", "Stored invoices waiting for the processor, by status (deployment-wide, cached).", "gauge", () => {
    const sp = workers().storedProcessor as { backlog?: Record<string, number>; frozen?: number } | undefined;
    const out: Sample[] = Object.entries(sp?.backlog ?? {}).map(([status, value]) => ({ labels: { status }, value }));
    if (typeof sp?.frozen === "number") out.push({ labels: { status: "frozen" }, value: sp.frozen });
    return out;
  });
  m.collected("gatehouse_outbox_messages", "Webhook outbox messages by state: pending (backlog) and dead (dead letters).", "gauge", () => {
    const o = workers().webhookOutbox as { pending?: number; dead?: number } | undefined;
    return o ? [{ labels: { state: "pending" }, value: o.pending ?? 0 }, { labels: { state: "dead" }, value: o.dead ?? 0 }] : [];
  });
  m.collected("gatehouse_alert_dead_letters", "Alerts in the dead-letter stream (not replayed).", "gauge", () => {
    const a = alerts();
    return a && a.deadLetters !== null ? [{ labels: {}, value: a.deadLetters }] : [];
  });
  m.collected("gatehouse_recovery_open", "What the recovery jobs still see unresolved, by kind (cached).", "gauge", () => {
    const r = workers().recovery as { open?: Record<string, number> } | undefined;
    return Object.entries(r?.open ?? {}).map(([kind, value]) => ({ labels: { kind }, value }));
  });
}

function createHealthWorker(kit: PluginKit, checker: HealthChecker): Worker {
  let timer: NodeJS.Timeout | null = null;
  return {
    name: "health-snapshot",
    async start() {
      await checker.refresh();
      timer = setInterval(() => {
        checker.refresh().catch(() => {});
      }, kit.config.dependencies.healthRefreshMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
    },
  };
}
