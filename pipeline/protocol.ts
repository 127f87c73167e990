/**
 * Stage 3, protocol: the caller's X-Request-ID (validated, correlation only), the content type of
 * a request that carries a body (415), and its declared size against the route's limit (413).
 * Bodies are read later, inside the capacity-guarded part of the request, by `readBody` below:
 * it enforces the same limit while streaming (bodies without Content-Length), a read deadline
 * (408 GW_REQUEST_BODY_TIMEOUT) and completeness (400 GW_REQUEST_BODY_INCOMPLETE).
 */
import type { IncomingMessage } from "node:http";
import { gwError } from "../core/errors/gateway-error.ts";
import type { RequestContext } from "../core/context.ts";
import { callerRequestId } from "../core/validation.ts";
import { defineStage } from "./define-stage.ts";

export const protocolStage = defineStage({
  name: "protocol",
  create() {
    return function protocol(ctx) {
      ctx.callerRequestId = callerRequestId(ctx.req.headers);
      if (!hasBody(ctx)) return;
      const route = ctx.route!;
      const type = (ctx.req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
      if (!route.accepts.has(type))
        throw gwError("GW_REQUEST_MEDIA_TYPE_UNSUPPORTED", {
          detail: `Send Content-Type: ${[...route.accepts].join(" or ")}.`,
        });
      const declared = ctx.req.headers.get("content-length");
      if (declared !== null && Number(declared) > route.bodyLimit)
        throw gwError("GW_REQUEST_BODY_TOO_LARGE", { detail: `The body limit of this endpoint is ${route.bodyLimit} bytes.` });
    };
  },
});

export type BodyFailure = "incomplete" | "malformed" | "timeout";
const BODY_FAILURE = Symbol("gatehouse.bodyFailure");

/**
 * Ends the body of a dispatched request whose message the HTTP parser could not finish (the
 * connection ended mid-body, a malformed chunk, the request deadline): `readBody` then answers
 * GW_REQUEST_BODY_INCOMPLETE (or GW_REQUEST_BODY_TIMEOUT) in the request's own shape, as its
 * response in request order, instead of waiting for bytes that will never come.
 */
export function failBody(message: IncomingMessage, reason: BodyFailure): void {
  if (message.complete || message.readableEnded) return;
  (message as FailedMessage)[BODY_FAILURE] = reason;
  // Ended but incomplete, Node's auto-destroy of the message would destroy the connection and the
  // answer with it: the message counts as complete, and `readBody` reads the failure mark instead.
  message.complete = true;
  message.push(null);
}

type FailedMessage = IncomingMessage & { [BODY_FAILURE]?: BodyFailure };

/** True when the request carries (or announces) a body. */
export function hasBody(ctx: RequestContext): boolean {
  const length = ctx.req.headers.get("content-length");
  if (length !== null) return length !== "0";
  if (ctx.req.headers.has("transfer-encoding")) return true;
  // On the wire, HTTP/1.1 without either header has no body. In-process requests (app.fetch)
  // carry no framing headers, so their body stream decides.
  return ctx.req.runtime?.node === undefined && ctx.req.body !== null;
}

/**
 * Reads the whole body with a size limit and a read deadline. Returns the bytes (empty when the
 * request has none).
 */
export async function readBody(ctx: RequestContext, limit: number, timeoutMs: number): Promise<Uint8Array> {
  const stream = ctx.req.body;
  if (!stream || !hasBody(ctx)) return new Uint8Array(0);
  const declaredHeader = ctx.req.headers.get("content-length");
  const declared = declaredHeader === null ? null : Number(declaredHeader);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    reader.cancel().catch(() => {});
  }, timeoutMs);
  try {
    for (;;) {
      let step: ReadableStreamReadResult<Uint8Array>;
      try {
        step = await reader.read();
      } catch {
        if (timedOut) throw gwError("GW_REQUEST_BODY_TIMEOUT", { detail: `The body did not arrive within ${timeoutMs} ms.` });
        throw gwError("GW_REQUEST_BODY_INCOMPLETE", { detail: "The connection ended before the whole body arrived." });
      }
      if (step.done) break;
      size += step.value.byteLength;
      if (size > limit) {
        reader.cancel().catch(() => {});
        throw gwError("GW_REQUEST_BODY_TOO_LARGE", { detail: `The body limit of this endpoint is ${limit} bytes.` });
      }
      chunks.push(step.value);
    }
  } finally {
    clearTimeout(timer);
  }
  if (timedOut) throw gwError("GW_REQUEST_BODY_TIMEOUT", { detail: `The body did not arrive within ${timeoutMs} ms.` });
  // The server ends the body of a request whose message the HTTP parser could not finish
  // (`failBody`): what arrived is a prefix, never a body to act on.
  const failure = (ctx.req.runtime?.node?.req as FailedMessage | undefined)?.[BODY_FAILURE];
  if (failure === "timeout") throw gwError("GW_REQUEST_BODY_TIMEOUT", { detail: "The body did not arrive in time." });
  if (failure)
    throw gwError("GW_REQUEST_BODY_INCOMPLETE", {
      detail: failure === "malformed" ? "The body's framing is malformed; it could not be read." : "The connection ended before the whole body arrived.",
    });
  if (declared !== null && size !== declared)
    throw gwError("GW_REQUEST_BODY_INCOMPLETE", { detail: "The body is shorter than its Content-Length." });
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}
