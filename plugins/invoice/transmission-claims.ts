/**
 * Pass-through transmission claims (spec §3.3): one per transmission binding (state, represented
 * business, IRN), taken before the regulator is called. The transmission plugin writes them;
 * recovery and the operator's frozen list read them.
 *
 *   transmission_claims   `_id` = `${businessId}|${state}|${subBusinessId}|${irn}`
 */
import type { Collection, Doc, DocumentStore } from "../../adapters/ports.ts";
import type { RegulatorState } from "../../adapters/regulator/port.ts";

export const TRANSMISSION_CLAIMS_COLLECTION = "transmission_claims";

export type ClaimState = "in_progress" | "succeeded" | "rejected" | "unknown";

export interface ClaimDoc extends Doc {
  businessId: string;
  state: RegulatorState;
  subBusinessId: string;
  irn: string;
  operationId: string;
  claimState: ClaimState;
  /** HMAC of the x-idempotency-key, or null (legacy identity from the binding). */
  keyHash: string | null;
  owner: string;
  startedAtMs: number;
  completedAtMs: number | null;
  /** Regulator error.id of a rejection; the reason class of an unknown outcome. */
  detail: string | null;
  /** Earlier attempts the regulator rejected, before a new key took the claim over (audit). */
  rejectedAttempts?: { operationId: string; detail: string | null; completedAtMs: number | null }[];
  /** An operator's decision on an unknown outcome (plugins/recovery). */
  resolution?: { outcome: "transmitted"; by: string; at: string };
}

/** The collection with its indexes. */
export function openTransmissionClaims(store: DocumentStore): Collection<ClaimDoc> {
  return store.collection<ClaimDoc>(TRANSMISSION_CLAIMS_COLLECTION, {
    // claimState + completedAtMs: the frozen-operations list (unknown outcomes newest first; without it
    // every page sorts all of them); businessId + startedAtMs: the merchant dashboard's list of the
    // business's transmissions, newest first.
    indexes: [
      { fields: ["businessId", "state", "subBusinessId"] },
      { fields: ["operationId"] },
      { fields: ["claimState", "startedAtMs"] },
      { fields: ["claimState", "completedAtMs", "operationId"] },
      { fields: ["businessId", "startedAtMs"] },
    ],
  });
}

/** The claim's `_id`: the transmission binding itself is the operation's identity. */
export function claimIdOf(businessId: string, state: RegulatorState, subBusinessId: string, irn: string): string {
  return `${businessId}|${state}|${subBusinessId}|${irn}`;
}
