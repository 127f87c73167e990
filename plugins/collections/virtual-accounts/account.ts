/**
 * Virtual accounts (spec §1, §2.4–§2.5, §3.2, §4; DECISIONS.md "Virtual accounts"): NGN bank
 * accounts that settle into the business collection wallet. Read
 * docs/collections-virtual-accounts.md first.
 *
 * Derived status, exactly and index-friendly. Each account stores
 * - `enabled`   — false after toggle-status `activate: false`;
 * - `openUntil` — epoch ms from which the account is expired: its `expiresAt` for a single_use
 *                 account, 0 once a single_use account completed a payment (`consumed`), and
 *                 NEVER (the largest JavaScript date) for multi_use accounts.
 * so that, at any time `now`:
 *     expired   ⇔ openUntil ≤ now                    (expiry wins over inactive: spec §3.2)
 *     inactive  ⇔ openUntil > now ∧ enabled = false
 *     active    ⇔ openUntil > now ∧ enabled = true
 * The `status` filter of the list is that predicate as a store filter (`statusFilter`): the store
 * selects and counts exactly the accounts of that derived status, so pages and `meta.total` are
 * right, and never a page filtered after the fact. `deriveStatus` is the same predicate in code
 * (the property test checks they agree).
 *
 * Uniqueness by the store's unique indexes, in every process sharing the store:
 * `accountNumber` system-wide (a clash draws another number), `(businessId, reference)`,
 * `(businessId, sourceReference)` (409 on reuse), and `customerId` (sparse: one DVA per customer).
 */
import type { Collection, Doc, DocumentStore, Filter } from "../../../adapters/ports.ts";
import type { BusinessState } from "../../../core/directory.ts";
import { CURRENCY, formatNgn, koboToNgn } from "../shared/money.ts";
import { formatTime, formatTimeOrNull } from "../shared/time.ts";
import { PROVIDER_NAME, businessResourceIds } from "./identifiers.ts";
import type { ListVirtualAccountsInput } from "./query-schemas.ts";
import type { AccountStatus, AccountType } from "./schemas.ts";

export const VIRTUAL_ACCOUNTS_COLLECTION = "collections_virtual_accounts";
/** `openUntil` of accounts that never expire: the largest time a JavaScript Date can hold. */
export const NEVER = 8_640_000_000_000_000;

export interface VirtualAccount extends Doc {
  businessId: string;
  /** Generated (`VA-` + 16 characters), unique per business (and, in practice, system-wide). */
  reference: string;
  /** The caller's reference; unique per business. Generated (`DVA-…`) for customer accounts. */
  sourceReference: string;
  /** 10 digits, NUBAN-shaped, unique system-wide. */
  accountNumber: string;
  accountName: string;
  accountType: AccountType;
  /** Fixed expected amount in kobo, or null (any amount). */
  amountKobo: number | null;
  currency: typeof CURRENCY;
  /** The customer of a dedicated account; absent on other accounts (sparse unique index). */
  customerId?: string;
  /** The checkout session a single_use account was opened for (pay by transfer); absent otherwise. */
  checkoutSessionId?: string;
  enabled: boolean;
  /** A single_use account that completed its payment. */
  consumed: boolean;
  consumedBySessionId: string | null;
  consumedAt: number | null;
  /** single_use: the requested expiry; multi_use: null. */
  expiresAtMs: number | null;
  /** See the module comment: expired ⇔ openUntil ≤ now. */
  openUntil: number;
  createdAt: number;
  updatedAt: number;
}

/** A virtual account as the API shows it (spec §2.5, plus the customer of a dedicated account). */
export interface VirtualAccountView {
  id: string;
  businessId: string;
  businessState: "TEST" | "LIVE";
  /** value and formatted are null when the account accepts any amount. */
  amount: { value: number | null; currency: string; formatted: string | null };
  reference: string;
  walletId: string;
  sourceReference: string;
  accountNumber: string;
  accountName: string;
  providerName: string;
  accountType: AccountType;
  status: AccountStatus;
  currency: string;
  expiresAt: string | null;
  createdAt: string;
  customerId: string | null;
}

