/**
 * Stage 1, canonical host: lower-case the Host, strip port and trailing dot, resolve what the host
 * is (approved gateway domain, collections host, or nothing), and verify the request came
 * through the trusted edge. The domain record comes from the directory's per-process cache while it
 * is fresh, else from the store; a store that cannot answer gives 503 GW_DOMAIN_REGISTRY_UNAVAILABLE. In trusted mode the edge proves itself with a shared-secret header and
 * supplies the client address in a header it overwrites; direct mode (local use) trusts the socket.
 * Any-host paths (health, OpenAPI) answer on every host; the public ones (auth "none") need no edge
 * proof and do not depend on the domain registry (liveness is not proof of any dependency), while
 * an authenticated any-host route (the operator's /health/dependencies) still needs the verified
 * edge (spec §4.2 health semantics).
 */
import { timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import type { RequestContext } from "../core/context.ts";
import { gwError } from "../core/errors/gateway-error.ts";
import { hashSecret, type DomainRecord, type TenantDirectory } from "../core/directory.ts";
import { canonicalize, normalizeAddress } from "../core/http/host.ts";
import { describeError } from "../core/log.ts";
import type { RouteTable } from "../core/route-table.ts";
import { defineStage } from "../core/stages/define.ts";

export const canonicalHostStage = defineStage({
  name: "canonical-host",
  create({ config, directory, routes, log }) {
    const edge = config.edge;
    const trusted = edge.mode === "trusted";
    const secretHeader = edge.mode === "trusted" ? edge.secretHeader : "";
    const addressHeader = edge.mode === "trusted" ? edge.clientAddressHeader : "";
    const expected = edge.mode === "trusted" ? Buffer.from(edge.secretHash ?? hashSecret(edge.secret!)) : Buffer.alloc(0);

    return function canonicalHost(ctx) {
      const hostHeader = ctx.req.headers.get("host");
      // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400 (Node's own check is off so the
      // answer carries the contract's shape and a request id).
      if (hostHeader === null && ctx.req.runtime?.node?.req.httpVersion === "1.1")
        throw gwError("GW_REQUEST_HEADER_INVALID", {
          detail: "HTTP/1.1 requests must carry a Host header.",
          violations: [{ location: "header", field: "Host", code: "REQUIRED", detail: "required on HTTP/1.1" }],
        });
      const host = canonicalize(hostHeader ?? "");
      ctx.host = host;
      // RFC 9112 §3.2: more than one Host is a 400 too (Node keeps the first; in process they join with ", ").
      if (hostHeader !== null && _duplicateHost(ctx, hostHeader)) throw _duplicateHostError(ctx, directory);
      const anyHost = routes.isAnyHostPath(ctx.path);

      if (trusted) {
        const presented = ctx.req.headers.get(secretHeader);
        const ok = presented !== null && _safeEqual(Buffer.from(hashSecret(presented)), expected);
        if (!ok && !(anyHost && _isPublicAnyHost(routes, ctx.method, ctx.path)))
          throw gwError("GW_EDGE_VERIFICATION_FAILED", { detail: "Send requests through the public entry point." });
        const address = ok ? ctx.req.headers.get(addressHeader) : null;
        ctx.clientAddress = address && isIP(address.trim()) ? normalizeAddress(address.trim()) : null;
      } else {
        ctx.clientAddress = ctx.req.ip ? normalizeAddress(ctx.req.ip) : null;
      }

      // A fresh cached record answers at once; otherwise the store is read (and the record cached).
      const cached = directory.cachedDomain(host);
      if (cached !== undefined) return classify(ctx, cached, anyHost);
      return directory.loadDomain(host).then(
        (domain) => classify(ctx, domain, anyHost),
        (e) => {
          // An any-host route does not need the domain: it answers without it (hostKind "unknown").
          if (anyHost) return;
          log.warn("gateway_domain_registry_unavailable", { requestId: ctx.requestId, host, error: describeError(e) });
          // A collections host (config) answers in the collections envelope even then.
          if (directory.isCollectionsHost(host)) {
            ctx.hostKind = "collections";
            ctx.service = "collections";
          }
          throw gwError("GW_DOMAIN_REGISTRY_UNAVAILABLE", { cause: e });
        },
      );
    };

    function classify(ctx: RequestContext, domain: DomainRecord | null, anyHost: boolean): void {
      if (domain) {
        ctx.hostKind = "gateway";
        ctx.service = "gateway";
        ctx.domain = domain;
        ctx.businessId = domain.businessId;
        ctx.state = domain.state;
      } else if (directory.isCollectionsHost(ctx.host)) {
        ctx.hostKind = "collections";
        ctx.service = "collections";
      } else if (!anyHost) {
        throw gwError("GW_DOMAIN_NOT_PROVISIONED", { detail: "This hostname is not an approved gateway domain." });
      }
    }
  },
});

// --- Internal helpers ---

/** 400 in the shape of the first Host's service (a collections host answers in its envelope). */
function _duplicateHostError(ctx: RequestContext, directory: TenantDirectory): Error {
  if (directory.isCollectionsHost(ctx.host)) {
    ctx.hostKind = "collections";
    ctx.service = "collections";
  }
  return gwError("GW_REQUEST_HEADER_INVALID", {
    detail: "A request must carry exactly one Host header.",
    violations: [{ location: "header", field: "Host", code: "FORMAT", detail: "exactly one Host header" }],
  });
}

/** True when the request carried the Host header more than once. */
function _duplicateHost(ctx: RequestContext, hostHeader: string): boolean {
  if (hostHeader.includes(",")) return true;
  const raw = ctx.req.runtime?.node?.req.rawHeaders;
  if (raw === undefined) return false;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === "host" && ++seen > 1) return true;
  }
  return false;
}

/** A public (auth "none") any-host route, or a method the path does not offer (it answers 405 anyway). */
function _isPublicAnyHost(routes: RouteTable, method: string, path: string): boolean {
  const match = routes.lookup("unknown", method, path);
  return match.kind !== "found" || match.route.decl.auth === "none";
}

function _safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
