/**
 * Group commit (steps 1–5 of ../ledger.ts): the movements waiting for one wallet in this process are
 * decided and applied together, one wallet write per batch, and each entry is then finished.
 */
import { randomUUID } from "node:crypto";
import { DependencyUnavailableError } from "../../ports.ts";
import type { BatchMove, EntryDoc, EntryState, WalletBatch, WalletDoc } from "./documents.ts";
import { isoNow, loadWallet, type LedgerItem, type LedgerOutcome, type LedgerQueue, type LedgerState } from "./state.ts";

/**
 * Takes a pending entry to a decided state through its wallet's batcher. `appliedByMe` is true
 * only for the one caller whose batch moved the money (a second caller for the same entry in this
 * process, or any caller after another process decided it, gets false).
 *
 * `atDecision`: once applied, answer as soon as the wallet write that decided the entry has
 * committed (the money has moved: the wallet's batch record holds the outcome until the entry is
 * finished, step 4), one commit before the entry itself says so. For a new debit, whose caller
 * writes elsewhere next; every other caller reads or writes the entry next and waits for its finish.
 */
export function applyEntry(s: LedgerState, entry: EntryDoc, atDecision = false): Promise<LedgerOutcome> {
  return new Promise((resolve, reject) => {
    let queue = s.queues.get(entry.businessId);
    if (!queue) {
      queue = { items: new Map(), running: false };
      s.queues.set(entry.businessId, queue);
    }
    const item = queue.items.get(entry._id);
    if (item) {
      item.waiters.push({ resolve, reject });
      item.atDecision &&= atDecision;
    } else queue.items.set(entry._id, { id: entry._id, waiters: [{ resolve, reject }], settled: false, atDecision });
    if (!queue.running) queue.drain = _drain(s, entry.businessId, queue);
  });
}

/**
 * Settles once no batcher of this ledger is running: every movement it answered has its entry
 * finished (or left to its wallet's record, when a finish failed). For tests that read the
 * documents themselves.
 */
export async function batchersSettled(s: LedgerState): Promise<void> {
  while (s.queues.size > 0) await Promise.all([...s.queues.values()].map((q) => q.drain));
}

/** Decides `entry` if pending (answered at the decision when asked: applyEntry); otherwise it is already decided. */
export function driveEntry(s: LedgerState, entry: EntryDoc, atDecision = false): Promise<LedgerOutcome> {
  return entry.state === "pending" ? applyEntry(s, entry, atDecision) : Promise.resolve({ entry, appliedByMe: false, balanceKobo: null });
}

/** Finishes the entries a wallet records as decided (a batch whose writer stopped or is still finishing). */
export async function finishRecorded(s: LedgerState, wallet: WalletDoc): Promise<void> {
  const moves = [...(wallet.batch?.moves ?? []), ...Object.values(wallet.marks ?? {})];
  await Promise.all(moves.map((m) => _finish(s, m)));
  if (wallet.batch) await s.wallets.updateOne({ _id: wallet._id, "batch.id": wallet.batch.id }, { $set: { batch: null } });
}

// --- Internal helpers ---

/** One decided movement of a batch, with its item, its entry and the balance right after it. */
interface _Decided {
  move: BatchMove;
  item: LedgerItem;
  entry: EntryDoc;
  balanceKobo: number;
}

/** Runs the batches of one business until its queue is empty. */
async function _drain(s: LedgerState, businessId: string, queue: LedgerQueue): Promise<void> {
  queue.running = true;
  try {
    while (queue.items.size > 0) {
      const items: LedgerItem[] = [];
      for (const item of queue.items.values()) {
        items.push(item);
        queue.items.delete(item.id);
        if (items.length >= s.maxBatch) break;
      }
      try {
        await _applyBatch(s, businessId, items, queue);
      } catch (e) {
        for (const item of items) _settle(item, null, e);
      }
    }
  } finally {
    queue.running = false;
    if (queue.items.size === 0) s.queues.delete(businessId);
  }
}

/**
 * One batch of `items` against the wallet of `businessId` (steps 1–5 of the header). Resolves each
 * item's waiters with the entry's outcome; an item already decided elsewhere resolves as it is.
 */