export function openVirtualAccounts(store: DocumentStore): Collection<VirtualAccount> {
  return store.collection<VirtualAccount>(VIRTUAL_ACCOUNTS_COLLECTION, {
    indexes: [
      { fields: ["accountNumber"], unique: true },
      { fields: ["businessId", "reference"], unique: true },
      { fields: ["businessId", "sourceReference"], unique: true },
      { fields: ["customerId"], unique: true, sparse: true },
      // Lists: newest first within a business; the status fields follow the equality-sort-range rule.
      // `_id` (the pages' tie-break) and `openUntil` (the expired filter) in the index let a page
      // skip and filter on index entries alone, without reading the accounts it passes.
      { fields: ["businessId", "createdAt", "_id", "openUntil"] },
      { fields: ["businessId", "enabled", "createdAt", "openUntil"] },
      { fields: ["businessId", "accountType", "createdAt"] },
      // The totals: open single_use accounts per business and `enabled` (account-counts.ts).
      { fields: ["businessId", "accountType", "enabled", "openUntil"] },
    ],
    // The list's `search` (`$contains` on these three): answered from a trigram index where the store keeps one.
    textFields: ["reference", "accountNumber", "accountName"],
  });
}

/** The account as the API shows it, its status derived at `now`; `businessState` from the directory. */
export function virtualAccountView(a: VirtualAccount, now: number, businessState: BusinessState): VirtualAccountView {
  const ids = businessResourceIds(a.businessId);
  return {
    id: a._id,
    businessId: ids.business,
    businessState,
    amount: {
      value: a.amountKobo === null ? null : koboToNgn(a.amountKobo),
      currency: a.currency,
      formatted: a.amountKobo === null ? null : `${a.currency} ${formatNgn(a.amountKobo)}`,
    },
    reference: a.reference,
    walletId: ids.wallet,
    sourceReference: a.sourceReference,
    accountNumber: a.accountNumber,
    accountName: a.accountName,
    providerName: PROVIDER_NAME,
    accountType: a.accountType,
    status: deriveStatus(a, now),
    currency: a.currency,
    expiresAt: formatTimeOrNull(a.expiresAtMs),
    createdAt: formatTime(a.createdAt),
    customerId: a.customerId ?? null,
  };
}

// ---------------------------------------------------------------------------
// Derived status
// ---------------------------------------------------------------------------

/** The account's status at `now` (see the module comment). */
export function deriveStatus(a: Pick<VirtualAccount, "openUntil" | "enabled">, now: number): AccountStatus {
  if (a.openUntil <= now) return "expired";
  return a.enabled ? "active" : "inactive";
}

/** The store filter selecting exactly the accounts whose derived status at `now` is `status`. */
export function statusFilter(status: AccountStatus, now: number): Filter {
  switch (status) {
    case "expired":
      return { openUntil: { $lte: now } };
    case "active":
      return { enabled: true, openUntil: { $gt: now } };
    case "inactive":
      return { enabled: false, openUntil: { $gt: now } };
  }
}

/** The list query as one store filter (every condition in the store; nothing filtered afterwards). */
export function listFilter(businessId: string, q: Omit<ListVirtualAccountsInput, "sort" | "limit" | "page">, now: number): Filter {
  const filter: Filter = { businessId };
  if (q.reference !== undefined) filter.reference = q.reference;
  if (q.accountNumber !== undefined) filter.accountNumber = q.accountNumber;
  if (q.accountType !== undefined) filter.accountType = q.accountType;
  if (q.currency !== undefined) filter.currency = q.currency;
  if (q.status !== undefined) Object.assign(filter, statusFilter(q.status, now));
  if (q.search) {
    filter.$or = [
      { reference: { $contains: q.search } },
      { accountNumber: { $contains: q.search } },
      { accountName: { $contains: q.search } },
    ];
  }
  if (q.createdFrom !== undefined || q.createdTo !== undefined) {
    filter.createdAt = {
      ...(q.createdFrom !== undefined ? { $gte: q.createdFrom } : {}),
      ...(q.createdTo !== undefined ? { $lte: q.createdTo } : {}),
    };
  }
  return filter;
}

