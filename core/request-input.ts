/**
 * The route's own checks, run after the pipeline from the route's declaration: server-managed
 * fields in headers and query, the idempotency key (`ctx.idempotencyKey`), params, query, then the
 * body — read (limit, deadline, completeness), authenticated over its raw bytes when the route says
 * so (`verifyBody`), its JSON shape checked (depth, members) before anything parses it, parsed,
 * server-managed body fields, schema.
 */
import type { RequestContext } from "./context.ts";
import { gwError } from "./errors/gateway-error.ts";
import { readBody } from "./http/body.ts";
import { idempotencyKey, rejectServerManagedFields, rejectServerManagedParams, validateInput } from "./validation.ts";

/** Synchronous when the route reads no body; else a promise of the body's checks. */
export function prepareInput(ctx: RequestContext, bodyTimeoutMs: number, checkJson: (text: string) => void): Promise<void> | undefined {
  const d = ctx.route!.decl;
  const serverFields = d.rejectServerFields ?? d.service === "gateway";
  if (serverFields) rejectServerManagedParams(ctx);
  if (d.idempotent) ctx.idempotencyKey = idempotencyKey(ctx, d.idempotent === true);
  if (d.schemas?.params) ctx.params = validateInput(d.schemas.params, ctx.params, "path") as Record<string, string>;
  if (d.schemas?.query) {
    const query: Record<string, string> = {};
    for (const [k, value] of new URLSearchParams(ctx.search)) if (!(k in query)) query[k] = value;
    ctx.query = validateInput(d.schemas.query, query, "query") as Record<string, string>;
  }
  if (d.method === "GET" || d.method === "DELETE") return;
  return _readInputBody(ctx, bodyTimeoutMs, checkJson, serverFields);
}

// --- Internal helpers ---

const UTF8 = new TextDecoder();

async function _readInputBody(ctx: RequestContext, bodyTimeoutMs: number, checkJson: (text: string) => void, serverFields: boolean): Promise<void> {
  const route = ctx.route!;
  const bytes = await readBody(ctx, route.bodyLimit, bodyTimeoutMs);
  ctx.rawBody = bytes;
  route.decl.verifyBody?.(ctx, bytes);
  let body: unknown = undefined;
  if (bytes.byteLength > 0) {
    const text = UTF8.decode(bytes);
    const type = (ctx.req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type === "application/x-www-form-urlencoded") body = Object.fromEntries(new URLSearchParams(text));
    else {
      checkJson(text);
      try {
        body = JSON.parse(text);
      } catch {
        throw gwError("GW_REQUEST_INVALID_JSON", { detail: "The body is not valid JSON." });
      }
    }
  }
  if (serverFields) rejectServerManagedFields(body);
  ctx.body = route.decl.schemas?.body ? validateInput(route.decl.schemas.body, body, "body") : body;
}
