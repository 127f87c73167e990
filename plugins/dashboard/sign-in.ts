/**
 * Signing in: an e-mail and password (step 1), then, for a user with two-factor enrolled, a code
 * from the authenticator app or a recovery code (step 2) → a session cookie and back to the page
 * asked for. Between the steps a sealed cookie names the user for five minutes.
 *
 * Answers never say whether an e-mail has an account (the same words and the same scrypt work for
 * an unknown address). Attempts are limited per client address (the coordination store), wrong
 * passwords and codes per account (lockout.ts). Failures are logged with the address, the user id
 * when known and the reason, never the e-mail, password or code.
 */
import type { RequestContext } from "../../core/context.ts";
import { formFields, html, isSameOrigin, seeOther, textField, type Flash } from "../../core/ui/index.ts";
import { currentViewer, hostScope, markTotpFresh, notHere, safeNext, type HostScope } from "./auth.ts";
import { bare, forbidden, guarded, isSecure } from "./chrome.ts";
import { FLASH_COOKIE, PENDING_COOKIE, TOTP_COOKIE, type DashboardEnv } from "./env.ts";
import { attemptGate, recordFailure } from "./lockout.ts";
import { verifyPassword } from "./passwords.ts";
import { codeStep, isRecoveryCodeShape, recoveryHash } from "./totp.ts";
import { isEmail, type DashboardUser } from "./users.ts";

type Handler = (ctx: RequestContext) => Promise<Response>;

const PENDING_TTL_MS = 5 * 60_000;
const WRONG = "The e-mail or password is wrong, or the account is locked for a while after too many attempts.";

/** GET /sign-in: the form (or straight home when already signed in). */
export function signInForm(env: DashboardEnv): Handler {
  return _page(env, async (ctx, scope) => {
    const next = safeNext(env, new URLSearchParams(ctx.search).get("next"));
    if (await currentViewer(env, ctx, scope)) return seeOther(ctx, next);
    // A message left by a redirect (a password changed, an invitation accepted), shown once.
    const flash = env.cookies.unseal(ctx.req.headers.get("cookie"), FLASH_COOKIE) as Flash | null;
    const clear = `${FLASH_COOKIE}=; Path=${env.paths.public || "/"}; Max-Age=0; HttpOnly; SameSite=Strict`;
    return passwordPage(env, ctx, 200, next, flash && typeof flash.text === "string" ? flash : null, flash ? { "set-cookie": clear } : {});
  });
}

/** POST /sign-in: same origin, within the address's limit, the account's gate, the password → code step or session. */
export function signIn(env: DashboardEnv): Handler {
  return _post(env, async (ctx, scope, form) => {
    const next = safeNext(env, form.next);
    const limited = await _addressLimited(env, ctx);
    if (limited) return passwordPage(env, ctx, 429, next, limited.flash, { "retry-after": String(limited.wait) });
    const email = (form.email ?? "").trim();
    const password = form.password ?? "";
    const user = isEmail(email) && password ? await _passwordUser(env, ctx, scope, email, password) : null;
    if (!user) return passwordPage(env, ctx, 401, next, { kind: "error", text: WRONG });
    if (user.totp) {
      const pending = env.cookies.seal(PENDING_COOKIE, { uid: user._id, next }, PENDING_TTL_MS, isSecure(ctx));
      return seeOther(ctx, env.paths.href("/sign-in/code"), [["set-cookie", pending]]);
    }
    return _startSession(env, ctx, user, next, false);
  });
}

/** GET /sign-in/code: the second step's form. */
export function codeForm(env: DashboardEnv): Handler {
  return _page(env, async (ctx) => {
    if (!_pending(env, ctx)) return seeOther(ctx, env.paths.href("/sign-in"));
    return codePage(env, ctx, 200, null);
  });
}

