/**
 * Health: /health and /health/live (the process answers), /health/ready (local readiness plus
 * the coordination-store safety check; turns not_ready as soon as draining starts) and
 * /health/dependencies (operator key; a cached snapshot refreshed in the background, so a
 * request never fans out to dependencies). `workers` holds the status reports plugins register
 * (PluginKit.reports: the Stored processor's heartbeats and backlog).
 */
import { definePlugin, type PluginKit, type RouteDeclaration, type Worker } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import { describeError } from "../../core/log.ts";
import { VERSION } from "../../core/version.ts";

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
  routes(kit) {
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
    return [
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
  },
  workers(kit) {
    return [createHealthWorker(kit)];
  },
});

// --- Internal helpers ---

interface HealthChecker {
  readiness(): Promise<string[]>;
  snapshot(): Record<string, unknown>;
  refresh(): Promise<void>;
}

const checkers = new WeakMap<PluginKit, HealthChecker>();

function createHealthChecker(kit: PluginKit): HealthChecker {
  const existing = checkers.get(kit);
  if (existing) return existing;
  let readyAt = 0;
  let readyReasons: string[] = [];
  let readyPending: Promise<string[]> | null = null;
  const statuses = new Map<string, DependencyStatus>([
    ["coordination", { name: "coordination", status: "unknown", checkedAt: null, latencyMs: null }],
    ["documentStore", { name: "documentStore", status: "unknown", checkedAt: null, latencyMs: null }],
  ]);
  let generatedAt: string | null = null;
  let workers: Record<string, unknown> = {};

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
      const [coordination, documentStore, reports] = await Promise.all([
        ping("coordination", () => kit.ports.coordination.ping()),
        ping("documentStore", () => kit.ports.documentStore.ping()),
        kit.reports.collect(),
      ]);
      statuses.set("coordination", coordination);
      statuses.set("documentStore", documentStore);
      workers = reports;
      generatedAt = new Date().toISOString();
    },
    snapshot() {
      return {
        generatedAt,
        version: VERSION,
        ready: kit.runtime.isReady(),
        draining: kit.runtime.isDraining(),
        inFlight: kit.runtime.inFlight(),
        stores: {
          documentStore: { kind: kit.ports.documentStore.kind, ...statuses.get("documentStore") },
          coordination: { kind: kit.ports.coordination.kind, ...statuses.get("coordination") },
        },
        circuits: kit.policies.snapshot(),
        workers,
      };
    },
  };
  checkers.set(kit, checker);
  return checker;
}

function createHealthWorker(kit: PluginKit): Worker {
  const checker = createHealthChecker(kit);
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
