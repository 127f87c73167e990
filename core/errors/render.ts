/**
 * The single renderer: any thrown value → the response of the request's service.
 * Gateway routes answer problem+json with every field of spec §2.4 and the three headers;
 * collections routes answer the collections envelope (DECISIONS.md). Anything unexpected becomes
 * GW_INTERNAL_ERROR (500) with nothing internal in the body.
 */
import { FastResponse } from "srvx";
import type { RequestContext } from "../context.ts";
import { CATALOG, docsUrl, retryAfterSecondsOf, type GwCode } from "./catalog.ts";
import { isCollectionsError, isGatewayError, type GatewayError, type Violation } from "./gateway-error.ts";
import { built, collectionsTimestamp } from "../respond.ts";

export const MAX_VIOLATIONS = 20;

/** The collections service answers invalid input with 422 (DECISIONS.md), not the gateway's 400. */
const COLLECTIONS_STATUS: Partial<Record<GwCode, number>> = {
  GW_REQUEST_VALIDATION_FAILED: 422,
  GW_REQUEST_PATH_PARAMETER_INVALID: 422,
  GW_REQUEST_HEADER_INVALID: 422,
};
export const MAX_DETAIL = 256;

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  statusCode: number;
  detail: string;
  message: string;
  instance: string;
  code: GwCode;
  requestId: string;
  timestamp: string;
  action: { code: string; description: string; documentation: string };
  retry: { strategy: string; sameIdempotencyKey: boolean; afterSeconds?: number };
  errors?: Violation[];
  operationId?: string;
  path: string;
}

/** The collections service's error envelope (DECISIONS.md "Errors"). */
export interface CollectionsErrorBody {
  requestId: string;
  requestTimestamp: string;
  message: string;
  statusCode: number;
  errors: Array<{ field: string; message: string }>;
}

/** What the renderer decided, so the dispatcher can log the public code. */
export interface RenderedError {
  response: Response;
  code: string;
  internal: boolean;
}

export function renderError(ctx: RequestContext, error: unknown): RenderedError {
  if (isCollectionsError(error)) {
    const response = _collectionsResponse(ctx, error.status, error.message, error.errors);
    if (error.retryAfterSeconds !== undefined) response.headers.set("retry-after", String(error.retryAfterSeconds));
    return { response, code: `HTTP_${error.status}`, internal: false };
  }
  const internal = !isGatewayError(error);
  const gw: GatewayError | null = internal ? null : (error as GatewayError);
  const code: GwCode = gw ? gw.code : "GW_INTERNAL_ERROR";
  const row = CATALOG[code];
  if (ctx.service === "collections") {
    const message = gw?.info.detail ?? row.title;
    const errors = (gw?.info.violations ?? []).map((v) => ({ field: v.field ?? _dotted(v.pointer) ?? v.location, message: v.detail }));
    const res = _collectionsResponse(ctx, COLLECTIONS_STATUS[code] ?? row.status, message, errors);
    _retryHeaders(res.headers, gw, row);
    return { response: res, code, internal };
  }
  const text = JSON.stringify(problemBody(ctx, code, gw));
  const size = Buffer.byteLength(text);
  const res = new FastResponse(text, {
    status: row.status,
    headers: {
      "content-type": "application/problem+json",
      "content-length": String(size),
      "cache-control": "no-store",
      "x-request-id": ctx.requestId,
    },
  });
  _retryHeaders(res.headers, gw, row);
  return { response: built(res, size), code, internal };
}

export function problemBody(ctx: RequestContext, code: GwCode, gw: GatewayError | null): ProblemBody {
  const row = CATALOG[code];
  const detail = (gw?.info.detail ?? row.description).slice(0, MAX_DETAIL);
  const afterSeconds = retryAfterSecondsOf(row, gw?.info.retryAfterSeconds);
  const body: ProblemBody = {
    type: docsUrl(code),
    title: gw?.info.title ?? row.title,
    status: row.status,
    statusCode: row.status,
    detail,
    message: detail,
    instance: `urn:gatehouse:request:${ctx.requestId}`,
    code,
    requestId: ctx.requestId,
    timestamp: new Date().toISOString(),
    action: { code: row.action, description: row.description, documentation: docsUrl(code) },
    retry: {
      strategy: row.strategy,
      sameIdempotencyKey: row.sameIdempotencyKey,
      ...(afterSeconds !== undefined ? { afterSeconds } : {}),
    },
    path: ctx.path,
  };
  const violations = gw?.info.violations;
  if (violations && violations.length > 0) {
    body.errors = violations.slice(0, MAX_VIOLATIONS).map((v) => ({ ...v, detail: v.detail.slice(0, MAX_DETAIL) }));
  }
  if (gw?.info.operationId) body.operationId = gw.info.operationId;
  return body;
}

// --- Internal helpers ---

/** "/customer_emails/1" → "customer_emails.1": the collections envelope names fields as sent. */
function _dotted(pointer: string | undefined): string | undefined {
  if (pointer === undefined || pointer === "") return undefined;
  return pointer
    .slice(1)
    .split("/")
    .map((k) => k.replaceAll("~1", "/").replaceAll("~0", "~"))
    .join(".");
}

function _collectionsResponse(
  ctx: RequestContext,
  status: number,
  message: string,
  errors: Array<{ field: string; message: string }>,
): Response {
  const body: CollectionsErrorBody = { requestId: ctx.requestId, requestTimestamp: collectionsTimestamp(), message, statusCode: status, errors };
  const text = JSON.stringify(body);
  const size = Buffer.byteLength(text);
  const res = new FastResponse(text, {
    status,
    headers: {
      "content-type": "application/json",
      "content-length": String(size),
      "cache-control": "no-store",
      "x-request-id": ctx.requestId,
    },
  });
  return built(res, size);
}

function _retryHeaders(headers: Headers, gw: GatewayError | null, row: (typeof CATALOG)[GwCode]): void {
  const after = retryAfterSecondsOf(row, gw?.info.retryAfterSeconds);
  if (after !== undefined && (row.status === 429 || row.status === 503)) headers.set("retry-after", String(after));
  if (gw?.info.allow) headers.set("allow", gw.info.allow);
}
