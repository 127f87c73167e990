/**
 * What every onboarding use case works with, built once per gateway: the store, the regulator
 * client, the log, the HMAC key of idempotency records and fingerprints, the clock and the
 * idempotency engine. Also who calls: a customer (`Caller`, scoped by the approved hostname) or an
 * operator (`OperatorCaller`, x-admin-api-key).
 */
import { gwError } from "../../core/errors/gateway-error.ts";
import { createIdempotency, type Idempotency } from "../../core/idempotency.ts";
import type { Logger } from "../../core/log.ts";
import type { IdentityAttestor } from "../../adapters/ports.ts";
import type { RegulatorClient, RegulatorState } from "../../adapters/regulator/port.ts";
import type { OnboardingStore } from "./store.ts";

/** The pause before a duplicate of a still-running request asks again. */
const IN_PROGRESS_RETRY_AFTER_SECONDS = 2;

/** A customer request: the top-level business and state come from the approved hostname. */
export interface Caller {
  businessId: string;
  state: RegulatorState;
  requestId: string;
  /** Route id, part of the idempotency scope. */
  route: string;
  /** The validated x-idempotency-key (mutations). */
  idempotencyKey: string;
}

/** The part of a caller that decides which represented businesses it sees (reads). */
export type CallerScope = Pick<Caller, "businessId" | "state">;

/** An operator request (x-admin-api-key). */
export interface OperatorCaller {
  credentialId: string;
  requestId: string;
  route: string;
  idempotencyKey: string;
}

export interface OnboardingServiceOptions {
  store: OnboardingStore;
  regulator: RegulatorClient;
  /** Signs the verified identity at onboarding; null: none recorded (a gateway composed without one). */
  attestation?: IdentityAttestor | null;
  log: Logger;
  /** HMAC key for idempotency keys and fingerprints (store.ts deriveIdempotencySecret). */
  secret: Buffer;
  now: () => number;
  /** An in-progress mutation older than this is stale (its holder presumed dead). */
  staleAfterMs: number;
  /** How long a concurrent duplicate waits for the first request. */
  inFlightWaitMs: number;
  pollMs: number;
  /** How long idempotency records are kept. */
  retentionMs: number;
}

export interface OnboardingEnv {
  store: OnboardingStore;
  regulator: RegulatorClient;
  attestation: IdentityAttestor | null;
  log: Logger;
  secret: Buffer;
  now: () => number;
  idempotency: Idempotency;
}

export function createOnboardingEnv(o: OnboardingServiceOptions): OnboardingEnv {
  const idempotency = createIdempotency(o.store.idempotency, {
    now: o.now,
    staleAfterMs: o.staleAfterMs,
    waitMs: o.inFlightWaitMs,
    pollMs: o.pollMs,
    retentionMs: o.retentionMs,
    // A store outage reaches the route, which declares what it answers (GW_MANAGEMENT_SERVICE_UNAVAILABLE).
    unavailable: (e) => e,
    // The same key and content still running (regulator calls are slow): not a content conflict; the
    // same-key retry after a pause gets that onboarding's own outcome.
    inProgress: () =>
      gwError("GW_MANAGEMENT_SERVICE_UNAVAILABLE", {
        detail: "The request with this idempotency key is still in progress; retry with the same key and content after Retry-After to get its outcome.",
        retryAfterSeconds: IN_PROGRESS_RETRY_AFTER_SECONDS,
      }),
  });
  return { store: o.store, regulator: o.regulator, attestation: o.attestation ?? null, log: o.log, secret: o.secret, now: o.now, idempotency };
}

/** The env's clock as an ISO 8601 time (stored documents). */
export function isoNow(env: Pick<OnboardingEnv, "now">): string {
  return new Date(env.now()).toISOString();
}
