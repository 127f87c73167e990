/**
 * The payment-links part of one gateway, built once at setup: the link service, the checkout
 * service (whose processor reports are handed over here), and the worker that abandons stale
 * sessions and completes unfinished effects.
 */
import type { TenantDirectory } from "../../../core/directory.ts";
import { describeError, type Logger } from "../../../core/log.ts";
import { requirePort, type PluginKit, type Worker } from "../../../core/plugin.ts";
import { intervalWorker } from "../shared/common.ts";
import { ngnTextToKobo, type FeePolicy } from "../shared/money.ts";
import type { CollectionWallet } from "../wallet/wallet.ts";
import { createCheckoutService, type CheckoutService } from "./checkout/service.ts";
import type { TransferAccounts } from "./checkout/transfer.ts";
import { createPaymentLinkService, type PaymentLinkService } from "./links/link-service.ts";

export interface PaymentLinkServices {
  links: PaymentLinkService;
  checkout: CheckoutService;
  fee: FeePolicy;
  directory: TenantDirectory;
  log: Logger;
  clock: () => number;
}

export interface PaymentLinkSettings {
  clock: () => number;
  /** How long the checkout request waits for the processor before answering "processing". */
  payTimeoutMs: number;
  /** The single-use accounts of sessions paid by bank transfer. */
  transfers?: TransferAccounts;
}

export function createPaymentLinkServices(kit: PluginKit, wallet: CollectionWallet, settings: PaymentLinkSettings): PaymentLinkServices {
  const { clock } = settings;
  const store = kit.ports.documentStore;
  const payments = requirePort(kit, "payments");
  const fee = { percent: kit.config.collections.feePercent, capKobo: ngnTextToKobo(kit.config.collections.feeCap) };
  const publicBaseUrl = (kit.config.server.publicBaseUrl ?? `http://localhost:${kit.config.server.port}`).replace(/\/+$/, "");
  const links = createPaymentLinkService({ store, directory: kit.directory, log: kit.log, publicBaseUrl, email: kit.ports.email, clock });
  const checkout = createCheckoutService({
    store,
    directory: kit.directory,
    payments,
    webhooks: requirePort(kit, "webhooks"),
    wallet,
    log: kit.log,
    fee,
    clock,
    payTimeoutMs: settings.payTimeoutMs,
    ...(settings.transfers ? { transfers: settings.transfers } : {}),
    ...(kit.ports.email ? { email: kit.ports.email } : {}),
  });
  payments.onReport(async (report) => {
    try {
      await checkout.applyReport(report);
    } catch (e) {
      kit.log.warn("collections_payment_report_failed", { sessionId: report.sessionId, error: describeError(e) });
      throw e; // the processor redelivers reports it could not hand over
    }
  });
  return { links, checkout, fee, directory: kit.directory, log: kit.log, clock };
}

/** Abandons sessions past 30 minutes and completes unfinished effects; safe in every process. */
export function checkoutSweeper(s: PaymentLinkServices, intervalMs: number): Worker {
  return intervalWorker("collections-checkout-sweeper", intervalMs, async () => {
    // Each its own failure: a sweep that fails (the processor or the store) does not skip the re-drive.
    const abandoned = await s.checkout.expireStale().catch((e: unknown) => {
      s.log.warn("collections_checkout_sweep_failed", { step: "abandon", error: describeError(e) });
      return 0;
    });
    const redriven = await s.checkout.redrive().catch((e: unknown) => {
      s.log.warn("collections_checkout_sweep_failed", { step: "redrive", error: describeError(e) });
      return 0;
    });
    if (abandoned + redriven > 0) s.log.debug("collections_checkout_swept", { abandoned, redriven });
  });
}
