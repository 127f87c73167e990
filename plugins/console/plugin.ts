/**
 * The operator console (docs/operator-console.md): the Admin API as HTML pages an on-call engineer
 * can work from, served under `console.basePath` on the hosts `console.hosts` names, built on the UI
 * kit (core/ui/). Screens: overview, frozen operations (list, detail, resolve), alerts and dead
 * letters (replay), search by ID, Stored invoices, businesses (key create / roll / revoke, mode change
 * and approval, domain settings, represented businesses and identity reviews), audit log. Every action calls the service its Admin API route calls: the
 * invoice kit's frozen-operations listing, the recovery plugin's resolver (offered through the
 * kit: FROZEN_OPERATION_RESOLVER), the admin plugin's directory service (DIRECTORY_OPERATIONS), the alert channel port.
 *
 * Pages are public entry points for the pipeline (no API key, no per-credential quota): the console
 * authenticates with its own session (auth.ts), and the admission and capacity stages still apply.
 */
import { definePlugin, type GatewayPlugin, type PluginKit, type RouteDeclaration } from "../../core/plugin.ts";
import type { RequestContext } from "../../core/context.ts";
import { STYLESHEET_PATH, pageRoute, stylesheet } from "../../core/ui/index.ts";
import { DIRECTORY_OPERATIONS, FROZEN_INVOICE_RESOLVER, FROZEN_OPERATION_RESOLVER, IDENTITY_REVIEW_OPERATIONS, WALLET_OPERATIONS } from "../invoice/offers.ts";
import { acting, signIn, signInForm, signOut, viewing } from "./auth.ts";
import { createConsoleEnv, type ConsoleEnv } from "./env.ts";
import { alertsScreen, replayAction } from "./screens/alerts.ts";
import { auditScreen } from "./screens/audit.ts";
import { approveDomainAction, createKeyAction, keyAllowlistAction, domainSettingsAction, modeChangeAction, revokeKeyAction, rollKeyAction } from "./screens/business-actions.ts";
import { decideReviewAction, migrateAction } from "./screens/represented.ts";
import { businessScreen, businessesScreen } from "./screens/businesses.ts";
import { creditAction, suspensionAction } from "./screens/wallet.ts";
import { frozenDetailScreen, frozenListScreen, resolveAction } from "./screens/frozen.ts";
import { invoiceScreen } from "./screens/invoice.ts";
import { overviewScreen } from "./screens/overview.ts";
import { searchScreen } from "./screens/search.ts";
import { resendWebhookAction, webhookDetailScreen, webhooksScreen } from "./screens/webhooks.ts";
import { createTrafficHistory, type BacklogReader } from "./traffic.ts";
import { openStoredInvoices } from "../invoice/stored-invoices.ts";

export interface ConsoleOptions {
  /** Epoch milliseconds (tests). Default Date.now. */
  now?: () => number;
}

export function createConsolePlugin(options: ConsoleOptions = {}): GatewayPlugin {
  return definePlugin({
    name: "console",
    needs: ["documentStore", "coordination"],
    uses: [FROZEN_OPERATION_RESOLVER, DIRECTORY_OPERATIONS, WALLET_OPERATIONS, FROZEN_INVOICE_RESOLVER, IDENTITY_REVIEW_OPERATIONS],
    setup(kit) {
      if (!kit.config.console.enabled) return { routes: [] };
      const now = options.now ?? Date.now;
      const traffic = createTrafficHistory(kit.metrics, now, undefined, _storedBacklog(kit));
      const env = createConsoleEnv(kit, kit.offers.get(FROZEN_OPERATION_RESOLVER), kit.offers.get(DIRECTORY_OPERATIONS), kit.offers.get(WALLET_OPERATIONS), traffic, now, {
        storedResolver: kit.offers.get(FROZEN_INVOICE_RESOLVER),
        identity: kit.offers.get(IDENTITY_REVIEW_OPERATIONS),
      });
      return { routes: consoleRoutes(env), workers: [traffic.worker] };
    },
  });
}

export const operatorConsole = createConsolePlugin();

