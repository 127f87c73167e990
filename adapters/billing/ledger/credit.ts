/** An operator top-up: one `credit:` entry per (business, reference), applied once; a replay with another amount is a conflict. */
import { BillingError, isDuplicateKeyError } from "../../ports.ts";
import { driveEntry } from "./batcher.ts";
import { checkAmount, checkBusiness, guardBilling } from "./checks.ts";
import { creditEntryId, type EntryDoc } from "./documents.ts";
import { reread, type LedgerState } from "./state.ts";

export async function creditWallet(s: LedgerState, businessId: string, amountKobo: number, reference: string): Promise<{ entryId: string; created: boolean }> {
  checkBusiness(businessId);
  checkAmount(amountKobo);
  if (typeof reference !== "string" || reference.length < 1 || reference.length > 128) {
    throw new TypeError("reference must be 1 to 128 characters");
  }
  return guardBilling(async () => {
    const id = creditEntryId(businessId, reference);
    const now = new Date(s.clock()).toISOString();
    let created = true;
    let entry: EntryDoc;
    try {
      entry = await s.entries.insert({
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
      await s.hooks.afterInsert?.(id);
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
      created = false;
      entry = await reread(s, id);
      if (entry.amountKobo !== amountKobo) {
        throw new BillingError("attempt_conflict", "the top-up reference was used before with another amount");
      }
    }
    await driveEntry(s, entry);
    return { entryId: id, created };
  });
}
