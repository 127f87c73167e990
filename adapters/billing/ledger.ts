/**
 * The built-in wallet ledger (ARCHITECTURE.md §5 "billing", §7 invariant 1) on the DocumentStore.
 * Correct across processes with single-document atomic operations only (no transactions), and the
 * cost of one movement does not depend on the wallet's history (docs/billing.md, docs/decisions.md).
 *
 * Documents
 * - `billing_entries`: one per money movement, `_id` a canonical key: `debit:<h>` / `reversal:<h>`
 *   with h = sha256(JSON [businessId, subBusinessId, domain, irn, attemptNumber]), and
 *   `credit:<sha256(JSON [businessId, reference])>`. The unique `_id` makes a second debit (or
 *   reversal, or credit) of the same identity impossible to create. Entries are the journal.
 * - `billing_wallets`: one per business, a bounded summary `{ _id: businessId, balanceKobo,
 *   openingKobo, version, batch, createdAt, suspended? }` (`suspended`: an operator's billing rule,
 *   new debits refused as "rule_rejected"), created on first use with the configured opening
 *   balance (upsert + $setOnInsert). `batch` is null or the record of the last group of movements
 *   applied, `{ id, moves: [{ e: entryId, t: round, o: "applied" | "declined" }] }`, at most
 *   `maxBatch` moves: the wallet never grows with the history.
 *
 * Group commit. An entry is inserted `pending` (round 1). Movements waiting for one wallet in this
 * process are applied together by the wallet's batcher, one batch at a time (TigerBeetle's shape:
 * one wallet write per batch, not per movement):
 *   1. read the wallet (its `version`); if it holds a batch record, finish that batch first (below);
 *   2. read the batch's entries (after the wallet) and decide each still-pending one in order against
 *      the running balance: a debit the balance covers is `applied`, one it does not is `declined`
 *      (decided, not charged); credits and reversals are `applied`;
 *   3. ONE compare-and-set on the wallet `{ _id, version }` (the port's `updateOne`) sets the new
 *      balance, `version + 1` and the batch record. A lost race (another process moved the wallet)
 *      re-reads and decides again;
 *   4. each entry moves `pending → debited | declined` (credits and reversals `→ applied`) by a
 *      compare-and-set on its own document `{ _id, state: "pending", round }`. A debit the batch
 *      applied is answered as these finishes are asked for: the money moved with step 3's commit,
 *      and the record holds the outcome until the entry says it (declines and confirm, reverse and
 *      credit callers wait for the finish);
 *   5. once every entry of the batch was finished, the batch record is cleared (`{ _id, "batch.id" }`
 *      → null; best effort), or, when more movements already wait for this batcher, left for the
 *      next batch's compare-and-set (step 3) to replace; if any finish failed, the record stays for
 *      the next writer or reader.
 * Exactly once: a batch record leaves the wallet only after its entries were finished, and every
 * decision reads the entries after the wallet version it writes against, so an entry seen pending
 * then was not applied in any batch before that version, and any batch applied since changed the
 * version (the compare-and-set fails). Concurrent debits of one business therefore never retry
 * against each other inside a process; across processes only whole batches race.
 *
 * Recovery. A crash anywhere leaves entries `pending`; a crash after step 3 also leaves the batch
 * record. Whoever next writes the wallet (any batch, any process) or reads it (`wallet()`) finishes
 * the recorded entries with the recorded outcome (no second charge); an entry pending without a
 * record was never applied and is applied by the next call for its identity (a replayed debit,
 * reverse, confirm, a replayed credit). Wallets written by the earlier mark-per-entry version
 * (`marks`, `horizon`) are finished the same way and lose those fields at their next batch.
 *
 * Debit states: pending → debited | declined; declined → pending (next round) when the same identity
 * and fingerprint are retried (the decline was a business outcome — a retry after a top-up may
 * proceed; each round is decided once); debited → confirmed (regulator signed) | reversing →
 * reversed (a `reversal:` entry, applied the same way, credits the amount back). `reversing` is a
 * commitment: any later reverse/debit replay finishes it. Reversing a confirmed debit is refused.
 *
 * Invariant (tested after every scenario): balanceKobo = openingKobo + Σ credits(applied)
 * − Σ debits(debited | confirmed | reversing | reversed) + Σ reversals(applied), never negative.
 *
 * Store outages surface as DependencyUnavailableError("billing", …); an entry left pending by one is
 * finished by the next call for the same identity.
 *
 * The parts, under ./ledger/: documents (collections, document types, entry ids), state (options,
 * shared state, wallet loading), batcher (group commit), debit, reverse, confirm, credit, wallet
 * (the statement), held (debits still held, for recovery), checks (arguments, store outage → billing outage).
 */
import type { BillingLedger } from "../ports.ts";
import { batchersSettled } from "./ledger/batcher.ts";
import { confirmDebit } from "./ledger/confirm.ts";
import { creditWallet } from "./ledger/credit.ts";
import { debitWallet } from "./ledger/debit.ts";
import { heldDebits } from "./ledger/held.ts";
import { reverseDebit } from "./ledger/reverse.ts";
import { createLedgerState, type DocumentLedgerOptions } from "./ledger/state.ts";
import { suspendWallet, walletStatement } from "./ledger/wallet.ts";

export {
  ENTRIES_COLLECTION,
  WALLETS_COLLECTION,
  billingEntryId,
  creditEntryId,
  openLedgerCollections,
  type BatchMove,
  type EntryDoc,
  type EntryState,
  type WalletBatch,
  type WalletDoc,
} from "./ledger/documents.ts";
export type { DocumentLedgerOptions, LedgerHooks } from "./ledger/state.ts";

/** The ledger, and when its batchers are done (for tests that read the documents themselves). */
export interface DocumentLedger extends BillingLedger {
  /** Settles once no batcher runs: every answered movement's entry finished (or left to its wallet's record). */
  settled(): Promise<void>;
}

export function createDocumentLedger(options: DocumentLedgerOptions): DocumentLedger {
  const s = createLedgerState(options);
  return {
    settled: () => batchersSettled(s),
    debit: (businessId, identity, amountKobo, fingerprint) => debitWallet(s, businessId, identity, amountKobo, fingerprint),
    reverse: (businessId, identity, reason) => reverseDebit(s, businessId, identity, reason),
    confirm: (businessId, identity) => confirmDebit(s, businessId, identity),
    credit: (businessId, amountKobo, reference) => creditWallet(s, businessId, amountKobo, reference),
    wallet: (businessId, limit) => walletStatement(s, businessId, limit),
    setSuspended: (businessId, suspended) => suspendWallet(s, businessId, suspended),
    heldDebits: (before, limit) => heldDebits(s, before, limit),
  };
}
