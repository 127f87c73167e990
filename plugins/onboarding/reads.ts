/**
 * The reads: a caller's represented businesses (list and one), a represented business's identity
 * history, and the operator's list of identity reviews. Built from stored documents only: a read
 * never calls the regulator.
 */
import type { Filter } from "../../adapters/ports.ts";
import type { CallerScope, OnboardingEnv } from "./env.ts";
import { cleanIdentity } from "./identity.ts";
import { owned } from "./owned.ts";
import { pageByCreatedAt } from "./paging.ts";
import type { ListInput, ReviewListInput } from "./schemas.ts";
import {
  migrationView,
  reviewView,
  subBusinessView,
  versionView,
  type MigrationView,
  type OperatorReviewView,
  type ReviewView,
  type SubBusinessView,
  type VersionView,
} from "./views.ts";

export interface ListPage {
  data: SubBusinessView[];
  nextCursor: string | null;
}

export interface ReviewPage {
  data: OperatorReviewView[];
  nextCursor: string | null;
}

/** GET /sub-businesses/{id}/identity-versions. */
export interface IdentityVersionsView {
  gatewaySubBusinessId: string;
  externalBusinessId: string;
  currentVersion: number;
  pendingReviewId: string | null;
  versions: VersionView[];
  reviews: ReviewView[];
  migrations: MigrationView[];
}

export async function listSubBusinesses(env: OnboardingEnv, caller: CallerScope, input: ListInput): Promise<ListPage> {
  const page = await pageByCreatedAt(env.store.subBusinesses, { businessId: caller.businessId, state: caller.state }, input);
  return { data: page.items.map(subBusinessView), nextCursor: page.nextCursor };
}

export async function getSubBusiness(env: OnboardingEnv, caller: CallerScope, gatewaySubBusinessId: string): Promise<SubBusinessView> {
  return subBusinessView(await owned(env.store, caller, gatewaySubBusinessId));
}

/** Operator: reviews of every business in one status (default pending), oldest first. */
export async function listReviews(env: OnboardingEnv, input: ReviewListInput): Promise<ReviewPage> {
  const filter: Filter = { status: input.status };
  if (input.businessId !== undefined) filter.businessId = input.businessId;
  const page = await pageByCreatedAt(env.store.reviews, filter, input);
  return { data: page.items.map((r) => ({ ...reviewView(r, true), businessId: r.businessId, state: r.state })), nextCursor: page.nextCursor };
}

export async function identityVersions(env: OnboardingEnv, caller: CallerScope, gatewaySubBusinessId: string): Promise<IdentityVersionsView> {
  const sub = await owned(env.store, caller, gatewaySubBusinessId);
  const [versions, reviews, migrations] = await Promise.all([
    env.store.versions.find({ subKey: sub._id }, { sort: [{ field: "version", direction: 1 }], limit: 1000 }),
    env.store.reviews.find({ subKey: sub._id }, { sort: [{ field: "createdAt", direction: -1 }], limit: 100 }),
    env.store.migrations.find({ subKey: sub._id }, { sort: [{ field: "at", direction: 1 }], limit: 100 }),
  ]);
  const history = versions.items.map((v) => versionView(v, sub.identityVersion));
  // The represented business is the truth: a version whose history write was lost is shown from it.
  if (!history.some((v) => v.version === sub.identityVersion))
    history.push({
      version: sub.identityVersion,
      current: true,
      source: sub.identityVersion === 1 ? "onboarding" : "review",
      reviewId: null,
      identity: cleanIdentity(sub.identity),
      createdAt: sub.updatedAt,
    });
  const pending = reviews.items.find((r) => r.status === "pending");
  return {
    gatewaySubBusinessId: sub.gatewaySubBusinessId,
    externalBusinessId: sub.externalBusinessId,
    currentVersion: sub.identityVersion,
    pendingReviewId: pending?._id ?? null,
    versions: history,
    reviews: reviews.items.map((r) => reviewView(r)),
    migrations: migrations.items.map((m) => migrationView(m)),
  };
}
