/**
 * How a dashboard page becomes a gateway route: served on every host (the guards in auth.ts decide
 * which hosts answer and for whom), no API key and no per-credential quota (the dashboard has its
 * own sessions), forms url-encoded. The admission and capacity stages still apply.
 */
import type { RequestContext } from "../../core/context.ts";
import type { RouteDeclaration } from "../../core/plugin.ts";
import { pageRoute } from "../../core/ui/index.ts";
import type { DashboardEnv } from "./env.ts";

export type PageHandler = (ctx: RequestContext) => Promise<Response> | Response;


/** GET `sub` under the dashboard's base path. */
export function getPage(env: DashboardEnv, sub: string, summary: string, handler: PageHandler): RouteDeclaration {
  return dashboardRoute(env, "GET", sub, summary, handler);
}

/** POST `sub` under the dashboard's base path (answered with POST-redirect-GET). */
export function postPage(env: DashboardEnv, sub: string, summary: string, handler: PageHandler): RouteDeclaration {
  return dashboardRoute(env, "POST", sub, summary, handler);
}

export function dashboardRoute(env: DashboardEnv, method: "GET" | "POST", sub: string, summary: string, handler: PageHandler): RouteDeclaration {
  return pageRoute(method, env.paths.route(sub), `Dashboard: ${summary}`, handler);
}
