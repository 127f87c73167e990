/**
 * The data screens as dashboard sections (sections.ts mounts `DATA_SECTIONS`): Stored invoices and
 * one invoice (with its JSON download, transmit and cancel), inbound invoices, Pass-through sign
 * operations and transmissions, represented businesses, the wallets, payment links, virtual
 * accounts, customers, and the TEST sandbox actions. Screens are for every role; actions need
 * developer or owner (auth.ts `acting`). Whatever is not the viewer's business is a 404
 * (chrome.ts `notFound`), the same page as an id that does not exist.
 *
 * The services come from the kit's offers (data-kit.ts `DATA_OFFERS`, in the plugin's `uses`), read
 * once per dashboard when its routes are built.
 */
import type { RequestContext } from "../../../core/context.ts";
import { json } from "../../../core/respond.ts";
import { acting, viewing } from "../auth.ts";
import { back, notFound, screen } from "../chrome.ts";
import type { DashboardEnv, Viewer } from "../env.ts";
import { getPage, postPage } from "../routes.ts";
import type { DashboardSection } from "../sections.ts";
import { customerRoutes, paymentLinkRoutes, sandboxRoutes, virtualAccountRoutes } from "./collections-sections.ts";
import type { DataDeps } from "./data-kit.ts";
import { callerOf, dataDeps, dataRequest, dataScreen } from "./data-routes.ts";
import { changeOutcome, findInvoice, documentFilename, loadInvoicePage, renderInvoicePage } from "./invoice.ts";
import { loadInvoiceList, renderInvoiceList } from "./invoices.ts";
import { loadRepresented, loadRepresentedList, renderRepresented, renderRepresentedList } from "./represented.ts";
import { loadSignOperation, loadSignOperations, renderSignOperation, renderSignOperations } from "./sign-operations.ts";
import { loadWallet, renderWallet } from "./wallet.ts";

export const invoicesSection: DashboardSection = {
  nav: { label: "Invoices", path: "/invoices" },
  routes: (env) => {
    const deps = dataDeps(env);
    return [
      dataScreen(env, deps, "/invoices", "the business's Stored invoices", "Stored invoices", "/invoices", async (ctx, r) => renderInvoiceList(r.view, await loadInvoiceList(r.deps, r.scope, ctx.search))),
      getPage(env, "/invoices/:invoiceId", "one Stored invoice", viewing(env, (ctx, who) => _invoicePage(env, deps, ctx, who))),
      getPage(env, "/invoices/:invoiceId/document.json", "download a Stored invoice's document (JSON)", viewing(env, (ctx, who) => _download(env, deps, ctx, who))),
      postPage(env, "/invoices/:invoiceId/transmit", "transmit a signed Stored invoice (developer)", acting(env, "developer", (ctx, who) => _change(env, deps, ctx, who, "transmit"))),
      postPage(env, "/invoices/:invoiceId/cancel", "cancel a pending or validated Stored invoice (developer)", acting(env, "developer", (ctx, who) => _change(env, deps, ctx, who, "cancel"))),
    ];
  },
};

export const inboundSection: DashboardSection = {
  nav: { label: "Inbound", path: "/inbound" },
  routes: (env) => [
    dataScreen(env, dataDeps(env), "/inbound", "inbound invoices", "Inbound invoices", "/inbound", async (ctx, r) => renderInvoiceList(r.view, await loadInvoiceList(r.deps, r.scope, ctx.search, "inbound"))),
  ],
};

export const signOperationsSection: DashboardSection = {
  nav: { label: "Pass-through", path: "/sign-operations" },
  routes: (env) => {
    const deps = dataDeps(env);
    return [
      dataScreen(env, deps, "/sign-operations", "Pass-through sign operations and transmissions", "Pass-through operations", "/sign-operations", async (ctx, r) => renderSignOperations(r.view, await loadSignOperations(r.deps, r.scope, ctx.search))),
      getPage(env, "/sign-operations/:operationId", "one Pass-through sign operation", viewing(env, async (ctx, who) => {
        const r = dataRequest(env, deps, who);
        const op = await loadSignOperation(deps, r.scope, ctx.params.operationId ?? "");
        return op ? screen(env, ctx, who, { title: "Sign operation", current: "/sign-operations", body: renderSignOperation(op) }) : notFound(env, ctx, who);
      })),
    ];
  },
};

