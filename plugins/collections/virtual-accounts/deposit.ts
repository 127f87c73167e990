/**
 * A deposit into a virtual account (spec §1, §3.2, §6; DECISIONS.md "Deposits (sandbox)"): one
 * transfer session (`sessionId`, its `_id`), its life
 *
 *   received ──► settled    wallet credited once, IN_FLOW_SUCCESS_EVENT enqueued once
 *            └─► refunded   nothing credited, no event; `refund { amount, reason, refundReference }`
 *
 * the stored document, the view the sandbox route answers, the IN_FLOW_SUCCESS_EVENT body, and the
 * rule deciding settle or refund. Refund reasons: `account_expired` (past its expiresAt),
 * `account_used` (a single_use account that already completed its payment), `account_inactive`
 * (toggled off), `amount_mismatch` (not the account's fixed amount). Expiry and use are judged at
 * the deposit's `receivedAt`.
 */
import { randomInt } from "node:crypto";
import type { Collection, Doc, DocumentStore } from "../../../adapters/ports.ts";
import { CURRENCY, koboToNgn } from "../shared/money.ts";
import { formatTime, formatTimeOrNull } from "../shared/time.ts";
import { deriveStatus, type VirtualAccount } from "./account.ts";
import type { AccountType } from "./schemas.ts";

export const DEPOSITS_COLLECTION = "collections_va_deposits";
export const IN_FLOW_SUCCESS_EVENT = "IN_FLOW_SUCCESS_EVENT";
/** Wallet credits of deposits carry this source type (sourceId = the session id). */
export const DEPOSIT_SOURCE = "virtual_account_deposit";
/** Institution code that starts the sandbox's 30-digit NIP-style session ids. */
export const SANDBOX_INSTITUTION_CODE = "999999";

export type DepositStatus = "received" | "settled" | "refunded";
export type RefundReason = "account_expired" | "account_used" | "account_inactive" | "amount_mismatch";

export const REFUND_MESSAGES: Record<RefundReason, string> = {
  account_expired: "The virtual account has expired.",
  account_used: "The single-use virtual account has already received its payment.",
  account_inactive: "The virtual account is inactive.",
  amount_mismatch: "The amount does not match the virtual account's fixed amount.",
};

export interface Deposit extends Doc {
  /** `_id` is the transfer's session id (30 digits). */
  businessId: string;
  /** Transaction reference (`VAT-` + 16 characters): the wallet credit's and the event's `reference`. */
  reference: string;
  virtualAccountId: string;
  virtualAccountReference: string;
  sourceReference: string;
  accountNumber: string;
  accountName: string;
  accountType: AccountType;
  /** The checkout session of the account (pay by transfer): the checkout settles it, not the deposit. */
  checkoutSessionId?: string;
  amountKobo: number;
  currency: typeof CURRENCY;
  sender: { accountName: string; accountNumber: string; bankName: string };
  status: DepositStatus;
  refund: { amountKobo: number; reason: RefundReason; refundReference: string } | null;
  /** `settled` whose credit or event is not confirmed done yet. */
  effectsPending: boolean;
  receivedAt: number;
  settledAt: number | null;
  refundedAt: number | null;
  updatedAt: number;
}

/** A sandbox deposit as the API shows it: settled, refunded (with the reason) or received. */
export interface DepositView {
  sessionId: string;
  reference: string;
  status: DepositStatus;
  reason: RefundReason | null;
  message: string;
  amount: number;
  currency: string;
  recipient: { accountName: string; accountNumber: string };
  sender: { accountName: string; accountNumber: string; bankName: string };
  virtualAccount: { reference: string; sourceReference: string; accountType: AccountType };
  refund: { amount: number; reason: RefundReason; refundReference: string; refundedAt: string | null } | null;
  receivedAt: string;
  settledAt: string | null;
}

