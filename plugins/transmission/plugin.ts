/**
 * Transmission (Pass-through, spec §3.3): `POST /api/v1/invoice/transmit/:irn` with a durable claim
 * per IRN; only the claim holder calls the regulator. Unbilled.
 */
import { definePlugin, requirePort, type GatewayPlugin } from "../../core/plugin.ts";
import { transmissionRoutes } from "./routes.ts";
import { createTransmissionService } from "./service.ts";

export interface TransmissionPluginOptions {
  now?: () => number;
  /** An in_progress claim older than this is presumed dead (→ unknown). Default 2 × regulator timeout + 30 s. */
  staleAfterMs?: number;
  /** How long a same-key retry waits for its own claim still in progress. Default regulator timeout + 5 s (≤ 60 s). */
  inFlightWaitMs?: number;
}

export function createTransmissionPlugin(options: TransmissionPluginOptions = {}): GatewayPlugin {
  return definePlugin({
    name: "transmission",
    needs: ["documentStore", "regulator"],
    stages: ["auth", "quota", "mode"],
    setup(kit) {
      const service = createTransmissionService({
        store: kit.ports.documentStore,
        regulator: requirePort(kit, "regulator"),
        log: kit.log,
        deploymentSecret: kit.config.regulator.apiSecret,
        now: options.now ?? Date.now,
        staleAfterMs: options.staleAfterMs ?? 2 * kit.config.regulator.timeoutMs + 30_000,
        alerts: kit.ports.alerts,
        waitMs: options.inFlightWaitMs ?? Math.min(kit.config.regulator.timeoutMs + 5_000, 60_000),
        pollMs: 25,
      });
      return { routes: transmissionRoutes(service) };
    },
  });
}

export const transmission = createTransmissionPlugin();
