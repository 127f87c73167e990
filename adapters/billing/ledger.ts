/**
 * The built-in wallet ledger (ARCHITECTURE.md §5 "billing", §7 invariant 1) on the DocumentStore.
 * Correct across processes with single-document atomic operations only (no transactions):
 *
 * Documents
 * - `billing_wallets`: one per business `{ _id: businessId, balanceKobo, openingKobo, version,
 *   horizon, marks: { <markKey>: { e, t, at, o } } }`, created on first use with the configured
 *   opening balance (upsert + $setOnInsert).
 * - `billing_entries`: one per money movement, `_id` a canonical key: `debit:<h>` / `reversal:<h>`
 *   with h = sha256(JSON [businessId, subBusinessId, domain, irn, attemptNumber]), and
 *   `credit:<sha256(JSON [businessId, reference])>`. The unique `_id` makes a second debit (or
 *   reversal, or credit) of the same identity impossible to create.
 *
 * Two steps, one decision point. An entry is inserted `pending` (round 1), then applied to the wallet
 * by ONE compare-and-set on the wallet document that both moves the balance and writes the entry's
 * mark `marks.<entryKey>_<round>`, guarded by "that mark is absent" (and, for debits,
 * `balanceKobo >= amount`). An insufficient balance is also decided on the wallet: a CAS guarded by
 * "mark absent and balanceKobo < amount" writes a `declined` mark without moving money. So the wallet
 * document is the single source of truth for "was this entry applied": exactly one decision per
 * (entry, round) exists, whichever process or retry makes it. The entry then moves `pending →
 * debited | declined` (credits and reversals `pending → applied`) by a CAS on its own document.
 *
 * Recovery. A crash anywhere leaves an entry `pending`; whoever touches the identity next (a replay of
 * the same debit, reverse, confirm, a credit replay) drives it: mark present → finish the entry with
 * the recorded outcome (no second charge); mark absent → apply now. `wallet()` finishes pending
 * entries that already have a mark (read-side repair; it never charges an undecided entry).
 *
 * Debit states: pending → debited | declined; declined → pending (next round) when the same identity
 * and fingerprint are retried (the decline was a business outcome — a retry after a top-up may
 * proceed; each round is decided once); debited → confirmed (regulator signed) | reversing →
 * reversed (a `reversal:` entry, applied the same way, credits the amount back). `reversing` is a
 * commitment: any later reverse/debit replay finishes it. Reversing a confirmed debit is refused.
 *
 * Bounded marks. When a wallet holds more than `maxMarks` (1000) marks, marks older than
 * `markRetentionMs` (60 s) whose entry has left that round (finalized) are removed in one CAS that
 * also raises `horizon` to the newest removed mark's round time. Every apply/decline CAS requires
 * `horizon < roundAt` of the entry's round, so a stalled process holding a stale round can never
 * apply it after its mark is gone; an undecided round at or below the horizon is retired by moving
 * the entry to a new round (roundAt > horizon). The marks therefore stay about
 * max(maxMarks, entries per retention window).
 *
 * Invariant (tested after every scenario): balanceKobo = openingKobo + Σ credits(applied)
 * − Σ debits(debited | confirmed | reversing | reversed) + Σ reversals(applied), never negative.
 *
 * Store outages surface as DependencyUnavailableError("billing", …); an entry left pending by one is
 * finished by the next call for the same identity.
 */
import { createHash } from "node:crypto";
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
  type Filter,
} from "../ports.ts";

export const WALLETS_COLLECTION = "billing_wallets";
export const ENTRIES_COLLECTION = "billing_entries";

/** Test-only crash points: a hook that throws simulates a process dying at that step. */
export interface LedgerHooks {
  /** After the entry document was inserted, before it is applied to the wallet. */
  afterInsert?(entryId: string): void | Promise<void>;
  /** After the wallet CAS applied (or declined) the entry, before the entry document is finalized. */
  afterApply?(entryId: string): void | Promise<void>;
}

export interface DocumentLedgerOptions {
  store: DocumentStore;
  /** Opening balance per businessId, integer kobo (missing = 0). Used when a wallet is first created. */
  openingBalances: Record<string, number>;
  /** Epoch milliseconds. Default Date.now. */
  clock?: () => number;
  /** Prune wallet marks above this count. Default 1000. */
  maxMarks?: number;
  /** Only marks older than this are pruned. Default 60 000 ms. */
  markRetentionMs?: number;
  /** Bound on CAS retries of one call under contention. Default 2000. */
  maxSteps?: number;
  hooks?: LedgerHooks;
}

export type EntryState = "pending" | "declined" | "debited" | "confirmed" | "reversing" | "reversed" | "applied";

