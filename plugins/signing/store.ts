/**
 * What the signing plugin keeps in the document store, and the keyed hashes it keeps instead of
 * raw idempotency keys and invoice bodies.
 *
 *   signing_idempotency   one record per (top-level business, route, HMAC(key)); `_id` =
 *                         `${businessId}|${route}|${HMAC(key)}`; unique `attemptKey` (one record per
 *                         billing identity: represented business, domain, IRN, attempt number);
 *                         TTL field `expiresAtMs`.
 *
 * Represented businesses are read (never written) from onboarding's collection
 * `onboarding_sub_businesses` through the document-store port (docs/onboarding.md "Storage").
 */
import { deriveKey } from "../../core/keyed-hash.ts";
import type { Collection, Doc, DocumentStore } from "../../adapters/ports.ts";

export const SIGNING_COLLECTIONS = {
  idempotency: "signing_idempotency",
  subBusinesses: "onboarding_sub_businesses",
} as const;

/** The fields of onboarding's represented-business document this plugin reads. */
export interface RepresentedBusiness extends Doc {
  gatewaySubBusinessId: string;
  businessId: string;
  state: "TEST" | "LIVE";
  externalBusinessId: string;
  identity: { tin: string; irnTemplate: string | null; regulatorBusinessId: string };
}

/** "resolved": a frozen or held attempt settled afterwards (recovery job or operator; `resolution` says how). */
export type SignRecordStatus = "in_progress" | "completed" | "frozen" | "resolved";

/** How far the holder got: a stale record before "dispatching" can be taken over safely. */
export type SignPhase = "claimed" | "dispatching" | "done";

/** A stored answer: a passed-through regulator response, or a GW_* error to raise again. */
export type StoredAnswer =
  | { kind: "regulator"; status: number; contentType: string; bodyBase64: string; headers: Record<string, string> }
  | { kind: "error"; code: string; detail: string; operationId: string | null; violations: unknown[] | null };

export interface SignRecord extends Doc {
  businessId: string;
  route: string;
  /** HMAC of canonical body + x-sub-business-id + attempt number (never the body). */
  fingerprint: string;
  /** `${state}|${domain}|${subBusinessId}|${irn}|${attempt}`: unique. */
  attemptKey: string;
  operationId: string;
  status: SignRecordStatus;
  phase: SignPhase;
  /** Request id of the holder of the claim. */
  owner: string;
  startedAtMs: number;
  completedAtMs: number | null;
  answer: StoredAnswer | null;
  /** Money at the end: "none" | "debited" | "confirmed" | "reversed" | "held" (frozen or unconfirmed). */
  money: string;
  /** TTL (epoch ms). */
  expiresAtMs: number;
  /** How a frozen or held attempt was settled afterwards (plugins/recovery). */
  resolution?: { outcome: "signed" | "not_signed"; by: string; at: string; basis: string };
}

export interface SigningStore {
  idempotency: Collection<SignRecord>;
  subBusinesses: Collection<RepresentedBusiness>;
}

export function openSigningStore(store: DocumentStore): SigningStore {
  return {
    idempotency: store.collection<SignRecord>(SIGNING_COLLECTIONS.idempotency, {
      // operationId: operator resolution; the other two: the recovery jobs (abandoned attempts, held fees).
      indexes: [{ fields: ["attemptKey"], unique: true }, { fields: ["operationId"] }, { fields: ["status", "startedAtMs"] }, { fields: ["money", "completedAtMs"] }],
      ttlField: "expiresAtMs",
    }),
    subBusinesses: store.collection<RepresentedBusiness>(SIGNING_COLLECTIONS.subBusinesses),
  };
}

/**
 * The parts of an `attemptKey` (`${state}|${domain}|${subBusinessId}|${irn}|${attempt}`); a
 * represented-business id may itself hold "|": it is whatever lies between domain and IRN.
 */
export function parseAttemptKey(key: string): { state: string; domain: string; subBusinessId: string; irn: string; attemptNumber: number } | null {
  const parts = key.split("|");
  if (parts.length < 5) return null;
  const attempt = parts[parts.length - 1]!;
  if (!/^\d+$/.test(attempt)) return null;
  return { state: parts[0]!, domain: parts[1]!, subBusinessId: parts.slice(2, -2).join("|"), irn: parts[parts.length - 2]!, attemptNumber: Number(attempt) };
}

/** HMAC key for idempotency keys and fingerprints, derived from the deployment secret (same in every process). */
export function deriveSigningSecret(deploymentSecret: string): Buffer {
  return deriveKey(deploymentSecret, "signing-idempotency-v1");
}

export { canonicalJson, keyedHash } from "../../core/keyed-hash.ts";

