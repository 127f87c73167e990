/**
 * Signing in and out, and the signed-in user's own account page (who they are, their role, their
 * two-factor state). The sign-in steps themselves are in ../sign-in.ts.
 */
import type { RequestContext } from "../../../core/context.ts";
import { html } from "../../../core/ui/index.ts";
import { acting, viewing } from "../auth.ts";
import { badge, facts, screen } from "../chrome.ts";
import type { DashboardEnv, Viewer } from "../env.ts";
import { getPage, postPage } from "../routes.ts";
import type { DashboardSection } from "../sections.ts";
import { codeForm, signIn, signInCode, signInForm, signOutAction } from "../sign-in.ts";

export const accountSection: DashboardSection = {
  nav: { label: "Account", path: "/account" },
  routes: (env) => [
    getPage(env, "/sign-in", "sign-in form", signInForm(env)),
    postPage(env, "/sign-in", "sign in with e-mail and password", signIn(env)),
    getPage(env, "/sign-in/code", "sign-in: the two-factor step", codeForm(env)),
    postPage(env, "/sign-in/code", "sign in with a TOTP or recovery code", signInCode(env)),
    postPage(env, "/sign-out", "sign out", acting(env, "viewer", async (ctx, who) => signOutAction(env, ctx, who.user._id))),
    getPage(env, "/account", "your account", viewing(env, (ctx, who) => accountScreen(env, ctx, who))),
  ],
};

export async function accountScreen(env: DashboardEnv, ctx: RequestContext, who: Viewer): Promise<Response> {
  const body = html`<section class="panel" aria-labelledby="me-h"><h2 id="me-h">You</h2>${facts([
    ["Name", who.user.name],
    ["E-mail", who.user.email],
    ["Role", who.role],
    ["Two-factor", who.user.totp ? badge("on", "ok") : badge("off", "warn")],
  ])}<p><a href="${env.paths.href("/account/two-factor")}">${who.user.totp ? "Two-factor and recovery codes" : "Set up two-factor authentication"}</a></p></section>`;
  return screen(env, ctx, who, { title: "Account", current: "/account", body });
}
