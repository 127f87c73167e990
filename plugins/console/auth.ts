/**
 * Who may use the console and how: sign-in with an operator key (the Admin API's `x-admin-api-key`
 * credentials, looked up in the directory exactly as the auth stage does → role admin) or a console
 * viewer credential from the config (`console.viewers` → role viewer, read-only); a signed session
 * cookie (core/ui/session.ts); and the guards every screen and action passes:
 *
 * - a screen (GET) needs a session, else it redirects to sign-in and comes back afterwards;
 * - an action (POST) needs, in this order, the page's own Origin (403), a session (else sign-in),
 *   the session's CSRF token (403) and, for anything that changes state, the admin role (403: the
 *   server refuses a viewer whatever the page showed).
 *
 * Sign-in attempts are limited per client address through the coordination store (shared by every
 * process), a credential's IP allowlist applies to sign-in as to API calls, and every failure is
 * logged with the client address and reason, never the key.
 */
import { BlockList, isIP } from "node:net";
import type { RequestContext } from "../../core/context.ts";
import { hashSecret } from "../../core/directory.ts";
import { CSRF_FIELD, formFields, html, isSameOrigin, postForm, seeOther, textField, type Flash, type Session } from "../../core/ui/index.ts";
import { bare, forbidden, guarded } from "./chrome.ts";
import type { ConsoleEnv, Role } from "./env.ts";

export type ScreenHandler = (ctx: RequestContext, session: Session) => Promise<Response>;
export type ActionHandler = (ctx: RequestContext, session: Session, form: Record<string, string>) => Promise<Response>;

/** A screen: signed in, on a console host. */
export function viewing(env: ConsoleEnv, fn: ScreenHandler): (ctx: RequestContext) => Promise<Response> {
  return async function consoleScreen(ctx) {
    if (!_onConsoleHost(env, ctx)) return _notHere(env, ctx);
    const session = env.cookies.read(ctx.req.headers.get("cookie"));
    if (!session) return seeOther(ctx, env.paths.href("/sign-in", { next: _requested(env, ctx) }));
    return guarded(env, ctx, session, () => fn(ctx, session));
  };
}

/** An action: same origin, signed in, CSRF token, and `role` (admin for every change). */
export function acting(env: ConsoleEnv, role: Role, fn: ActionHandler): (ctx: RequestContext) => Promise<Response> {
  return async function consoleAction(ctx) {
    if (!_onConsoleHost(env, ctx)) return _notHere(env, ctx);
    if (!isSameOrigin(ctx.req.headers, env.allowedOrigins)) return forbidden(env, ctx, "This form was not sent from the console's own origin.");
    const session = env.cookies.read(ctx.req.headers.get("cookie"));
    if (!session) return seeOther(ctx, env.paths.href("/sign-in", { next: env.paths.href("") }));
    const form = formFields(ctx);
    if (!env.cookies.checkCsrf(session, form[CSRF_FIELD])) return forbidden(env, ctx, "The form's security token is missing or belongs to another session; reload the page and try again.");
    if (role === "admin" && session.role !== "admin") return forbidden(env, ctx, "Your role is viewer: the console is read-only for you.");
    return guarded(env, ctx, session, () => fn(ctx, session, form));
  };
}

/** GET sign-in: the form (or straight home when already signed in). */
export function signInForm(env: ConsoleEnv): (ctx: RequestContext) => Promise<Response> {
  return async function consoleSignInForm(ctx) {
    if (!_onConsoleHost(env, ctx)) return _notHere(env, ctx);
    const next = _safeNext(env, new URLSearchParams(ctx.search).get("next"));
    if (env.cookies.read(ctx.req.headers.get("cookie"))) return seeOther(ctx, next);
    return signInPage(env, ctx, 200, next, null);
  };
}

/** POST sign-in: same origin, within the attempt limit, a known key → session cookie and back to `next`. */
export function signIn(env: ConsoleEnv): (ctx: RequestContext) => Promise<Response> {
  return async function consoleSignIn(ctx) {
    if (!_onConsoleHost(env, ctx)) return _notHere(env, ctx);
    if (!isSameOrigin(ctx.req.headers, env.allowedOrigins)) return forbidden(env, ctx, "This form was not sent from the console's own origin.");
    const form = formFields(ctx);
    const next = _safeNext(env, form.next ?? null);
    const client = ctx.clientAddress ?? "unknown";
    return guarded(env, ctx, null, async () => {
      const c = env.kit.config.console;
      const permit = await env.kit.ports.coordination.takePermit(`console-sign-in:${client}`, c.signInAttempts, c.signInWindowMs);
      if (!permit.allowed) {
        env.kit.log.warn("console_sign_in_failed", { requestId: ctx.requestId, clientAddress: client, reason: "rate_limited" });
        const wait = Math.ceil(permit.retryAfterMs / 1000);
        return signInPage(env, ctx, 429, next, { kind: "error", text: `Too many sign-in attempts from this address; try again in ${wait} s.` }, { "retry-after": String(wait) });
      }
      const who = await authenticateConsoleKey(env, form.key ?? "");
      if (!who) {
        env.kit.log.warn("console_sign_in_failed", { requestId: ctx.requestId, clientAddress: client, reason: "unknown_key" });
        return signInPage(env, ctx, 401, next, { kind: "error", text: "That key is not an operator or console key." });
      }
      if (!isAllowedFrom(who.ipWhitelisted, ctx.clientAddress)) {
        env.kit.log.warn("console_sign_in_failed", { requestId: ctx.requestId, clientAddress: client, credentialId: who.sub, reason: "ip_not_allowed" });
        return signInPage(env, ctx, 403, next, { kind: "error", text: "This key may not be used from your address." });
      }
      const secure = (ctx.req.headers.get("origin") ?? "").startsWith("https:") || ctx.req.url.startsWith("https:");
      const { setCookie } = env.cookies.issue({ sub: who.sub, role: who.role }, secure);
      env.kit.log.event("console_signed_in", { requestId: ctx.requestId, credentialId: who.sub, role: who.role, clientAddress: client });
      return seeOther(ctx, next, [["set-cookie", setCookie]]);
    });
  };
}

