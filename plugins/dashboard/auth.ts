/**
 * Who may use the dashboard, on which host, and the guards every screen and action passes.
 *
 * Hosts: the dashboard answers on a business's own approved hosts, where a session is valid only
 * for users of that host's business, and on the collections hosts, where users of any business sign
 * in. Any other host gets 404. The user, their business and role are read fresh on every request
 * (a removed user or a changed role applies at once; a password reset ends older sessions).
 *
 * - a screen (GET) needs a session, else it redirects to sign-in and comes back afterwards;
 * - an action (POST) needs, in this order, the page's own Origin (403), a session (else sign-in),
 *   the session's CSRF token (403) and the action's role (403: viewer < developer < owner, enforced
 *   here whatever the page showed);
 * - key and secret actions also call `requireFreshTotp`: a code typed into the same form, or one
 *   entered in this session within `totpFreshMs`.
 */
import type { RequestContext } from "../../core/context.ts";
import { CSRF_FIELD, formFields, html, isSameOrigin, seeOther, textField, type Flash, type SafeHtml } from "../../core/ui/index.ts";
import { bare, forbidden, guarded, isSecure } from "./chrome.ts";
import { TOTP_COOKIE, hasRole, isRole, type DashboardEnv, type Role, type Viewer } from "./env.ts";
import { attemptGate, recordFailure } from "./lockout.ts";
import { codeStep } from "./totp.ts";

export type ScreenHandler = (ctx: RequestContext, who: Viewer) => Promise<Response>;
export type ActionHandler = (ctx: RequestContext, who: Viewer, form: Record<string, string>) => Promise<Response>;

/** Which users a host serves: one business's (its approved hosts) or any business's (collections hosts). */
export type HostScope = { kind: "business"; businessId: string } | { kind: "any" };

export function hostScope(ctx: RequestContext): HostScope | null {
  if (ctx.hostKind === "gateway" && ctx.domain) return { kind: "business", businessId: ctx.domain.businessId };
  if (ctx.hostKind === "collections") return { kind: "any" };
  return null;
}

/** A screen: on a dashboard host, signed in as a user this host serves. */
export function viewing(env: DashboardEnv, fn: ScreenHandler): (ctx: RequestContext) => Promise<Response> {
  return async function dashboardScreen(ctx) {
    const scope = hostScope(ctx);
    if (!scope) return notHere(env, ctx);
    return guarded(env, ctx, null, async () => {
      const who = await currentViewer(env, ctx, scope);
      if (!who) return seeOther(ctx, env.paths.href("/sign-in", { next: requested(env, ctx) }));
      return guarded(env, ctx, who, () => fn(ctx, who));
    });
  };
}

/** An action: same origin, signed in, the session's CSRF token, and at least `minRole`. */
export function acting(env: DashboardEnv, minRole: Role, fn: ActionHandler): (ctx: RequestContext) => Promise<Response> {
  return async function dashboardAction(ctx) {
    const scope = hostScope(ctx);
    if (!scope) return notHere(env, ctx);
    if (!isSameOrigin(ctx.req.headers, env.allowedOrigins)) return forbidden(env, ctx, "This form was not sent from the dashboard's own origin.");
    const session = env.cookies.read(ctx.req.headers.get("cookie"));
    if (!session) return seeOther(ctx, env.paths.href("/sign-in", { next: env.paths.href("") }));
    const form = formFields(ctx);
    if (!env.cookies.checkCsrf(session, form[CSRF_FIELD])) return forbidden(env, ctx, "The form's security token is missing or belongs to another session; reload the page and try again.");
    return guarded(env, ctx, null, async () => {
      const who = await currentViewer(env, ctx, scope);
      if (!who) return seeOther(ctx, env.paths.href("/sign-in", { next: env.paths.href("") }));
      if (!hasRole(who.role, minRole)) return forbidden(env, ctx, `Your role is ${who.role}: this needs ${minRole} or above.`);
      return guarded(env, ctx, who, () => fn(ctx, who, form));
    });
  };
}

