/**
 * The totals of the virtual-account list (`meta.total`), kept apart from the pages: counting every
 * matching account per request costs time in proportion to the business's accounts.
 *
 * One counter document per business (`_id` = businessId) holds how many accounts it has per
 * (accountType, enabled). The service moves it after each write that changes those (creation,
 * toggle-status). The derived status of a list filter then follows without walking the accounts:
 * - a multi_use account never expires (`openUntil` = NEVER), so its status is its `enabled`;
 * - a single_use account is open only until its `expiresAt`, at most 24 hours after its creation:
 *   the open ones are counted through the index (businessId, accountType, enabled, openUntil),
 *   a range as large as the last day's single_use accounts, and expired = all − open.
 * Other filters (reference, account number, currency, search, creation range) are counted by the
 * store through the list's indexes, as before.
 *
 * A business whose accounts were written before the counter existed gets it at its first list: the
 * accounts are counted once and the counter inserted (docs/decisions.md "Virtual-account totals"
 * says what a crash between an account's write and its counter's can leave, and how to recount).
 */
import type { Collection, Doc, DocumentStore } from "../../../adapters/ports.ts";
import { CURRENCY } from "../shared/money.ts";
import { NEVER, type VirtualAccount } from "./account.ts";
import type { ListVirtualAccountsInput } from "./query-schemas.ts";
import type { AccountStatus, AccountType } from "./schemas.ts";

export const VIRTUAL_ACCOUNT_COUNTS_COLLECTION = "collections_virtual_account_counts";

/** Accounts of one business per accountType and `enabled`. */
export interface VirtualAccountCounts extends Doc {
  multiUseEnabled: number;
  multiUseDisabled: number;
  singleUseEnabled: number;
  singleUseDisabled: number;
}

type _Bucket = "multiUseEnabled" | "multiUseDisabled" | "singleUseEnabled" | "singleUseDisabled";
const _BUCKETS: readonly _Bucket[] = ["multiUseEnabled", "multiUseDisabled", "singleUseEnabled", "singleUseDisabled"];

export interface VirtualAccountCounter {
  /** Counts a new account (after its insert succeeded). */
  added(a: Pick<VirtualAccount, "businessId" | "accountType" | "enabled">): Promise<void>;
  /** Moves an account between enabled and disabled (after the toggle changed it). */
  toggled(a: Pick<VirtualAccount, "businessId" | "accountType">, enabled: boolean): Promise<void>;
  /**
   * `meta.total` of a list query at `now`, from the counter when the filter allows (no reference,
   * account number, search or creation range); null when the store must count the filter itself.
   */
  total(businessId: string, q: Omit<ListVirtualAccountsInput, "sort" | "limit" | "page">, now: number): Promise<number | null>;
  /** Counts the business's accounts again and overwrites its counter (an operator's repair). */
  recount(businessId: string): Promise<VirtualAccountCounts>;
}

export function createVirtualAccountCounter(store: DocumentStore, accounts: Collection<VirtualAccount>): VirtualAccountCounter {
  const counts = store.collection<VirtualAccountCounts>(VIRTUAL_ACCOUNT_COUNTS_COLLECTION);
  return {
    async added(a) {
      await counts.updateOne({ _id: a.businessId }, { $inc: { [_bucket(a.accountType, a.enabled)]: 1 } });
    },
    async toggled(a, enabled) {
      await counts.updateOne({ _id: a.businessId }, { $inc: { [_bucket(a.accountType, enabled)]: 1, [_bucket(a.accountType, !enabled)]: -1 } });
    },
    async total(businessId, q, now) {
      if (q.reference !== undefined || q.accountNumber !== undefined || q.search || q.createdFrom !== undefined || q.createdTo !== undefined) return null;
      if (q.currency !== undefined && q.currency !== CURRENCY) return 0;
      const c = (await counts.get(businessId)) ?? (await _init(counts, accounts, businessId));
      const types: AccountType[] = q.accountType ? [q.accountType] : ["multi_use", "single_use"];
      let total = 0;
      for (const type of types) total += await _typeTotal(accounts, c, businessId, type, q.status, now);
      return total;
    },
    async recount(businessId) {
      const fresh = await _countAll(accounts, businessId);
      await counts.findOneAndUpdate({ _id: businessId }, { $set: fresh }, { upsert: true });
      return { _id: businessId, ...fresh };
    },
  };
}

// --- Internal helpers ---

function _bucket(type: AccountType, enabled: boolean): _Bucket {
  return type === "multi_use" ? (enabled ? "multiUseEnabled" : "multiUseDisabled") : enabled ? "singleUseEnabled" : "singleUseDisabled";
}

/** Accounts of one type whose derived status at `now` is `status` (all of that type when undefined). */
async function _typeTotal(
  accounts: Collection<VirtualAccount>,
  c: VirtualAccountCounts,
  businessId: string,
  type: AccountType,
  status: AccountStatus | undefined,
  now: number,
): Promise<number> {
  const on = c[_bucket(type, true)] ?? 0;
  const off = c[_bucket(type, false)] ?? 0;
  if (status === undefined) return on + off;
  if (type === "multi_use") return status === "expired" ? 0 : status === "active" ? on : off;
  const open = (enabled: boolean) => accounts.count({ businessId, accountType: "single_use", enabled, openUntil: { $gt: now, $lt: NEVER } });
  if (status === "active") return open(true);
  if (status === "inactive") return open(false);
  const [openOn, openOff] = await Promise.all([open(true), open(false)]);
  return on + off - openOn - openOff;
}

/** The first list of a business without a counter: count its accounts once and keep the result. */
async function _init(counts: Collection<VirtualAccountCounts>, accounts: Collection<VirtualAccount>, businessId: string): Promise<VirtualAccountCounts> {
  const fresh = await _countAll(accounts, businessId);
  // Another process may have inserted it meanwhile: the stored one wins.
  const kept = await counts.findOneAndUpdate({ _id: businessId }, { $setOnInsert: fresh }, { upsert: true });
  return kept ?? { _id: businessId, ...fresh };
}

async function _countAll(accounts: Collection<VirtualAccount>, businessId: string): Promise<Record<_Bucket, number>> {
  const values = await Promise.all(
    _BUCKETS.map((b) => accounts.count({ businessId, accountType: b.startsWith("multi") ? "multi_use" : "single_use", enabled: b.endsWith("Enabled") })),
  );
  return { multiUseEnabled: values[0]!, multiUseDisabled: values[1]!, singleUseEnabled: values[2]!, singleUseDisabled: values[3]! };
}
