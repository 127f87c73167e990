/**
 * The operator's dependency snapshot (/health/dependencies), built from in-memory state only: the
 * last pings and status reports (refreshed in the background by the checker), the circuits, and
 * what this process's requests observed. Statuses: "healthy", "unhealthy", or "unknown" — no
 * trustworthy observation (nothing observed yet, or the last observation is older than
 * OBSERVATION_FRESH_MS). "unknown" is not healthy; the snapshot's status is the worst of all.
 */
import type { AlertChannelStatus, DependencySnapshot, DocumentStoreStats } from "../../adapters/ports.ts";
import { REGULATOR_ADAPTERS, REGULATOR_STATES } from "../../adapters/regulator/port.ts";
import type { PluginKit, ServiceFacet, ServiceObservation } from "../../core/plugin.ts";
import { VERSION } from "../../core/version.ts";

/** An observation older than this is not trustworthy ("unknown"). */
export const OBSERVATION_FRESH_MS = 5 * 60_000;

export interface DependencyStatus {
  name: string;
  status: "healthy" | "unhealthy" | "unknown";
  checkedAt: string | null;
  latencyMs: number | null;
  failureClass?: string;
}

/** What the background refresh last saw (the checker writes it; the snapshot and the gauges read it). */
export interface HealthState {
  /** The last ping of each store ("coordination", "documentStore"). */
  statuses: Map<string, DependencyStatus>;
  generatedAt: string | null;
  /** The plugins' status reports by name (PluginKit.reports). */
  workers: Record<string, unknown>;
  alertChannel: AlertChannelStatus | null;
  /** The document store engine's own figures (file and WAL sizes, commits, cache bound), when it reports them. */
  engine: DocumentStoreStats | null;
}

export function buildSnapshot(kit: PluginKit, state: HealthState): Record<string, unknown> {
  const now = Date.now();
  const circuits = kit.dependencyHealth.snapshot();
  const circuitOf = (name: string) => circuits.find((c) => c.dependency === name);
  const docStore = { kind: kit.ports.documentStore.kind, ...state.statuses.get("documentStore")!, ...(state.engine ? { engine: state.engine } : {}) };
  const coord = { kind: kit.ports.coordination.kind, ...state.statuses.get("coordination")! };
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
    ...Object.fromEntries(REGULATOR_STATES.map((s) => [`regulator:${s}`, _regulator(kit, s, circuitOf(`regulator:${s}`), now)])),
    alertChannel: state.alertChannel ?? { status: kit.ports.alerts ? "unknown" : "unhealthy", channels: kit.ports.alerts ? [] : ["none"] },
  };
  // The worst of every dependency: "unknown" (no trustworthy observation) is not healthy either.
  const statusOf = Object.entries(dependencies as Record<string, { status?: string }>).map(([name, d]) => [name, d.status ?? "unknown"] as const);
  const unhealthy = statusOf.filter(([, st]) => st === "unhealthy").map(([name]) => name);
  const unknown = statusOf.filter(([, st]) => !["healthy", "unhealthy", "not_configured"].includes(st)).map(([name]) => name);
  return {
    status: unhealthy.length > 0 ? "unhealthy" : unknown.length > 0 ? "unknown" : "healthy",
    unhealthy,
    unknown,
    generatedAt: state.generatedAt,
    version: VERSION,
    ready: kit.runtime.isReady(),
    draining: kit.runtime.isDraining(),
    inFlight: kit.runtime.inFlight(),
    capacity: { inFlight: kit.runtime.inFlight().total, total: capacity.total, perDomain: capacity.perDomain },
    dependencies,
    stores: { documentStore: docStore, coordination: coord },
    circuits,
    processorHeartbeat: state.workers.storedProcessor ?? null,
    recovery: state.workers.recovery ?? null,
    workers: state.workers,
  };
}

// --- Internal helpers ---

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
