/**
 * Pages reached from an e-mailed link, without a session: accepting an invitation (choose a name
 * and password; signed in at once, then asked to set up two-factor) and resetting a password (ask
 * for a link; set a new password, which ends every older session and lifts a lock). A link carries a
 * random token stored only as its hash, expires (`invitationTtlMs`, `resetTtlMs`) and works once.
 * Asking for a reset answers the same words whether or not the address has an account.
 */
import type { RequestContext } from "../../../core/context.ts";
import { html, seeOther, textField, type Flash } from "../../../core/ui/index.ts";
import { hostScope, notHere, type HostScope } from "../auth.ts";
import { bare, forbidden, guarded, isSecure } from "../chrome.ts";
import { FLASH_COOKIE, type DashboardEnv } from "../env.ts";
import { absoluteLink, sendMail } from "../mail.ts";
import { hashPassword, newLinkToken, passwordProblem, tokenHash } from "../passwords.ts";
import { getPage, postPage, type PageHandler } from "../routes.ts";
import type { DashboardSection } from "../sections.ts";
import { isEmail, type DashboardUser, type LinkDoc } from "../users.ts";
import { formFields, isSameOrigin } from "../../../core/ui/index.ts";

export const linksSection: DashboardSection = {
  routes: (env) => [
    getPage(env, "/invitations/:token", "accept an invitation: the form", _public(env, false, (ctx, scope) => invitationPage(env, ctx, scope))),
    postPage(env, "/invitations/:token", "accept an invitation: set a password", _public(env, true, (ctx, scope, form) => acceptInvitation(env, ctx, scope, form))),
    getPage(env, "/password-reset", "ask for a password reset link", _public(env, false, async (ctx) => resetRequestPage(env, ctx, 200, null))),
    postPage(env, "/password-reset", "send a password reset link", _public(env, true, (ctx, scope, form) => requestReset(env, ctx, scope, form))),
    getPage(env, "/password-reset/:token", "reset a password: the form", _public(env, false, (ctx, scope) => resetPage(env, ctx, scope))),
    postPage(env, "/password-reset/:token", "reset a password", _public(env, true, (ctx, scope, form) => resetPassword(env, ctx, scope, form))),
  ],
};

/** Makes an invitation or reset link for `user` (older unused ones of the kind stop working); answers the token for the e-mail. */
export async function issueLink(env: DashboardEnv, kind: LinkDoc["kind"], user: DashboardUser): Promise<string> {
  await env.users.links.deleteMany({ userId: user._id, kind, usedAt: null });
  const { token, hash } = newLinkToken();
  const ttl = kind === "invitation" ? env.config.invitationTtlMs : env.config.resetTtlMs;
  await env.users.links.insert({ _id: hash, kind, userId: user._id, businessId: user.businessId, expiresAt: env.now() + ttl, usedAt: null });
  return token;
}

export async function invitationPage(env: DashboardEnv, ctx: RequestContext, scope: HostScope): Promise<Response> {
  const found = await _link(env, ctx, scope, "invitation");
  if (!found) return _invalid(env, ctx, "invitation");
  return _invitationForm(env, ctx, found.user, 200, null);
}

export async function acceptInvitation(env: DashboardEnv, ctx: RequestContext, scope: HostScope, form: Record<string, string>): Promise<Response> {
  const found = await _link(env, ctx, scope, "invitation");
  if (!found) return _invalid(env, ctx, "invitation");
  const name = (form.name ?? "").trim().slice(0, 100);
  const problem = passwordProblem(form.password ?? "") ?? (form.password !== form.password2 ? "the two passwords differ" : null) ?? (name ? null : "enter your name");
  if (problem) return _invitationForm(env, ctx, found.user, 400, { kind: "error", text: `Not yet: ${problem}.` });
  if (!(await _spend(env, found.link))) return _invalid(env, ctx, "invitation");
  const password = await hashPassword(form.password!);
  const user = await env.users.update(found.user._id, { name, password, status: "active" });
  if (!user) return _invalid(env, ctx, "invitation");
  env.kit.log.event("dashboard_invitation_accepted", { requestId: ctx.requestId, userId: user._id, businessId: user.businessId, role: user.role });
  const { setCookie } = env.cookies.issue({ sub: user._id, role: user.role }, isSecure(ctx));
  const flash = env.cookies.seal(FLASH_COOKIE, { kind: "ok", text: "Welcome! Your account is ready. Set up two-factor authentication now: it is needed to manage keys." }, 60_000, isSecure(ctx));
  return seeOther(ctx, env.paths.href("/account/two-factor"), [["set-cookie", setCookie], ["set-cookie", flash]]);
}

