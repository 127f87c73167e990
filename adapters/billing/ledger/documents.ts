/**
 * The ledger's documents (see ../ledger.ts): `billing_entries`, one per money movement under a
 * canonical `_id`, and `billing_wallets`, one bounded summary per business.
 */
import { hash } from "node:crypto";
import type { BillingEntry, BillingIdentity, Collection, Doc, DocumentStore } from "../../ports.ts";

export const WALLETS_COLLECTION = "billing_wallets";
export const ENTRIES_COLLECTION = "billing_entries";

export type EntryState = "pending" | "declined" | "debited" | "confirmed" | "reversing" | "reversed" | "applied";

export interface EntryDoc extends Doc {
  businessId: string;
  type: "debit" | "reversal" | "credit";
  amountKobo: number;
  state: EntryState;
  /** Decision round (a declined debit retried starts a new one). */
  round: number;
  /** True once the entry's effect on the balance is final and recorded here (listing filter). */
  applied: boolean;
  fingerprint?: string;
  billingIdentity?: BillingIdentity;
  reference?: string;
  reason?: string;
  createdAt: string;
  updatedAt: string;
}

/** One decided movement of a batch: entry id, round, outcome. */
export interface BatchMove {
  e: string;
  t: number;
  o: "applied" | "declined";
}

export interface WalletBatch {
  id: string;
  moves: BatchMove[];
}

export interface WalletDoc extends Doc {
  balanceKobo: number;
  openingKobo: number;
  version: number;
  /** The last batch applied, until its entries are finished. */
  batch: WalletBatch | null;
  createdAt: string;
  /** Set by an operator: new debits are refused (a billing rule), everything else goes on. */
  suspended?: boolean;
  /** Written by the earlier mark-per-entry ledger; finished and removed by the next batch. */
  marks?: Record<string, BatchMove>;
  horizon?: number;
}

/** The canonical entry id of a billing identity (`debit:` / `reversal:` + sha256). */
export function billingEntryId(type: "debit" | "reversal", businessId: string, identity: BillingIdentity): string {
  return `${type}:${_sha256(JSON.stringify([businessId, identity.subBusinessId, identity.domain, identity.irn, identity.attemptNumber]))}`;
}

/** The entry id of an operator top-up. */
export function creditEntryId(businessId: string, reference: string): string {
  return `credit:${_sha256(JSON.stringify([businessId, reference]))}`;
}

/** Opens (or returns) the ledger's two collections on `store` (tests read them to check invariants). */
export function openLedgerCollections(store: DocumentStore): { wallets: Collection<WalletDoc>; entries: Collection<EntryDoc> } {
  return {
    wallets: store.collection<WalletDoc>(WALLETS_COLLECTION),
    entries: store.collection<EntryDoc>(ENTRIES_COLLECTION, {
      indexes: [{ fields: ["businessId", "createdAt"] }, { fields: ["businessId", "state"] }, { fields: ["state", "updatedAt"] }],
    }),
  };
}

/** An entry as the port lists it in a wallet statement. */
export function toEntry(e: EntryDoc): BillingEntry {
  const out: BillingEntry = { id: e._id, type: e.type, amountKobo: e.amountKobo, createdAt: e.createdAt };
  if (e.billingIdentity) out.billingIdentity = e.billingIdentity;
  if (e.reference !== undefined) out.reference = e.reference;
  return out;
}

// --- Internal helpers ---

function _sha256(text: string): string {
  return hash("sha256", text, "hex");
}
