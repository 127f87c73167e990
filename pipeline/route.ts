/**
 * Stage 2, route: path and query length (414), then method + path against the route table of the
 * host's surface: 404 GW_ROUTE_NOT_FOUND, 405 GW_METHOD_NOT_ALLOWED with Allow. Path parameters
 * are percent-decoded here; a malformed escape is GW_REQUEST_PATH_PARAMETER_INVALID.
 */
import { gwError } from "../core/errors/gateway-error.ts";
import { defineStage } from "../core/stages/define.ts";

export const routeStage = defineStage({
  name: "route",
  create({ config, routes }) {
    const maxUri = config.server.maxUriLength;
    const collectionsHosts = config.collections.hosts.join(", ");
    return function route(ctx) {
      if (ctx.path.length + ctx.search.length > maxUri)
        throw gwError("GW_REQUEST_URI_TOO_LONG", { detail: `Path and query must not exceed ${maxUri} characters.` });
      const match = routes.lookup(ctx.hostKind, ctx.method, ctx.path);
      if (match.kind === "none") throw gwError("GW_ROUTE_NOT_FOUND", { detail: _notHere(match.servedOn, collectionsHosts) });
      if (match.kind === "method")
        throw gwError("GW_METHOD_NOT_ALLOWED", { detail: `Allowed methods: ${match.allow}.`, allow: match.allow });
      const r = match.route;
      ctx.route = r;
      // The route decides the error shape: any-host routes answer in their own service's shape.
      ctx.service = r.decl.service;
      for (const [name, raw] of Object.entries(match.params)) {
        try {
          ctx.params[name] = decodeURIComponent(raw);
        } catch {
          throw gwError("GW_REQUEST_PATH_PARAMETER_INVALID", {
            detail: "A path parameter is not valid percent-encoding.",
            violations: [{ location: "path", field: name, code: "FORMAT", detail: "malformed percent-encoding" }],
          });
        }
      }
    };
  },
});

// --- Internal helpers ---

/** Why nothing matched: when the path is another host kind's endpoint, which hosts serve it. */
function _notHere(servedOn: "gateway" | "collections" | undefined, collectionsHosts: string): string {
  if (servedOn === "gateway")
    return "This is an invoice-gateway endpoint: call it on your business's approved gateway domain (the hostname the operator approved for it), not on a collections host.";
  if (servedOn === "collections") return `This is a collections endpoint: call it on a collections host (${collectionsHosts}), not on a gateway domain.`;
  return "No such endpoint on this host.";
}