export function resetRequestPage(env: DashboardEnv, ctx: RequestContext, status: number, flash: Flash | null): Response {
  const body = html`<p>Enter the e-mail address you sign in with. If it has an account, we send it a link to choose a new password.</p>
<form method="post" action="${env.paths.href("/password-reset")}" class="stack">
${textField({ name: "email", label: "E-mail", required: true, autocomplete: "username", maxLength: 254 })}
<div><button type="submit">Send the link</button></div></form>
<p><a href="${env.paths.href("/sign-in")}">Back to sign-in</a></p>`;
  return bare(env, ctx, status, "Reset your password", body, flash);
}

export async function requestReset(env: DashboardEnv, ctx: RequestContext, scope: HostScope, form: Record<string, string>): Promise<Response> {
  const permit = await env.kit.ports.coordination.takePermit(`dashboard-sign-in:${ctx.clientAddress ?? "unknown"}`, env.config.signInAttempts, env.config.signInWindowMs);
  if (!permit.allowed) return resetRequestPage(env, ctx, 429, { kind: "error", text: `Too many attempts from this address; try again in ${Math.ceil(permit.retryAfterMs / 1000)} s.` });
  const email = (form.email ?? "").trim();
  if (isEmail(email)) {
    const candidates = scope.kind === "business" ? [await env.users.byEmail(scope.businessId, email)] : await env.users.everyWithEmail(email);
    for (const user of candidates.filter((u): u is DashboardUser => u !== null && u.status === "active").slice(0, 5)) {
      const token = await issueLink(env, "reset", user);
      const minutes = Math.round(env.config.resetTtlMs / 60_000);
      const business = env.kit.directory.business(user.businessId)?.name ?? user.businessId;
      await sendMail(env, ctx, "password_reset", user.email, "Reset your Gatehouse dashboard password", [
        `Someone (we hope you) asked to reset the password of your Gatehouse dashboard account for ${business}.`,
        `Choose a new password here within ${minutes} minutes:`,
        absoluteLink(env, ctx, `/password-reset/${token}`),
        "If you did not ask for this, ignore this e-mail: your password stays as it is.",
      ].join("\n"));
    }
  }
  env.kit.log.event("dashboard_password_reset_requested", { requestId: ctx.requestId, clientAddress: ctx.clientAddress ?? "unknown" });
  return resetRequestPage(env, ctx, 200, { kind: "ok", text: "If that address has an account, a link to reset its password is on its way. It works once, for a limited time." });
}

export async function resetPage(env: DashboardEnv, ctx: RequestContext, scope: HostScope): Promise<Response> {
  const found = await _link(env, ctx, scope, "reset");
  if (!found) return _invalid(env, ctx, "reset");
  return _resetForm(env, ctx, 200, null);
}

export async function resetPassword(env: DashboardEnv, ctx: RequestContext, scope: HostScope, form: Record<string, string>): Promise<Response> {
  const found = await _link(env, ctx, scope, "reset");
  if (!found) return _invalid(env, ctx, "reset");
  const problem = passwordProblem(form.password ?? "") ?? (form.password !== form.password2 ? "the two passwords differ" : null);
  if (problem) return _resetForm(env, ctx, 400, { kind: "error", text: `Not changed: ${problem}.` });
  if (!(await _spend(env, found.link))) return _invalid(env, ctx, "reset");
  await env.users.update(found.user._id, { password: await hashPassword(form.password!), sessionsValidAfter: env.now(), lockedUntil: null });
  env.kit.log.event("dashboard_password_reset", { requestId: ctx.requestId, userId: found.user._id });
  const flash = env.cookies.seal(FLASH_COOKIE, { kind: "ok", text: "Your password is changed. Sign in with it." }, 60_000, isSecure(ctx));
  return seeOther(ctx, env.paths.href("/sign-in"), [["set-cookie", flash]]);
}

