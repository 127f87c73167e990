/**
 * What the signing plugin keeps in the document store: its sign attempts (plugins/invoice/
 * sign-attempts.ts describes the records), and the keyed hashes it keeps instead of raw idempotency
 * keys and invoice bodies. Represented businesses are read (never written) from onboarding's
 * collection through the invoice kit's read model.
 */
import { deriveKey } from "../../core/keyed-hash.ts";
import type { Collection, DocumentStore } from "../../adapters/ports.ts";
import { openIdentityReviews, openRepresentedBusinesses, REPRESENTED_BUSINESSES_COLLECTION, type PendingReviewDoc, type SubBusinessDoc } from "../invoice/represented-businesses.ts";
import { openSignAttempts, SIGN_ATTEMPTS_COLLECTION, type SignRecord } from "../invoice/sign-attempts.ts";

export const SIGNING_COLLECTIONS = {
  idempotency: SIGN_ATTEMPTS_COLLECTION,
  subBusinesses: REPRESENTED_BUSINESSES_COLLECTION,
} as const;

export type { RepresentedBusiness } from "../invoice/represented-businesses.ts";
export { parseAttemptKey, type SignPhase, type SignRecord, type SignRecordStatus, type StoredAnswer } from "../invoice/sign-attempts.ts";

export interface SigningStore {
  idempotency: Collection<SignRecord>;
  subBusinesses: Collection<SubBusinessDoc>;
  /** Onboarding's identity reviews (read only: a pending protected migration stops signing). */
  reviews: Collection<PendingReviewDoc>;
}

export function openSigningStore(store: DocumentStore): SigningStore {
  return { idempotency: openSignAttempts(store), subBusinesses: openRepresentedBusinesses(store), reviews: openIdentityReviews(store) };
}

/** HMAC key for idempotency keys and fingerprints, derived from the deployment secret (same in every process). */
export function deriveSigningSecret(deploymentSecret: string): Buffer {
  return deriveKey(deploymentSecret, "signing-idempotency-v1");
}

export { canonicalJson, keyedHash } from "../../core/keyed-hash.ts";
