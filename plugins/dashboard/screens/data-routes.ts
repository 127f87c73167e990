/**
 * How a data screen becomes a route: the viewer's scope (their business and its environment), the
 * view context (links, the form token, whether their role may act, TEST or LIVE), the caller a
 * change is made as, and the services of one dashboard built once from the kit's offers.
 */
import type { RequestContext } from "../../../core/context.ts";
import type { RouteDeclaration } from "../../../core/plugin.ts";
import type { Flash, SafeHtml } from "../../../core/ui/index.ts";
import type { DashboardCaller } from "../../invoice/dashboard-offers.ts";
import { viewing } from "../auth.ts";
import { back, screen } from "../chrome.ts";
import { hasRole, type DashboardEnv, type Viewer } from "../env.ts";
import { getPage } from "../routes.ts";
import { createDataDeps, type DataDeps, type Scope, type ViewCtx } from "./data-kit.ts";

/** What a data handler gets: the services, the viewer's scope, and the view context. */
export interface DataRequest {
  deps: DataDeps;
  scope: Scope;
  view: ViewCtx;
  who: Viewer;
}

/** The services of one dashboard, built once (the first section to ask builds them). */
export function dataDeps(env: DashboardEnv): DataDeps {
  let deps = _deps.get(env);
  if (!deps) {
    deps = createDataDeps(env.kit, env.now);
    _deps.set(env, deps);
  }
  return deps;
}

export function dataRequest(env: DashboardEnv, deps: DataDeps, who: Viewer): DataRequest {
  return {
    deps,
    who,
    scope: { businessId: who.business.id, state: who.business.state },
    view: { paths: env.paths, csrf: env.cookies.csrfToken(who.session), canAct: hasRole(who.role, "developer"), test: who.business.state === "TEST" },
  };
}

/** The caller a change is made as: the business, its environment, the request and "dashboard:<userId>". */
export function callerOf(ctx: RequestContext, who: Viewer): DashboardCaller {
  return { businessId: who.business.id, state: who.business.state, requestId: ctx.requestId, actor: `dashboard:${who.user._id}` };
}

/** A GET screen drawn by `draw` in the chrome (every role). */
export function dataScreen(
  env: DashboardEnv,
  deps: DataDeps,
  sub: string,
  summary: string,
  title: string,
  current: string,
  draw: (ctx: RequestContext, r: DataRequest) => Promise<SafeHtml>,
): RouteDeclaration {
  return getPage(env, sub, summary, viewing(env, async (ctx, who) => screen(env, ctx, who, { title, current, body: await draw(ctx, dataRequest(env, deps, who)) })));
}

/**
 * 303 back to a dashboard path with the action's flash message, after the `dashboard_action` log
 * event every dashboard change writes (who, which action, how it went; never the form's values).
 */
export function backTo(env: DashboardEnv, ctx: RequestContext, who: Viewer, action: string, result: Flash & { back: string }): Response {
  env.kit.log.event("dashboard_action", { requestId: ctx.requestId, actor: `dashboard:${who.user._id}`, businessId: who.business.id, action, result: result.kind });
  return back(env, ctx, env.paths.href(result.back), { kind: result.kind, text: result.text });
}

// --- Internal helpers ---

const _deps = new WeakMap<DashboardEnv, DataDeps>();