// --- Internal helpers ---

function _public(env: DashboardEnv, post: boolean, fn: (ctx: RequestContext, scope: HostScope, form: Record<string, string>) => Promise<Response>): PageHandler {
  return async function dashboardLinkPage(ctx) {
    const scope = hostScope(ctx);
    if (!scope) return notHere(env, ctx);
    if (post && !isSameOrigin(ctx.req.headers, env.allowedOrigins)) return forbidden(env, ctx, "This form was not sent from the dashboard's own origin.");
    return guarded(env, ctx, null, () => fn(ctx, scope, post ? formFields(ctx) : {}));
  };
}

/** The link named by the URL's token: of this kind, unused, unexpired, for a user this host serves. */
async function _link(env: DashboardEnv, ctx: RequestContext, scope: HostScope, kind: LinkDoc["kind"]): Promise<{ link: LinkDoc; user: DashboardUser } | null> {
  const token = ctx.params.token ?? "";
  if (!/^[A-Za-z0-9_-]{20,64}$/.test(token)) return null;
  const link = await env.users.links.get(tokenHash(token));
  if (!link || link.kind !== kind || link.usedAt !== null || link.expiresAt <= env.now()) return null;
  if (scope.kind === "business" && link.businessId !== scope.businessId) return null;
  const user = await env.users.get(link.userId);
  const wanted = kind === "invitation" ? "invited" : "active";
  return user && user.status === wanted ? { link, user } : null;
}

/** Marks the link used; false when another request used it first. */
function _spend(env: DashboardEnv, link: LinkDoc): Promise<boolean> {
  return env.users.links.updateOne({ _id: link._id, usedAt: null }, { $set: { usedAt: new Date(env.now()).toISOString() } });
}

function _invalid(env: DashboardEnv, ctx: RequestContext, kind: LinkDoc["kind"]): Response {
  const what = kind === "invitation" ? "invitation" : "password reset link";
  const next = kind === "invitation" ? html`Ask your team's owner to invite you again.` : html`<a href="${env.paths.href("/password-reset")}">Ask for a new link</a>.`;
  return bare(env, ctx, 404, "Link not valid", html`<p>This ${what} is not valid: it expired, was already used, or was replaced by a newer one. ${next}</p>`);
}

function _invitationForm(env: DashboardEnv, ctx: RequestContext, user: DashboardUser, status: number, flash: Flash | null): Response {
  const business = env.kit.directory.business(user.businessId)?.name ?? user.businessId;
  const body = html`<p>You are invited to the Gatehouse dashboard of <strong>${business}</strong> as <strong>${user.role}</strong>, with the e-mail address <strong>${user.email}</strong>.</p>
<form method="post" action="${env.paths.href(`/invitations/${ctx.params.token ?? ""}`)}" class="stack">
${textField({ name: "name", label: "Your name", required: true, autocomplete: "name", maxLength: 100 })}
${textField({ name: "password", label: "Choose a password", hint: "At least 10 characters.", type: "password", required: true, autocomplete: "new-password", maxLength: 200 })}
${textField({ name: "password2", label: "The same password again", type: "password", required: true, autocomplete: "new-password", maxLength: 200 })}
<div><button type="submit">Join the team</button></div></form>`;
  return bare(env, ctx, status, "Accept your invitation", body, flash);
}

function _resetForm(env: DashboardEnv, ctx: RequestContext, status: number, flash: Flash | null): Response {
  const body = html`<form method="post" action="${env.paths.href(`/password-reset/${ctx.params.token ?? ""}`)}" class="stack">
${textField({ name: "password", label: "New password", hint: "At least 10 characters.", type: "password", required: true, autocomplete: "new-password", maxLength: 200 })}
${textField({ name: "password2", label: "The same password again", type: "password", required: true, autocomplete: "new-password", maxLength: 200 })}
<div><button type="submit">Change password</button></div></form>`;
  return bare(env, ctx, status, "Choose a new password", body, flash);
}
