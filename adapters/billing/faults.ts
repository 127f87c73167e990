/**
 * A fault-injecting BillingLedger wrapper: how tests reach every row of spec §3.2.
 *
 * - `debit: "unavailable"`: throws DependencyUnavailableError("billing") before touching the inner
 *   ledger (nothing charged → GW_BILLING_SERVICE_UNAVAILABLE; a retry debits normally).
 * - `debit: "unavailable_after_commit"`: performs the inner debit, then throws the same error — a
 *   lost answer. The caller cannot know the fee was charged; it must answer billing unavailable, and
 *   the retry with the same identity and fingerprint is a `replay`, never a second debit.
 * - `reverse: "unavailable"` (→ GW_SIGN_REVERSAL_UNCONFIRMED), `confirm: "unavailable"`
 *   (→ GW_SIGN_RECOVERY_UNAVAILABLE): throw before touching the inner ledger.
 * - `once: true`: the first injected fault clears every fault.
 * `credit`, `wallet` and `heldDebits` always pass through. Faults are mutable at any time; `clear()` removes them.
 */
import { DependencyUnavailableError, type BillingLedger } from "../ports.ts";

export interface BillingFaults {
  debit?: "unavailable" | "unavailable_after_commit";
  reverse?: "unavailable";
  confirm?: "unavailable";
  once?: boolean;
}

export interface FaultInjectingLedger extends BillingLedger {
  faults: BillingFaults;
  clear(): void;
  /** How many faults were injected so far, per operation. */
  readonly injected: { debit: number; reverse: number; confirm: number };
}

export function createFaultInjectingLedger(inner: BillingLedger): FaultInjectingLedger {
  const injected = { debit: 0, reverse: 0, confirm: 0 };
  const self: FaultInjectingLedger = {
    faults: {},
    injected,
    clear() {
      self.faults = {};
    },

    async debit(businessId, identity, amountKobo, fingerprint) {
      const fault = self.faults.debit;
      if (fault === "unavailable") throw _inject(self, "debit");
      const result = await inner.debit(businessId, identity, amountKobo, fingerprint);
      if (fault === "unavailable_after_commit") throw _inject(self, "debit", true);
      return result;
    },

    async reverse(businessId, identity, reason) {
      if (self.faults.reverse === "unavailable") throw _inject(self, "reverse");
      return inner.reverse(businessId, identity, reason);
    },

    async confirm(businessId, identity) {
      if (self.faults.confirm === "unavailable") throw _inject(self, "confirm");
      return inner.confirm(businessId, identity);
    },

    credit: (businessId, amountKobo, reference) => inner.credit(businessId, amountKobo, reference),
    wallet: (businessId, limit) => inner.wallet(businessId, limit),
    ...(inner.setSuspended ? { setSuspended: inner.setSuspended.bind(inner) } : {}),
    ...(inner.heldDebits ? { heldDebits: inner.heldDebits.bind(inner) } : {}),
  };
  return self;
}

// --- Internal helpers ---

function _inject(self: FaultInjectingLedger, op: "debit" | "reverse" | "confirm", afterCommit = false): DependencyUnavailableError {
  self.injected[op]++;
  if (self.faults.once) self.clear();
  return new DependencyUnavailableError(
    "billing",
    afterCommit ? `injected fault: ${op} answer lost after commit` : `injected fault: ${op} unavailable`,
    "transport",
  );
}