export interface EntryDoc extends Doc {
  businessId: string;
  type: "debit" | "reversal" | "credit";
  amountKobo: number;
  state: EntryState;
  /** Decision round (a declined debit retried, or a round retired by the horizon, starts a new one). */
  round: number;
  /** Epoch ms of the round's start; must be above the wallet's horizon to be applied. */
  roundAt: number;
  /** True once the entry's effect on the balance is final and recorded here (listing filter). */
  applied: boolean;
  fingerprint?: string;
  billingIdentity?: BillingIdentity;
  reference?: string;
  reason?: string;
  createdAt: string;
  updatedAt: string;
}

export interface WalletMark {
  /** Entry id. */
  e: string;
  /** Round. */
  t: number;
  /** roundAt of that round. */
  at: number;
  o: "applied" | "declined";
}

export interface WalletDoc extends Doc {
  balanceKobo: number;
  openingKobo: number;
  version: number;
  horizon: number;
  marks: Record<string, WalletMark>;
  lastEntry?: string;
  createdAt: string;
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
  const maxMarks = options.maxMarks ?? 1000;
  const retentionMs = options.markRetentionMs ?? 60_000;
  const maxSteps = options.maxSteps ?? 2000;
  const hooks = options.hooks ?? {};
  const { wallets, entries } = openLedgerCollections(options.store);
  const iso = (): string => new Date(clock()).toISOString();

