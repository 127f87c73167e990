/**
 * The operator's identity decisions (DECISIONS.md "Paths not shown"): approve or reject a review of
 * additive drift, or apply a protected change as an audited migration. Each is idempotent per
 * operator credential: the review goes pending → decided by compare-and-set (a concurrent decision
 * loses with GW_IDENTITY_REVIEW_CONFLICT), then the decision is rolled forward (finishDecision),
 * which a retry or a stale claim's recovery repeats safely.
 */
import { gwError } from "../../core/errors/gateway-error.ts";
import { idempotencyId, type IdempotencyDoc, type IdempotentAnswer, type Outcome, type PresentedFingerprint } from "../../core/idempotency.ts";
import { finishDecision } from "./apply-decision.ts";
import { isoNow, type OnboardingEnv, type OperatorCaller } from "./env.ts";
import { reviewDecided } from "./failures.ts";
import { keyedPart } from "./fingerprint.ts";
import type { DecisionInput, MigrationInput } from "./schemas.ts";
import type { MigrationSide, ReviewDoc } from "./store.ts";

export async function decideReview(
  env: OnboardingEnv,
  op: OperatorCaller,
  gatewaySubBusinessId: string,
  reviewId: string,
  input: DecisionInput,
): Promise<IdempotentAnswer> {
  await _operatorReview(env, gatewaySubBusinessId, reviewId);
  const fingerprint = { target: keyedPart(env.secret, "target", reviewId), decision: input.decision };
  return _operatorRun(env, op, reviewId, fingerprint, async (recordId) => {
    const review = await _operatorReview(env, gatewaySubBusinessId, reviewId);
    if (review.status !== "pending") throw reviewDecided();
    if (input.decision === "approve" && review.requiresProtectedMigration)
      throw gwError("GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED", {
        detail: "The entity ID, business ID or TIN changed: apply it with POST /admin/sub-businesses/{id}/identity-migrations.",
      });
    const decided = await _claimDecision(env, review, input.decision === "approve" ? "approved" : "rejected", op, recordId, null);
    return finishDecision(env, decided, op);
  });
}

export async function migrate(env: OnboardingEnv, op: OperatorCaller, gatewaySubBusinessId: string, input: MigrationInput): Promise<IdempotentAnswer> {
  await _operatorReview(env, gatewaySubBusinessId, input.reviewId);
  const fingerprint = { target: keyedPart(env.secret, "target", input.reviewId), sub: keyedPart(env.secret, "sub", gatewaySubBusinessId) };
  return _operatorRun(env, op, input.reviewId, fingerprint, async (recordId) => {
    const review = await _operatorReview(env, gatewaySubBusinessId, input.reviewId);
    if (review.status !== "pending") throw reviewDecided();
    if (!review.requiresProtectedMigration)
      throw gwError("GW_IDENTITY_REVIEW_CONFLICT", {
        detail: "This review holds additive drift only; decide it with the review decision route.",
      });
    const sub = await env.store.subBusinesses.get(review.subKey);
    if (!sub || sub.identityVersion !== review.baseVersion) throw reviewDecided();
    const from: MigrationSide = {
      version: sub.identityVersion,
      externalBusinessId: sub.externalBusinessId,
      entityId: sub.identity.entityId,
      tin: sub.identity.tin,
    };
    const decided = await _claimDecision(env, review, "migrated", op, recordId, from);
    return finishDecision(env, decided, op);
  });
}

// --- Internal helpers ---

/** An operator mutation on `reviewId`, idempotent per operator credential; a stale claim is recovered from the review. */
function _operatorRun(
  env: OnboardingEnv,
  op: OperatorCaller,
  reviewId: string,
  fingerprint: PresentedFingerprint,
  execute: (recordId: string) => Promise<Outcome>,
): Promise<IdempotentAnswer> {
  const scope = `operator:${op.credentialId}`;
  const recordId = idempotencyId(env.secret, scope, op.route, op.idempotencyKey);
  return env.idempotency.run({
    recordId,
    scope,
    route: op.route,
    fingerprint,
    owner: op.requestId,
    onStale: (rec) => _recoverDecision(env, rec, reviewId, op),
    execute: () => execute(recordId),
  });
}

/** The review to decide: 404 for an unknown represented business or a review not of it. */
async function _operatorReview(env: OnboardingEnv, gatewaySubBusinessId: string, reviewId: string): Promise<ReviewDoc> {
  const [sub, review] = await Promise.all([env.store.subBusinesses.findOne({ gatewaySubBusinessId }), env.store.reviews.get(reviewId)]);
  if (!sub) throw gwError("GW_SUB_BUSINESS_NOT_FOUND", { detail: "No represented business with that gatewaySubBusinessId." });
  if (!review || review.gatewaySubBusinessId !== gatewaySubBusinessId || review.status === "unchanged")
    throw gwError("GW_IDENTITY_REVIEW_NOT_FOUND", { detail: "No review with that id for this represented business." });
  return review;
}

/** pending → decided, by compare-and-set (a concurrent decision loses with GW_IDENTITY_REVIEW_CONFLICT). */
async function _claimDecision(
  env: OnboardingEnv,
  review: ReviewDoc,
  status: "approved" | "rejected" | "migrated",
  op: OperatorCaller,
  recordId: string,
  migrationFrom: MigrationSide | null,
): Promise<ReviewDoc> {
  const updated = await env.store.reviews.findOneAndUpdate(
    { _id: review._id, status: "pending" },
    {
      $set: {
        status,
        decidedAt: isoNow(env),
        decidedBy: op.credentialId,
        decisionKey: recordId,
        appliedVersion: status === "rejected" ? null : review.baseVersion + 1,
        migrationFrom,
      },
      $unset: ["pendingKey"],
    },
  );
  if (!updated) throw reviewDecided();
  return updated;
}

/** A dead holder's decision: rolled forward when it was claimed, else run again. */
async function _recoverDecision(env: OnboardingEnv, rec: IdempotencyDoc, reviewId: string, op: OperatorCaller): Promise<Outcome | "takeover"> {
  const review = await env.store.reviews.get(reviewId);
  if (!review || review.decisionKey !== rec._id) return "takeover";
  return finishDecision(env, review, op);
}
