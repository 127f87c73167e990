/**
 * Identity reverification (spec §2.2, §3.1): the regulator's current identity of the represented
 * business, read with the taxpayer's transient credentials, compared with the stored version. No
 * drift records an `unchanged` check; drift creates a pending review (at most one per represented
 * business), or answers the pending one when it is the same change. Repeatable: a dead holder's
 * work is simply redone.
 */
import { hash, randomUUID } from "node:crypto";
import { gwError } from "../../core/errors/gateway-error.ts";
import { idempotencyId, type IdempotentAnswer, type Outcome } from "../../core/idempotency.ts";
import { isDuplicateKeyError } from "../../adapters/ports.ts";
import { isoNow, type Caller, type OnboardingEnv } from "./env.ts";
import { emailPart, keyedPart } from "./fingerprint.ts";
import { checkBusinessMetadata, cleanIdentity, diffIdentity, identityOf, selectForReverification, type IdentityDiff, type RegulatorIdentity } from "./identity.ts";
import { owned } from "./owned.ts";
import type { ReverificationInput } from "./schemas.ts";
import type { ReviewDoc, SubBusinessDoc } from "./store.ts";
import { requireLogin, verifiedEntity } from "./taxpayer.ts";
import { reverificationView, type ReverificationView } from "./views.ts";

export async function reverify(env: OnboardingEnv, caller: Caller, gatewaySubBusinessId: string, input: ReverificationInput): Promise<IdempotentAnswer> {
  await owned(env.store, caller, gatewaySubBusinessId);
  return env.idempotency.run({
    recordId: idempotencyId(env.secret, caller.businessId, caller.route, caller.idempotencyKey),
    scope: caller.businessId,
    route: caller.route,
    fingerprint: { target: keyedPart(env.secret, "target", gatewaySubBusinessId), email: emailPart(env.secret, input.regulatorCredentials) },
    omittable: ["email"],
    owner: caller.requestId,
    beforeClaim: () => void requireLogin(input.regulatorCredentials),
    // Reverification is repeatable (reviews are deduplicated): a dead holder's work is redone.
    onStale: async () => "takeover",
    execute: async () => {
      const login = requireLogin(input.regulatorCredentials);
      const entity = await verifiedEntity(env, caller.state, login, caller.requestId);
      const sub = await owned(env.store, caller, gatewaySubBusinessId);
      return _compare(env, caller, sub, identityOf(entity, checkBusinessMetadata(selectForReverification(entity, sub.identity))));
    },
  });
}

// --- Internal helpers ---

/** The observed identity against the stored one: an `unchanged` check, a new review or the pending one. */
async function _compare(env: OnboardingEnv, caller: Caller, sub: SubBusinessDoc, observed: RegulatorIdentity): Promise<Outcome> {
  const diff = diffIdentity(sub.identity, observed);
  const pending = await env.store.reviews.findOne({ pendingKey: sub._id });
  const driftHash = hash("sha256", JSON.stringify([sub.identityVersion, cleanIdentity(observed)]));
  const record = (status: "unchanged" | "pending", driftClass: ReviewDoc["driftClass"]) =>
    _reviewRecord(sub, diff, observed, driftHash, status, driftClass, isoNow(env));
  if (diff.changedFields.length === 0) {
    if (pending)
      throw gwError("GW_IDENTITY_REVIEW_CONFLICT", {
        detail: "A review of another identity change is pending; read identity-versions and wait for the operator's decision.",
      });
    const check = record("unchanged", sub.identityVersion === 1 ? "initial" : "none");
    await env.store.reviews.insert(check);
    return { status: 200, body: reverificationView(check, "unchanged") };
  }
  if (pending) return { status: 200, body: _pendingAnswer(pending, driftHash) };
  return _openReview(env, caller, sub, record("pending", diff.driftClass), driftHash);
}

/** Records the pending review; a concurrent reverification that created one first is answered instead. */
async function _openReview(env: OnboardingEnv, caller: Caller, sub: SubBusinessDoc, review: ReviewDoc, driftHash: string): Promise<Outcome> {
  try {
    await env.store.reviews.insert(review);
  } catch (e) {
    if (!isDuplicateKeyError(e)) throw e;
    // A concurrent reverification created the pending review first.
    const raced = await env.store.reviews.findOne({ pendingKey: sub._id });
    if (!raced) throw gwError("GW_MANAGEMENT_SERVICE_UNAVAILABLE", { detail: "The review could not be recorded; retry with the same key." });
    return { status: 200, body: _pendingAnswer(raced, driftHash) };
  }
  env.log.event("onboarding_identity_review_created", {
    requestId: caller.requestId,
    businessId: caller.businessId,
    gatewaySubBusinessId: sub.gatewaySubBusinessId,
    reviewId: review._id,
    driftClass: review.driftClass,
    changedFields: review.changedFields,
  });
  return { status: 200, body: reverificationView(review, "review_created") };
}

function _reviewRecord(
  sub: SubBusinessDoc,
  diff: IdentityDiff,
  observed: RegulatorIdentity,
  driftHash: string,
  status: "unchanged" | "pending",
  driftClass: ReviewDoc["driftClass"],
  at: string,
): ReviewDoc {
  return {
    _id: randomUUID(),
    status,
    driftClass,
    ...(status === "pending" ? { pendingKey: sub._id } : {}),
    subKey: sub._id,
    gatewaySubBusinessId: sub.gatewaySubBusinessId,
    businessId: sub.businessId,
    state: sub.state,
    changedFields: diff.changedFields,
    requiresProtectedMigration: diff.requiresProtectedMigration,
    baseVersion: sub.identityVersion,
    observedIdentity: cleanIdentity(observed),
    driftHash,
    createdAt: at,
    decidedAt: null,
    decidedBy: null,
    decisionKey: null,
    appliedVersion: null,
    migrationFrom: null,
  };
}

/** The pending review answers a reverification only when it is the same change. */
function _pendingAnswer(pending: ReviewDoc, driftHash: string): ReverificationView {
  if (pending.driftHash !== driftHash)
    throw gwError("GW_IDENTITY_REVIEW_CONFLICT", {
      detail: "Another identity change awaits review; read identity-versions and wait for the operator's decision.",
    });
  return reverificationView(pending, "review_pending");
}
