/**
 * What the onboarding plugin keeps in the document store, and the keyed hashes it keeps instead of
 * secrets. Six collections (docs/onboarding.md "Storage"):
 *
 *   onboarding_sub_businesses      one represented business (the invoice kit's read model:
 *                                  plugins/invoice/represented-businesses.ts)
 *   onboarding_identity_versions   identity history; `_id` = `${subKey}|v${version}`
 *   onboarding_identity_reviews    reverification outcomes; at most one `pending` per represented business
 *                                  (sparse unique `pendingKey`, present only while pending)
 *   onboarding_identity_migrations audit of protected migrations (operator, time, from/to)
 *   onboarding_crypto_versions     QR material history; `_id` = `${subKey}|c${cryptoVersion}`
 *   onboarding_idempotency         idempotency records; `_id` = `${scope}|${route}|${HMAC(key)}`, TTL
 *
 * Never stored: taxpayer passwords, taxpayer e-mails (only their HMAC inside a fingerprint), raw
 * idempotency keys (only their HMAC).
 */
import { hash } from "node:crypto";
import type { IdempotencyDoc } from "../../core/idempotency.ts";
import { deriveKey, keyedHash } from "../../core/keyed-hash.ts";
import type { Collection, Doc, DocumentStore } from "../../adapters/ports.ts";
import type { RegulatorState } from "../../adapters/regulator/port.ts";
import {
  openRepresentedBusinesses,
  REPRESENTED_BUSINESSES_COLLECTION,
  type SubBusinessDoc,
} from "../invoice/represented-businesses.ts";
import type { RegulatorIdentity } from "./identity.ts";

// The represented business itself is the invoice kit's read model (the invoice plugins read it).
export { identityKeyOf, subKeyOf, type CryptoMaterial, type SubBusinessDoc } from "../invoice/represented-businesses.ts";

export const COLLECTIONS = {
  subBusinesses: REPRESENTED_BUSINESSES_COLLECTION,
  versions: "onboarding_identity_versions",
  reviews: "onboarding_identity_reviews",
  migrations: "onboarding_identity_migrations",
  crypto: "onboarding_crypto_versions",
  idempotency: "onboarding_idempotency",
} as const;

export type VersionSource = "onboarding" | "review" | "migration";

export interface IdentityVersionDoc extends Doc {
  subKey: string;
  gatewaySubBusinessId: string;
  version: number;
  identity: RegulatorIdentity;
  source: VersionSource;
  reviewId: string | null;
  createdAt: string;
}

export type ReviewStatus = "pending" | "approved" | "rejected" | "migrated" | "unchanged";

export interface ReviewDoc extends Doc {
  subKey: string;
  gatewaySubBusinessId: string;
  businessId: string;
  state: RegulatorState;
  status: ReviewStatus;
  /** Present only while pending (sparse unique: one pending review per represented business). */
  pendingKey?: string;
  driftClass: "initial" | "none" | "additive" | "protected";
  changedFields: string[];
  requiresProtectedMigration: boolean;
  /** Identity version the observation was compared with. */
  baseVersion: number;
  observedIdentity: RegulatorIdentity;
  /** Hash of baseVersion + observedIdentity: "the same pending change". */
  driftHash: string;
  createdAt: string;
  decidedAt: string | null;
  /** Operator credential id. */
  decidedBy: string | null;
  /** Idempotency record of the decision (recovery of an interrupted decision). */
  decisionKey: string | null;
  /** Identity version the decision created (approve / migrate). */
  appliedVersion: number | null;
  /** Protected migration: the mapping before it (taken when the migration is claimed). */
  migrationFrom: MigrationSide | null;
}

export interface MigrationDoc extends Doc {
  subKey: string;
  gatewaySubBusinessId: string;
  reviewId: string;
  operatorCredentialId: string;
  requestId: string;
  at: string;
  from: MigrationSide;
  to: MigrationSide;
}

export interface MigrationSide {
  version: number;
  externalBusinessId: string;
  entityId: string;
  tin: string;
}

export interface CryptoVersionDoc extends Doc {
  subKey: string;
  gatewaySubBusinessId: string;
  version: number;
  publicKey: string;
  certificate: string;
  fingerprint: string;
  installedBy: string;
  installedAt: string;
}

export interface OnboardingStore {
  subBusinesses: Collection<SubBusinessDoc>;
  versions: Collection<IdentityVersionDoc>;
  reviews: Collection<ReviewDoc>;
  migrations: Collection<MigrationDoc>;
  crypto: Collection<CryptoVersionDoc>;
  idempotency: Collection<IdempotencyDoc>;
}

export function openOnboardingStore(store: DocumentStore): OnboardingStore {
  return {
    subBusinesses: openRepresentedBusinesses(store),
    versions: store.collection<IdentityVersionDoc>(COLLECTIONS.versions, { indexes: [{ fields: ["subKey", "version"], unique: true }] }),
    reviews: store.collection<ReviewDoc>(COLLECTIONS.reviews, {
      // status + createdAt: the operator's review list (every business, one status, oldest first).
      indexes: [{ fields: ["pendingKey"], unique: true, sparse: true }, { fields: ["subKey", "createdAt"] }, { fields: ["status", "createdAt"] }],
    }),
    migrations: store.collection<MigrationDoc>(COLLECTIONS.migrations, { indexes: [{ fields: ["subKey", "at"] }] }),
    crypto: store.collection<CryptoVersionDoc>(COLLECTIONS.crypto, {
      indexes: [{ fields: ["subKey", "version"], unique: true }, { fields: ["installedBy"] }],
    }),
    idempotency: store.collection<IdempotencyDoc>(COLLECTIONS.idempotency, { ttlField: "expiresAtMs" }),
  };
}

// ---------------------------------------------------------------------------
// Keyed hashes
// ---------------------------------------------------------------------------

/**
 * The HMAC key for idempotency keys and fingerprints, derived (HKDF-SHA256) from the deployment's
 * own regulator secret, so every process of a deployment derives the same key and nothing secret is
 * written to the store. Rotating that secret makes earlier keys unrecognisable (a replay then behaves
 * like an expired intent: spec §7.2 exception 2).
 */
export function deriveIdempotencySecret(deploymentSecret: string): Buffer {
  return deriveKey(deploymentSecret, "onboarding-idempotency-v1");
}

export { keyedHash };

/** "sha256:<hex>" of the QR material (public; shown in answers instead of the bodies). */
export function cryptoFingerprint(publicKey: string, certificate: string): string {
  return "sha256:" + hash("sha256", `${publicKey}\n${certificate}`);
}
