/**
 * A payment link: the stored document, the view the API answers, the collection with its unique
 * keys, and the availability rules (status and start/end window) the checkout page applies.
 */
import type { Collection, Doc, DocumentStore } from "../../../../adapters/ports.ts";
import { CURRENCY, koboToNgn, type FeeBearer } from "../../shared/money.ts";
import { formatTime, formatTimeOrNull } from "../../shared/time.ts";

export const LINKS_COLLECTION = "collections_payment_links";

export interface PaymentLink extends Doc {
  businessId: string;
  /** Generated, public (it is in the checkout URL), unique across the system. */
  reference: string;
  /** The caller's identifier; unique per business. */
  sourceReference: string;
  linkName: string;
  narration: string;
  /** Fixed amount in kobo, or null when the customer chooses (minimum NGN 100). */
  amountKobo: number | null;
  feeBearer: FeeBearer;
  redirectLink: string | null;
  customerEmails: string[];
  /** Window edges in epoch ms (start: first millisecond, end: last millisecond), or null. */
  startAt: number | null;
  endAt: number | null;
  status: "active" | "inactive";
  createdAt: number;
  updatedAt: number;
}

/** A payment link as the API shows it (spec §2.3 plus DECISIONS.md's read fields). */
export interface PaymentLinkView {
  id: string;
  reference: string;
  sourceReference: string;
  linkName: string;
  linkUrl: string;
  narration: string;
  /** NGN, or null when the customer chooses the amount. */
  amount: number | null;
  currency: typeof CURRENCY;
  feeBearer: FeeBearer;
  redirectLink: string | null;
  customerEmails: string[];
  startDate: string | null;
  endDate: string | null;
  status: PaymentLink["status"];
  createdAt: string;
}

export type Availability = { ok: true } | { ok: false; reason: "inactive" | "not_started" | "ended" };
/** Why a link accepts no payment now. */
export type UnavailableReason = Exclude<Availability, { ok: true }>["reason"];

/** The links collection: `reference` unique system-wide, `sourceReference` unique per business. */
export function openPaymentLinks(store: DocumentStore): Collection<PaymentLink> {
  return store.collection<PaymentLink>(LINKS_COLLECTION, {
    indexes: [
      { fields: ["reference"], unique: true },
      { fields: ["businessId", "sourceReference"], unique: true },
      { fields: ["businessId", "createdAt"] },
    ],
  });
}

/** Whether the link accepts a payment at `now`: active, and inside its window. */
export function availability(link: PaymentLink, now: number): Availability {
  if (link.status !== "active") return { ok: false, reason: "inactive" };
  if (link.startAt !== null && now < link.startAt) return { ok: false, reason: "not_started" };
  if (link.endAt !== null && now > link.endAt) return { ok: false, reason: "ended" };
  return { ok: true };
}

export function paymentLinkView(link: PaymentLink, linkUrl: string): PaymentLinkView {
  return {
    id: link._id,
    reference: link.reference,
    sourceReference: link.sourceReference,
    linkName: link.linkName,
    linkUrl,
    narration: link.narration,
    amount: link.amountKobo === null ? null : koboToNgn(link.amountKobo),
    currency: CURRENCY,
    feeBearer: link.feeBearer,
    redirectLink: link.redirectLink,
    customerEmails: link.customerEmails,
    startDate: formatTimeOrNull(link.startAt),
    endDate: formatTimeOrNull(link.endAt),
    status: link.status,
    createdAt: formatTime(link.createdAt),
  };
}
