/**
 * Pass-through sign attempts: the records the signing plugin writes, and recovery and the operator's
 * frozen list read.
 *
 *   signing_idempotency   one record per (top-level business, route, HMAC(key)); `_id` =
 *                         `${businessId}|${route}|${HMAC(key)}`; unique `attemptKey` (one record per
 *                         billing identity: represented business, domain, IRN, attempt number);
 *                         TTL field `expiresAtMs`.
 *
 * Never stored: raw idempotency keys or invoice bodies (only their HMAC).
 */
import type { BillingIdentity, Collection, Doc, DocumentStore } from "../../adapters/ports.ts";
import type { GwCode } from "../../core/errors/catalog.ts";
import { gwError, type GatewayError, type Violation } from "../../core/errors/gateway-error.ts";

export const SIGN_ATTEMPTS_COLLECTION = "signing_idempotency";

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

/** The collection with its indexes. */
export function openSignAttempts(store: DocumentStore): Collection<SignRecord> {
  return store.collection<SignRecord>(SIGN_ATTEMPTS_COLLECTION, {
    // operationId: operator resolution; status and money: the recovery jobs (abandoned attempts, held
    // fees) and the frozen-operations list (held fees newest first, operationId the cursor's tie-break);
    // businessId: the merchant dashboard's list of the business's sign operations, newest first.
    indexes: [
      { fields: ["attemptKey"], unique: true },
      { fields: ["operationId"] },
      { fields: ["status", "startedAtMs"] },
      { fields: ["money", "completedAtMs", "operationId"] },
      { fields: ["businessId", "startedAtMs"] },
    ],
    ttlField: "expiresAtMs",
  });
}

/** The parts of an attempt key: the state, and the billing identity. */
export interface AttemptKeyParts {
  state: string;
  domain: string;
  subBusinessId: string;
  irn: string;
  attemptNumber: number;
}

export function attemptKeyOf(k: AttemptKeyParts): string {
  return `${k.state}|${k.domain}|${k.subBusinessId}|${k.irn}|${k.attemptNumber}`;
}

/**
 * The parts of an `attemptKey` (`${state}|${domain}|${subBusinessId}|${irn}|${attempt}`); a
 * represented-business id may itself hold "|": it is whatever lies between domain and IRN.
 */
export function parseAttemptKey(key: string): AttemptKeyParts | null {
  const parts = key.split("|");
  if (parts.length < 5) return null;
  const attempt = parts[parts.length - 1]!;
  if (!/^\d+$/.test(attempt)) return null;
  return { state: parts[0]!, domain: parts[1]!, subBusinessId: parts.slice(2, -2).join("|"), irn: parts[parts.length - 2]!, attemptNumber: Number(attempt) };
}

/** The billing identity of an attempt (the ledger's key: one debit per identity). */
export function billingIdentityOf(k: Pick<AttemptKeyParts, "domain" | "subBusinessId" | "irn" | "attemptNumber">): BillingIdentity {
  return { subBusinessId: k.subBusinessId, domain: k.domain, irn: k.irn, attemptNumber: k.attemptNumber };
}

/** A GW_* error as a record answers it again. */
export function errorAnswer(err: GatewayError): StoredAnswer {
  return {
    kind: "error",
    code: err.code,
    detail: err.message,
    operationId: err.info.operationId ?? null,
    violations: err.info.violations ?? null,
  };
}

/** The error a stored error answer raises again (the same code, detail, operationId and violations). */
export function answeredError(answer: Extract<StoredAnswer, { kind: "error" }>): GatewayError {
  return gwError(answer.code as GwCode, {
    detail: answer.detail,
    ...(answer.operationId ? { operationId: answer.operationId } : {}),
    ...(answer.violations ? { violations: answer.violations as Violation[] } : {}),
  });
}

/**
 * The answer of an attempt whose holder stopped after calling the regulator (a stale or abandoned
 * record): its outcome cannot be proved, so it is frozen with its fee held.
 */
export function interruptedSignError(operationId: string): GatewayError {
  return gwError("GW_SIGN_OUTCOME_UNCONFIRMED", {
    detail: "The earlier request with this key stopped after calling the regulator; its result cannot be proved. Contact support with the operationId.",
    operationId,
  });
}
