/**
 * The single-use accounts of checkout sessions paid by bank transfer (the checkout's
 * TransferAccounts): opened through the virtual-account service with the create body the API
 * validates (`createVirtualAccountBody`: name 3–250 characters, expiry in the future and within 24
 * hours), so a checkout's account obeys every rule a merchant's does. One account per session: its
 * source_reference is `CHK-<transaction reference>`, unique per business, so a second open (two
 * tabs, a resubmitted form) finds the first account instead of creating another.
 */
import * as v from "valibot";
import type { PaymentReport } from "../../../adapters/ports.ts";
import { isCollectionsError } from "../../../core/errors/gateway-error.ts";
import type { CheckoutSession } from "../payment-links/checkout/session.ts";
import type { TransferAccount, TransferAccounts } from "../payment-links/checkout/transfer.ts";
import { formatTime } from "../shared/time.ts";
import { koboToNgn } from "../shared/money.ts";
import type { VirtualAccount } from "./account.ts";
import type { VirtualAccountService } from "./account-service.ts";
import type { Deposit } from "./deposit.ts";
import type { DepositService } from "./deposit-service.ts";
import { PROVIDER_NAME } from "./identifiers.ts";
import { createVirtualAccountBody, type CreateVirtualAccountInput } from "./schemas.ts";

/** Longest account name the payer's bank shows in full on most apps; the API allows 250. */
const NAME_MAX = 60;

export function createCheckoutAccounts(accounts: VirtualAccountService, deposits: DepositService, clock: () => number): TransferAccounts {
  const body = createVirtualAccountBody(clock);
  return {
    async open(session, businessName) {
      const sourceReference = `CHK-${session.reference}`;
      const raw = {
        account_type: "single_use",
        account_name: checkoutAccountName(businessName),
        source_reference: sourceReference,
        amount: koboToNgn(session.chargeKobo),
        // Whole seconds (the API's format), never after the session's own expiry.
        expires_at: formatTime(session.expiresAt),
      };
      const parsed = v.safeParse(body, raw);
      if (!parsed.success) return null; // the session's time is up (or about to be): no account
      const input: CreateVirtualAccountInput = parsed.output;
      try {
        return _transferAccount(await accounts.create(session.businessId, { ...input, checkoutSessionId: session._id }));
      } catch (e) {
        if (!isCollectionsError(e) || e.status !== 409) throw e;
        return _transferAccount(await accounts.findBySourceReference(session.businessId, sourceReference));
      }
    },
    async lookup(session) {
      if (!session.transfer) return null;
      const account = await accounts.get(session.transfer.accountId);
      if (!account?.consumedBySessionId) return null;
      const d = await deposits.get(account.consumedBySessionId);
      return d && d.status === "settled" ? depositReport(d) : null;
    },
    async attempts(session) {
      if (!session.transfer) return [];
      return (await deposits.forAccount(session.transfer.accountId)).map((d) => ({
        amountKobo: d.amountKobo,
        status: d.status,
        reason: d.refund?.reason ?? null,
        receivedAt: d.receivedAt,
      }));
    },
  };
}

/** A settled deposit into a checkout's account as the report the checkout settles by. */
export function depositReport(d: Deposit): PaymentReport & { sessionId: string } {
  return {
    sessionId: d.checkoutSessionId ?? "",
    processorReference: d.reference,
    status: "succeeded",
    amountKobo: d.amountKobo,
    reportedAt: new Date(d.receivedAt).toISOString(),
  };
}

/** The name the payer's bank shows for the account: the business's, so the payer recognises it. */
export function checkoutAccountName(businessName: string): string {
  const name = businessName.replace(/\s+/g, " ").trim().slice(0, NAME_MAX).trim();
  return name.length >= 3 ? name : `${name} Checkout`.trim();
}

// --- Internal helpers ---

function _transferAccount(a: VirtualAccount): TransferAccount {
  return {
    accountId: a._id,
    reference: a.reference,
    accountNumber: a.accountNumber,
    accountName: a.accountName,
    providerName: PROVIDER_NAME,
    amountKobo: a.amountKobo ?? 0,
    expiresAt: a.expiresAtMs ?? 0,
  };
}
