/**
 * The collections plugin, payment-links part: the seven payment-link endpoints (Bearer, the
 * collections envelope), the public checkout pages on the collections hosts, checkout sessions
 * settled through the payments port into the business collection wallet, and the CHECKOUT_*
 * webhooks through the durable outbox. Read docs/collections-payment-links.md first.
 *
 * Needs: documentStore, webhooks (outbox), payments (processor; the sandbox for TEST businesses).
 * Uses the e-mail port when configured (links are sent to `customer_emails`; without it the send
 * is skipped and logged).
 */
import { isDependencyUnavailableError } from "../../adapters/ports.ts";
import { CollectionsError } from "../../core/errors/gateway-error.ts";
import { definePlugin, requirePort, type GatewayPlugin, type PluginKit, type RouteDeclaration, type Worker } from "../../core/plugin.ts";
import { describeError } from "../../core/log.ts";
import { createCheckoutService } from "./payment-links/checkout/service.ts";
import { ngnTextToKobo } from "./shared/money.ts";
import { collectionsRoutes, type CollectionsServices } from "./payment-links/routes.ts";
import { createPaymentLinkService } from "./payment-links/link-service.ts";
import { UNAVAILABLE_RETRY_AFTER_SECONDS, intervalWorker } from "./shared/common.ts";
import { createCollectionWallet } from "./wallet/wallet.ts";
import { customerRoutes } from "./virtual-accounts/customer-routes.ts";
import { depositRoutes } from "./virtual-accounts/deposit-routes.ts";
import { virtualAccountRoutes } from "./virtual-accounts/routes.ts";
import { createVirtualAccountServices, depositWorker } from "./virtual-accounts/services.ts";

export interface CollectionsPluginOptions {
  /** Epoch milliseconds for every time the plugin records (tests move it). Default Date.now. */
  clock?: () => number;
  /** How long the checkout request waits for the processor before answering "processing". Default 10 s. */
  payTimeoutMs?: number;
  /** How often the worker abandons stale sessions and completes unfinished effects. Default: config `collections.sweepIntervalMs`. */
  sweepIntervalMs?: number;
}

export function createCollectionsPlugin(options: CollectionsPluginOptions = {}): GatewayPlugin {
  return definePlugin({
    name: "collections",
    needs: ["documentStore", "webhooks", "payments"],
    stages: ["auth", "quota"],
    setup(kit) {
      const services = _build(kit, options);
      const accounts = createVirtualAccountServices(kit, services.wallet, options.clock ?? Date.now);
      const intervalMs = options.sweepIntervalMs ?? kit.config.collections.sweepIntervalMs;
      return {
        routes: [...collectionsRoutes(services), ...virtualAccountRoutes(accounts), ...customerRoutes(accounts), ...depositRoutes(accounts)].map((r) =>
          _unavailableAs503(kit, r),
        ),
        workers: [_sweeper(services, intervalMs), depositWorker(accounts, intervalMs)],
      };
    },
  });
}

export const collections = createCollectionsPlugin();

// --- Internal helpers ---

function _build(kit: PluginKit, options: CollectionsPluginOptions): CollectionsServices {
  const clock = options.clock ?? Date.now;
  const store = kit.ports.documentStore;
  const payments = requirePort(kit, "payments");
  const fee = { percent: kit.config.collections.feePercent, capKobo: ngnTextToKobo(kit.config.collections.feeCap) };
  const publicBaseUrl = (kit.config.server.publicBaseUrl ?? `http://localhost:${kit.config.server.port}`).replace(/\/+$/, "");
  const wallet = createCollectionWallet({ store, clock });
  const links = createPaymentLinkService({
    store,
    directory: kit.directory,
    log: kit.log,
    publicBaseUrl,
    email: kit.ports.email,
    clock,
  });
  const checkout = createCheckoutService({
    store,
    directory: kit.directory,
    payments,
    webhooks: requirePort(kit, "webhooks"),
    wallet,
    log: kit.log,
    fee,
    clock,
    payTimeoutMs: options.payTimeoutMs ?? 10_000,
  });
  payments.onReport(async (report) => {
    try {
      await checkout.applyReport(report);
    } catch (e) {
      kit.log.warn("collections_payment_report_failed", { sessionId: report.sessionId, error: describeError(e) });
      throw e; // the processor redelivers reports it could not hand over
    }
  });
  return { kit, links, checkout, wallet, fee };
}

/**
 * A dependency that did not answer (the store is down, or slower than its deadline) is a 503 in the
 * collections envelope with Retry-After, never an unexplained 500. The request may have been
 * partly applied before the failure: what it recorded is finished by the workers, exactly once.
 * (The checkout pages answer their own 503 page first.)
 */
function _unavailableAs503(kit: PluginKit, route: RouteDeclaration): RouteDeclaration {
  const { handler } = route;
  return {
    ...route,
    async handler(ctx) {
      try {
        return await handler(ctx);
      } catch (e) {
        if (!isDependencyUnavailableError(e)) throw e;
        kit.log.warn("collections_dependency_unavailable", { requestId: ctx.requestId, route: ctx.route?.id ?? null, error: describeError(e) });
        throw new CollectionsError(
          503,
          "The service is temporarily unavailable: the request may not have completed. Check its result before sending it again.",
          [],
          UNAVAILABLE_RETRY_AFTER_SECONDS,
        );
      }
    },
  };
}

/** Abandons sessions past 30 minutes and completes unfinished effects; safe in every process. */
function _sweeper(s: CollectionsServices, intervalMs: number): Worker {
  return intervalWorker("collections-checkout-sweeper", intervalMs, async () => {
    // Each its own failure: a sweep that fails (the processor or the store) does not skip the re-drive.
    const abandoned = await s.checkout.expireStale().catch((e: unknown) => {
      s.kit.log.warn("collections_checkout_sweep_failed", { step: "abandon", error: describeError(e) });
      return 0;
    });
    const redriven = await s.checkout.redrive().catch((e: unknown) => {
      s.kit.log.warn("collections_checkout_sweep_failed", { step: "redrive", error: describeError(e) });
      return 0;
    });
    if (abandoned + redriven > 0) s.kit.log.debug("collections_checkout_swept", { abandoned, redriven });
  });
}
