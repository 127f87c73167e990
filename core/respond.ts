/**
 * Success responses. Handlers return a Response built here, so the dispatcher always knows the
 * status and size it logs. Gateway JSON is plain; collections JSON is the service's envelope.
 */
import { FastResponse } from "srvx";
import type { RequestContext } from "./context.ts";

/**
 * Responses built by this module (and the error renderer) carry the request's X-Request-ID and a
 * Content-Length already: the dispatcher takes their body size from here instead of reading their
 * headers back (which would make srvx build a Headers object and write the response the slow way).
 */
const BUILT_SIZE = Symbol("gatehouse.builtSize");
type _Built = Response & { [BUILT_SIZE]?: number };

/** Marks `res` as built with its request id and `size` body bytes; returns it. */
export function built(res: Response, size: number): Response {
  (res as _Built)[BUILT_SIZE] = size;
  return res;
}

/** The body size of a response marked by `built`, or undefined for any other Response. */
export function builtSize(res: Response): number | undefined {
  return (res as _Built)[BUILT_SIZE];
}

export function json(ctx: RequestContext, status: number, body: unknown, headers?: Record<string, string>): Response {
  const text = JSON.stringify(body);
  const size = Buffer.byteLength(text);
  const res = new FastResponse(text, {
    status,
    headers: {
      "content-type": "application/json",
      "content-length": String(size),
      "cache-control": "no-store",
      "x-request-id": ctx.requestId,
      ...headers,
    },
  });
  return built(res, size);
}

export function html(ctx: RequestContext, status: number, page: string, headers?: Record<string, string>): Response {
  const size = Buffer.byteLength(page);
  const res = new FastResponse(page, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-length": String(size),
      "cache-control": "no-store",
      "x-request-id": ctx.requestId,
      "x-frame-options": "DENY",
      "content-security-policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; form-action 'self' https: http:",
      ...headers,
    },
  });
  return built(res, size);
}

export interface PageMeta {
  current_page: number;
  from: number;
  last_page: number;
  per_page: number;
  to: number;
  total: number;
}

/** The collections envelope (spec collections §2.1); `meta` on lists. */
export interface CollectionsEnvelope<T> {
  requestId: string;
  requestTimestamp: string;
  message: string;
  statusCode: number;
  data: T;
  meta?: PageMeta;
}

/** The collections envelope (spec collections §2.1). */
export function envelope(
  ctx: RequestContext,
  status: number,
  message: string,
  data: unknown,
  meta?: PageMeta,
): Response {
  const body: CollectionsEnvelope<unknown> = {
    requestId: ctx.requestId,
    requestTimestamp: collectionsTimestamp(),
    message,
    statusCode: status,
    data,
  };
  if (meta) body.meta = meta;
  return json(ctx, status, body);
}

export function pageMeta(page: number, perPage: number, total: number): PageMeta {
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const onPage = Math.max(0, Math.min(perPage, total - (page - 1) * perPage));
  const from = onPage === 0 ? 0 : (page - 1) * perPage + 1;
  const to = onPage === 0 ? 0 : from + onPage - 1;
  return { current_page: page, from, last_page: lastPage, per_page: perPage, to, total };
}

/** `YYYY-MM-DD HH:MM:SS.mmm` in UTC (collections §2.1). */
export function collectionsTimestamp(date: Date = new Date()): string {
  return date.toISOString().replace("T", " ").replace("Z", "");
}

/** An upstream answer relayed as it came (status, content type, body, safe headers already filtered). */
export interface RelayedAnswer {
  status: number;
  contentType: string;
  body: Uint8Array;
  headers: Record<string, string>;
}

export function relayed(ctx: RequestContext, res: RelayedAnswer): Response {
  const response = new FastResponse(res.body as Uint8Array<ArrayBuffer>, {
    status: res.status,
    headers: {
      ...res.headers,
      "content-type": res.contentType,
      "content-length": String(res.body.byteLength),
      "cache-control": "no-store",
      "x-request-id": ctx.requestId,
    },
  });
  return built(response, res.body.byteLength);
}