/** The signed-in user of this request, when the session is valid for this host; null otherwise. */
export async function currentViewer(env: DashboardEnv, ctx: RequestContext, scope: HostScope): Promise<Viewer | null> {
  const session = env.cookies.read(ctx.req.headers.get("cookie"));
  if (!session) return null;
  const user = await env.users.get(session.sub);
  if (!user || user.status !== "active" || !isRole(user.role)) return null;
  if (scope.kind === "business" && user.businessId !== scope.businessId) return null;
  // The session's issue time (its expiry less the TTL) must follow the user's last reset or removal.
  if (session.exp - env.config.sessionTtlMs < user.sessionsValidAfter) return null;
  const business = env.kit.directory.business(user.businessId);
  if (!business) return null;
  return { session, user, business, role: user.role, environment: business.state };
}

export type FreshTotp = { ok: true; headers: Array<[string, string]> } | { ok: false; flash: Flash };

/**
 * Two-factor confirmation for a key or secret action: the form's `totp` code (checked, spent, and
 * remembered as fresh for `totpFreshMs`), or a code entered earlier in this session within that time.
 * A wrong code counts as a sign-in failure (delay, then lock).
 */
export async function requireFreshTotp(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<FreshTotp> {
  const totp = who.user.totp;
  if (!totp) return { ok: false, flash: { kind: "error", text: "Not done: set up two-factor authentication first (Account → Two-factor)." } };
  const code = (form.totp ?? "").trim();
  if (!code) {
    const fresh = env.cookies.unseal(ctx.req.headers.get("cookie"), TOTP_COOKIE) as { sid?: string } | null;
    if (fresh?.sid === who.session.sid) return { ok: true, headers: [] };
    return { ok: false, flash: { kind: "error", text: "Not done: enter the current code from your authenticator app." } };
  }
  const gate = await attemptGate(env, who.user);
  if (!gate.open) return { ok: false, flash: { kind: "error", text: `Not done: too many wrong codes; try again in ${gate.retryAfterSeconds} s.` } };
  const step = codeStep(totp.secret, code, env.now());
  const spent = step !== null && (await env.users.users.updateOne({ _id: who.user._id, "totp.lastStep": { $lt: step } }, { $set: { "totp.lastStep": step } }));
  if (!spent) {
    await recordFailure(env, ctx, who.user, "code");
    return { ok: false, flash: { kind: "error", text: "Not done: that code is wrong or was already used." } };
  }
  return { ok: true, headers: [["set-cookie", markTotpFresh(env, ctx, who)]] };
}

/** Set-Cookie remembering that this session entered a code now. */
export function markTotpFresh(env: DashboardEnv, ctx: RequestContext, who: { session: { sid: string } }): string {
  return env.cookies.seal(TOTP_COOKIE, { sid: who.session.sid }, env.config.totpFreshMs, isSecure(ctx));
}

/** The code field a key or secret form carries. */
export function totpField(): SafeHtml {
  return textField({ name: "totp", label: "Code from your authenticator app", hint: "Not needed again for 5 minutes after a code was accepted.", autocomplete: "one-time-code", maxLength: 12 });
}

export function notHere(env: DashboardEnv, ctx: RequestContext): Response {
  return bare(env, ctx, 404, "Not found", html`<p>Nothing is served here.</p>`);
}

/** The page asked for, as a public link (where sign-in returns to). */
export function requested(env: DashboardEnv, ctx: RequestContext): string {
  return env.paths.public + ctx.path.slice(env.paths.mount.length) + ctx.search;
}

/** Only a link into the dashboard itself (no other host, no scheme-relative URL). */
export function safeNext(env: DashboardEnv, next: string | null | undefined): string {
  const home = env.paths.href("");
  if (!next || next.length > 1000 || next.startsWith("//") || next.includes("\\")) return home;
  const base = env.paths.public;
  return next === base || next.startsWith(`${base}/`) || next.startsWith(`${base}?`) ? next : home;
}
