/**
 * Signing (Pass-through, spec §3.2): the billed `POST /api/v1/invoice/sign` with idempotency
 * records, the unbilled validation and direct regulator routes, and the inbound routes that always
 * answer 503. docs/signing-and-transmission.md explains it to merchants.
 */
import { definePlugin, requirePort, type GatewayPlugin } from "../../core/plugin.ts";
import { signingRoutes } from "./routes.ts";
import { createSigningService } from "./service.ts";
import { deriveSigningSecret, openSigningStore } from "./store.ts";

export interface SigningOptions {
  now?: () => number;
  /** An in-progress sign record older than this is stale. Default 2 × regulator timeout + 30 s. */
  staleAfterMs?: number;
  /** How long a concurrent duplicate waits for the first request. Default regulator timeout + 5 s (≤ 60 s). */
  inFlightWaitMs?: number;
  pollMs?: number;
  /** How long idempotency records are kept. Default 30 days. */
  retentionMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export function createSigningPlugin(options: SigningOptions = {}): GatewayPlugin {
  return definePlugin({
    name: "signing",
    needs: ["documentStore", "regulator", "billing"],
    stages: ["auth", "quota", "mode"],
    setup(kit) {
      const timeoutMs = kit.config.regulator.timeoutMs;
      const service = createSigningService({
        store: openSigningStore(kit.ports.documentStore),
        billing: requirePort(kit, "billing"),
        regulator: requirePort(kit, "regulator"),
        log: kit.log,
        secret: deriveSigningSecret(kit.config.regulator.apiSecret),
        now: options.now ?? Date.now,
        staleAfterMs: options.staleAfterMs ?? 2 * timeoutMs + 30_000,
        waitMs: options.inFlightWaitMs ?? Math.min(timeoutMs + 5_000, 60_000),
        pollMs: options.pollMs ?? 25,
        retentionMs: options.retentionMs ?? 30 * DAY_MS,
        alerts: kit.ports.alerts,
      });
      return { routes: signingRoutes(service) };
    },
  });
}

export const signing = createSigningPlugin();
