/** What the checkout's steps share: its sessions, the ports it settles through, its settings. */
import type { Collection, EmailSender, PaymentProcessor, WebhookOutbox } from "../../../../adapters/ports.ts";
import type { TenantDirectory } from "../../../../core/directory.ts";
import type { Logger } from "../../../../core/log.ts";
import type { FeePolicy } from "../../shared/money.ts";
import type { CollectionWallet } from "../../wallet/wallet.ts";
import type { CheckoutSession } from "./session.ts";
import type { TransferAccounts } from "./transfer.ts";

export interface CheckoutDeps {
  sessions: Collection<CheckoutSession>;
  directory: TenantDirectory;
  payments: PaymentProcessor;
  webhooks: WebhookOutbox;
  wallet: CollectionWallet;
  log: Logger;
  fee: FeePolicy;
  clock: () => number;
  /** How long the checkout request waits for the processor before answering "processing". */
  payTimeoutMs: number;
  /** A pending session is abandoned this long after it started. */
  abandonAfterMs: number;
  /** The single-use accounts of sessions paid by bank transfer; null when unavailable. */
  transfers: TransferAccounts | null;
  /** Sends the payer's receipt; without it the receipt is skipped and logged. */
  email?: EmailSender;
}
