/**
 * Paying a checkout by bank transfer: the session gets a single-use virtual account (NGN, the
 * session's exact charge, expiring with the session, named after the business) opened through the
 * virtual-account service under the API's own rules; a transfer into it settles the session
 * through the same rule table and effects as a processor report (`applyReport`), so the wallet is
 * credited once under the session id and one CHECKOUT_COMPLETED is sent. Transfers the account
 * refuses (wrong amount, after expiry, a second one) are refunded by the deposit rules and leave
 * the session as it is; the page lists them (`attempts`).
 */
import type { PaymentReport } from "../../../../adapters/ports.ts";
import type { BusinessRecord } from "../../../../core/directory.ts";
import { describeError } from "../../../../core/log.ts";
import type { CheckoutDeps } from "./deps.ts";
import type { CheckoutSession } from "./session.ts";

/** The `paymentMethod` of a session paid by transfer. */
export const BANK_TRANSFER = "bank_transfer";

/** The account a payer transfers to, as the session stores it. */
export interface TransferAccount {
  accountId: string;
  reference: string;
  accountNumber: string;
  accountName: string;
  providerName: string;
  amountKobo: number;
  /** Epoch ms; the account refuses transfers from then on (at or before the session's expiry). */
  expiresAt: number;
}

/** A transfer into a session's account, as the page shows it. */
export interface TransferAttempt {
  amountKobo: number;
  status: "received" | "settled" | "refunded";
  /** Why it was refunded (the deposit's reason), or null. */
  reason: string | null;
  receivedAt: number;
}

/** What the checkout asks of the virtual accounts (implemented in virtual-accounts/checkout-accounts.ts). */
export interface TransferAccounts {
  /** Opens (or, for the same session, finds) the session's account; null once the session has expired. */
  open(session: CheckoutSession, businessName: string): Promise<TransferAccount | null>;
  /** The settled transfer into the session's account as a report, or null when none. */
  lookup(session: CheckoutSession): Promise<PaymentReport | null>;
  /** The transfers into the session's account, oldest first. */
  attempts(session: CheckoutSession): Promise<TransferAttempt[]>;
}

export function isBankTransfer(s: Pick<CheckoutSession, "paymentMethod">): boolean {
  return s.paymentMethod === BANK_TRANSFER;
}

/**
 * Gives a pending transfer session its account (idempotent: two tabs, a resubmitted form and the
 * status page all get the same one). Answers the session as stored. A failure to open is logged
 * and the session answered without an account: the status page tries again.
 */
export async function openTransfer(deps: CheckoutDeps, session: CheckoutSession, business: BusinessRecord): Promise<CheckoutSession> {
  if (session.status !== "pending" || session.transfer) return session;
  if (!deps.transfers) throw new Error("bank transfer is not available: no virtual-account service");
  let account: TransferAccount | null;
  try {
    account = await deps.transfers.open(session, business.name);
  } catch (e) {
    deps.log.warn("collections_checkout_transfer_account_failed", { sessionId: session._id, error: describeError(e) });
    return session;
  }
  if (!account) return session;
  const updated = await deps.sessions.findOneAndUpdate(
    { _id: session._id, transfer: { $exists: false } },
    { $set: { transfer: account, updatedAt: deps.clock() } },
  );
  if (updated)
    deps.log.event("collections_checkout_transfer_opened", { sessionId: session._id, businessId: session.businessId, accountReference: account.reference });
  return (await deps.sessions.get(session._id)) ?? session;
}