/** POST sign-out: clears the cookie (CSRF-checked like every action, any role). */
export function signOut(env: ConsoleEnv): (ctx: RequestContext) => Promise<Response> {
  return acting(env, "viewer", async (ctx, session) => {
    env.kit.log.event("console_signed_out", { requestId: ctx.requestId, credentialId: session.sub });
    return seeOther(ctx, env.paths.href("/sign-in"), [["set-cookie", env.cookies.clear(ctx.req.url.startsWith("https:"))]]);
  });
}

/** The credential a presented key belongs to: a console viewer (config) or an operator key (directory). */
export async function authenticateConsoleKey(env: ConsoleEnv, key: string): Promise<{ sub: string; role: Role; ipWhitelisted: readonly string[] } | null> {
  if (key.length < 8 || key.length > 512) return null;
  const hashed = hashSecret(key);
  for (const v of env.kit.config.console.viewers)
    if (!v.revoked && (v.keyHash ?? (v.key ? hashSecret(v.key) : null)) === hashed) return { sub: v.id, role: "viewer", ipWhitelisted: v.ipWhitelisted };
  const principal = await env.kit.directory.authenticate("admin", key);
  return principal ? { sub: principal.credentialId, role: "admin", ipWhitelisted: principal.ipWhitelisted } : null;
}

/**
 * The credential's IP allowlist (addresses or CIDR ranges; empty = any) against the client address
 * the edge established, as the ip-allowlist stage applies it to API calls: an unknown address is
 * refused when there is a list.
 */
export function isAllowedFrom(entries: readonly string[], address: string | null): boolean {
  if (entries.length === 0) return true;
  const family = address ? isIP(address) : 0;
  if (!address || family === 0) return false;
  const list = new BlockList();
  for (const entry of entries) {
    const [ip, bits] = entry.split("/");
    const f = isIP(ip ?? "");
    if (f === 0) continue;
    if (bits !== undefined) list.addSubnet(ip!, Number(bits), f === 4 ? "ipv4" : "ipv6");
    else list.addAddress(ip!, f === 4 ? "ipv4" : "ipv6");
  }
  return list.check(address, family === 4 ? "ipv4" : "ipv6");
}

export function signInPage(env: ConsoleEnv, ctx: RequestContext, status: number, next: string, flash: Flash | null, headers: Record<string, string> = {}): Response {
  const body = html`<p>Sign in with an operator key (full access) or a console viewer key (read-only).</p>
<form method="post" action="${env.paths.href("/sign-in")}" class="stack">
<input type="hidden" name="next" value="${next}">
${textField({ name: "key", label: "Key", type: "password", required: true, autocomplete: "off", maxLength: 512 })}
<div><button type="submit">Sign in</button></div>
</form>`;
  return bare(env, ctx, status, "Sign in", body, flash, headers);
}

export { postForm };

// --- Internal helpers ---

function _onConsoleHost(env: ConsoleEnv, ctx: RequestContext): boolean {
  return env.hosts === "any" || env.hosts.includes(ctx.host);
}

function _notHere(env: ConsoleEnv, ctx: RequestContext): Response {
  return bare(env, ctx, 404, "Not found", html`<p>Nothing is served here.</p>`);
}

/** The page asked for, as a public link (where sign-in returns to). */
function _requested(env: ConsoleEnv, ctx: RequestContext): string {
  return env.paths.public + ctx.path.slice(env.paths.mount.length) + ctx.search;
}

/** Only a link into the console itself (no other host, no scheme-relative URL). */
function _safeNext(env: ConsoleEnv, next: string | null): string {
  const home = env.paths.href("");
  if (!next || next.length > 1000 || next.startsWith("//") || next.includes("\\")) return home;
  const base = env.paths.public;
  return next === base || next.startsWith(`${base}/`) || next.startsWith(`${base}?`) ? next : home;
}
