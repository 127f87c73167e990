/** The billing port with its movements counted (gatehouse_wallet_movements_total and amounts). */
import type { BillingLedger } from "../adapters/ports.ts";
import type { GatewayMetrics } from "../core/metrics.ts";

/** New debits and credits with their amounts, reversals and confirmations that completed. */
export function instrumentLedger(ledger: BillingLedger, metrics: GatewayMetrics): BillingLedger {
  const m = metrics.walletMovements;
  const amount = metrics.walletAmountKobo;
  const debits = m.series("debit");
  const debitKobo = amount.series("debit");
  const credits = m.series("credit");
  const creditKobo = amount.series("credit");
  const reversals = m.series("reversal");
  const confirms = m.series("confirm");
  return {
    async debit(businessId, identity, amountKobo, fingerprint) {
      const r = await ledger.debit(businessId, identity, amountKobo, fingerprint);
      if (r.kind === "debited") {
        debits.inc();
        debitKobo.inc(amountKobo);
      }
      return r;
    },
    async reverse(businessId, identity, reason) {
      const r = await ledger.reverse(businessId, identity, reason);
      reversals.inc();
      return r;
    },
    async confirm(businessId, identity) {
      await ledger.confirm(businessId, identity);
      confirms.inc();
    },
    async credit(businessId, amountKobo, reference) {
      const r = await ledger.credit(businessId, amountKobo, reference);
      if (r.created) {
        credits.inc();
        creditKobo.inc(amountKobo);
      }
      return r;
    },
    wallet: (businessId, limit) => ledger.wallet(businessId, limit),
    ...(ledger.setSuspended ? { setSuspended: ledger.setSuspended.bind(ledger) } : {}),
    ...(ledger.heldDebits ? { heldDebits: ledger.heldDebits.bind(ledger) } : {}),
  };
}
