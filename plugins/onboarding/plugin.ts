/**
 * Onboarding: represented businesses of a top-level business (spec §2.1), onboarded with transient
 * regulator credentials; identity reverification and review (§2.2, §3.1); QR-material rotation; and
 * the operator's review decision and protected migration (also offered to the operator console:
 * IDENTITY_REVIEW_OPERATIONS). docs/onboarding.md explains it to merchants and lists the stored documents.
 */
import { definePlugin, offer, requirePort, type GatewayPlugin } from "../../core/plugin.ts";
import { IDENTITY_REVIEW_OPERATIONS } from "../invoice/offers.ts";
import { REPRESENTED_BUSINESS_READS } from "../invoice/dashboard-offers.ts";
import { representedBusinessReads } from "./dashboard-offer.ts";
import { adminRoutes } from "./admin-routes.ts";
import { identityReviewOperations } from "./operator-offer.ts";
import { publicRoutes } from "./routes.ts";
import { createOnboardingService } from "./service.ts";
import { deriveIdempotencySecret, openOnboardingStore } from "./store.ts";

export interface OnboardingOptions {
  /** Epoch milliseconds (tests). Default Date.now. */
  now?: () => number;
  /** An in-progress mutation older than this is stale; its holder is presumed dead. Default 5 minutes. */
  staleAfterMs?: number;
  /** How long a concurrent duplicate waits for the first request. Default 2 × regulator timeout + 5 s (≤ 60 s). */
  inFlightWaitMs?: number;
  /** Poll interval of a waiting duplicate. Default 50 ms. */
  pollMs?: number;
  /** How long idempotency records are kept. Default 30 days. */
  retentionMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export function createOnboardingPlugin(options: OnboardingOptions = {}): GatewayPlugin {
  return definePlugin({
    name: "onboarding",
    needs: ["documentStore", "regulator"],
    stages: ["auth", "quota"],
    provides: [IDENTITY_REVIEW_OPERATIONS, REPRESENTED_BUSINESS_READS],
    setup(kit) {
      const service = createOnboardingService({
        store: openOnboardingStore(kit.ports.documentStore),
        regulator: requirePort(kit, "regulator"),
        attestation: kit.ports.attestation ?? null,
        log: kit.log,
        secret: deriveIdempotencySecret(kit.config.regulator.apiSecret),
        now: options.now ?? Date.now,
        staleAfterMs: options.staleAfterMs ?? 5 * 60_000,
        inFlightWaitMs: options.inFlightWaitMs ?? Math.min(2 * kit.config.regulator.timeoutMs + 5_000, 60_000),
        pollMs: options.pollMs ?? 50,
        retentionMs: options.retentionMs ?? 30 * DAY_MS,
      });
      return {
        routes: [...publicRoutes(service), ...adminRoutes(service)],
        offers: [offer(IDENTITY_REVIEW_OPERATIONS, identityReviewOperations(service)), offer(REPRESENTED_BUSINESS_READS, representedBusinessReads(service))],
      };
    },
  });
}

export const onboarding = createOnboardingPlugin();
