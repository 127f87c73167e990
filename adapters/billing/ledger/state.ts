/**
 * The ledger's options and the state its operations share: the two collections, the resolved
 * limits, and per business the movements waiting for its batcher.
 */
import { DependencyUnavailableError, type Collection, type DocumentStore } from "../../ports.ts";
import { openLedgerCollections, type EntryDoc, type WalletDoc } from "./documents.ts";

/** Test-only crash points: a hook that throws simulates a process dying at that step. */
export interface LedgerHooks {
  /** After the entry document was inserted, before it is applied to the wallet. */
  afterInsert?(entryId: string): void | Promise<void>;
  /** After the wallet compare-and-set applied (or declined) the entry, before the entry document is finished. */
  afterApply?(entryId: string): void | Promise<void>;
  /** After the entry document was finished, before the wallet's batch record is cleared. */
  afterFinish?(entryId: string): void | Promise<void>;
}

export interface DocumentLedgerOptions {
  store: DocumentStore;
  /** Opening balance per businessId, integer kobo (missing = 0). Used when a wallet is first created. */
  openingBalances: Record<string, number>;
  /** Epoch milliseconds. Default Date.now. */
  clock?: () => number;
  /** Most movements one wallet write applies (1–1000). Default 256. */
  maxBatch?: number;
  /** Bound on lost wallet races (other processes' batches) of one batch. Default 1000. */
  maxSteps?: number;
  hooks?: LedgerHooks;
}

/** How an entry's decision ended for one caller. */
export interface LedgerOutcome {
  entry: EntryDoc;
  appliedByMe: boolean;
  /** The wallet balance right after this entry was applied (only when appliedByMe). */
  balanceKobo: number | null;
}

/** One entry waiting for its wallet's batcher, with every caller waiting for it. */
export interface LedgerItem {
  id: string;
  waiters: Array<{ resolve(o: LedgerOutcome): void; reject(e: unknown): void }>;
  settled: boolean;
  /**
   * Answered once the wallet write that decided it committed, before its entry is finished (every
   * waiter asked so: a new debit). The others are answered when the entry is finished.
   */
  atDecision: boolean;
}

/** One business's waiting entries, and whether its batcher is running. */
export interface LedgerQueue {
  items: Map<string, LedgerItem>;
  running: boolean;
  /** Settles when the running batcher stops (its last entries finished). */
  drain?: Promise<void>;
  /**
   * The id of this batcher's last batch whose entries were all finished and whose record was left
   * on the wallet for the next batch of the same run to replace (null: none).
   */
  finished?: string | null;
}

export interface LedgerState {
  readonly clock: () => number;
  readonly openingBalances: Record<string, number>;
  readonly maxBatch: number;
  readonly maxSteps: number;
  readonly hooks: LedgerHooks;
  readonly wallets: Collection<WalletDoc>;
  readonly entries: Collection<EntryDoc>;
  /** Per business: the movements waiting for its batcher, and whether a batch is running. */
  readonly queues: Map<string, LedgerQueue>;
}

export function createLedgerState(options: DocumentLedgerOptions): LedgerState {
  return {
    clock: options.clock ?? Date.now,
    openingBalances: options.openingBalances,
    maxBatch: Math.max(1, Math.min(1000, options.maxBatch ?? 256)),
    maxSteps: options.maxSteps ?? 1000,
    hooks: options.hooks ?? {},
    ...openLedgerCollections(options.store),
    queues: new Map(),
  };
}

/** Now, as an ISO timestamp. */
export function isoNow(s: LedgerState): string {
  return new Date(s.clock()).toISOString();
}

/** The configured opening balance of a business (0 when none). */
export function openingBalance(s: LedgerState, businessId: string): number {
  const v = s.openingBalances[businessId] ?? 0;
  if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`opening balance of ${businessId} must be a non-negative integer of kobo`);
  return v;
}

/** The entry as stored now (it exists: entries are never deleted). */
export async function reread(s: LedgerState, id: string): Promise<EntryDoc> {
  const e = await s.entries.get(id);
  if (!e) throw new Error(`billing entry ${id} vanished`);
  return e;
}

/** The business's wallet, created with its opening balance on first use. */
export async function loadWallet(s: LedgerState, businessId: string): Promise<WalletDoc> {
  const existing = await s.wallets.get(businessId);
  if (existing) return existing;
  const created = await s.wallets.findOneAndUpdate(
    { _id: businessId },
    { $setOnInsert: { balanceKobo: openingBalance(s, businessId), openingKobo: openingBalance(s, businessId), version: 0, batch: null, createdAt: isoNow(s) } },
    { upsert: true },
  );
  if (!created) throw new DependencyUnavailableError("billing", "wallet could not be created", "server_error");
  return created;
}
