/**
 * Answers of server-rendered pages: the page itself with headers that keep it private and
 * unframeable (a strict Content-Security-Policy: no scripts, styles from the gateway only, forms
 * posting only to the same origin), and the stylesheet.
 */
import { FastResponse } from "srvx";
import type { RequestContext } from "../context.ts";
import { html as htmlResponse } from "../respond.ts";
import type { SafeHtml } from "./html.ts";
import { STYLESHEET, STYLESHEET_ETAG } from "./stylesheet.ts";

export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "referrer-policy": "same-origin",
  "x-content-type-options": "nosniff",
};

export function page(ctx: RequestContext, status: number, body: SafeHtml, headers: Record<string, string> = {}): Response {
  return htmlResponse(ctx, status, body.value, { ...PAGE_HEADERS, ...headers });
}

/** The kit's stylesheet (cacheable for a day; 304 when the ETag matches). */
export function stylesheet(ctx: RequestContext): Response {
  const headers = { etag: STYLESHEET_ETAG, "cache-control": "public, max-age=86400", "x-request-id": ctx.requestId, "x-content-type-options": "nosniff" };
  if (ctx.req.headers.get("if-none-match") === STYLESHEET_ETAG) return new FastResponse(null, { status: 304, headers });
  return new FastResponse(STYLESHEET, { status: 200, headers: { ...headers, "content-type": "text/css; charset=utf-8" } });
}
