/**
 * Public onboarding routes (spec §4.2): thin handlers — the core has validated the key, params,
 * query and body against the declaration; the handler calls the service and answers.
 * Every route: x-api-key on the business's approved domain, quota "management", any mode; a store
 * outage answers 503 GW_MANAGEMENT_SERVICE_UNAVAILABLE.
 */
import type { RequestContext } from "../../core/context.ts";
import type { RouteDeclaration } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import type { RegulatorState } from "../../adapters/regulator/port.ts";
import {
  ListQuery,
  OnboardingBody,
  ReverificationBody,
  RotationBody,
  SubBusinessParams,
  type ListInput,
  type OnboardingInput,
  type ReverificationInput,
  type RotationInput,
} from "./schemas.ts";
import type { Caller, OnboardingService } from "./service.ts";

export const PUBLIC_PATHS = {
  collection: "/sub-businesses",
  item: "/sub-businesses/:gatewaySubBusinessId",
  reverification: "/sub-businesses/:gatewaySubBusinessId/identity-reverification",
  versions: "/sub-businesses/:gatewaySubBusinessId/identity-versions",
  crypto: "/sub-businesses/:gatewaySubBusinessId/reg-crypto-material",
} as const;

/**
 * What every onboarding route answers when the store cannot (the service maps only the failures
 * whose effect is uncertain, with the operation's own code).
 */
export const STORE_UNAVAILABLE = {
  code: "GW_MANAGEMENT_SERVICE_UNAVAILABLE",
  detail: "The represented-business store is unavailable; retry as the retry field says.",
} as const;

const COMMON = { service: "gateway", auth: "apiKey", quota: "management", unavailable: STORE_UNAVAILABLE } as const;

export function publicRoutes(service: OnboardingService): RouteDeclaration[] {
  return [
    {
      ...COMMON,
      method: "POST",
      path: PUBLIC_PATHS.collection,
      idempotent: true,
      schemas: { body: OnboardingBody },
      summary: "Onboard a represented business with transient regulator credentials",
      description:
        "Authenticates at the regulator with the taxpayer's portal credentials (used once, never stored), loads the entity, selects the business (tin needed only when several are active) and stores its identity as version 1.",
      responses: { 201: "The represented business", 200: "Replay of a completed onboarding (same key and content)" },
      async handler(ctx) {
        const answer = await service.onboard(_caller(ctx), ctx.body as OnboardingInput);
        return json(ctx, answer.status, answer.body);
      },
    },
    {
      ...COMMON,
      method: "GET",
      path: PUBLIC_PATHS.collection,
      schemas: { query: ListQuery },
      summary: "List the represented businesses of the caller's business (stored snapshots)",
      responses: { 200: "{ data, nextCursor }" },
      async handler(ctx) {
        return json(ctx, 200, await service.list(_scope(ctx), ctx.query as unknown as ListInput));
      },
    },
    {
      ...COMMON,
      method: "GET",
      path: PUBLIC_PATHS.item,
      schemas: { params: SubBusinessParams },
      summary: "One represented business (stored snapshot; no regulator call)",
      responses: { 200: "The represented business" },
      async handler(ctx) {
        return json(ctx, 200, await service.get(_scope(ctx), ctx.params.gatewaySubBusinessId!));
      },
    },
    {
      ...COMMON,
      method: "POST",
      path: PUBLIC_PATHS.reverification,
      idempotent: true,
      schemas: { params: SubBusinessParams, body: ReverificationBody },
      summary: "Compare the regulator's current identity with the stored one; drift creates a review",
      responses: { 200: "The reverification result (status unchanged, review_created or review_pending)" },
      async handler(ctx) {
        const answer = await service.reverify(_caller(ctx), ctx.params.gatewaySubBusinessId!, ctx.body as ReverificationInput);
        return json(ctx, answer.status, answer.body);
      },
    },
    {
      ...COMMON,
      method: "GET",
      path: PUBLIC_PATHS.versions,
      schemas: { params: SubBusinessParams },
      summary: "Identity versions, reviews and migrations of a represented business",
      responses: { 200: "{ currentVersion, pendingReviewId, versions, reviews, migrations }" },
      async handler(ctx) {
        return json(ctx, 200, await service.identityVersions(_scope(ctx), ctx.params.gatewaySubBusinessId!));
      },
    },
    {
      ...COMMON,
      method: "POST",
      path: PUBLIC_PATHS.crypto,
      idempotent: true,
      schemas: { params: SubBusinessParams, body: RotationBody },
      summary: "Replace the QR material (cryptoVersion + 1 per accepted replacement)",
      description:
        "Never retry automatically after a timeout or an uncertain 5xx (spec §7.2 exception 1). Send expectedCryptoVersion to refuse the rotation when another one happened first.",
      responses: { 200: "The represented business with the new cryptoVersion" },
      async handler(ctx) {
        const answer = await service.rotateCrypto(_caller(ctx), ctx.params.gatewaySubBusinessId!, ctx.body as RotationInput);
        return json(ctx, answer.status, answer.body);
      },
    },
  ];
}

// --- Internal helpers ---

/** The top-level business and state resolved from the approved hostname (never from the request). */
function _scope(ctx: RequestContext): { businessId: string; state: RegulatorState } {
  return { businessId: ctx.businessId!, state: ctx.state! };
}

function _caller(ctx: RequestContext): Caller {
  return { ..._scope(ctx), requestId: ctx.requestId, route: ctx.route!.id, idempotencyKey: ctx.idempotencyKey! };
}
