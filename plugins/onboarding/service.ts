/**
 * Onboarding domain logic: represented businesses (spec §2.1), identity reverification and review
 * (§2.2, §3.1), QR-material rotation, and the operator's review decisions and protected migrations.
 * Sees only ports: the document store (through OnboardingStore) and the regulator client. One
 * module per use case; this file declares the service and composes them:
 *
 *   onboard.ts         onboarding (taxpayer credentials → identity version 1)
 *   reverify.ts        reverification (drift → a pending review)
 *   rotate-crypto.ts   QR-material rotation (cryptoVersion + 1)
 *   reads.ts           list, one, identity versions; the operator's review list
 *   decisions.ts       operator: review decision and protected migration (apply-decision.ts rolls them forward)
 *   owned.ts           the ownership check; env.ts, taxpayer.ts, fingerprint.ts, history.ts, failures.ts, paging.ts: shared parts
 *
 * Taxpayer credentials are used for the two regulator calls of one request and dropped: they are
 * never stored (the idempotency fingerprint holds an HMAC of the e-mail, nothing of the password),
 * never logged and never put in an error. A store outage is answered by the routes' declaration
 * (GW_MANAGEMENT_SERVICE_UNAVAILABLE); the service maps only the failures whose effect is uncertain.
 */
import type { IdempotentAnswer } from "../../core/idempotency.ts";
import { decideReview, migrate } from "./decisions.ts";
import { createOnboardingEnv, type CallerScope, type Caller, type OnboardingServiceOptions, type OperatorCaller } from "./env.ts";
import { onboard } from "./onboard.ts";
import { getSubBusiness, identityVersions, listReviews, listSubBusinesses, type IdentityVersionsView, type ListPage, type ReviewPage } from "./reads.ts";
import { reverify } from "./reverify.ts";
import { rotateCrypto } from "./rotate-crypto.ts";
import type { DecisionInput, ListInput, MigrationInput, OnboardingInput, ReverificationInput, ReviewListInput, RotationInput } from "./schemas.ts";
import type { SubBusinessView } from "./views.ts";

export type { Caller, CallerScope, OnboardingServiceOptions, OperatorCaller } from "./env.ts";
export type { IdentityVersionsView, ListPage, ReviewPage } from "./reads.ts";
export { onboardingFingerprint } from "./fingerprint.ts";

/** What the onboarding routes call. Mutations answer `{ status, body, replayed }` (idempotent). */
export interface OnboardingService {
  onboard(caller: Caller, input: OnboardingInput): Promise<IdempotentAnswer>;
  list(caller: CallerScope, input: ListInput): Promise<ListPage>;
  get(caller: CallerScope, gatewaySubBusinessId: string): Promise<SubBusinessView>;
  identityVersions(caller: CallerScope, gatewaySubBusinessId: string): Promise<IdentityVersionsView>;
  reverify(caller: Caller, gatewaySubBusinessId: string, input: ReverificationInput): Promise<IdempotentAnswer>;
  rotateCrypto(caller: Caller, gatewaySubBusinessId: string, input: RotationInput): Promise<IdempotentAnswer>;
  /** Operator: identity reviews of every business in one status. */
  listReviews(input: ReviewListInput): Promise<ReviewPage>;
  /** Operator: approve or reject a review of additive drift. */
  decideReview(op: OperatorCaller, gatewaySubBusinessId: string, reviewId: string, input: DecisionInput): Promise<IdempotentAnswer>;
  /** Operator: apply a protected identity change (audited migration). */
  migrate(op: OperatorCaller, gatewaySubBusinessId: string, input: MigrationInput): Promise<IdempotentAnswer>;
}

export function createOnboardingService(o: OnboardingServiceOptions): OnboardingService {
  const env = createOnboardingEnv(o);
  return {
    onboard: (caller, input) => onboard(env, caller, input),
    list: (caller, input) => listSubBusinesses(env, caller, input),
    get: (caller, id) => getSubBusiness(env, caller, id),
    identityVersions: (caller, id) => identityVersions(env, caller, id),
    reverify: (caller, id, input) => reverify(env, caller, id, input),
    rotateCrypto: (caller, id, input) => rotateCrypto(env, caller, id, input),
    listReviews: (input) => listReviews(env, input),
    decideReview: (op, id, reviewId, input) => decideReview(env, op, id, reviewId, input),
    migrate: (op, id, input) => migrate(env, op, id, input),
  };
}
