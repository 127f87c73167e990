/**
 * Health: liveness, readiness, the operator's dependency snapshot and /metrics (routes.ts). The
 * snapshot is cached and refreshed in the background (checker.ts), so a request never fans out to
 * dependencies; `workers` in it holds the status reports plugins register (PluginKit.reports: the
 * Stored processor's heartbeats and backlog, the webhook outbox, the recovery jobs), and the gauges
 * of /metrics (gauges.ts) read the same cached state. Statuses and how they combine: snapshot.ts.
 */
import { definePlugin } from "../../core/plugin.ts";
import { createHealthChecker, createHealthWorker } from "./checker.ts";
import { healthRoutes } from "./routes.ts";

export { OBSERVATION_FRESH_MS, type DependencyStatus } from "./snapshot.ts";

export const health = definePlugin({
  name: "health",
  needs: ["coordination", "documentStore"],
  setup(kit) {
    const checker = createHealthChecker(kit);
    return { routes: healthRoutes(kit, checker), workers: [createHealthWorker(kit, checker)] };
  },
});
