/**
 * Stage 3, protocol: the caller's X-Request-ID (validated, correlation only), the content type of
 * a request that carries a body (415), and its declared size against the route's limit (413).
 * Bodies are read later, inside the capacity-guarded part of the request, by core's body reader
 * (core/http/body.ts), which enforces the same limit while streaming.
 */
import { gwError } from "../core/errors/gateway-error.ts";
import { hasBody } from "../core/http/body.ts";
import { callerRequestId } from "../core/validation.ts";
import { defineStage } from "../core/stages/define.ts";

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
