/**
 * Reversal of a debit: `debited → reversing` (a commitment: any later reverse or debit replay
 * finishes it), then a `reversal:` entry applied like any movement credits the amount back, then
 * `reversing → reversed`. A confirmed debit cannot be reversed.
 */
import { DependencyUnavailableError, isDuplicateKeyError, type BillingIdentity } from "../../ports.ts";
import { applyEntry, driveEntry } from "./batcher.ts";
import { checkBusiness, checkIdentity, guardBilling } from "./checks.ts";
import { billingEntryId, type EntryDoc } from "./documents.ts";
import { isoNow, reread, type LedgerState } from "./state.ts";

export async function reverseDebit(s: LedgerState, businessId: string, identity: BillingIdentity, reason: string): Promise<{ entryId: string }> {
  checkBusiness(businessId);
  checkIdentity(identity);
  return guardBilling(async () => {
    const id = billingEntryId("debit", businessId, identity);
    let entry = await s.entries.get(id);
    if (!entry) throw new Error("no debit exists for this billing identity");
    for (let step = 0; step < s.maxSteps; step++) {
      switch (entry.state) {
        case "pending":
          entry = (await applyEntry(s, entry)).entry;
          continue;
        case "declined":
          throw new Error("the billing identity was declined: nothing to reverse");
        case "confirmed":
          throw new Error("a confirmed debit cannot be reversed");
        case "debited": {
          const next = await s.entries.findOneAndUpdate(
            { _id: id, state: "debited" },
            { $set: { state: "reversing", reason: String(reason).slice(0, 256), updatedAt: isoNow(s) } },
          );
          entry = next ?? (await reread(s, id));
          continue;
        }
        case "reversing":
          return { entryId: await finishReversal(s, entry) };
        case "reversed":
          return { entryId: billingEntryId("reversal", businessId, identity) };
        default:
          throw new Error(`debit ${id} in unexpected state ${entry.state}`);
      }
    }
    throw new DependencyUnavailableError("billing", "reversal contention", "timeout");
  });
}

/** Finishes a committed reversal of a `reversing` debit; returns the reversal entry id. */
export async function finishReversal(s: LedgerState, debit: EntryDoc): Promise<string> {
  const rid = billingEntryId("reversal", debit.businessId, debit.billingIdentity!);
  const now = new Date(s.clock()).toISOString();
  let reversal: EntryDoc;
  try {
    reversal = await s.entries.insert({
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
    await s.hooks.afterInsert?.(rid);
  } catch (e) {
    if (!isDuplicateKeyError(e)) throw e;
    reversal = await reread(s, rid);
  }
  const { entry: done } = await driveEntry(s, reversal);
  if (done.state !== "applied") throw new Error(`reversal ${rid} ended in state ${done.state}`);
  await s.entries.updateOne({ _id: debit._id, state: "reversing" }, { $set: { state: "reversed", updatedAt: isoNow(s) } });
  return rid;
}
