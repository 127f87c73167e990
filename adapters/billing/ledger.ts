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
 *   openingKobo, version, batch, createdAt }`, created on first use with the configured opening
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
 *      compare-and-set on its own document `{ _id, state: "pending", round }`;
 *   5. once every entry of the batch was finished, the batch record is cleared (`{ _id, "batch.id" }`
 *      → null; best effort); if any finish failed, the record stays for the next writer or reader.
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
 */
import { hash, randomUUID } from "node:crypto";
import {
  BillingError,
  DependencyUnavailableError,
  isDependencyUnavailableError,
  isDuplicateKeyError,
  type BillingEntry,
  type BillingIdentity,
  type BillingLedger,
  type Collection,
  type DebitResult,
  type Doc,
  type DocumentStore,
} from "../ports.ts";

export const WALLETS_COLLECTION = "billing_wallets";
export const ENTRIES_COLLECTION = "billing_entries";

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

export type EntryState = "pending" | "declined" | "debited" | "confirmed" | "reversing" | "reversed" | "applied";

export interface EntryDoc extends Doc {
  businessId: string;
  type: "debit" | "reversal" | "credit";
  amountKobo: number;
  state: EntryState;
  /** Decision round (a declined debit retried starts a new one). */
  round: number;
  /** True once the entry's effect on the balance is final and recorded here (listing filter). */
  applied: boolean;
  fingerprint?: string;
  billingIdentity?: BillingIdentity;
  reference?: string;
  reason?: string;
  createdAt: string;
  updatedAt: string;
}

/** One decided movement of a batch: entry id, round, outcome. */
export interface BatchMove {
  e: string;
  t: number;
  o: "applied" | "declined";
}

export interface WalletBatch {
  id: string;
  moves: BatchMove[];
}

export interface WalletDoc extends Doc {
  balanceKobo: number;
  openingKobo: number;
  version: number;
  /** The last batch applied, until its entries are finished. */
  batch: WalletBatch | null;
  createdAt: string;
  /** Written by the earlier mark-per-entry ledger; finished and removed by the next batch. */
  marks?: Record<string, BatchMove>;
  horizon?: number;
}

/** The canonical entry id of a billing identity (`debit:` / `reversal:` + sha256). */
export function billingEntryId(type: "debit" | "reversal", businessId: string, identity: BillingIdentity): string {
  return `${type}:${_sha256(JSON.stringify([businessId, identity.subBusinessId, identity.domain, identity.irn, identity.attemptNumber]))}`;
}

/** The entry id of an operator top-up. */
export function creditEntryId(businessId: string, reference: string): string {
  return `credit:${_sha256(JSON.stringify([businessId, reference]))}`;
}

/** Opens (or returns) the ledger's two collections on `store` (tests read them to check invariants). */
export function openLedgerCollections(store: DocumentStore): { wallets: Collection<WalletDoc>; entries: Collection<EntryDoc> } {
  return {
    wallets: store.collection<WalletDoc>(WALLETS_COLLECTION),
    entries: store.collection<EntryDoc>(ENTRIES_COLLECTION, {
      indexes: [{ fields: ["businessId", "createdAt"] }, { fields: ["businessId", "state"] }],
    }),
  };
}

export function createDocumentLedger(options: DocumentLedgerOptions): BillingLedger {
  const clock = options.clock ?? Date.now;
  const maxBatch = Math.max(1, Math.min(1000, options.maxBatch ?? 256));
  const maxSteps = options.maxSteps ?? 1000;
  const hooks = options.hooks ?? {};
  const { wallets, entries } = openLedgerCollections(options.store);
  const iso = (): string => new Date(clock()).toISOString();
  /** Per business: the movements waiting for its batcher, and whether a batch is running. */
  const queues = new Map<string, _Queue>();

  const opening = (businessId: string): number => {
    const v = options.openingBalances[businessId] ?? 0;
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`opening balance of ${businessId} must be a non-negative integer of kobo`);
    return v;
  };

  const loadWallet = async (businessId: string): Promise<WalletDoc> => {
    const existing = await wallets.get(businessId);
    if (existing) return existing;
    const created = await wallets.findOneAndUpdate(
      { _id: businessId },
      { $setOnInsert: { balanceKobo: opening(businessId), openingKobo: opening(businessId), version: 0, batch: null, createdAt: iso() } },
      { upsert: true },
    );
    if (!created) throw new DependencyUnavailableError("billing", "wallet could not be created", "server_error");
    return created;
  };

  const reread = async (id: string): Promise<EntryDoc> => {
    const e = await entries.get(id);
    if (!e) throw new Error(`billing entry ${id} vanished`);
    return e;
  };

  /** Moves an entry out of `pending` with a decided outcome; false when another caller already did. */
  const finish = (move: BatchMove): Promise<boolean> => {
    const state: EntryState = move.o === "declined" ? "declined" : move.e.startsWith("debit:") ? "debited" : "applied";
    return entries.updateOne({ _id: move.e, state: "pending", round: move.t }, { $set: { state, applied: move.o === "applied", updatedAt: iso() } });
  };

  /** Finishes the entries a wallet records as decided (a batch whose writer stopped or is still finishing). */
  const finishRecorded = async (wallet: WalletDoc): Promise<void> => {
    const moves = [...(wallet.batch?.moves ?? []), ...Object.values(wallet.marks ?? {})];
    await Promise.all(moves.map(finish));
    if (wallet.batch) await wallets.updateOne({ _id: wallet._id, "batch.id": wallet.batch.id }, { $set: { batch: null } });
  };

  /**
   * One batch of `items` against the wallet of `businessId` (steps 1–5 of the header). Resolves each
   * item's waiters with the entry's outcome; an item already decided elsewhere resolves as it is.
   */
  const applyBatch = async (businessId: string, items: _Item[]): Promise<void> => {
    for (let step = 0; step < maxSteps; step++) {
      const open = items.filter((i) => !i.settled);
      if (open.length === 0) return;
      const wallet = await loadWallet(businessId);
      if (wallet.batch || wallet.marks) await finishRecorded(wallet);
      const page = await entries.find({ _id: { $in: open.map((i) => i.id) } }, { limit: open.length });
      const current = new Map(page.items.map((e) => [e._id, e]));
      let balance = wallet.balanceKobo;
      const moves: Array<{ move: BatchMove; item: _Item; entry: EntryDoc; balanceKobo: number }> = [];
      for (const item of open) {
        const entry = current.get(item.id);
        if (!entry) {
          _settle(item, null, new Error(`billing entry ${item.id} vanished`));
          continue;
        }
        if (entry.state !== "pending") {
          _settle(item, { entry, appliedByMe: false, balanceKobo: null });
          continue;
        }
        let o: BatchMove["o"] = "applied";
        if (entry.type !== "debit") balance += entry.amountKobo;
        else if (balance >= entry.amountKobo) balance -= entry.amountKobo;
        else o = "declined";
        moves.push({ move: { e: entry._id, t: entry.round, o }, item, entry, balanceKobo: balance });
      }
      if (moves.length === 0) return;
      const batch: WalletBatch = { id: randomUUID(), moves: moves.map((m) => m.move) };
      const applied = await wallets.updateOne(
        { _id: businessId, version: wallet.version },
        {
          $set: { balanceKobo: balance, version: wallet.version + 1, batch },
          ...(wallet.marks || wallet.horizon !== undefined ? { $unset: ["marks", "horizon"] } : {}),
        },
      );
      if (!applied) continue; // another process moved the wallet: read it again and decide again
      for (const m of moves) await hooks.afterApply?.(m.move.e);
      const finished = await Promise.allSettled(moves.map((m) => finish(m.move)));
      for (const m of moves) await hooks.afterFinish?.(m.move.e);
      // The record leaves the wallet only once every entry it decided is finished: an entry whose
      // finish failed (refused, or never reached the store) stays pending, and without the record
      // the next batch would decide it again and charge it twice. Left in place, the next batch
      // or wallet() finishes it with the recorded outcome.
      if (finished.every((r) => r.status === "fulfilled")) {
        await wallets.updateOne({ _id: businessId, "batch.id": batch.id }, { $set: { batch: null } }).catch(() => {
          // Housekeeping: the next batch or wallet() finishes (no-op) and replaces the record.
        });
      }
      moves.forEach((m, i) => {
        const r = finished[i]!;
        if (r.status === "rejected") return _settle(m.item, null, r.reason);
        const state: EntryState = m.move.o === "declined" ? "declined" : m.entry.type === "debit" ? "debited" : "applied";
        _settle(m.item, { entry: { ...m.entry, state, applied: m.move.o === "applied" }, appliedByMe: true, balanceKobo: m.balanceKobo });
      });
      return;
    }
    throw new DependencyUnavailableError("billing", "wallet contention: the batch could not be applied", "timeout");
  };

  /** Runs the batches of one business until its queue is empty. */
  const drain = async (businessId: string, queue: _Queue): Promise<void> => {
    queue.running = true;
    try {
      while (queue.items.size > 0) {
        const items: _Item[] = [];
        for (const item of queue.items.values()) {
          items.push(item);
          queue.items.delete(item.id);
          if (items.length >= maxBatch) break;
        }
        try {
          await applyBatch(businessId, items);
        } catch (e) {
          for (const item of items) _settle(item, null, e);
        }
      }
    } finally {
      queue.running = false;
      if (queue.items.size === 0) queues.delete(businessId);
    }
  };

  /**
   * Takes a pending entry to a decided state through its wallet's batcher. `appliedByMe` is true
   * only for the one caller whose batch moved the money (a second caller for the same entry in this
   * process, or any caller after another process decided it, gets false).
   */
  const apply = (entry: EntryDoc): Promise<_Outcome> =>
    new Promise((resolve, reject) => {
      let queue = queues.get(entry.businessId);
      if (!queue) {
        queue = { items: new Map(), running: false };
        queues.set(entry.businessId, queue);
      }
      const item = queue.items.get(entry._id);
      if (item) item.waiters.push({ resolve, reject });
      else queue.items.set(entry._id, { id: entry._id, waiters: [{ resolve, reject }], settled: false });
      if (!queue.running) void drain(entry.businessId, queue);
    });

  /** Decides `entry` if pending; otherwise it is already decided. */
  const drive = (entry: EntryDoc): Promise<_Outcome> =>
    entry.state === "pending" ? apply(entry) : Promise.resolve({ entry, appliedByMe: false, balanceKobo: null });

  /** Finishes a committed reversal of a `reversing` debit; returns the reversal entry id. */
  const finishReversal = async (debit: EntryDoc): Promise<string> => {
    const rid = billingEntryId("reversal", debit.businessId, debit.billingIdentity!);
    const now = new Date(clock()).toISOString();
    let reversal: EntryDoc;
    try {
      reversal = await entries.insert({
        _id: rid,
        businessId: debit.businessId,
        type: "reversal",
        amountKobo: debit.amountKobo,
        state: "pending",
        round: 1,
        applied: false,
        billingIdentity: debit.billingIdentity,
        reason: debit.reason ?? "reversal",
        createdAt: now,
        updatedAt: now,
      });
      await hooks.afterInsert?.(rid);
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
      reversal = await reread(rid);
    }
    const { entry: done } = await drive(reversal);
    if (done.state !== "applied") throw new Error(`reversal ${rid} ended in state ${done.state}`);
    await entries.updateOne({ _id: debit._id, state: "reversing" }, { $set: { state: "reversed", updatedAt: iso() } });
    return rid;
  };

  const ledger: BillingLedger = {
    async debit(businessId, identity, amountKobo, fingerprint): Promise<DebitResult> {
      _checkBusiness(businessId);
      _checkIdentity(identity);
      _checkAmount(amountKobo);
      if (typeof fingerprint !== "string" || fingerprint === "") throw new TypeError("fingerprint must be a non-empty string");
      return _guard(async () => {
        const id = billingEntryId("debit", businessId, identity);
        const now = new Date(clock()).toISOString();
        let entry: EntryDoc;
        try {
          entry = await entries.insert({
            _id: id,
            businessId,
            type: "debit",
            amountKobo,
            state: "pending",
            round: 1,
            applied: false,
            fingerprint,
            billingIdentity: _identity(identity),
            createdAt: now,
            updatedAt: now,
          });
          await hooks.afterInsert?.(id);
        } catch (e) {
          if (!isDuplicateKeyError(e)) throw e;
          entry = await reread(id);
          if (entry.fingerprint !== fingerprint) {
            throw new BillingError("attempt_conflict", "the billing identity was used before with other content");
          }
          if (entry.state === "declined") {
            // A retry of a declined attempt: decide it again in a new round (e.g. after a top-up).
            const reopened = await entries.findOneAndUpdate(
              { _id: id, state: "declined", round: entry.round },
              { $set: { state: "pending", round: entry.round + 1, updatedAt: iso() } },
            );
            entry = reopened ?? (await reread(id));
          }
        }
        let { entry: done, appliedByMe, balanceKobo } = await drive(entry);
        if (done.state === "reversing") {
          await finishReversal(done);
          done = await reread(id);
        }
        switch (done.state) {
          case "declined":
            throw new BillingError("wallet_declined", "the wallet balance does not cover the fee");
          case "debited":
          case "confirmed":
          case "reversed":
            if (appliedByMe) return { kind: "debited", entryId: id, balanceKobo: balanceKobo! };
            return { kind: "replay", entryId: id, state: done.state };
          default:
            throw new Error(`debit ${id} in unexpected state ${done.state}`);
        }
      });
    },

    async reverse(businessId, identity, reason) {
      _checkBusiness(businessId);
      _checkIdentity(identity);
      return _guard(async () => {
        const id = billingEntryId("debit", businessId, identity);
        let entry = await entries.get(id);
        if (!entry) throw new Error("no debit exists for this billing identity");
        for (let step = 0; step < maxSteps; step++) {
          switch (entry.state) {
            case "pending":
              entry = (await apply(entry)).entry;
              continue;
            case "declined":
              throw new Error("the billing identity was declined: nothing to reverse");
            case "confirmed":
              throw new Error("a confirmed debit cannot be reversed");
            case "debited": {
              const next = await entries.findOneAndUpdate(
                { _id: id, state: "debited" },
                { $set: { state: "reversing", reason: String(reason).slice(0, 256), updatedAt: iso() } },
              );
              entry = next ?? (await reread(id));
              continue;
            }
            case "reversing":
              return { entryId: await finishReversal(entry) };
            case "reversed":
              return { entryId: billingEntryId("reversal", businessId, identity) };
            default:
              throw new Error(`debit ${id} in unexpected state ${entry.state}`);
          }
        }
        throw new DependencyUnavailableError("billing", "reversal contention", "timeout");
      });
    },

    async confirm(businessId, identity) {
      _checkBusiness(businessId);
      _checkIdentity(identity);
      return _guard(async () => {
        const id = billingEntryId("debit", businessId, identity);
        const toConfirmed = () => entries.updateOne({ _id: id, state: "debited" }, { $set: { state: "confirmed", updatedAt: iso() } });
        if (await toConfirmed()) return; // the usual case: one write
        let entry = await entries.get(id);
        if (!entry) throw new Error("no debit exists for this billing identity");
        for (let step = 0; step < maxSteps; step++) {
          switch (entry.state) {
            case "pending":
              entry = (await apply(entry)).entry;
              continue;
            case "debited":
              if (await toConfirmed()) return;
              entry = await reread(id);
              continue;
            case "confirmed":
              return;
            default:
              throw new Error(`a debit in state ${entry.state} cannot be confirmed`);
          }
        }
        throw new DependencyUnavailableError("billing", "confirmation contention", "timeout");
      });
    },

    async credit(businessId, amountKobo, reference) {
      _checkBusiness(businessId);
      _checkAmount(amountKobo);
      if (typeof reference !== "string" || reference.length < 1 || reference.length > 128) {
        throw new TypeError("reference must be 1 to 128 characters");
      }
      return _guard(async () => {
        const id = creditEntryId(businessId, reference);
        const now = new Date(clock()).toISOString();
        let created = true;
        let entry: EntryDoc;
        try {
          entry = await entries.insert({
            _id: id,
            businessId,
            type: "credit",
            amountKobo,
            state: "pending",
            round: 1,
            applied: false,
            reference,
            createdAt: now,
            updatedAt: now,
          });
          await hooks.afterInsert?.(id);
        } catch (e) {
          if (!isDuplicateKeyError(e)) throw e;
          created = false;
          entry = await reread(id);
          if (entry.amountKobo !== amountKobo) {
            throw new BillingError("attempt_conflict", "the top-up reference was used before with another amount");
          }
        }
        await drive(entry);
        return { entryId: id, created };
      });
    },

    async wallet(businessId, limit = 100) {
      _checkBusiness(businessId);
      return _guard(async () => {
        const wallet = await wallets.get(businessId);
        // Read-side repair: finish the entries whose decision the wallet already records.
        if (wallet && (wallet.batch || wallet.marks)) await finishRecorded(wallet);
        const page = await entries.find(
          { businessId, applied: true },
          { sort: [{ field: "createdAt", direction: -1 }], limit: Number.isFinite(limit) ? Math.max(1, Math.min(1000, Math.trunc(limit))) : 100 },
        );
        const fresh = wallet ? await wallets.get(businessId) : null;
        return {
          businessId,
          currency: "NGN" as const,
          balanceKobo: fresh ? fresh.balanceKobo : opening(businessId),
          entries: page.items.map(_toEntry),
        };
      });
    },
  };
  return ledger;
}

// --- Internal helpers ---

interface _Outcome {
  entry: EntryDoc;
  appliedByMe: boolean;
  /** The wallet balance right after this entry was applied (only when appliedByMe). */
  balanceKobo: number | null;
}

interface _Item {
  id: string;
  waiters: Array<{ resolve(o: _Outcome): void; reject(e: unknown): void }>;
  settled: boolean;
}

interface _Queue {
  items: Map<string, _Item>;
  running: boolean;
}

/** Resolves (the first waiter with `outcome`, the others as a replay) or rejects an item's waiters, once. */
function _settle(item: _Item, outcome: _Outcome | null, error?: unknown): void {
  if (item.settled) return;
  item.settled = true;
  item.waiters.forEach((w, i) => {
    if (!outcome) w.reject(error);
    else w.resolve(i === 0 ? outcome : { entry: outcome.entry, appliedByMe: false, balanceKobo: null });
  });
}

function _sha256(text: string): string {
  return hash("sha256", text, "hex");
}

function _identity(i: BillingIdentity): BillingIdentity {
  return { subBusinessId: i.subBusinessId, domain: i.domain, irn: i.irn, attemptNumber: i.attemptNumber };
}

function _toEntry(e: EntryDoc): BillingEntry {
  const out: BillingEntry = { id: e._id, type: e.type, amountKobo: e.amountKobo, createdAt: e.createdAt };
  if (e.billingIdentity) out.billingIdentity = e.billingIdentity;
  if (e.reference !== undefined) out.reference = e.reference;
  return out;
}

function _checkBusiness(businessId: string): void {
  if (typeof businessId !== "string" || businessId === "" || businessId.length > 128) throw new TypeError("businessId must be 1 to 128 characters");
}

function _checkIdentity(i: BillingIdentity): void {
  if (typeof i !== "object" || i === null) throw new TypeError("billing identity required");
  for (const k of ["subBusinessId", "domain", "irn"] as const) {
    if (typeof i[k] !== "string" || i[k] === "") throw new TypeError(`billing identity ${k} must be a non-empty string`);
  }
  if (!Number.isSafeInteger(i.attemptNumber) || i.attemptNumber < 1) throw new TypeError("billing identity attemptNumber must be a positive integer");
}

function _checkAmount(amountKobo: number): void {
  if (!Number.isSafeInteger(amountKobo) || amountKobo <= 0) throw new RangeError("amountKobo must be a positive integer");
}

/** Store outages become billing outages (the port's contract); everything else passes through. */
async function _guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isDependencyUnavailableError(e) && e.dependency !== "billing") {
      throw new DependencyUnavailableError("billing", `billing store unavailable (${e.dependency}): ${e.message}`, e.failureClass);
    }
    throw e;
  }
}
