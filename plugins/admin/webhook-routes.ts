/**
 * Operator routes of the webhook delivery log (docs/webhooks.md "For operators"): every business's
 * deliveries, failed first, filtered by business, status, event type or endpoint; one delivery with
 * its attempts; resend (one more attempt now, idempotent on x-idempotency-key, audited — the
 * console's resend calls the same core/webhook-deliveries.ts service); a business's endpoints.
 * x-admin-api-key, answered on every host, management quota; a store outage answers 503.
 */
import * as v from "valibot";
import { isInvalidQueryError, type WebhookDeliveryLog } from "../../adapters/ports.ts";
import { openDirectoryStore } from "../../core/directory-store.ts";
import type { TenantDirectory } from "../../core/directory.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import { LIST_CURSOR, LIST_LIMIT } from "../../core/paging.ts";
import type { PluginKit, RouteDeclaration } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import { WEBHOOK_ID_PATTERN, deliverySummary, resendDelivery } from "../../core/webhook-deliveries.ts";
import { badCursor } from "./directory/failures.ts";

export const WEBHOOK_PATHS = {
  deliveries: "/admin/webhooks/deliveries",
  delivery: "/admin/webhooks/deliveries/:webhookId",
  resend: "/admin/webhooks/deliveries/:webhookId/resend",
  endpoints: "/admin/businesses/:businessId/webhook-endpoints",
} as const;

const OPERATOR = {
  service: "gateway",
  hosts: "any",
  auth: "admin",
  quota: "management",
  skip: ["mode"],
  unavailable: { code: "GW_MANAGEMENT_SERVICE_UNAVAILABLE", detail: "The store is unavailable." },
} as const;

const BUSINESS_ID = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "a business id"));
const DeliveryQuery = v.object({
  businessId: v.optional(BUSINESS_ID),
  status: v.optional(v.picklist(["pending", "delivered", "dead", "no_endpoint"], "pending, delivered, dead or no_endpoint")),
  eventType: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9._:-]{1,80}$/, "an event type"))),
  endpointId: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,100}$/, "an endpoint id"))),
  limit: LIST_LIMIT,
  cursor: LIST_CURSOR,
});
const DeliveryParams = v.object({ webhookId: v.pipe(v.string(), v.regex(WEBHOOK_ID_PATTERN, "a webhook id (msg_…)")) });
const BusinessParams = v.object({ businessId: BUSINESS_ID });

export function webhookRoutes(kit: PluginKit, log: WebhookDeliveryLog): RouteDeclaration[] {
  const audit = openDirectoryStore(kit.ports.documentStore).audit;
  return [_listRoute(log), _oneRoute(log), _resendRoute(kit, log, audit), _endpointsRoute(kit.directory)];
}

// --- Internal helpers ---

function _listRoute(log: WebhookDeliveryLog): RouteDeclaration {
  return {
    ...OPERATOR,
    method: "GET",
    path: WEBHOOK_PATHS.deliveries,
    schemas: { query: DeliveryQuery },
    summary: "Operator: webhook deliveries, failed first",
    description:
      "Every business's webhook messages without their bodies: failed ones first (dead, or waiting after a failed attempt), then newest first; with `status`, newest first. Filters `businessId`, `status`, `eventType`, `endpointId`; `limit` 1–100 (default 50), `cursor` from `nextCursor`.",
    responses: { 200: "{ data: [delivery], nextCursor }" },
    async handler(ctx) {
      const q = ctx.query as unknown as v.InferOutput<typeof DeliveryQuery>;
      const page = await log.list({ ...q, failedFirst: true, limit: q.limit ?? 50, cursor: q.cursor ?? null }).catch((e: unknown) => {
        if (isInvalidQueryError(e)) throw badCursor();
        throw e;
      });
      return json(ctx, 200, { data: page.items.map(deliverySummary), nextCursor: page.nextCursor });
    },
  };
}

function _oneRoute(log: WebhookDeliveryLog): RouteDeclaration {
  return {
    ...OPERATOR,
    method: "GET",
    path: WEBHOOK_PATHS.delivery,
    schemas: { params: DeliveryParams },
    summary: "Operator: one webhook delivery with its attempts",
    description: "The message (its exact body), its status, next retry and the most recent attempts (time, response status, duration, error class). Never the endpoint secret.",
    responses: { 200: "The delivery" },
    async handler(ctx) {
      const d = await log.get(ctx.params.webhookId!);
      if (!d) throw gwError("GW_OPERATION_NOT_FOUND", { detail: "No webhook delivery with that id." });
      return json(ctx, 200, d);
    },
  };
}

function _resendRoute(kit: PluginKit, log: WebhookDeliveryLog, audit: ReturnType<typeof openDirectoryStore>["audit"]): RouteDeclaration {
  return {
    ...OPERATOR,
    method: "POST",
    path: WEBHOOK_PATHS.resend,
    idempotent: true,
    schemas: { params: DeliveryParams },
    summary: "Operator: resend one webhook delivery (one more attempt now)",
    description:
      "A delivered or dead message gets one more attempt now (no retry schedule after it); a waiting one is brought forward. Idempotent on x-idempotency-key: the same key again resends nothing and answers `resent: false`. A message recorded without an endpoint cannot be resent (400). Audited (`webhook_delivery.resend`).",
    responses: { 200: "{ resent, delivery }" },
    async handler(ctx) {
      const by = { actor: `operator:${ctx.principal?.credentialId ?? "unknown"}`, requestId: ctx.requestId };
      const r = await resendDelivery(log, audit, by, ctx.params.webhookId!, ctx.idempotencyKey!, undefined, Date.now());
      if (!r) throw gwError("GW_OPERATION_NOT_FOUND", { detail: "No webhook delivery with that id." });
      if (r.reason === "no_endpoint") {
        const detail = "The message was recorded without an endpoint; there is nowhere to send it.";
        throw gwError("GW_REQUEST_VALIDATION_FAILED", { detail, violations: [{ location: "path", field: "webhookId", code: "MISMATCH", detail }] });
      }
      kit.log.event("admin_webhook_resend", { requestId: ctx.requestId, webhookId: r.delivery.webhookId, businessId: r.delivery.businessId, resent: r.resent });
      return json(ctx, 200, { resent: r.resent, delivery: deliverySummary(r.delivery) });
    },
  };
}

function _endpointsRoute(directory: TenantDirectory): RouteDeclaration {
  return {
    ...OPERATOR,
    method: "GET",
    path: WEBHOOK_PATHS.endpoints,
    schemas: { params: BusinessParams },
    summary: "Operator: a business's webhook endpoints",
    description: "URL, services (invoice, collections), enabled or why disabled, failing since, secret hints (never a secret). Unknown business → 404.",
    responses: { 200: "{ data: [endpoint] }" },
    async handler(ctx) {
      const businessId = ctx.params.businessId!;
      if (!directory.business(businessId)) throw gwError("GW_OPERATION_NOT_FOUND", { detail: "No business with that id." });
      return json(ctx, 200, { data: await directory.webhooks.list(businessId) });
    },
  };
}
