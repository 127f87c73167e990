/** Confirmation of a debit (the regulator signed): `debited → confirmed`, idempotent; a pending debit is decided first. */
import { DependencyUnavailableError, type BillingIdentity } from "../../ports.ts";
import { applyEntry } from "./batcher.ts";
import { checkBusiness, checkIdentity, guardBilling } from "./checks.ts";
import { billingEntryId } from "./documents.ts";
import { isoNow, reread, type LedgerState } from "./state.ts";

export async function confirmDebit(s: LedgerState, businessId: string, identity: BillingIdentity): Promise<void> {
  checkBusiness(businessId);
  checkIdentity(identity);
  return guardBilling(async () => {
    const id = billingEntryId("debit", businessId, identity);
    const toConfirmed = () => s.entries.updateOne({ _id: id, state: "debited" }, { $set: { state: "confirmed", updatedAt: isoNow(s) } });
    if (await toConfirmed()) return; // the usual case: one write
    let entry = await s.entries.get(id);
    if (!entry) throw new Error("no debit exists for this billing identity");
    for (let step = 0; step < s.maxSteps; step++) {
      switch (entry.state) {
        case "pending":
          entry = (await applyEntry(s, entry)).entry;
          continue;
        case "debited":
          if (await toConfirmed()) return;
          entry = await reread(s, id);
          continue;
        case "confirmed":
          return;
        default:
          throw new Error(`a debit in state ${entry.state} cannot be confirmed`);
      }
    }
    throw new DependencyUnavailableError("billing", "confirmation contention", "timeout");
  });
}
