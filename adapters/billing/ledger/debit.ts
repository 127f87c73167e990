/**
 * A debit of one billing identity: the entry is inserted `pending` under its canonical id (a second
 * debit of the identity cannot be created), then decided by the wallet's batcher. A replay with the
 * same fingerprint returns the existing outcome; a declined debit retried is decided again in a new
 * round; a debit found `reversing` has its reversal finished first.
 */
import { BillingError, isDuplicateKeyError, type BillingIdentity, type DebitResult } from "../../ports.ts";
import { driveEntry } from "./batcher.ts";
import { checkAmount, checkBusiness, checkIdentity, guardBilling, identityFields } from "./checks.ts";
import { billingEntryId, type EntryDoc } from "./documents.ts";
import { finishReversal } from "./reverse.ts";
import { isoNow, reread, type LedgerState } from "./state.ts";

export async function debitWallet(s: LedgerState, businessId: string, identity: BillingIdentity, amountKobo: number, fingerprint: string): Promise<DebitResult> {
  checkBusiness(businessId);
  checkIdentity(identity);
  checkAmount(amountKobo);
  if (typeof fingerprint !== "string" || fingerprint === "") throw new TypeError("fingerprint must be a non-empty string");
  return guardBilling(async () => {
    const id = billingEntryId("debit", businessId, identity);
    await _refuseIfSuspended(s, businessId, id);
    const entry = await _insertOrReopen(s, id, businessId, identity, amountKobo, fingerprint);
    // Answered once the wallet write that decides it has committed (applyEntry's `atDecision`).
    let { entry: done, appliedByMe, balanceKobo } = await driveEntry(s, entry, true);
    if (done.state === "reversing") {
      await finishReversal(s, done);
      done = await reread(s, id);
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
}

// --- Internal helpers ---

/**
 * The billing rule: a wallet an operator suspended takes no new debit. A debit of this identity
 * that exists already (a replay, a reversal to finish) is not new and goes on.
 */
async function _refuseIfSuspended(s: LedgerState, businessId: string, id: string): Promise<void> {
  const wallet = await s.wallets.get(businessId);
  if (wallet?.suspended !== true) return;
  const existing = await s.entries.get(id);
  if (!existing || existing.state === "declined") throw new BillingError("rule_rejected", "the operator suspended this wallet");
}

/** The debit entry: inserted now, or the existing one (same fingerprint only; a declined one reopened). */
async function _insertOrReopen(
  s: LedgerState,
  id: string,
  businessId: string,
  identity: BillingIdentity,
  amountKobo: number,
  fingerprint: string,
): Promise<EntryDoc> {
  const now = new Date(s.clock()).toISOString();
  let entry: EntryDoc;
  try {
    entry = await s.entries.insert({
      _id: id,
      businessId,
      type: "debit",
      amountKobo,
      state: "pending",
      round: 1,
      applied: false,
      fingerprint,
      billingIdentity: identityFields(identity),
      createdAt: now,
      updatedAt: now,
    });
    await s.hooks.afterInsert?.(id);
  } catch (e) {
    if (!isDuplicateKeyError(e)) throw e;
    entry = await reread(s, id);
    if (entry.fingerprint !== fingerprint) {
      throw new BillingError("attempt_conflict", "the billing identity was used before with other content");
    }
    if (entry.state === "declined") {
      // A retry of a declined attempt: decide it again in a new round (e.g. after a top-up).
      const reopened = await s.entries.findOneAndUpdate(
        { _id: id, state: "declined", round: entry.round },
        { $set: { state: "pending", round: entry.round + 1, updatedAt: isoNow(s) } },
      );
      entry = reopened ?? (await reread(s, id));
    }
  }
  return entry;
}