async function _applyBatch(s: LedgerState, businessId: string, items: LedgerItem[], queue: LedgerQueue): Promise<void> {
  for (let step = 0; step < s.maxSteps; step++) {
    const open = items.filter((i) => !i.settled);
    if (open.length === 0) return _clearFinished(s, businessId, queue);
    const wallet = await loadWallet(s, businessId);
    // A record this batcher left after finishing every one of its entries is replaced by this
    // batch's wallet write below; any other record (another process's, a crashed batch's) is
    // finished and cleared first.
    if ((wallet.batch && wallet.batch.id !== queue.finished) || wallet.marks) await finishRecorded(s, wallet);
    const { moves, balance } = await _decide(s, wallet, open);
    if (moves.length === 0) return _clearFinished(s, businessId, queue);
    const batch: WalletBatch = { id: randomUUID(), moves: moves.map((m) => m.move) };
    const applied = await s.wallets.updateOne(
      { _id: businessId, version: wallet.version },
      {
        $set: { balanceKobo: balance, version: wallet.version + 1, batch },
        ...(wallet.marks || wallet.horizon !== undefined ? { $unset: ["marks", "horizon"] } : {}),
      },
    );
    if (!applied) continue; // another process moved the wallet: read it again and decide again
    queue.finished = null;
    await _finishBatch(s, businessId, batch, moves, queue);
    return;
  }
  throw new DependencyUnavailableError("billing", "wallet contention: the batch could not be applied", "timeout");
}

/**
 * Reads the open items' entries (after the wallet) and decides each still-pending one in order
 * against the running balance; an entry missing or already decided settles its item at once.
 */
async function _decide(s: LedgerState, wallet: WalletDoc, open: LedgerItem[]): Promise<{ moves: _Decided[]; balance: number }> {
  const page = await s.entries.find({ _id: { $in: open.map((i) => i.id) } }, { limit: open.length });
  const current = new Map(page.items.map((e) => [e._id, e]));
  let balance = wallet.balanceKobo;
  const moves: _Decided[] = [];
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
  return { moves, balance };
}

/**
 * Steps 4–5 after the wallet write: finish each entry, clear the batch record (or leave it for the
 * next batch of this run to replace, when movements are already waiting), settle the waiters.
 */
async function _finishBatch(s: LedgerState, businessId: string, batch: WalletBatch, moves: _Decided[], queue: LedgerQueue): Promise<void> {
  const { hooks } = s;
  for (const m of moves) await hooks.afterApply?.(m.move.e);
  const finishing = Promise.allSettled(moves.map((m) => _finish(s, m.move)));
  // The applied items that asked to be answered at the decision are answered now, after the
  // finishes were asked for: on the SQLite writer their callers' next writes share the finishes'
  // commit. A decline waits for its finish (a retry after a top-up must find it declined to reopen it).
  for (const m of moves) if (m.item.atDecision && m.move.o === "applied") _settle(m.item, _outcome(m));
  const finished = await finishing;
  for (const m of moves) await hooks.afterFinish?.(m.move.e);
  // The record leaves the wallet only once every entry it decided is finished: an entry whose
  // finish failed (refused, or never reached the store) stays pending, and without the record
  // the next batch would decide it again and charge it twice. Left in place, the next batch
  // or wallet() finishes it with the recorded outcome. When movements wait already, the next
  // batch's wallet write replaces the finished record: one write and one commit less per batch.
  if (finished.every((r) => r.status === "fulfilled")) {
    queue.finished = batch.id;
    if (queue.items.size === 0) await _clearFinished(s, businessId, queue);
  }
  moves.forEach((m, i) => {
    const r = finished[i]!;
    if (r.status === "rejected") return _settle(m.item, null, r.reason);
    _settle(m.item, _outcome(m));
  });
}

/** What a decided movement's caller is told: its entry as the finish leaves it. */
function _outcome(m: _Decided): LedgerOutcome {
  const state: EntryState = m.move.o === "declined" ? "declined" : m.entry.type === "debit" ? "debited" : "applied";
  return { entry: { ...m.entry, state, applied: m.move.o === "applied" }, appliedByMe: true, balanceKobo: m.balanceKobo };
}

/** Clears the record of this batcher's last batch if it left one with every entry finished (best effort). */
async function _clearFinished(s: LedgerState, businessId: string, queue: LedgerQueue): Promise<void> {
  const id = queue.finished;
  if (!id) return;
  queue.finished = null;
  await s.wallets.updateOne({ _id: businessId, "batch.id": id }, { $set: { batch: null } }).catch(() => {
    // Housekeeping: the next batch or wallet() finishes (no-op) and replaces the record.
  });
}

/** Moves an entry out of `pending` with a decided outcome; false when another caller already did. */
function _finish(s: LedgerState, move: BatchMove): Promise<boolean> {
  const state: EntryState = move.o === "declined" ? "declined" : move.e.startsWith("debit:") ? "debited" : "applied";
  return s.entries.updateOne({ _id: move.e, state: "pending", round: move.t }, { $set: { state, applied: move.o === "applied", updatedAt: isoNow(s) } });
}

/** Resolves (the first waiter with `outcome`, the others as a replay) or rejects an item's waiters, once. */
function _settle(item: LedgerItem, outcome: LedgerOutcome | null, error?: unknown): void {
  if (item.settled) return;
  item.settled = true;
  item.waiters.forEach((w, i) => {
    if (!outcome) w.reject(error);
    else w.resolve(i === 0 ? outcome : { entry: outcome.entry, appliedByMe: false, balanceKobo: null });
  });
}
