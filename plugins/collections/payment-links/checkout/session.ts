/**
 * A checkout session: one payment attempt through a link, one transaction of the link each
 * (DECISIONS.md "Checkout", "Transactions"): the stored document, its states and the CHECKOUT_*
 * events of its final states, the view the API and the webhooks show, and the collection.
 *
 * States: `pending` → `successful` | `failed` | `abandoned` (no completion within 30 minutes);
 * a payment that does not match the link's fixed amount (or what the session asked the processor
 * to charge) becomes `refunded`, never settled; so does a payment reported for a session that had
 * already failed or been abandoned (late payment).
 */
import type { Collection, Doc, DocumentStore } from "../../../../adapters/ports.ts";
import type { SandboxOutcome } from "./form.ts";
import { CURRENCY, koboToNgn, type FeeBearer } from "../../shared/money.ts";
import { formatTime, formatTimeOrNull } from "../../shared/time.ts";
import type { TransferAccount } from "./transfer.ts";

export const SESSIONS_COLLECTION = "collections_checkout_sessions";
/** A session with no completion within this time is abandoned (DECISIONS.md). */
export const ABANDON_AFTER_MS = 30 * 60_000;
/** Wallet credits of checkouts carry this source type. */
export const CHECKOUT_SOURCE = "payment_link_checkout";

export type SessionStatus = "pending" | "successful" | "failed" | "abandoned" | "refunded";
export type FinalStatus = Exclude<SessionStatus, "pending">;

/** A transaction of a payment link (one checkout session) as the API and webhooks show it. */
export interface TransactionView {
  id: string;
  reference: string;
  linkReference: string;
  sourceReference: string;
  amount: number;
  fee: number;
  feeBearer: FeeBearer;
  chargedAmount: number;
  netAmount: number;
  currency: string;
  status: SessionStatus;
  customerEmail: string;
  paymentMethod: string;
  processorReference: string | null;
  failureReason: string | null;
  refund: { amount: number; reason: string; refundReference: string | null } | null;
  /** Sessions paid by bank transfer only: the single-use account the payer was given. */
  bankTransfer?: { accountNumber: string; accountName: string; providerName: string; virtualAccountReference: string; expiresAt: string };
  createdAt: string;
  paidAt: string | null;
  completedAt: string | null;
}

export const CHECKOUT_EVENTS = {
  successful: "CHECKOUT_COMPLETED",
  failed: "CHECKOUT_FAILED",
  abandoned: "CHECKOUT_CANCELLED",
  refunded: "CHECKOUT_REFUNDED",
} as const satisfies Record<FinalStatus, string>;

/** A checkout webhook body: `{ event_type, data }` with the transaction (DECISIONS.md "Checkout"). */
export interface CheckoutEvent {
  event_type: (typeof CHECKOUT_EVENTS)[FinalStatus];
  data: TransactionView;
}

export interface CheckoutSession extends Doc {
  businessId: string;
  linkId: string;
  linkReference: string;
  sourceReference: string;
  linkName: string;
  /** Transaction reference (generated, unique). */
  reference: string;
  /** The checkout form's one-time token, when it sent one (unique per link). */
  formToken?: string;
  /** The amount paid for, before a CUSTOMER fee. */
  amountKobo: number;
  feeKobo: number;
  /** What the processor is asked to charge. */
  chargeKobo: number;
  /** What the wallet receives when the session succeeds. */
  netKobo: number;
  feeBearer: FeeBearer;
  /** The link's fixed amount when the session started, or null. */
  fixedAmountKobo: number | null;
  currency: typeof CURRENCY;
  status: SessionStatus;
  customerEmail: string;
  paymentMethod: string;
  simulate: SandboxOutcome | null;
  processorReference: string | null;
  reportedAmountKobo: number | null;
  failureReason: string | null;
  refund: { amountKobo: number; reason: string; refundReference: string | null } | null;
  /** A session paid by bank transfer: its single-use account, once opened. */
  transfer?: TransferAccount;
  /** When the payer's receipt e-mail was claimed for sending (a successful session gets one). */
  receiptSentAt?: number;
  /** A final state whose effects (credit, refund, webhook) are not confirmed done yet. */
  effectsPending: boolean;
  createdAt: number;
  expiresAt: number;
  paidAt: number | null;
  completedAt: number | null;
  updatedAt: number;
}

/** A final state a session moves to, with the fields that change with it. */
export type SessionChange = Partial<CheckoutSession> & { status: FinalStatus };

export function openCheckoutSessions(store: DocumentStore): Collection<CheckoutSession> {
  return store.collection<CheckoutSession>(SESSIONS_COLLECTION, {
    indexes: [
      { fields: ["reference"], unique: true },
      { fields: ["linkId", "formToken"], unique: true, sparse: true },
      { fields: ["businessId", "linkId", "createdAt"] },
      { fields: ["status", "expiresAt"] },
    ],
  });
}

export function transactionView(s: CheckoutSession): TransactionView {
  return {
    id: s._id,
    reference: s.reference,
    linkReference: s.linkReference,
    sourceReference: s.sourceReference,
    amount: koboToNgn(s.amountKobo),
    fee: koboToNgn(s.feeKobo),
    feeBearer: s.feeBearer,
    chargedAmount: koboToNgn(s.chargeKobo),
    netAmount: koboToNgn(s.netKobo),
    currency: s.currency,
    status: s.status,
    customerEmail: s.customerEmail,
    paymentMethod: s.paymentMethod,
    processorReference: s.processorReference,
    failureReason: s.failureReason,
    refund: s.refund
      ? { amount: koboToNgn(s.refund.amountKobo), reason: s.refund.reason, refundReference: s.refund.refundReference }
      : null,
    ...(s.transfer
      ? {
          bankTransfer: {
            accountNumber: s.transfer.accountNumber,
            accountName: s.transfer.accountName,
            providerName: s.transfer.providerName,
            virtualAccountReference: s.transfer.reference,
            expiresAt: formatTime(s.transfer.expiresAt),
          },
        }
      : {}),
    createdAt: formatTime(s.createdAt),
    paidAt: formatTimeOrNull(s.paidAt),
    completedAt: formatTimeOrNull(s.completedAt),
  };
}
