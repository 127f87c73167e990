/**
 * The collections plugin: the manifest you read first. Two parts, each in its folder:
 * - payment-links/: the seven payment-link endpoints (Bearer, the collections envelope), the
 *   public checkout pages on the collections hosts, checkout sessions settled through the payments
 *   port or by a bank transfer into a single-use virtual account of the session, the CHECKOUT_*
 *   webhooks and the payer's receipt e-mail (docs/collections-payment-links.md);
 * - virtual-accounts/: virtual accounts, customers with their dedicated accounts, sandbox deposits
 *   and the IN_FLOW_SUCCESS_EVENT (docs/collections-virtual-accounts.md);
 * both settling into the business collection wallet (wallet/), with the money, time and input
 * rules they share in shared/.
 *
 * Needs: documentStore, webhooks (outbox), payments (processor; the sandbox for TEST businesses).
 * Uses the e-mail port when configured (links are sent to `customer_emails`, receipts to payers;
 * without it the send is skipped and logged).
 */
import { definePlugin, offer, type GatewayPlugin } from "../../core/plugin.ts";
import { COLLECTIONS_OPERATIONS } from "../invoice/dashboard-offers.ts";
import { collectionsOperations } from "./dashboard-offer.ts";
import { paymentLinkRoutes } from "./payment-links/api-routes.ts";
import { checkoutPageRoutes } from "./payment-links/page-routes.ts";
import { checkoutSweeper, createPaymentLinkServices } from "./payment-links/services.ts";
import { answerOutageAs503 } from "./shared/outage.ts";
import { createCheckoutAccounts, depositReport } from "./virtual-accounts/checkout-accounts.ts";
import { customerRoutes } from "./virtual-accounts/customer-routes.ts";
import { depositRoutes } from "./virtual-accounts/deposit-routes.ts";
import { virtualAccountRoutes } from "./virtual-accounts/routes.ts";
import { createVirtualAccountServices, depositWorker } from "./virtual-accounts/services.ts";
import { walletRoutes } from "./wallet/routes.ts";
import { createCollectionWallet } from "./wallet/wallet.ts";

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
    provides: [COLLECTIONS_OPERATIONS],
    setup(kit) {
      const clock = options.clock ?? Date.now;
      const wallet = createCollectionWallet({ store: kit.ports.documentStore, clock });
      // A transfer into a checkout's single-use account settles that checkout (pay by transfer).
      const accounts = createVirtualAccountServices(kit, wallet, clock, {
        onCheckoutDeposit: (deposit) => links.checkout.applyReport(depositReport(deposit)),
      });
      const transfers = createCheckoutAccounts(accounts.accounts, accounts.deposits, clock);
      const links = createPaymentLinkServices(kit, wallet, { clock, payTimeoutMs: options.payTimeoutMs ?? 10_000, transfers });
      const intervalMs = options.sweepIntervalMs ?? kit.config.collections.sweepIntervalMs;
      const routes = [
        ...paymentLinkRoutes(links),
        ...walletRoutes(wallet),
        ...checkoutPageRoutes(links),
        ...virtualAccountRoutes(accounts),
        ...customerRoutes(accounts),
        ...depositRoutes(accounts),
      ];
      return {
        // A dependency outage in a handler is the envelope's 503 (the pages answer their own first).
        routes: routes.map((route) => answerOutageAs503(kit.log, route)),
        workers: [checkoutSweeper(links, intervalMs), depositWorker(accounts, intervalMs)],
        offers: [offer(COLLECTIONS_OPERATIONS, collectionsOperations(links, accounts, wallet))],
      };
    },
  });
}

export const collections = createCollectionsPlugin();
