/**
 * The wallet ledger's invariant, checked straight from the stored documents (adapters/billing/ledger.ts):
 * balance = opening + credits − debits (debited, confirmed, reversing, reversed) + reversals, never
 * negative, every counted entry marked applied, nothing left pending (unless allowed).
 */
import * as assert from "uvu/assert";
import { openLedgerCollections, type EntryDoc } from "../../adapters/billing/ledger.ts";
import type { DocumentStore } from "../../adapters/ports.ts";

/** Asserts the invariant for `businessId`; returns the balance (kobo) and every entry of the business. */
export async function assertLedgerInvariant(
  store: DocumentStore,
  businessId: string,
  opts: { allowPending?: boolean } = {},
): Promise<{ balanceKobo: number; entries: EntryDoc[] }> {
  const { wallets, entries } = openLedgerCollections(store);
  const w = await wallets.get(businessId);
  const all: EntryDoc[] = [];
  let cursor: string | null = null;
  do {
    const page = await entries.find({ businessId }, { limit: 1000, cursor });
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  if (!w) {
    assert.is(all.filter((e) => e.applied).length, 0, `${businessId}: applied entries without a wallet`);
    return { balanceKobo: 0, entries: all };
  }
  let sum = w.openingKobo;
  for (const e of all) {
    if (!opts.allowPending) assert.is.not(e.state, "pending", `${businessId}: entry ${e._id} left pending (${e.type} ${JSON.stringify(e.billingIdentity ?? e.reference ?? null)})`);
    if (e.type === "debit" && ["debited", "confirmed", "reversing", "reversed"].includes(e.state)) {
      assert.ok(e.applied, `debit ${e._id} applied flag`);
      sum -= e.amountKobo;
    } else if ((e.type === "credit" || e.type === "reversal") && e.state === "applied") {
      sum += e.amountKobo;
    } else {
      assert.not.ok(e.applied, `entry ${e._id} (${e.type}/${e.state}) must not count`);
    }
  }
  assert.is(w.balanceKobo, sum, `${businessId}: balance ${w.balanceKobo} ≠ opening + entries ${sum}`);
  assert.ok(w.balanceKobo >= 0, `${businessId}: negative balance`);
  return { balanceKobo: w.balanceKobo, entries: all };
}
