/**
 * Stage 7, auth: the route's scheme decides the credential. x-api-key (gateway routes) must belong
 * to the business that owns the hostname; Authorization: Bearer (collections routes) scopes every
 * lookup to its business; x-admin-api-key is the operator's. Keys are hashed and their record is
 * read from the directory's store on every request (never a cached answer), so a revoked or expired
 * key is refused at once by every process. When the record cannot be read nothing falls back to an
 * earlier result: 503 GW_TENANT_AUTHORIZATION_UNAVAILABLE for a customer key, GW_AUTH_CONTEXT_UNAVAILABLE
 * for an operator key or a collections key whose business is unknown (docs/operations.md
 * "Tenant directory", docs/decisions.md "Control plane").
 */
import type { RequestContext } from "../core/context.ts";
import { CollectionsError, gwError } from "../core/errors/gateway-error.ts";
import type { CredentialScheme, Principal } from "../core/directory.ts";
import { describeError } from "../core/log.ts";
import { defineStage } from "../core/stages/define.ts";

/** The operator's 401 names the header it wants (missing, or not a valid operator key alike). */
const ADMIN_KEY_DETAIL = "Send a valid operator key in the x-admin-api-key header.";

export const authStage = defineStage({
  name: "auth",
  create({ directory, log }) {
    const unavailable = (ctx: RequestContext, scheme: CredentialScheme, e: unknown): Error => {
      const code = scheme === "admin" ? "GW_AUTH_CONTEXT_UNAVAILABLE" : "GW_TENANT_AUTHORIZATION_UNAVAILABLE";
      log.warn("gateway_authorization_unavailable", { requestId: ctx.requestId, scheme, code, error: describeError(e) });
      return gwError(code, { cause: e });
    };

    /**
     * The key's principal from the directory (synchronously when the store answers so, else a
     * promise), a store that cannot answer turned into the scheme's unavailability error.
     */
    const lookup = (ctx: RequestContext, scheme: CredentialScheme, secret: string): Principal | null | Promise<Principal | null> => {
      let found: Principal | null | Promise<Principal | null>;
      try {
        found = directory.authenticate(scheme, secret);
      } catch (e) {
        throw unavailable(ctx, scheme, e);
      }
      return found instanceof Promise ? found.catch((e: unknown) => Promise.reject(unavailable(ctx, scheme, e))) : found;
    };

    /** `accept(ctx, principal)` now, or once the principal arrives. */
    const then = (ctx: RequestContext, found: Principal | null | Promise<Principal | null>, accept: (ctx: RequestContext, p: Principal | null) => void): void | Promise<void> =>
      found instanceof Promise ? found.then((p) => accept(ctx, p)) : accept(ctx, found);

    function admin(ctx: RequestContext, principal: Principal | null): void {
      if (!principal) throw gwError("GW_ADMIN_AUTHENTICATION_FAILED", { detail: ADMIN_KEY_DETAIL });
      ctx.principal = principal;
    }

    function bearer(ctx: RequestContext, principal: Principal | null): void {
      if (!principal) throw new CollectionsError(401, "Invalid or revoked API key.");
      const business = directory.business(principal.businessId!);
      if (!business) {
        log.warn("gateway_authorization_unavailable", { requestId: ctx.requestId, scheme: "bearer", code: "GW_AUTH_CONTEXT_UNAVAILABLE", businessId: principal.businessId });
        throw gwError("GW_AUTH_CONTEXT_UNAVAILABLE", { detail: "The API key's business cannot be verified right now." });
      }
      ctx.principal = principal;
      ctx.businessId = principal.businessId;
      ctx.state = business.state;
    }

    function apiKey(ctx: RequestContext, principal: Principal | null): void {
      if (!principal) throw gwError("GW_API_KEY_INVALID", { detail: "The API key is not valid; create or rotate a key." });
      if (!ctx.domain || principal.businessId !== ctx.domain.businessId)
        throw gwError("GW_AUTH_TENANT_FORBIDDEN", { detail: "This API key belongs to another business than this hostname's." });
      ctx.principal = principal;
    }

    return function auth(ctx) {
      const scheme = ctx.route!.decl.auth;
      if (scheme === "none") return;
      if (scheme === "admin") {
        const key = ctx.req.headers.get("x-admin-api-key");
        return key ? then(ctx, lookup(ctx, "admin", key), admin) : admin(ctx, null);
      }
      if (scheme === "bearer") {
        const header = ctx.req.headers.get("authorization");
        const m = header ? /^Bearer +([^\s]+)\s*$/i.exec(header) : null;
        if (!m) throw new CollectionsError(401, "Missing or malformed Authorization header; send 'Authorization: Bearer <API_KEY>'.");
        return then(ctx, lookup(ctx, "bearer", m[1]!), bearer);
      }
      const key = ctx.req.headers.get("x-api-key");
      if (key === null || key === "") throw gwError("GW_AUTH_API_KEY_REQUIRED", { detail: "Send the API key in x-api-key." });
      return then(ctx, lookup(ctx, "apiKey", key), apiKey);
    };
  },
});
