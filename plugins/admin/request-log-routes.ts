/**
 * The operators' view of the request log (docs/operations.md "Admin API", docs/dashboard.md
 * "Request log"): a request ID across every business (what support is given by a merchant), or a
 * business's requests newest first with the dashboard's filters. x-admin-api-key, every host,
 * management quota; a store outage answers 503 GW_MANAGEMENT_SERVICE_UNAVAILABLE.
 */
import * as v from "valibot";
import { isInvalidQueryError } from "../../adapters/ports.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import { LIST_CURSOR, LIST_LIMIT } from "../../core/paging.ts";
import type { RouteDeclaration } from "../../core/plugin.ts";
import { STATUS_FILTER, type RequestLog } from "../../core/request-log/query.ts";
import { json } from "../../core/respond.ts";
import { badCursor } from "./directory/failures.ts";

const RequestLogQuery = v.object({
  businessId: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "a business id"))),
  requestId: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9._:-]{1,200}$/, "a request id"))),
  status: v.optional(v.pipe(v.string(), v.regex(STATUS_FILTER, "a status (404) or a class (4xx)"))),
  code: v.optional(v.pipe(v.string(), v.regex(/^(GW_[A-Z0-9_]{1,80}|none)$/, "a GW_ code or none"))),
  route: v.optional(v.pipe(v.string(), v.regex(/^(\/[A-Za-z0-9._~:{}-]*){1,20}$|^unmatched$/, "a route template (/invoices/:id) or unmatched"))),
  limit: LIST_LIMIT,
  cursor: LIST_CURSOR,
});

export function requestLogRoutes(requests: RequestLog): RouteDeclaration[] {
  return [
    {
      method: "GET",
      path: "/admin/requests",
      service: "gateway",
      hosts: "any",
      auth: "admin",
      quota: "management",
      skip: ["mode"],
      unavailable: { code: "GW_MANAGEMENT_SERVICE_UNAVAILABLE", detail: "The store is unavailable." },
      schemas: { query: RequestLogQuery },
      summary: "Operator: the request log (every API request of a business, last 7 days), newest first",
      description:
        "`requestId` alone finds that request whatever its business (with `businessId`, only within it). Otherwise `businessId` is required, with filters `status` (404 or 4xx), `code` (a GW_ code, or none), `route` (a route template such as /invoices/:id, or unmatched); `limit` 1–100 (default 50), `cursor` from `nextCursor`. Records hold no body, key or query value outside the documented safe parameters.",
      responses: { 200: "{ data: [request], nextCursor }" },
      async handler(ctx) {
        const q = ctx.query as unknown as v.InferOutput<typeof RequestLogQuery>;
        if (q.requestId !== undefined) {
          const hit = q.businessId === undefined ? await requests.findAny(q.requestId) : await requests.find(q.businessId, q.requestId);
          return json(ctx, 200, { data: hit ? [hit] : [], nextCursor: null });
        }
        if (q.businessId === undefined)
          throw gwError("GW_REQUEST_VALIDATION_FAILED", {
            detail: "The request has invalid values; see errors.",
            violations: [
              { location: "query", field: "businessId", code: "REQUIRED", detail: "a business id (or a requestId)" },
              // A cursor comes from one business's list: without the business it names no page.
              ...(q.cursor === undefined ? [] : [{ location: "query" as const, field: "cursor", code: "FORMAT" as const, detail: "an opaque cursor from nextCursor of this business's list" }]),
            ],
          });
        const page = await requests.list(q.businessId, { status: q.status, code: q.code, route: q.route }, { limit: q.limit ?? 50, cursor: q.cursor ?? null }).catch((e: unknown) => {
          if (isInvalidQueryError(e)) throw badCursor();
          throw e;
        });
        return json(ctx, 200, { data: page.items, nextCursor: page.nextCursor });
      },
    },
  ];
}
