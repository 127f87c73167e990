/**
 * The home page: the business, its environment, the signed-in user's role and two-factor state,
 * and a link to every section.
 */
import type { RequestContext } from "../../../core/context.ts";
import { EMPTY, html } from "../../../core/ui/index.ts";
import { viewing } from "../auth.ts";
import { badge, facts, screen } from "../chrome.ts";
import type { DashboardEnv, Viewer } from "../env.ts";
import { getPage } from "../routes.ts";
import type { DashboardSection } from "../sections.ts";

export const homeSection: DashboardSection = {
  nav: { label: "Home", path: "" },
  routes: (env) => [getPage(env, "", "home", viewing(env, (ctx, who) => homeScreen(env, ctx, who)))],
};

export async function homeScreen(env: DashboardEnv, ctx: RequestContext, who: Viewer): Promise<Response> {
  const links = env.nav.filter((n) => n.path !== "");
  const twoFactor = who.user.totp
    ? badge("on", "ok")
    : html`${badge("off", "warn")} <a href="${env.paths.href("/account")}">Set up two-factor authentication</a> (needed to manage keys and webhook secrets)`;
  const body = html`<section class="panel" aria-labelledby="biz-h"><h2 id="biz-h">${who.business.name}</h2>${facts([
    ["Business ID", who.business.id],
    ["Environment", badge(who.environment, who.environment === "LIVE" ? "ok" : "warn")],
    ["Signed in as", `${who.user.name || who.user.email} (${who.user.email})`],
    ["Role", who.role],
    ["Two-factor", twoFactor],
  ])}</section>
${links.length > 0 ? html`<section class="panel" aria-labelledby="sec-h"><h2 id="sec-h">Sections</h2><ul>${links.map((n) => html`<li><a href="${env.paths.href(n.path)}">${n.label}</a></li>`)}</ul></section>` : EMPTY}`;
  return screen(env, ctx, who, { title: "Home", current: "", body });
}
