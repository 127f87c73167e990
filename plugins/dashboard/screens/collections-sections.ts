/**
 * The routes of the collections screens: payment links (list, one with its transactions, create,
 * toggle, the TEST checkout), virtual accounts (list, one with its deposits, the TEST deposit) and
 * customers (list, one). Changes need developer or owner; the sandbox is refused by the
 * collections service itself for a LIVE business (404), whatever a form sends.
 */
import { acting, viewing } from "../auth.ts";
import { notFound, screen } from "../chrome.ts";
import type { DashboardEnv } from "../env.ts";
import { getPage, postPage } from "../routes.ts";
import type { RouteDeclaration } from "../../../core/plugin.ts";
import { loadCustomer, loadCustomerList, renderCustomer, renderCustomerList } from "./customers.ts";
import type { DataDeps } from "./data-kit.ts";
import { backTo, callerOf, dataRequest, dataScreen } from "./data-routes.ts";
import { createLinkAction, loadLinkList, loadLinkPage, renderLinkList, renderLinkPage, toggleLinkAction } from "./payment-links.ts";
import { openSandboxSubmissions, sandboxCheckoutAction, sandboxDepositAction } from "./sandbox.ts";
import { loadAccountList, loadAccountPage, renderAccountList, renderAccountPage } from "./virtual-accounts.ts";

export function paymentLinkRoutes(env: DashboardEnv, deps: DataDeps): RouteDeclaration[] {
  return [
    dataScreen(env, deps, "/payment-links", "payment links", "Payment links", "/payment-links", async (ctx, r) => renderLinkList(r.view, await loadLinkList(r.deps, r.scope, ctx.search))),
    getPage(env, "/payment-links/:reference", "one payment link with its transactions", viewing(env, async (ctx, who) => {
      const r = dataRequest(env, deps, who);
      const d = await loadLinkPage(deps, r.scope, ctx.params.reference ?? "", ctx.search);
      return d ? screen(env, ctx, who, { title: `Payment link ${String(d.link.linkName)}`, current: "/payment-links", body: renderLinkPage(r.view, d) }) : notFound(env, ctx, who);
    })),
    postPage(env, "/payment-links", "create a payment link (developer)", acting(env, "developer", async (ctx, who, form) => backTo(env, ctx, who, "payment_link.create", await createLinkAction(deps, callerOf(ctx, who), form)))),
    postPage(env, "/payment-links/:reference/toggle", "activate or deactivate a payment link (developer)", acting(env, "developer", async (ctx, who, form) => {
      const result = await toggleLinkAction(deps, callerOf(ctx, who), ctx.params.reference ?? "", form);
      return result ? backTo(env, ctx, who, "payment_link.toggle", result) : notFound(env, ctx, who);
    })),
  ];
}

export function virtualAccountRoutes(env: DashboardEnv, deps: DataDeps): RouteDeclaration[] {
  return [
    dataScreen(env, deps, "/virtual-accounts", "virtual accounts", "Virtual accounts", "/virtual-accounts", async (ctx, r) => renderAccountList(r.view, await loadAccountList(r.deps, r.scope, ctx.search))),
    getPage(env, "/virtual-accounts/:reference", "one virtual account with its deposits", viewing(env, async (ctx, who) => {
      const r = dataRequest(env, deps, who);
      const d = await loadAccountPage(deps, r.scope, ctx.params.reference ?? "");
      return d ? screen(env, ctx, who, { title: `Virtual account ${String(d.account.accountNumber)}`, current: "/virtual-accounts", body: renderAccountPage(r.view, d) }) : notFound(env, ctx, who);
    })),
  ];
}

/** The TEST sandbox's actions (their forms are on the account and link pages of a TEST business). */
export function sandboxRoutes(env: DashboardEnv, deps: DataDeps): RouteDeclaration[] {
  const submissions = openSandboxSubmissions(env.store);
  return [
    postPage(env, "/sandbox/deposits", "TEST: a sandbox deposit into a virtual account (developer)", acting(env, "developer", async (ctx, who, form) => {
      if (who.business.state !== "TEST") return notFound(env, ctx, who);
      return backTo(env, ctx, who, "sandbox.deposit", await sandboxDepositAction(deps, submissions, callerOf(ctx, who), form));
    })),
    postPage(env, "/payment-links/:reference/sandbox-checkout", "TEST: a sandbox checkout of a payment link with a chosen outcome (developer)", acting(env, "developer", async (ctx, who, form) => {
      if (who.business.state !== "TEST") return notFound(env, ctx, who);
      const result = await sandboxCheckoutAction(deps, callerOf(ctx, who), ctx.params.reference ?? "", form);
      return result ? backTo(env, ctx, who, "sandbox.checkout", result) : notFound(env, ctx, who);
    })),
  ];
}

export function customerRoutes(env: DashboardEnv, deps: DataDeps): RouteDeclaration[] {
  return [
    dataScreen(env, deps, "/customers", "customers", "Customers", "/customers", async (ctx, r) => renderCustomerList(r.view, await loadCustomerList(r.deps, r.scope, ctx.search))),
    getPage(env, "/customers/:id", "one customer", viewing(env, async (ctx, who) => {
      const r = dataRequest(env, deps, who);
      const c = await loadCustomer(deps, r.scope, ctx.params.id ?? "");
      return c ? screen(env, ctx, who, { title: `Customer ${String(c.firstName)} ${String(c.lastName)}`, current: "/customers", body: renderCustomer(r.view, c) }) : notFound(env, ctx, who);
    })),
  ];
}
