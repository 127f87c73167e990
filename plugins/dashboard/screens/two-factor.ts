/**
 * Two-factor enrolment on the Account page: a new secret shown as a QR code (an SVG drawn on the
 * server) and as text to type in, confirmed by a first code; then ten recovery codes shown once
 * (only their hashes are kept). Enrolled users can replace their recovery codes (a fresh code needed).
 */
import type { RequestContext } from "../../../core/context.ts";
import { html, postForm, raw, textField } from "../../../core/ui/index.ts";
import { acting, markTotpFresh, requireFreshTotp, totpField, viewing } from "../auth.ts";
import { back, badge, screen } from "../chrome.ts";
import type { DashboardEnv, Viewer } from "../env.ts";
import { recordFailure } from "../lockout.ts";
import { getPage, postPage } from "../routes.ts";
import type { DashboardSection } from "../sections.ts";
import { codeStep, newRecoveryCodes, newTotpSecret, qrSvg, totpUri } from "../totp.ts";

export const twoFactorSection: DashboardSection = {
  routes: (env) => [
    getPage(env, "/account/two-factor", "two-factor enrolment", viewing(env, (ctx, who) => enrolScreen(env, ctx, who))),
    postPage(env, "/account/two-factor", "confirm two-factor enrolment with a first code", acting(env, "viewer", (ctx, who, form) => confirmAction(env, ctx, who, form))),
    postPage(env, "/account/recovery-codes", "replace the recovery codes (TOTP)", acting(env, "viewer", (ctx, who, form) => recoveryCodesAction(env, ctx, who, form))),
  ],
};

/** GET: enrolled → status and the recovery-code form; else a pending secret (made once) as QR code and text. */
export async function enrolScreen(env: DashboardEnv, ctx: RequestContext, who: Viewer): Promise<Response> {
  const csrf = env.cookies.csrfToken(who.session);
  if (who.user.totp) {
    const left = Object.keys(who.user.recoveryCodes).length;
    const body = html`<section class="panel"><p>Two-factor authentication is ${badge("on", "ok")} since ${who.user.totp.enabledAt}. Recovery codes left: ${left}.</p>
${postForm({ action: env.paths.href("/account/recovery-codes"), csrf, submit: "Replace my recovery codes", fields: totpField() })}</section>`;
    return screen(env, ctx, who, { title: "Two-factor authentication", current: "/account", body });
  }
  const secret = who.user.totpPending?.secret ?? newTotpSecret();
  if (!who.user.totpPending) await env.users.update(who.user._id, { totpPending: { secret, createdAt: new Date(env.now()).toISOString() } });
  const uri = totpUri(secret, who.user.email, `Gatehouse (${who.business.name})`);
  // The SVG comes from the QR library, drawn from our own URI: markup we trust, never input.
  const qr = raw(await qrSvg(uri));
  const body = html`<section class="panel" aria-labelledby="enrol-h"><h2 id="enrol-h">1. Add Gatehouse to your authenticator app</h2>
<p>Scan this QR code with an authenticator app (any TOTP app: 6 digits, 30 seconds).</p>
<figure class="qr" aria-label="QR code of your two-factor secret">${qr}</figure>
<p>Or type the secret in: <code data-totp-secret>${_grouped(secret)}</code></p></section>
<section class="panel" aria-labelledby="confirm-h"><h2 id="confirm-h">2. Confirm with the code it shows</h2>
${postForm({ action: env.paths.href("/account/two-factor"), csrf, submit: "Turn on two-factor", fields: textField({ name: "code", label: "Code", required: true, autocomplete: "one-time-code", maxLength: 12 }) })}</section>`;
  return screen(env, ctx, who, { title: "Two-factor authentication", current: "/account", body, headers: { "cache-control": "no-store" } });
}

/** POST: the first code proves the app holds the secret → enrolled; recovery codes shown once. */
export async function confirmAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const pending = who.user.totpPending;
  const page = env.paths.href("/account/two-factor");
  if (who.user.totp) return back(env, ctx, page, { kind: "ok", text: "Two-factor authentication is already on." });
  if (!pending) return back(env, ctx, page, { kind: "error", text: "Start again: scan the new QR code." });
  const step = codeStep(pending.secret, form.code ?? "", env.now());
  if (step === null) {
    await recordFailure(env, ctx, who.user, "code");
    return back(env, ctx, page, { kind: "error", text: "That code is wrong: check the app shows the Gatehouse entry you just added, and try the current code." });
  }
  const { codes, hashes } = newRecoveryCodes();
  const enabledAt = new Date(env.now()).toISOString();
  // Only while still pending with this secret: a second tab cannot enrol another secret over it.
  const done = await env.users.users.updateOne(
    { _id: who.user._id, "totpPending.secret": pending.secret },
    { $set: { totp: { secret: pending.secret, enabledAt, lastStep: step }, totpPending: null, recoveryCodes: Object.fromEntries(hashes.map((h) => [h, true])), updatedAt: enabledAt } },
  );
  if (!done) return back(env, ctx, page, { kind: "error", text: "Start again: your enrolment changed in another window." });
  env.kit.log.event("dashboard_two_factor_enabled", { requestId: ctx.requestId, userId: who.user._id, businessId: who.business.id });
  return _codesShownOnce(env, ctx, who, codes, "Two-factor authentication is on", [markTotpFresh(env, ctx, who)]);
}

/** POST: new recovery codes replace the old ones (a fresh code needed). */
export async function recoveryCodesAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const t = await requireFreshTotp(env, ctx, who, form);
  if (!t.ok) return back(env, ctx, env.paths.href("/account/two-factor"), t.flash);
  const { codes, hashes } = newRecoveryCodes();
  await env.users.update(who.user._id, { recoveryCodes: Object.fromEntries(hashes.map((h) => [h, true])) });
  env.kit.log.event("dashboard_recovery_codes_replaced", { requestId: ctx.requestId, userId: who.user._id });
  return _codesShownOnce(env, ctx, who, codes, "New recovery codes", t.headers.map(([, v]) => v));
}

// --- Internal helpers ---

function _grouped(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, "$1 ");
}

function _codesShownOnce(env: DashboardEnv, ctx: RequestContext, who: Viewer, codes: string[], title: string, cookies: string[]): Response {
  const body = html`<section class="panel"><p role="alert" class="flash ok">Save these recovery codes somewhere safe now: they are shown only on this page. Each one signs you in once if you lose your authenticator app.</p>
<ul class="recovery-codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
<p><a href="${env.paths.href("/account")}">Done</a></p></section>`;
  return screen(env, ctx, who, { title, current: "/account", body, headers: { "cache-control": "no-store" }, cookies });
}
