/**
 * Stage 7, auth: the route's scheme decides the credential. x-api-key (gateway routes) must belong
 * to the business that owns the hostname; Authorization: Bearer (collections routes) scopes every
 * lookup to its business; x-admin-api-key is the operator's. Keys are hashed and looked up; the
 * directory answers fresh every time, and when it cannot answer nothing falls back to an earlier
 * result.
 */
import { CollectionsError, gwError } from "../core/errors/gateway-error.ts";
import type { CredentialScheme, Principal } from "../core/directory.ts";
import { defineStage } from "./define-stage.ts";

export const authStage = defineStage({
  name: "auth",
  create({ directory }) {
    const lookup = (scheme: CredentialScheme, secret: string): Principal | null => {
      try {
        const p = directory.authenticate(scheme, secret);
        return p && !p.revoked ? p : null;
      } catch (e) {
        throw gwError("GW_TENANT_AUTHORIZATION_UNAVAILABLE", { cause: e });
      }
    };

    return function auth(ctx) {
      const scheme = ctx.route!.decl.auth;
      if (scheme === "none") return;

      if (scheme === "admin") {
        const key = ctx.req.headers.get("x-admin-api-key");
        const principal = key ? lookup("admin", key) : null;
        if (!principal) throw gwError("GW_ADMIN_AUTHENTICATION_FAILED", { detail: "Operator authentication failed." });
        ctx.principal = principal;
        return;
      }

      if (scheme === "bearer") {
        const header = ctx.req.headers.get("authorization");
        const m = header ? /^Bearer +([^\s]+)\s*$/i.exec(header) : null;
        if (!m) throw new CollectionsError(401, "Missing or malformed Authorization header; send 'Authorization: Bearer <API_KEY>'.");
        const principal = lookup("bearer", m[1]!);
        if (!principal) throw new CollectionsError(401, "Invalid or revoked API key.");
        const business = directory.business(principal.businessId!);
        ctx.principal = principal;
        ctx.businessId = principal.businessId;
        ctx.state = business?.state ?? null;
        return;
      }

      const key = ctx.req.headers.get("x-api-key");
      if (key === null || key === "") throw gwError("GW_AUTH_API_KEY_REQUIRED", { detail: "Send the API key in x-api-key." });
      const principal = lookup("apiKey", key);
      if (!principal) throw gwError("GW_API_KEY_INVALID", { detail: "The API key is not valid; create or rotate a key." });
      if (!ctx.domain || principal.businessId !== ctx.domain.businessId)
        throw gwError("GW_AUTH_TENANT_FORBIDDEN", { detail: "This API key belongs to another business than this hostname's." });
      ctx.principal = principal;
    };
  },
});
