/**
 * The wallet ledger's invariant, checked from the ledger's own entries: balance = opening − debits
 * + reversals + credits, never negative. Returns the totals as counts of `feeKobo`.
 */
import * as assert from "uvu/assert";
import type { BillingLedger } from "../../adapters/ports.ts";

export async function ledgerBalanced(
  ledger: BillingLedger,
  businessId: string,
  openingKobo: number,
  feeKobo: number,
): Promise<{ balanceKobo: number; debits: number; reversals: number }> {
  const w = await ledger.wallet(businessId, 100_000);
  let debits = 0;
  let reversals = 0;
  let credits = 0;
  for (const e of w.entries) {
    if (e.type === "debit") debits += e.amountKobo;
    else if (e.type === "reversal") reversals += e.amountKobo;
    else credits += e.amountKobo;
  }
  assert.is(w.balanceKobo, openingKobo - debits + reversals + credits, "ledger invariant: balance = opening − debits + reversals + credits");
  assert.ok(w.balanceKobo >= 0, "never negative");
  return { balanceKobo: w.balanceKobo, debits: debits / feeKobo, reversals: reversals / feeKobo };
}