  const opening = (businessId: string): number => {
    const v = options.openingBalances[businessId] ?? 0;
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`opening balance of ${businessId} must be a non-negative integer of kobo`);
    return v;
  };

  const ensureWallet = async (businessId: string): Promise<WalletDoc> => {
    const existing = await wallets.get(businessId);
    if (existing) return existing;
    const created = await wallets.findOneAndUpdate(
      { _id: businessId },
      {
        $setOnInsert: {
          balanceKobo: opening(businessId),
          openingKobo: opening(businessId),
          version: 0,
          horizon: 0,
          marks: {},
          createdAt: iso(),
        },
      },
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

  /**
   * Takes a pending entry to a decided state (see header). `appliedByMe` is true only for the call
   * whose wallet CAS moved the money; `wallet` is the wallet document that CAS returned.
   */
  const drive = async (start: EntryDoc): Promise<{ entry: EntryDoc; appliedByMe: boolean; wallet: WalletDoc | null }> => {
    let entry = start;
    let appliedByMe = false;
    let mine: WalletDoc | null = null;
    for (let step = 0; step < maxSteps; step++) {
      if (entry.state !== "pending") return { entry, appliedByMe, wallet: mine };
      const wallet = await ensureWallet(entry.businessId);
      const key = _markKey(entry);
      const mark = wallet.marks?.[key];
      let outcome: WalletMark["o"];
      if (mark) {
        outcome = mark.o;
      } else if (entry.roundAt <= wallet.horizon) {
        // This round can no longer be decided (its mark could have been pruned): start a new round.
        const next = await entries.findOneAndUpdate(
          { _id: entry._id, state: "pending", round: entry.round },
          { $set: { round: entry.round + 1, roundAt: Math.max(clock(), wallet.horizon + 1), updatedAt: iso() } },
        );
        entry = next ?? (await reread(entry._id));
        continue;
      } else {
        const base: Filter = { _id: entry.businessId, [`marks.${key}`]: { $exists: false }, horizon: { $lt: entry.roundAt } };
        const isDebit = entry.type === "debit";
        if (isDebit && wallet.balanceKobo < entry.amountKobo) {
          const w = await wallets.findOneAndUpdate(
            { ...base, balanceKobo: { $lt: entry.amountKobo } },
            { $set: { [`marks.${key}`]: _mark(entry, "declined") }, $inc: { version: 1 } },
          );
          if (!w) continue; // the wallet changed in between: look again
          outcome = "declined";
        } else {
          const w = await wallets.findOneAndUpdate(
            isDebit ? { ...base, balanceKobo: { $gte: entry.amountKobo } } : base,
            {
              $inc: { balanceKobo: isDebit ? -entry.amountKobo : entry.amountKobo, version: 1 },
              $set: { [`marks.${key}`]: _mark(entry, "applied"), lastEntry: entry._id },
            },
          );
          if (!w) continue;
          outcome = "applied";
          appliedByMe = true;
          mine = w;
        }
        await hooks.afterApply?.(entry._id);
      }
      const state: EntryState = outcome === "declined" ? "declined" : entry.type === "debit" ? "debited" : "applied";
      const next = await entries.findOneAndUpdate(
        { _id: entry._id, state: "pending", round: entry.round },
        { $set: { state, applied: outcome === "applied", updatedAt: iso() } },
      );
      entry = next ?? (await reread(entry._id));
    }
    throw new DependencyUnavailableError("billing", "wallet contention: the entry could not be decided", "timeout");
  };

  /** Best effort: removes old marks of finalized entries and raises the horizon (see header). */
  const prune = async (businessId: string): Promise<void> => {
    const wallet = await wallets.get(businessId);
    if (!wallet || Object.keys(wallet.marks ?? {}).length <= maxMarks) return;
    const cutoff = clock() - retentionMs;
    const old = Object.entries(wallet.marks)
      .filter(([, m]) => m.at < cutoff)
      .sort((a, b) => a[1].at - b[1].at)
      .slice(0, 2 * maxMarks);
    const removable: string[] = [];
    let horizon = wallet.horizon;
    for (const [key, m] of old) {
      const e = await entries.get(m.e);
      if (!e || (e.state === "pending" && e.round === m.t)) continue; // still needs its mark
      removable.push(`marks.${key}`);
      horizon = Math.max(horizon, m.at);
    }
    if (removable.length === 0) return;
    await wallets.findOneAndUpdate(
      { _id: businessId, horizon: wallet.horizon },
      { $unset: removable, $set: { horizon }, $inc: { version: 1 } },
    );
  };

  const afterApplied = async (businessId: string): Promise<void> => {
    try {
      await prune(businessId);
    } catch {
      // Pruning is housekeeping; the next apply tries again.
    }
  };

  /** Finishes a committed reversal of a `reversing` debit; returns the reversal entry id. */
  const finishReversal = async (debit: EntryDoc): Promise<string> => {
    const rid = billingEntryId("reversal", debit.businessId, debit.billingIdentity!);
    const now = clock();
    try {
      await entries.insert({
        _id: rid,
        businessId: debit.businessId,
        type: "reversal",
        amountKobo: debit.amountKobo,
        state: "pending",
        round: 1,
        roundAt: now,
        applied: false,
        billingIdentity: debit.billingIdentity,
        reason: debit.reason ?? "reversal",
        createdAt: new Date(now).toISOString(),
        updatedAt: new Date(now).toISOString(),
      });
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
    }
    const r = await reread(rid);
    const { entry: done, appliedByMe } = await drive(r);
    if (done.state !== "applied") throw new Error(`reversal ${rid} ended in state ${done.state}`);
    await entries.findOneAndUpdate({ _id: debit._id, state: "reversing" }, { $set: { state: "reversed", updatedAt: iso() } });
    if (appliedByMe) await afterApplied(debit.businessId);
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
        const now = clock();
        const fresh: EntryDoc = {
          _id: id,
          businessId,
          type: "debit",
          amountKobo,
          state: "pending",
          round: 1,
          roundAt: now,
          applied: false,
          fingerprint,
          billingIdentity: _identity(identity),
          createdAt: new Date(now).toISOString(),
          updatedAt: new Date(now).toISOString(),
        };
        let entry: EntryDoc;
        try {
          entry = await entries.insert(fresh);
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
              { $set: { state: "pending", round: entry.round + 1, roundAt: Math.max(clock(), entry.roundAt + 1), updatedAt: iso() } },
            );
            entry = reopened ?? (await reread(id));
          }
        }
        let { entry: done, appliedByMe, wallet } = await drive(entry);
        if (done.state === "reversing") {
          await finishReversal(done);
          done = await reread(id);
        }
        if (appliedByMe) await afterApplied(businessId);
        switch (done.state) {
          case "declined":
            throw new BillingError("wallet_declined", "the wallet balance does not cover the fee");
          case "debited":
          case "confirmed":
          case "reversed":
            if (appliedByMe) return { kind: "debited", entryId: id, balanceKobo: wallet!.balanceKobo };
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
              entry = (await drive(entry)).entry;
              if (entry.state === "debited") await afterApplied(businessId);
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
        let entry = await entries.get(id);
        if (!entry) throw new Error("no debit exists for this billing identity");
        for (let step = 0; step < maxSteps; step++) {
          switch (entry.state) {
            case "pending":
              entry = (await drive(entry)).entry;
              continue;
            case "debited": {
              const next = await entries.findOneAndUpdate({ _id: id, state: "debited" }, { $set: { state: "confirmed", updatedAt: iso() } });
              entry = next ?? (await reread(id));
              continue;
            }
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
        const now = clock();
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
            roundAt: now,
            applied: false,
            reference,
            createdAt: new Date(now).toISOString(),
            updatedAt: new Date(now).toISOString(),
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
        const { appliedByMe } = await drive(entry);
        if (appliedByMe) await afterApplied(businessId);
        return { entryId: id, created };
      });
    },

    async wallet(businessId, limit = 100) {
      _checkBusiness(businessId);
      return _guard(async () => {
        const wallet = await wallets.get(businessId);
        if (wallet) {
          // Read-side repair: finish pending entries whose decision the wallet already recorded.
          const pending = await entries.find({ businessId, state: "pending" }, { limit: 100 });
          for (const e of pending.items) if (wallet.marks?.[_markKey(e)]) await drive(e);
        }
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

function _sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** A field name safe for a dotted path: `debit_<hex>_<round>`. */
function _markKey(entry: Pick<EntryDoc, "_id" | "round">): string {
  return `${entry._id.replace(":", "_")}_${entry.round}`;
}

function _mark(entry: EntryDoc, o: WalletMark["o"]): WalletMark {
  return { e: entry._id, t: entry.round, at: entry.roundAt, o };
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