/** The IN_FLOW_SUCCESS_EVENT webhook body (spec collections §6, DECISIONS.md "Deposits"). */
export type InFlowSuccessEvent = {
  event_type: typeof IN_FLOW_SUCCESS_EVENT;
  data: {
    recipient: { accountName: string; accountNumber: string };
    amount: number;
    currency: string;
    reference: string;
    sessionId: string;
    sender: { accountName: string; accountNumber: string; bankName: string };
    settledAt: string | null;
    virtualAccount: { reference: string; sourceReference: string; accountType: AccountType };
  };
};

export function openDeposits(store: DocumentStore): Collection<Deposit> {
  return store.collection<Deposit>(DEPOSITS_COLLECTION, {
    indexes: [
      { fields: ["reference"], unique: true },
      { fields: ["businessId", "receivedAt"] },
      { fields: ["virtualAccountId", "receivedAt"] },
      { fields: ["status", "updatedAt"] },
      { fields: ["effectsPending", "updatedAt"] },
    ],
  });
}

/** A deposit as the sandbox route answers it. */
export function depositView(d: Deposit): DepositView {
  return {
    sessionId: d._id,
    reference: d.reference,
    status: d.status,
    reason: d.refund?.reason ?? null,
    message: d.status === "refunded" && d.refund ? REFUND_MESSAGES[d.refund.reason] : d.status === "settled" ? "Settled into the collection wallet." : "Received; settlement in progress.",
    amount: koboToNgn(d.amountKobo),
    currency: d.currency,
    recipient: { accountName: d.accountName, accountNumber: d.accountNumber },
    sender: { ...d.sender },
    virtualAccount: { reference: d.virtualAccountReference, sourceReference: d.sourceReference, accountType: d.accountType },
    refund: d.refund
      ? { amount: koboToNgn(d.refund.amountKobo), reason: d.refund.reason, refundReference: d.refund.refundReference, refundedAt: formatTimeOrNull(d.refundedAt) }
      : null,
    receivedAt: formatTime(d.receivedAt),
    settledAt: formatTimeOrNull(d.settledAt),
  };
}

/** The IN_FLOW_SUCCESS_EVENT body of a settled deposit. */
export function inFlowEventBody(d: Deposit): InFlowSuccessEvent {
  return {
    event_type: IN_FLOW_SUCCESS_EVENT,
    data: {
      recipient: { accountName: d.accountName, accountNumber: d.accountNumber },
      amount: koboToNgn(d.amountKobo),
      currency: d.currency,
      reference: d.reference,
      sessionId: d._id,
      sender: { ...d.sender },
      settledAt: formatTimeOrNull(d.settledAt),
      virtualAccount: { reference: d.virtualAccountReference, sourceReference: d.sourceReference, accountType: d.accountType },
    },
  };
}

/**
 * A 30-digit NIP-style session id: institution code (6) + `yyMMddHHmmss` (UTC, 12) + 12 random
 * digits.
 */
export function newSessionId(now: number): string {
  const t = new Date(now).toISOString();
  const stamp = t.slice(2, 4) + t.slice(5, 7) + t.slice(8, 10) + t.slice(11, 13) + t.slice(14, 16) + t.slice(17, 19);
  const random = String(randomInt(0, 1_000_000)).padStart(6, "0") + String(randomInt(0, 1_000_000)).padStart(6, "0");
  return SANDBOX_INSTITUTION_CODE + stamp + random;
}

/** Why a deposit into `account` is refunded (judged at the deposit's receivedAt), or null to settle. */
export function refundReason(account: VirtualAccount, d: Deposit): RefundReason | null {
  if (account.consumedBySessionId === d._id) return null; // this deposit already won the account
  if (deriveStatus(account, d.receivedAt) === "expired") return account.consumed ? "account_used" : "account_expired";
  if (!account.enabled) return "account_inactive";
  if (account.amountKobo !== null && account.amountKobo !== d.amountKobo) return "amount_mismatch";
  return null;
}
