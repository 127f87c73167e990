/**
 * The operator's identity decisions the onboarding plugin offers through the plugin kit
 * (IDENTITY_REVIEW_OPERATIONS in plugins/invoice/offers.ts), for the operator console: the same
 * service the Admin API routes call (admin-routes.ts), behind the same path, body and query
 * schemas, so a console decision and its API route validate, deduplicate and record alike.
 */
import * as v from "valibot";
import { gwError } from "../../core/errors/gateway-error.ts";
import type { IdentityReviewOperations } from "../invoice/offers.ts";
import { DecisionBody, MigrationBody, ReviewListQuery, ReviewParams, SubBusinessParams } from "./schemas.ts";
import type { OnboardingService } from "./service.ts";

export function identityReviewOperations(service: OnboardingService): IdentityReviewOperations {
  return {
    reviews: async (input) => {
      const page = await service.listReviews(_valid(ReviewListQuery, input, "query"));
      return { data: page.data as unknown as Record<string, unknown>[], nextCursor: page.nextCursor };
    },
    decideReview: async (op, gatewaySubBusinessId, reviewId, input) => {
      const p = _valid(ReviewParams, { gatewaySubBusinessId, reviewId }, "path");
      return service.decideReview(op, p.gatewaySubBusinessId, p.reviewId, _valid(DecisionBody, input, "body"));
    },
    migrate: async (op, gatewaySubBusinessId, input) =>
      service.migrate(op, _valid(SubBusinessParams, { gatewaySubBusinessId }, "path").gatewaySubBusinessId, _valid(MigrationBody, input, "body")),
  };
}

// --- Internal helpers ---

function _valid<S extends v.GenericSchema>(schema: S, input: unknown, location: "body" | "path" | "query"): v.InferOutput<S> {
  const r = v.safeParse(schema, input);
  if (r.success) return r.output;
  throw gwError("GW_REQUEST_VALIDATION_FAILED", {
    violations: r.issues.map((i) => ({ location, field: v.getDotPath(i) ?? "", code: "FORMAT", detail: i.message })),
  });
}
