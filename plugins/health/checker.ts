/**
 * The health checker: readiness (local state, then a ping of the coordination store, cached for a
 * second and shared by concurrent requests), the background refresh of the dependency snapshot
 * (store pings, the document store engine's figures, the plugins' status reports, the alert
 * channel) and the worker that runs it. A
 * request never fans out to dependencies beyond the one readiness ping.
 */
import { describeError } from "../../core/log.ts";
import type { PluginKit, Worker } from "../../core/plugin.ts";
import { registerGauges } from "./gauges.ts";
import { buildSnapshot, type DependencyStatus, type HealthState } from "./snapshot.ts";

export interface HealthChecker {
  /** Why this process is not ready (empty: ready). */
  readiness(): Promise<string[]>;
  /** The cached dependency snapshot. */
  snapshot(): Record<string, unknown>;
  /** Pings the stores and collects the status reports (background only). */
  refresh(): Promise<void>;
}

const READY_CACHE_MS = 1_000;
const PING_TIMEOUT_MS = 1_000;

export function createHealthChecker(kit: PluginKit): HealthChecker {
  const state: HealthState = {
    statuses: new Map<string, DependencyStatus>([
      ["coordination", { name: "coordination", status: "unknown", checkedAt: null, latencyMs: null }],
      ["documentStore", { name: "documentStore", status: "unknown", checkedAt: null, latencyMs: null }],
    ]),
    generatedAt: null,
    workers: {},
    alertChannel: null,
    engine: null,
  };
  const checker: HealthChecker = {
    readiness: _readiness(kit, state),
    refresh: () => _refresh(kit, state),
    snapshot: () => buildSnapshot(kit, state),
  };
  registerGauges(kit, () => state.workers, () => state.alertChannel, () => state.engine);
  return checker;
}

/** Refreshes the snapshot at start, then every `dependencies.healthRefreshMs`. */
export function createHealthWorker(kit: PluginKit, checker: HealthChecker): Worker {
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

// --- Internal helpers ---

/** Local readiness first; then the coordination ping's answer, cached for READY_CACHE_MS. */
function _readiness(kit: PluginKit, state: HealthState): () => Promise<string[]> {
  let readyAt = 0;
  let readyReasons: string[] = [];
  let readyPending: Promise<string[]> | null = null;
  return async () => {
    const local: string[] = [];
    if (kit.runtime.isDraining()) local.push("draining");
    else if (!kit.runtime.isReady()) local.push("starting");
    if (local.length > 0) return local;
    if (Date.now() - readyAt < READY_CACHE_MS) return readyReasons;
    readyPending ??= _ping("coordination", () => kit.ports.coordination.ping()).then((s) => {
      state.statuses.set("coordination", s);
      readyReasons = s.status === "healthy" ? [] : ["coordination_store_unavailable"];
      readyAt = Date.now();
      readyPending = null;
      return readyReasons;
    });
    return readyPending;
  };
}

async function _refresh(kit: PluginKit, state: HealthState): Promise<void> {
  const store = kit.ports.documentStore;
  const [coordination, documentStore, reports, alerts, engine] = await Promise.all([
    _ping("coordination", () => kit.ports.coordination.ping()),
    _ping("documentStore", () => store.ping()),
    kit.reports.collect(),
    kit.ports.alerts ? kit.ports.alerts.status().catch(() => null) : Promise.resolve(null),
    store.stats ? store.stats().catch(() => null) : Promise.resolve(null),
  ]);
  state.statuses.set("coordination", coordination);
  state.statuses.set("documentStore", documentStore);
  state.workers = reports;
  state.alertChannel = alerts;
  state.engine = engine;
  state.generatedAt = new Date().toISOString();
}

/** One ping with a deadline: healthy with its latency, or unhealthy with its failure class. */
async function _ping(name: string, fn: () => Promise<void>): Promise<DependencyStatus> {
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
}