/** Every console route: screens (GET) and actions (POST, admin unless said). */
export function consoleRoutes(env: ConsoleEnv): RouteDeclaration[] {
  const get = (sub: string, summary: string, handler: (ctx: RequestContext) => Promise<Response> | Response) => _route(env, "GET", sub, summary, handler);
  const post = (sub: string, summary: string, handler: (ctx: RequestContext) => Promise<Response>) => _route(env, "POST", sub, summary, handler);
  return [
    get(STYLESHEET_PATH, "Console: the UI kit's stylesheet", (ctx) => stylesheet(ctx)),
    get("/sign-in", "Console: sign-in form", signInForm(env)),
    post("/sign-in", "Console: sign in with an operator or console viewer key", signIn(env)),
    post("/sign-out", "Console: sign out", signOut(env)),
    get("", "Console: overview", viewing(env, (ctx, s) => overviewScreen(env, ctx, s))),
    get("/frozen", "Console: frozen operations", viewing(env, (ctx, s) => frozenListScreen(env, ctx, s))),
    get("/frozen/:kind/:id", "Console: one frozen operation", viewing(env, (ctx, s) => frozenDetailScreen(env, ctx, s))),
    post("/frozen/:kind/:id/resolution", "Console: resolve a frozen operation (admin)", acting(env, "admin", (ctx, s, f) => resolveAction(env, ctx, s, f))),
    get("/alerts", "Console: alerts and dead letters", viewing(env, (ctx, s) => alertsScreen(env, ctx, s))),
    post("/alerts/:alertId/replay", "Console: replay a dead-lettered alert (admin)", acting(env, "admin", (ctx, s) => replayAction(env, ctx, s))),
    get("/search", "Console: search by request, operation or invoice ID", viewing(env, (ctx, s) => searchScreen(env, ctx, s))),
    get("/invoices/:invoiceId", "Console: one Stored invoice, its timeline and regulator answers", viewing(env, (ctx, s) => invoiceScreen(env, ctx, s))),
    get("/businesses", "Console: businesses", viewing(env, (ctx, s) => businessesScreen(env, ctx, s))),
    get("/businesses/:businessId", "Console: one business, its domains and keys", viewing(env, (ctx, s) => businessScreen(env, ctx, s))),
    post("/businesses/:businessId/keys", "Console: create a key, shown once (admin)", acting(env, "admin", (ctx, s, f) => createKeyAction(env, ctx, s, f))),
    post("/businesses/:businessId/keys/:keyId/roll", "Console: roll a key (admin)", acting(env, "admin", (ctx, s, f) => rollKeyAction(env, ctx, s, f))),
    post("/businesses/:businessId/keys/:keyId/revoke", "Console: revoke a key (admin)", acting(env, "admin", (ctx, s, f) => revokeKeyAction(env, ctx, s, f))),
    post("/businesses/:businessId/keys/:keyId/allowlist", "Console: replace a key's IP allowlist (admin)", acting(env, "admin", (ctx, s, f) => keyAllowlistAction(env, ctx, s, f))),
    post("/businesses/:businessId/domains/:host/mode-change", "Console: change a domain's mode; it drains (admin)", acting(env, "admin", (ctx, s, f) => modeChangeAction(env, ctx, s, f))),
    post("/businesses/:businessId/domains/:host/approval", "Console: approve a drained domain (admin)", acting(env, "admin", (ctx, s, f) => approveDomainAction(env, ctx, s, f))),
    post("/businesses/:businessId/domains/:host/settings", "Console: a domain's sign fee and autoTransmit (admin)", acting(env, "admin", (ctx, s, f) => domainSettingsAction(env, ctx, s, f))),
    post("/businesses/:businessId/sub-businesses/:gatewaySubBusinessId/identity-reviews/:reviewId/decision", "Console: approve or reject an identity review (admin)", acting(env, "admin", (ctx, s, f) => decideReviewAction(env, ctx, s, f))),
    post("/businesses/:businessId/sub-businesses/:gatewaySubBusinessId/identity-migrations", "Console: apply a protected identity change (admin)", acting(env, "admin", (ctx, s, f) => migrateAction(env, ctx, s, f))),
    post("/businesses/:businessId/wallet/credits", "Console: credit a wallet with a reason (admin)", acting(env, "admin", (ctx, s, f) => creditAction(env, ctx, s, f))),
    post("/businesses/:businessId/wallet/suspension", "Console: suspend a wallet or lift it (admin)", acting(env, "admin", (ctx, s, f) => suspensionAction(env, ctx, s, f))),
    get("/audit", "Console: the audit log", viewing(env, (ctx, s) => auditScreen(env, ctx, s))),
    get("/webhooks", "Console: webhook deliveries, failed first", viewing(env, (ctx, s) => webhooksScreen(env, ctx, s))),
    get("/webhooks/:webhookId", "Console: one webhook delivery and its attempts", viewing(env, (ctx, s) => webhookDetailScreen(env, ctx, s))),
    post("/webhooks/:webhookId/resend", "Console: resend a webhook delivery (admin)", acting(env, "admin", (ctx, s, f) => resendWebhookAction(env, ctx, s, f))),
  ];
}

// --- Internal helpers ---

/** The Stored backlog for the overview's chart: invoices with work due, and frozen ones (two indexed counts). */
function _storedBacklog(kit: PluginKit): BacklogReader {
  const invoices = openStoredInvoices(kit.ports.documentStore);
  return async () => {
    const [waiting, frozen] = await Promise.all([invoices.count({ dueAt: { $gte: 0 } }), invoices.count({ status: "frozen" })]);
    return { waiting, frozen };
  };
}

function _route(env: ConsoleEnv, method: "GET" | "POST", sub: string, summary: string, handler: (ctx: RequestContext) => Promise<Response> | Response): RouteDeclaration {
  return pageRoute(method, env.paths.route(sub), summary, handler);
}
