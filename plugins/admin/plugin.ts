/**
 * Operator administration (docs/operations.md "Admin API"):
 * - the tenant directory (directory-routes.ts): businesses, domains (sign fee, autoTransmit, mode
 *   change with drain and reapproval), API keys (create, roll, revoke) and the audit log;
 * - the invoice-gateway wallet (wallet-routes.ts, DECISIONS.md "Wallet (operator)");
 * - frozen operations (frozen.ts): what support must resolve by hand;
 * - the alert channel's dead letters (alert-routes.ts): list and replay;
 * - the request log (request-log-routes.ts): a request ID across businesses, a business's requests;
 * - the webhook delivery log (webhook-routes.ts): list, one delivery, resend; a business's endpoints;
 * - on a demo config, the demo's reset (demo-reset.ts).
 * Needs the billing port (the composition root builds the document ledger when none is given).
 */
import * as v from "valibot";
import { openDirectoryStore } from "../../core/directory-store.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import { deriveKey } from "../../core/keyed-hash.ts";
import { definePlugin, offer, requirePort, type GatewayPlugin, type RouteDeclaration } from "../../core/plugin.ts";
import { LIST_CURSOR, LIST_LIMIT } from "../../core/paging.ts";
import { createRequestLog } from "../../core/request-log/query.ts";
import { json } from "../../core/respond.ts";
import { DIRECTORY_OPERATIONS, WALLET_OPERATIONS } from "../invoice/offers.ts";
import { alertRoutes } from "./alert-routes.ts";
import { directoryOperations, walletOperations } from "./directory-offer.ts";
import { demoResetRoutes } from "./demo-reset.ts";
import { directoryRoutes } from "./directory-routes.ts";
import { createDirectoryAdmin } from "./directory-service.ts";
import { decodeFrozenCursor, frozenSources, listFrozen, type FrozenSource } from "./frozen.ts";
import { requestLogRoutes } from "./request-log-routes.ts";
import { walletRoutes } from "./wallet-routes.ts";
import { webhookRoutes } from "./webhook-routes.ts";

export interface AdminOptions {
  /** Epoch milliseconds (tests). Default Date.now. */
  now?: () => number;
}

export function createAdminPlugin(options: AdminOptions = {}): GatewayPlugin {
  return definePlugin({
    name: "admin",
    needs: ["billing", "documentStore"],
    stages: ["auth", "quota"],
    provides: [DIRECTORY_OPERATIONS, WALLET_OPERATIONS],
    setup(kit) {
      const admin = createDirectoryAdmin({
        store: openDirectoryStore(kit.ports.documentStore),
        directory: kit.directory,
        secret: deriveKey(kit.config.regulator.apiSecret, "admin-idempotency-v1"),
        log: kit.log,
        now: options.now ?? Date.now,
        drainRetryAfterSeconds: kit.config.directory.drainRetryAfterSeconds,
      });
      const ledger = requirePort(kit, "billing");
      return {
        routes: [
          ...directoryRoutes(admin),
          ...walletRoutes(kit, ledger),
          frozenRoute(frozenSources(kit.ports.documentStore)),
          ...(kit.ports.alerts ? alertRoutes(kit.ports.alerts) : []),
          ...(kit.ports.webhooks?.deliveries ? webhookRoutes(kit, kit.ports.webhooks.deliveries) : []),
          ...demoResetRoutes(kit),
          ...requestLogRoutes(createRequestLog(kit.ports.documentStore)),
        ],
        offers: [offer(DIRECTORY_OPERATIONS, directoryOperations(admin)), offer(WALLET_OPERATIONS, walletOperations(kit, ledger))],
      };
    },
  });
}

export const admin = createAdminPlugin();

const FrozenQuerySchema = v.object({
  businessId: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "a business id"))),
  limit: LIST_LIMIT,
  cursor: LIST_CURSOR,
});

function frozenRoute(sources: readonly FrozenSource[]): RouteDeclaration {
  return {
    method: "GET",
    path: "/admin/invoices/frozen",
    service: "gateway",
    hosts: "any",
    auth: "admin",
    quota: "management",
    skip: ["mode"],
    unavailable: { code: "GW_MANAGEMENT_SERVICE_UNAVAILABLE", detail: "The store is unavailable." },
    schemas: { query: FrozenQuerySchema },
    summary: "Operator: frozen invoice operations (outcome unprovable; support resolves them)",
    description:
      "Newest first: Pass-through sign attempts whose fee is held (outcome unprovable, or a reversal or settlement that did not confirm; never replayed automatically) and frozen Stored invoices. Each names the route that records a decision (`resolveWith`). Filter `businessId`; `limit` 1–100 (default 50), `cursor` from `nextCursor`.",
    responses: { 200: "{ data: [operation], nextCursor }" },
    async handler(ctx) {
      const q = ctx.query as unknown as v.InferOutput<typeof FrozenQuerySchema>;
      const before = q.cursor === undefined ? undefined : decodeFrozenCursor(q.cursor);
      if (before === null)
        throw gwError("GW_REQUEST_VALIDATION_FAILED", {
          violations: [{ location: "query", field: "cursor", code: "FORMAT", detail: "an opaque cursor from nextCursor" }],
        });
      return json(ctx, 200, await listFrozen(sources, { businessId: q.businessId, before, limit: q.limit ?? 50 }));
    },
  };
}
