/**
 * The business collection wallet: where settled collections land (payment-link checkouts and
 * virtual-account deposits). A credit is one document whose `_id` is derived from its
 * source (`credit:<sourceType>:<sourceId>`), so crediting the same source twice — a processor
 * reporting a payment twice, two workers settling the same session, a retry after a crash — stores
 * exactly one credit: the store's unique `_id` decides, in every process sharing the store.
 *
 * The balance is the sum of the credits (no separate counter that a crash between two writes
 * could leave out of step with the entries).
 */
import { isDuplicateKeyError, type Collection, type Doc, type DocumentStore } from "../../../adapters/ports.ts";
import { CURRENCY, koboToNgn } from "../shared/money.ts";
import { findPage } from "../shared/common.ts";
import { formatTime } from "../shared/time.ts";

export const WALLET_COLLECTION = "collections_wallet_entries";
const SUM_PAGE = 1000;

export interface WalletEntry extends Doc {
  businessId: string;
  type: "credit";
  amountKobo: number;
  currency: typeof CURRENCY;
  /** What produced the credit, e.g. "payment_link_checkout", "virtual_account_deposit". */
  sourceType: string;
  /** The source's own id (checkout session id, deposit id): one credit per (sourceType, sourceId). */
  sourceId: string;
  /** A reference the merchant recognises (transaction reference), when the source has one. */
  reference: string | null;
  description: string;
  /** Epoch milliseconds. */
  createdAt: number;
}

export interface CreditSource {
  sourceType: string;
  sourceId: string;
  description: string;
  reference?: string | null;
}

export interface CollectionWallet {
  /**
   * Credits `amountKobo` to the business exactly once per (sourceType, sourceId). `created` is
   * false when that source was already credited (the existing entry is returned).
   */
  credit(businessId: string, amountKobo: number, source: CreditSource): Promise<{ entry: WalletEntry; created: boolean }>;
  /** The balance in kobo. */
  balance(businessId: string): Promise<number>;
  /** Credits, newest first, page/limit pagination. */
  transactions(businessId: string, page: number, limit: number): Promise<{ items: WalletEntry[]; total: number }>;
}

export interface CollectionWalletOptions {
  store: DocumentStore;
  /** Epoch milliseconds. Default Date.now. */
  clock?: () => number;
}

export function createCollectionWallet(options: CollectionWalletOptions): CollectionWallet {
  const clock = options.clock ?? Date.now;
  const entries: Collection<WalletEntry> = options.store.collection<WalletEntry>(WALLET_COLLECTION, {
    indexes: [{ fields: ["businessId", "createdAt"] }],
  });

  return {
    async credit(businessId, amountKobo, source) {
      if (!Number.isSafeInteger(amountKobo) || amountKobo < 0) throw new RangeError("a credit is a non-negative integer of kobo");
      const id = creditId(source.sourceType, source.sourceId);
      const entry: WalletEntry = {
        _id: id,
        businessId,
        type: "credit",
        amountKobo,
        currency: CURRENCY,
        sourceType: source.sourceType,
        sourceId: source.sourceId,
        reference: source.reference ?? null,
        description: source.description,
        createdAt: clock(),
      };
      try {
        return { entry: await entries.insert(entry), created: true };
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
        const existing = await entries.get(id);
        if (!existing) throw e;
        return { entry: existing, created: false };
      }
    },

    async balance(businessId) {
      let sum = 0;
      let cursor: string | null = null;
      do {
        const page = await entries.find({ businessId }, { limit: SUM_PAGE, cursor });
        for (const e of page.items) sum += e.amountKobo;
        cursor = page.nextCursor;
      } while (cursor);
      return sum;
    },

    transactions: (businessId, page, limit) => findPage(entries, { businessId }, { field: "createdAt", direction: -1 }, page, limit),
  };
}

/** The `_id` of the one credit a source may produce. */
export function creditId(sourceType: string, sourceId: string): string {
  return `credit:${sourceType}:${sourceId}`;
}

/** A wallet entry as the API shows it. */
export interface WalletEntryView {
  id: string;
  type: WalletEntry["type"];
  amount: number;
  currency: string;
  sourceType: string;
  sourceId: string;
  reference: string | null;
  description: string;
  createdAt: string;
}

export function walletEntryView(e: WalletEntry): WalletEntryView {
  return {
    id: e._id,
    type: e.type,
    amount: koboToNgn(e.amountKobo),
    currency: e.currency,
    sourceType: e.sourceType,
    sourceId: e.sourceId,
    reference: e.reference,
    description: e.description,
    createdAt: formatTime(e.createdAt),
  };
}