export const representedSection: DashboardSection = {
  nav: { label: "Represented businesses", path: "/represented" },
  routes: (env) => {
    const deps = dataDeps(env);
    return [
      dataScreen(env, deps, "/represented", "represented businesses", "Represented businesses", "/represented", async (ctx, r) => renderRepresentedList(r.view, await loadRepresentedList(r.deps, r.scope, ctx.search))),
      getPage(env, "/represented/:gatewaySubBusinessId", "one represented business with its identity history", viewing(env, async (ctx, who) => {
        const r = dataRequest(env, deps, who);
        const d = await loadRepresented(deps, r.scope, ctx.params.gatewaySubBusinessId ?? "");
        return d ? screen(env, ctx, who, { title: `Represented business ${String(d.business.registeredName ?? "")}`, current: "/represented", body: renderRepresented(d) }) : notFound(env, ctx, who);
      })),
    ];
  },
};

export const walletSection: DashboardSection = {
  nav: { label: "Wallet", path: "/wallet" },
  routes: (env) => [dataScreen(env, dataDeps(env), "/wallet", "the wallets", "Wallet", "/wallet", async (ctx, r) => renderWallet(r.view, await loadWallet(r.deps, r.scope, ctx.search)))],
};

export const paymentLinksSection: DashboardSection = {
  nav: { label: "Payment links", path: "/payment-links" },
  routes: (env) => paymentLinkRoutes(env, dataDeps(env)),
};

export const virtualAccountsSection: DashboardSection = {
  nav: { label: "Virtual accounts", path: "/virtual-accounts" },
  routes: (env) => [...virtualAccountRoutes(env, dataDeps(env)), ...sandboxRoutes(env, dataDeps(env))],
};

export const customersSection: DashboardSection = {
  nav: { label: "Customers", path: "/customers" },
  routes: (env) => customerRoutes(env, dataDeps(env)),
};

/** Every data section, in navigation order. */
export const DATA_SECTIONS: readonly DashboardSection[] = [
  invoicesSection,
  inboundSection,
  signOperationsSection,
  representedSection,
  walletSection,
  paymentLinksSection,
  virtualAccountsSection,
  customersSection,
];

// --- Internal helpers ---

async function _invoicePage(env: DashboardEnv, deps: DataDeps, ctx: RequestContext, who: Viewer): Promise<Response> {
  const r = dataRequest(env, deps, who);
  const d = await loadInvoicePage(deps, r.scope, ctx.params.invoiceId ?? "");
  if (!d) return notFound(env, ctx, who);
  return screen(env, ctx, who, { title: `Invoice ${d.timeline.irn}`, current: d.timeline.direction === "inbound" ? "/inbound" : "/invoices", body: renderInvoicePage(r.view, d) });
}

async function _download(env: DashboardEnv, deps: DataDeps, ctx: RequestContext, who: Viewer): Promise<Response> {
  const doc = await findInvoice(deps, dataRequest(env, deps, who).scope, ctx.params.invoiceId ?? "");
  if (!doc) return notFound(env, ctx, who);
  // The stored document as sent (the business's own invoice only); never logged.
  return json(ctx, 200, doc.document, { "content-disposition": `attachment; filename="${documentFilename(doc)}"`, "x-content-type-options": "nosniff" });
}

async function _change(env: DashboardEnv, deps: DataDeps, ctx: RequestContext, who: Viewer, what: "transmit" | "cancel"): Promise<Response> {
  const id = ctx.params.invoiceId ?? "";
  const location = env.paths.href(`/invoices/${encodeURIComponent(id)}`);
  const caller = callerOf(ctx, who);
  if (!(await findInvoice(deps, caller, id))) return notFound(env, ctx, who);
  try {
    const doc = what === "transmit" ? await deps.invoices.transmit(caller, id) : await deps.invoices.cancel(caller, id);
    env.kit.log.event("dashboard_action", { requestId: ctx.requestId, actor: caller.actor, businessId: caller.businessId, action: `invoice.${what}`, result: "ok", invoiceId: id });
    return back(env, ctx, location, { kind: "ok", text: what === "transmit" ? `Transmission requested: the invoice is ${doc.status}.` : `The invoice is ${doc.status}.` });
  } catch (e) {
    const text = changeOutcome(e);
    if (text === null) throw e;
    env.kit.log.event("dashboard_action", { requestId: ctx.requestId, actor: caller.actor, businessId: caller.businessId, action: `invoice.${what}`, result: "refused", invoiceId: id });
    return back(env, ctx, location, { kind: "warn", text: `Not ${what === "transmit" ? "transmitted" : "cancelled"}: ${text}` });
  }
}