/** POST /sign-in/code: a current code (spent once) or an unused recovery code → session. */
export function signInCode(env: DashboardEnv): Handler {
  return _post(env, async (ctx, scope) => {
    const form = formFields(ctx);
    const pending = _pending(env, ctx);
    if (!pending) return seeOther(ctx, env.paths.href("/sign-in"));
    const limited = await _addressLimited(env, ctx);
    if (limited) return codePage(env, ctx, 429, limited.flash, { "retry-after": String(limited.wait) });
    const user = await env.users.get(pending.uid);
    if (!user || user.status !== "active" || !user.totp || (scope.kind === "business" && user.businessId !== scope.businessId)) return seeOther(ctx, env.paths.href("/sign-in"));
    const gate = await attemptGate(env, user);
    if (!gate.open) {
      env.kit.log.warn("dashboard_sign_in_failed", { requestId: ctx.requestId, clientAddress: ctx.clientAddress ?? "unknown", userId: user._id, reason: gate.reason });
      return codePage(env, ctx, 429, { kind: "error", text: `Too many wrong codes: try again in ${gate.retryAfterSeconds} s.` }, { "retry-after": String(gate.retryAfterSeconds) });
    }
    const code = (form.code ?? "").trim();
    if (!(await _spendCode(env, user, code))) {
      const f = await recordFailure(env, ctx, user, "code");
      const text = f.locked ? "Too many wrong codes: the account is locked for a while; we e-mailed you." : "That code is wrong or was already used.";
      return codePage(env, ctx, 401, { kind: "error", text });
    }
    return _startSession(env, ctx, user, pending.next, !isRecoveryCodeShape(code));
  });
}

/** POST /sign-out: clears the cookies (CSRF-checked like every action, any role). */
export function signOutAction(env: DashboardEnv, ctx: RequestContext, sub: string): Response {
  env.kit.log.event("dashboard_signed_out", { requestId: ctx.requestId, userId: sub });
  const secure = isSecure(ctx);
  const path = env.paths.public || "/";
  return seeOther(ctx, env.paths.href("/sign-in"), [
    ["set-cookie", env.cookies.clear(secure)],
    ["set-cookie", `${TOTP_COOKIE}=; Path=${path}; Max-Age=0; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`],
  ]);
}

export function passwordPage(env: DashboardEnv, ctx: RequestContext, status: number, next: string, flash: Flash | null, headers: Record<string, string> = {}): Response {
  const body = html`<p>Sign in with your e-mail address and password. Team members are invited by their business's owner.</p>
<form method="post" action="${env.paths.href("/sign-in")}" class="stack">
<input type="hidden" name="next" value="${next}">
${textField({ name: "email", label: "E-mail", required: true, autocomplete: "username", maxLength: 254 })}
${textField({ name: "password", label: "Password", type: "password", required: true, autocomplete: "current-password", maxLength: 200 })}
<div><button type="submit">Continue</button></div>
</form>
<p><a href="${env.paths.href("/password-reset")}">Forgot your password?</a></p>`;
  return bare(env, ctx, status, "Sign in", body, flash, headers);
}

export function codePage(env: DashboardEnv, ctx: RequestContext, status: number, flash: Flash | null, headers: Record<string, string> = {}): Response {
  const body = html`<p>Enter the 6-digit code your authenticator app shows for Gatehouse, or one of your recovery codes.</p>
<form method="post" action="${env.paths.href("/sign-in/code")}" class="stack">
${textField({ name: "code", label: "Code", required: true, autocomplete: "one-time-code", maxLength: 20 })}
<div><button type="submit">Sign in</button></div>
</form>
<p><a href="${env.paths.href("/sign-in")}">Start again</a></p>`;
  return bare(env, ctx, status, "Two-factor code", body, flash, headers);
}

// --- Internal helpers ---

function _page(env: DashboardEnv, fn: (ctx: RequestContext, scope: HostScope) => Promise<Response>): Handler {
  return async function dashboardPublicPage(ctx) {
    const scope = hostScope(ctx);
    if (!scope) return notHere(env, ctx);
    return guarded(env, ctx, null, () => fn(ctx, scope));
  };
}

/** A public POST (no session yet): on a dashboard host, from the page's own origin. */
function _post(env: DashboardEnv, fn: (ctx: RequestContext, scope: HostScope, form: Record<string, string>) => Promise<Response>): Handler {
  return async function dashboardPublicAction(ctx) {
    const scope = hostScope(ctx);
    if (!scope) return notHere(env, ctx);
    if (!isSameOrigin(ctx.req.headers, env.allowedOrigins)) return forbidden(env, ctx, "This form was not sent from the dashboard's own origin.");
    return guarded(env, ctx, null, () => fn(ctx, scope, formFields(ctx)));
  };
}

