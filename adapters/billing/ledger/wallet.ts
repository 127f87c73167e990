/** A wallet statement: the balance and the latest applied entries, after finishing what the wallet records as decided. */
import type { BillingEntry } from "../../ports.ts";
import { finishRecorded } from "./batcher.ts";
import { checkBusiness, guardBilling } from "./checks.ts";
import { toEntry } from "./documents.ts";
import { loadWallet, openingBalance, type LedgerState } from "./state.ts";

export async function walletStatement(
  s: LedgerState,
  businessId: string,
  limit = 100,
): Promise<{ businessId: string; currency: "NGN"; balanceKobo: number; entries: BillingEntry[]; suspended: boolean }> {
  checkBusiness(businessId);
  return guardBilling(async () => {
    const wallet = await s.wallets.get(businessId);
    // Read-side repair: finish the entries whose decision the wallet already records.
    if (wallet && (wallet.batch || wallet.marks)) await finishRecorded(s, wallet);
    const page = await s.entries.find(
      { businessId, applied: true },
      { sort: [{ field: "createdAt", direction: -1 }], limit: Number.isFinite(limit) ? Math.max(1, Math.min(1000, Math.trunc(limit))) : 100 },
    );
    const fresh = wallet ? await s.wallets.get(businessId) : null;
    return {
      businessId,
      currency: "NGN" as const,
      balanceKobo: fresh ? fresh.balanceKobo : openingBalance(s, businessId),
      entries: page.items.map(toEntry),
      suspended: fresh?.suspended === true,
    };
  });
}

/** The operator's suspension of a wallet (created with its opening balance when new). */
export async function suspendWallet(s: LedgerState, businessId: string, suspended: boolean): Promise<{ suspended: boolean }> {
  checkBusiness(businessId);
  return guardBilling(async () => {
    await loadWallet(s, businessId);
    await s.wallets.updateOne({ _id: businessId }, { $set: { suspended } });
    return { suspended };
  });
}
