/**
 * Represented businesses (spec §2.1): the one read model of onboarding's collection and the one
 * ownership check every invoice operation makes ("the represented business of this caller").
 *
 *   onboarding_sub_businesses   one represented business; `_id` = `${state}:${gatewaySubBusinessId}`;
 *                               unique `identityKey` = `${state}:${externalBusinessId}` (a regulator
 *                               identity is claimed by at most one represented business, spec §7.2 ex. 2)
 *
 * The onboarding plugin writes it; signing, transmission and Stored mode only read it.
 */
import type { Collection, CollectionSpec, Doc, DocumentStore, SignedAttestation } from "../../adapters/ports.ts";
import type { RegulatorState } from "../../adapters/regulator/port.ts";
import { gwError } from "../../core/errors/gateway-error.ts";

export const REPRESENTED_BUSINESSES_COLLECTION = "onboarding_sub_businesses";

/** Onboarding's identity reviews: the invoice kit reads only whether one awaits a protected migration. */
export const IDENTITY_REVIEWS_COLLECTION = "onboarding_identity_reviews";

/** The stored regulator identity snapshot (= `regulatorIdentity` and `observedIdentity` in answers). */
export interface RegulatorIdentity {
  entityId: string;
  entityReference: string;
  regulatorBusinessId: string;
  businessName: string;
  tin: string;
  irnTemplate: string | null;
  /** The business is usable at the regulator: the business AND its entity are active. */
  active: boolean;
}

/** The QR material in force (public material: stored, never answered beyond its fingerprint). */
export interface CryptoMaterial {
  version: number;
  publicKey: string;
  certificate: string;
  /** "sha256:<hex>" of publicKey + "\n" + certificate. */
  fingerprint: string;
  /** Idempotency record that installed it (recovery of an interrupted rotation). */
  installedBy: string;
  installedAt: string;
}

export interface SubBusinessDoc extends Doc {
  /** The gateway's signed statement of the identity onboarding verified (absent on records made before it). */
  attestation?: SignedAttestation;
  gatewaySubBusinessId: string;
  /** Top-level business. */
  businessId: string;
  state: RegulatorState;
  externalBusinessId: string;
  identityKey: string;
  identity: RegulatorIdentity;
  identityVersion: number;
  cryptoVersion: number;
  crypto: CryptoMaterial | null;
  /** Idempotency record of the onboarding that created it. */
  onboardingKey: string;
  createdAt: string;
  updatedAt: string;
}

/** The fields of a represented business the invoice operations read. */
export type RepresentedBusiness = Pick<SubBusinessDoc, "_id" | "gatewaySubBusinessId" | "businessId" | "state" | "externalBusinessId"> & {
  identity: Pick<RegulatorIdentity, "tin" | "irnTemplate" | "regulatorBusinessId">;
};

const SPEC: CollectionSpec = {
  indexes: [
    { fields: ["identityKey"], unique: true },
    { fields: ["onboardingKey"], unique: true },
    { fields: ["businessId", "state", "createdAt"] },
    { fields: ["gatewaySubBusinessId"] },
  ],
};

/** A review as the invoice kit reads it (onboarding's ReviewDoc has more). */
export interface PendingReviewDoc extends Doc {
  /** `_id` of the represented business while the review is pending; absent once decided. */
  pendingKey?: string;
  requiresProtectedMigration: boolean;
}

/** Onboarding's reviews collection, with onboarding's own index declaration. */
export function openIdentityReviews(store: DocumentStore): Collection<PendingReviewDoc> {
  return store.collection<PendingReviewDoc>(IDENTITY_REVIEWS_COLLECTION, {
    indexes: [{ fields: ["pendingKey"], unique: true, sparse: true }, { fields: ["subKey", "createdAt"] }],
  });
}

/**
 * While an entity ID, business ID or TIN change awaits the operator's migration, invoices would go
 * out under the old identity: 409 GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED (spec §3.1, §7.8).
 */
export async function checkNoPendingMigration(reviews: Collection<PendingReviewDoc>, sub: Pick<SubBusinessDoc, "_id">): Promise<void> {
  const pending = await reviews.findOne({ pendingKey: sub._id });
  if (pending?.requiresProtectedMigration)
    throw gwError("GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED", {
      detail: "The represented business's entity ID, business ID or TIN changed at the regulator; no invoice is accepted until an operator applies the migration.",
    });
}

/** The collection with its indexes (opening it again anywhere is harmless: indexes are declared once). */
export function openRepresentedBusinesses(store: DocumentStore): Collection<SubBusinessDoc> {
  return store.collection<SubBusinessDoc>(REPRESENTED_BUSINESSES_COLLECTION, SPEC);
}

/** `_id` of a represented business: its id is unique within a state. */
export function subKeyOf(state: RegulatorState, gatewaySubBusinessId: string): string {
  return `${state}:${gatewaySubBusinessId}`;
}

/** `identityKey`: the regulator business a represented business stands for, within a state. */
export function identityKeyOf(state: RegulatorState, regulatorBusinessId: string): string {
  return `${state}:${regulatorBusinessId}`;
}

/** Where the caller named the represented business (the 404's detail names it the same way). */
export type SubBusinessIdSource = "x-sub-business-id" | "gatewaySubBusinessId";

/**
 * The caller's represented business: 404 GW_SUB_BUSINESS_NOT_FOUND when there is none with that id
 * in the caller's state, 403 GW_SUB_BUSINESS_FORBIDDEN when it belongs to another top-level business.
 * A store that cannot answer throws its DependencyUnavailableError (the route says what that answers).
 */
export async function ownedBusiness<T extends Pick<SubBusinessDoc, "_id" | "businessId">>(
  subs: Collection<T>,
  caller: { businessId: string; state: RegulatorState },
  gatewaySubBusinessId: string,
  source: SubBusinessIdSource = "x-sub-business-id",
): Promise<T> {
  const doc = await subs.get(subKeyOf(caller.state, gatewaySubBusinessId));
  if (!doc) throw gwError("GW_SUB_BUSINESS_NOT_FOUND", { detail: `No represented business with that ${source}.` });
  if (doc.businessId !== caller.businessId)
    throw gwError("GW_SUB_BUSINESS_FORBIDDEN", { detail: "That represented business belongs to another top-level business." });
  return doc;
}

/** The represented businesses of a state with that TIN (whom an inbound invoice is addressed to). */
export async function businessesWithTin(subs: Collection<SubBusinessDoc>, state: RegulatorState, tin: string, limit: number): Promise<SubBusinessDoc[]> {
  return (await subs.find({ state, "identity.tin": tin }, { limit })).items;
}
