/**
 * The virtual-accounts part of one gateway, built once at setup: accounts, customers with their
 * dedicated accounts, deposits settling into the collection wallet, and the worker that finishes
 * deposits a crash left undecided or with pending effects.
 */
import type { TenantDirectory } from "../../../core/directory.ts";
import { describeError, type Logger } from "../../../core/log.ts";
import { requirePort, type PluginKit, type Worker } from "../../../core/plugin.ts";
import { intervalWorker } from "../shared/common.ts";
import type { CollectionWallet } from "../wallet/wallet.ts";
import { createVirtualAccountService, type VirtualAccountService } from "./account-service.ts";
import { createCustomerService, type CustomerService } from "./customers.ts";
import { createDepositService, type DepositService, type DepositServiceOptions } from "./deposit-service.ts";

export interface VirtualAccountServices {
  accounts: VirtualAccountService;
  customers: CustomerService;
  deposits: DepositService;
  directory: TenantDirectory;
  log: Logger;
  clock: () => number;
}

export function createVirtualAccountServices(
  kit: PluginKit,
  wallet: CollectionWallet,
  clock: () => number,
  hooks: Pick<DepositServiceOptions, "onCheckoutDeposit"> = {},
): VirtualAccountServices {
  const store = kit.ports.documentStore;
  const accounts = createVirtualAccountService({ store, directory: kit.directory, clock });
  return {
    accounts,
    customers: createCustomerService({ store, accounts, log: kit.log, clock }),
    deposits: createDepositService({
      store,
      accounts,
      wallet,
      webhooks: requirePort(kit, "webhooks"),
      directory: kit.directory,
      log: kit.log,
      clock,
      ...hooks,
    }),
    directory: kit.directory,
    log: kit.log,
    clock,
  };
}

/** Finishes deposits a crash left undecided or with pending effects; safe in every process. */
export function depositWorker(s: VirtualAccountServices, intervalMs: number): Worker {
  return intervalWorker("collections-deposit-redriver", intervalMs, async () => {
    try {
      const done = await s.deposits.redrive();
      if (done > 0) s.log.debug("collections_deposits_redriven", { done });
    } catch (e) {
      s.log.warn("collections_deposit_sweep_failed", { error: describeError(e) });
    }
  });
}
