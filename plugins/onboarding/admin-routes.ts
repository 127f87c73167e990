/**
 * Operator routes of the onboarding plugin (DECISIONS.md "Paths not shown"): the list of identity
 * reviews (pending by default), the review decision and the protected migration. x-admin-api-key
 * (401 GW_ADMIN_AUTHENTICATION_FAILED otherwise), answered on every host (`hosts: "any"`: an
 * operator is not tied to one business's domain; in trusted edge mode an authenticated any-host
 * route still needs the verified edge), quota "management" per operator credential; the mutations
 * are idempotent (x-idempotency-key, scope = the operator credential).
 */
import type { RouteDeclaration } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import type { RequestContext } from "../../core/context.ts";
import {
  DecisionBody,
  MigrationBody,
  ReviewListQuery,
  ReviewParams,
  SubBusinessParams,
  type DecisionInput,
  type MigrationInput,
  type ReviewListInput,
} from "./schemas.ts";
import { STORE_UNAVAILABLE } from "./routes.ts";
import type { OnboardingService, OperatorCaller } from "./service.ts";

export const ADMIN_PATHS = {
  reviews: "/admin/identity-reviews",
  decision: "/admin/sub-businesses/:gatewaySubBusinessId/identity-reviews/:reviewId/decision",
  migrations: "/admin/sub-businesses/:gatewaySubBusinessId/identity-migrations",
} as const;

const READ = {
  service: "gateway",
  hosts: "any",
  auth: "admin",
  quota: "management",
  skip: ["mode"],
  unavailable: STORE_UNAVAILABLE,
} as const;
const COMMON = { ...READ, idempotent: true } as const;

export function adminRoutes(service: OnboardingService): RouteDeclaration[] {
  return [
    {
      ...READ,
      method: "GET",
      path: ADMIN_PATHS.reviews,
      schemas: { query: ReviewListQuery },
      summary: "Operator: identity reviews of every business (pending by default)",
      description: "Filters: `status` (pending, approved, rejected, migrated; default pending), `businessId`; oldest first, `limit` 1–100, `cursor` from `nextCursor`.",
      responses: { 200: "{ data: [review], nextCursor }" },
      handler: async (ctx) => json(ctx, 200, await service.listReviews(ctx.query as unknown as ReviewListInput)),
    },
    {
      ...COMMON,
      method: "POST",
      path: ADMIN_PATHS.decision,
      schemas: { params: ReviewParams, body: DecisionBody },
      summary: "Operator: approve or reject an identity review",
      description:
        "approve applies additive drift as a new identity version; a protected review (entity ID, business ID or TIN) answers GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED. A decided review answers GW_IDENTITY_REVIEW_CONFLICT.",
      responses: { 200: "{ review, subBusiness }" },
      async handler(ctx) {
        const answer = await service.decideReview(
          _operator(ctx),
          ctx.params.gatewaySubBusinessId!,
          ctx.params.reviewId!,
          ctx.body as DecisionInput,
        );
        return json(ctx, answer.status, answer.body);
      },
    },
    {
      ...COMMON,
      method: "POST",
      path: ADMIN_PATHS.migrations,
      schemas: { params: SubBusinessParams, body: MigrationBody },
      summary: "Operator: apply a protected identity change (audited migration)",
      description:
        "gatewaySubBusinessId stays; externalBusinessId moves to the new regulator business id; a new identity version and an audit record (operator credential, time, from/to) are written.",
      responses: { 200: "{ review, subBusiness, migration }" },
      async handler(ctx) {
        const answer = await service.migrate(_operator(ctx), ctx.params.gatewaySubBusinessId!, ctx.body as MigrationInput);
        return json(ctx, answer.status, answer.body);
      },
    },
  ];
}

// --- Internal helpers ---

function _operator(ctx: RequestContext): OperatorCaller {
  return {
    credentialId: ctx.principal!.credentialId,
    requestId: ctx.requestId,
    route: ctx.route!.id,
    idempotencyKey: ctx.idempotencyKey!,
  };
}
