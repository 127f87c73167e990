/**
 * Operator routes of the onboarding plugin (DECISIONS.md "Paths not shown"): the review decision
 * and the protected migration. x-admin-api-key (401 GW_ADMIN_AUTHENTICATION_FAILED otherwise),
 * answered on every host (`hosts: "any"`: an operator is not tied to one business's domain; in
 * trusted edge mode an authenticated any-host route still needs the verified edge), quota
 * "management" per operator credential, idempotent (x-idempotency-key, scope = the operator credential).
 */
import type { RouteDeclaration } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import { idempotencyKey } from "../../core/validation.ts";
import type { RequestContext } from "../../core/context.ts";
import { DecisionBody, MigrationBody, ReviewParams, SubBusinessParams, type DecisionInput, type MigrationInput } from "./schemas.ts";
import type { OnboardingService, OperatorCaller } from "./service.ts";

export const ADMIN_PATHS = {
  decision: "/admin/sub-businesses/:gatewaySubBusinessId/identity-reviews/:reviewId/decision",
  migrations: "/admin/sub-businesses/:gatewaySubBusinessId/identity-migrations",
} as const;

const COMMON = {
  service: "gateway",
  hosts: "any",
  auth: "admin",
  quota: "management",
  idempotent: true,
  skip: ["mode"],
} as const;

export function adminRoutes(service: OnboardingService): RouteDeclaration[] {
  return [
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
    idempotencyKey: idempotencyKey(ctx)!,
  };
}
