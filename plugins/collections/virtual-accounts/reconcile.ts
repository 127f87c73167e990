/**
 * Reconciliation of an inflow (spec §4 "Reconciliation rule"): the `recipient` of an
 * IN_FLOW_SUCCESS_EVENT carries `accountName` and `accountNumber`; `recipient.accountNumber` is
 * matched against the `accountNumber` of the business's virtual accounts to find the credited
 * account. Account numbers are unique system-wide, and the lookup is still scoped to the business:
 * an event naming another business's account does not reconcile.
 *
 *   const r = await reconcileInflow(JSON.parse(rawBody), store, "demo");
 *   if (r.matched) markPaid(r.account.sourceReference, r.amountKobo);
 *
 * Merchants reconcile the same way over HTTP: `GET /api/v1/virtual-account?accountNumber=<n>`.
 */
import type { DocumentStore } from "../../../adapters/ports.ts";
import { ngnToKobo } from "../shared/money.ts";
import { openVirtualAccounts, type VirtualAccount } from "./account.ts";
import { IN_FLOW_SUCCESS_EVENT } from "./deposit.ts";

export type ReconciledInflow =
  | {
      matched: true;
      account: VirtualAccount;
      /** The event's amount in kobo. */
      amountKobo: number | null;
      sessionId: string | null;
      /** Whether `recipient.accountName` is the account's name (informational: the number decides). */
      nameMatches: boolean;
    }
  | { matched: false; reason: "not_an_inflow_event" | "no_recipient_account_number" | "unknown_account" };

/** Finds the virtual account of `businessId` an IN_FLOW_SUCCESS_EVENT body credited. */
export async function reconcileInflow(event: unknown, store: DocumentStore, businessId: string): Promise<ReconciledInflow> {
  const body = _object(event);
  if (!body || body.event_type !== IN_FLOW_SUCCESS_EVENT) return { matched: false, reason: "not_an_inflow_event" };
  const data = _object(body.data);
  const recipient = _object(data?.recipient);
  const accountNumber = recipient?.accountNumber;
  if (typeof accountNumber !== "string" || accountNumber === "") return { matched: false, reason: "no_recipient_account_number" };
  const account = await openVirtualAccounts(store).findOne({ accountNumber, businessId });
  if (!account) return { matched: false, reason: "unknown_account" };
  return {
    matched: true,
    account,
    amountKobo: typeof data?.amount === "number" ? ngnToKobo(data.amount) : null,
    sessionId: typeof data?.sessionId === "string" ? data.sessionId : null,
    nameMatches: recipient?.accountName === account.accountName,
  };
}

// --- Internal helpers ---

function _object(x: unknown): Record<string, unknown> | null {
  return typeof x === "object" && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : null;
}