async function _addressLimited(env: DashboardEnv, ctx: RequestContext): Promise<{ flash: Flash; wait: number } | null> {
  const client = ctx.clientAddress ?? "unknown";
  const permit = await env.kit.ports.coordination.takePermit(`dashboard-sign-in:${client}`, env.config.signInAttempts, env.config.signInWindowMs);
  if (permit.allowed) return null;
  env.kit.log.warn("dashboard_sign_in_failed", { requestId: ctx.requestId, clientAddress: client, reason: "rate_limited" });
  const wait = Math.ceil(permit.retryAfterMs / 1000);
  return { flash: { kind: "error", text: `Too many sign-in attempts from this address; try again in ${wait} s.` }, wait };
}

/** The active user this host serves whose password this is; counts a wrong one against the account. */
async function _passwordUser(env: DashboardEnv, ctx: RequestContext, scope: HostScope, email: string, password: string): Promise<DashboardUser | null> {
  const candidates = (scope.kind === "business" ? [await env.users.byEmail(scope.businessId, email)] : await env.users.everyWithEmail(email)).filter(
    (u): u is DashboardUser => u !== null && u.status === "active",
  );
  if (candidates.length === 0) {
    await verifyPassword(password, null);
    env.kit.log.warn("dashboard_sign_in_failed", { requestId: ctx.requestId, clientAddress: ctx.clientAddress ?? "unknown", reason: "unknown_account" });
    return null;
  }
  for (const user of candidates.slice(0, 5)) {
    const gate = await attemptGate(env, user);
    if (!gate.open) {
      env.kit.log.warn("dashboard_sign_in_failed", { requestId: ctx.requestId, clientAddress: ctx.clientAddress ?? "unknown", userId: user._id, reason: gate.reason });
      continue;
    }
    if (await verifyPassword(password, user.password)) return user;
    await recordFailure(env, ctx, user, "password");
  }
  return null;
}

function _pending(env: DashboardEnv, ctx: RequestContext): { uid: string; next: string } | null {
  const v = env.cookies.unseal(ctx.req.headers.get("cookie"), PENDING_COOKIE) as { uid?: unknown; next?: unknown } | null;
  return v && typeof v.uid === "string" && typeof v.next === "string" ? { uid: v.uid, next: safeNext(env, v.next) } : null;
}

/** A TOTP code for a later step than the last one spent, or an unused recovery code (removed once used). */
async function _spendCode(env: DashboardEnv, user: DashboardUser, code: string): Promise<boolean> {
  if (isRecoveryCodeShape(code)) {
    const h = recoveryHash(code);
    // One conditional update: two sign-ins with the same code cannot both spend it.
    return env.users.users.updateOne({ _id: user._id, [`recoveryCodes.${h}`]: true }, { $unset: [`recoveryCodes.${h}`] });
  }
  const step = codeStep(user.totp!.secret, code, env.now());
  return step !== null && env.users.users.updateOne({ _id: user._id, "totp.lastStep": { $lt: step } }, { $set: { "totp.lastStep": step } });
}

function _startSession(env: DashboardEnv, ctx: RequestContext, user: DashboardUser, next: string, codeEntered: boolean): Response {
  const secure = isSecure(ctx);
  const { session, setCookie } = env.cookies.issue({ sub: user._id, role: user.role }, secure);
  env.kit.log.event("dashboard_signed_in", { requestId: ctx.requestId, userId: user._id, businessId: user.businessId, role: user.role, clientAddress: ctx.clientAddress ?? "unknown" });
  const headers: Array<[string, string]> = [["set-cookie", setCookie], ["set-cookie", `${PENDING_COOKIE}=; Path=${env.paths.public || "/"}; Max-Age=0; HttpOnly; SameSite=Strict`]];
  if (codeEntered) headers.push(["set-cookie", markTotpFresh(env, ctx, { session })]);
  return seeOther(ctx, next, headers);
}
