/** Debits held (`debited`) since a given time, oldest first: what recovery reconciles when no sign record owns them. */
import type { HeldDebit } from "../../ports.ts";
import { guardBilling } from "./checks.ts";
import type { LedgerState } from "./state.ts";

export async function heldDebits(s: LedgerState, before: string, limit: number): Promise<HeldDebit[]> {
  return guardBilling(async () => {
    const page = await s.entries.find(
      { type: "debit", state: "debited", updatedAt: { $lte: before } },
      { sort: [{ field: "updatedAt", direction: 1 }], limit: Math.max(1, Math.min(limit, 1000)) },
    );
    return page.items
      .filter((e) => e.billingIdentity)
      .map((e) => ({ entryId: e._id, businessId: e.businessId, billingIdentity: e.billingIdentity!, amountKobo: e.amountKobo, updatedAt: e.updatedAt }));
  });
}
