/**
 * Rolling a decided review forward, idempotently (a retry or a stale claim's recovery runs it
 * again): an approved or migrated review becomes the represented business's next identity version
 * (compare-and-set on identityVersion), a migration also moves externalBusinessId and is audited.
 * A migration the identity index refuses (the new regulator business is represented already) puts
 * the review back to pending.
 */
import { gwError } from "../../core/errors/gateway-error.ts";
import { KeepClaim, type Outcome } from "../../core/idempotency.ts";
import { isDuplicateKeyError } from "../../adapters/ports.ts";
import { isoNow, type OnboardingEnv, type OperatorCaller } from "./env.ts";
import { ALREADY_REPRESENTED, uncertain } from "./failures.ts";
import { sealVersion } from "./history.ts";
import { cleanIdentity } from "./identity.ts";
import { identityKeyOf, type MigrationDoc, type ReviewDoc, type SubBusinessDoc, type VersionSource } from "./store.ts";
import { migrationView, reviewView, subBusinessView } from "./views.ts";

/** The decision's effects (new identity version, migration audit) and its answer. */
export async function finishDecision(env: OnboardingEnv, review: ReviewDoc, op: OperatorCaller): Promise<Outcome> {
  let sub = await env.store.subBusinesses.get(review.subKey);
  if (!sub) throw gwError("GW_IDENTITY_SERVICE_INVALID_RESPONSE", { detail: "The represented business could not be read." });
  let migration: MigrationDoc | null = null;
  if (review.status === "approved" || review.status === "migrated") {
    sub = await _applyIdentity(env, sub, review);
    if (review.status === "migrated") migration = await _auditMigration(env, sub, review, op);
  }
  env.log.event("onboarding_identity_review_decided", {
    requestId: op.requestId,
    operatorCredentialId: op.credentialId,
    reviewId: review._id,
    gatewaySubBusinessId: review.gatewaySubBusinessId,
    status: review.status,
    appliedVersion: review.appliedVersion,
  });
  return {
    status: 200,
    body: {
      review: reviewView(review, true),
      subBusiness: subBusinessView(sub),
      ...(migration ? { migration: migrationView(migration, true) } : {}),
    },
  };
}

// --- Internal helpers ---

async function _applyIdentity(env: OnboardingEnv, sub: SubBusinessDoc, review: ReviewDoc): Promise<SubBusinessDoc> {
  const target = review.appliedVersion!;
  const source: VersionSource = review.status === "migrated" ? "migration" : "review";
  if (sub.identityVersion < target) sub = await _setIdentity(env, sub, review, target);
  await sealVersion(env, { ...sub, identityVersion: target, identity: review.observedIdentity, updatedAt: review.decidedAt ?? sub.updatedAt }, source, review._id);
  return sub;
}

/** The observed identity as version `target`, by compare-and-set on the review's base version. */
async function _setIdentity(env: OnboardingEnv, sub: SubBusinessDoc, review: ReviewDoc, target: number): Promise<SubBusinessDoc> {
  const observed = cleanIdentity(review.observedIdentity);
  const set: Record<string, unknown> = { identity: observed, identityVersion: target, updatedAt: isoNow(env) };
  if (review.status === "migrated") {
    set.externalBusinessId = observed.regulatorBusinessId;
    set.identityKey = identityKeyOf(sub.state, observed.regulatorBusinessId);
  }
  let updated: SubBusinessDoc | null;
  try {
    updated = await env.store.subBusinesses.findOneAndUpdate({ _id: sub._id, identityVersion: review.baseVersion }, { $set: set });
  } catch (e) {
    if (isDuplicateKeyError(e)) {
      await _reopen(env, review);
      throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", {
        title: ALREADY_REPRESENTED,
        detail: "The new regulator business is already represented through the gateway (spec §7.2 exception 2); the review stays pending.",
      });
    }
    throw new KeepClaim(uncertain(e, "GW_IDENTITY_SERVICE_INVALID_RESPONSE"));
  }
  if (updated) return updated;
  const current = await env.store.subBusinesses.get(sub._id);
  if (!current || current.identityVersion < target)
    throw new KeepClaim(gwError("GW_IDENTITY_SERVICE_INVALID_RESPONSE", { detail: "The identity version moved during the decision." }));
  return current;
}

/** A migration refused by the identity index: the review goes back to pending. */
async function _reopen(env: OnboardingEnv, review: ReviewDoc): Promise<void> {
  await env.store.reviews
    .findOneAndUpdate(
      { _id: review._id, status: review.status, decisionKey: review.decisionKey },
      {
        $set: {
          status: "pending",
          pendingKey: review.subKey,
          decidedAt: null,
          decidedBy: null,
          decisionKey: null,
          appliedVersion: null,
          migrationFrom: null,
        },
      },
    )
    .catch(() => null);
}

/** The migration's audit record (its `_id` derived from the review, so it is written once). */
async function _auditMigration(env: OnboardingEnv, sub: SubBusinessDoc, review: ReviewDoc, op: OperatorCaller): Promise<MigrationDoc> {
  const observed = review.observedIdentity;
  const doc: MigrationDoc = {
    _id: `migration-${review._id}`,
    subKey: sub._id,
    gatewaySubBusinessId: sub.gatewaySubBusinessId,
    reviewId: review._id,
    operatorCredentialId: review.decidedBy ?? op.credentialId,
    requestId: op.requestId,
    at: review.decidedAt ?? isoNow(env),
    from: review.migrationFrom!,
    to: {
      version: review.appliedVersion!,
      externalBusinessId: observed.regulatorBusinessId,
      entityId: observed.entityId,
      tin: observed.tin,
    },
  };
  try {
    await env.store.migrations.insert(doc);
    env.log.event("onboarding_identity_migrated", {
      requestId: op.requestId,
      operatorCredentialId: doc.operatorCredentialId,
      reviewId: review._id,
      gatewaySubBusinessId: sub.gatewaySubBusinessId,
      fromVersion: doc.from.version,
      toVersion: doc.to.version,
    });
    return doc;
  } catch (e) {
    if (isDuplicateKeyError(e)) return (await env.store.migrations.get(doc._id)) ?? doc;
    throw new KeepClaim(uncertain(e, "GW_IDENTITY_SERVICE_INVALID_RESPONSE"));
  }
}
