/**
 * Key changes (developer or owner): create (the key shown once, on the answer page only: no
 * redirect, not cached, never stored or logged), roll (the old key keeps working for the hours
 * given), revoke (confirmed), and the IP allowlist. Create, roll and the allowlist need a fresh TOTP
 * code (`requireFreshTotp`): without one nothing is called. Each calls the admin plugin's directory
 * service (DIRECTORY_OPERATIONS), the Admin API's own validation, idempotency (the form's key) and
 * audit entry, with the actor `dashboard:<userId>`. A key id of another business answers 404.
 */
import type { RequestContext } from "../../../core/context.ts";
import type { CredentialDoc } from "../../../core/directory-store.ts";
import { isGatewayError } from "../../../core/errors/gateway-error.ts";
import type { RouteDeclaration } from "../../../core/plugin.ts";
import { EMPTY, IDEMPOTENCY_FIELD, html, segment } from "../../../core/ui/index.ts";
import { acting, requireFreshTotp } from "../auth.ts";
import { back, notFound, screen } from "../chrome.ts";
import type { DashboardEnv, Viewer } from "../env.ts";
import { postPage } from "../routes.ts";
import type { DirectoryAnswer, DirectoryOperatorCall } from "../../invoice/offers.ts";
import { businessKey } from "./key-pages.ts";

const IDEMPOTENCY_KEY = /^[A-Za-z0-9_-]{8,128}$/;

export function keyActionRoutes(env: DashboardEnv): RouteDeclaration[] {
  return [
    postPage(env, "/keys", "create an API key, shown once (developer; TOTP)", acting(env, "developer", (ctx, who, form) => createKeyAction(env, ctx, who, form))),
    postPage(env, "/keys/:keyId/roll", "roll an API key (developer; TOTP)", acting(env, "developer", (ctx, who, form) => rollKeyAction(env, ctx, who, form))),
    postPage(env, "/keys/:keyId/revoke", "revoke an API key (developer)", acting(env, "developer", (ctx, who, form) => revokeKeyAction(env, ctx, who, form))),
    postPage(env, "/keys/:keyId/allowlist", "replace an API key's IP allowlist (developer; TOTP)", acting(env, "developer", (ctx, who, form) => allowlistAction(env, ctx, who, form))),
  ];
}

export async function createKeyAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const scheme = form.scheme === "collections" ? "collections" : form.scheme === "gateway" ? "gateway" : "";
  const input = { scheme, businessId: who.business.id, ...(form.ipWhitelisted?.trim() ? { ipWhitelisted: _list(form.ipWhitelisted) } : {}) };
  return _change(env, ctx, who, form, { action: "key.create", totp: true, back: env.paths.href("/keys") }, (op) => env.directory.createKey(op, input));
}

export async function rollKeyAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const k = await businessKey(env, who, ctx.params.keyId ?? "");
  if (!k) return notFound(env, ctx, who);
  const hours = Number(form.graceHours ?? "");
  if (!Number.isFinite(hours) || hours < 0 || hours > 8784) return back(env, ctx, _keyPage(env, k), { kind: "error", text: "Not changed: the old key's grace period is 0 to 8784 hours." });
  const oldKeyExpiresAt = new Date(env.now() + hours * 3_600_000).toISOString();
  return _change(env, ctx, who, form, { action: "key.roll", totp: true, back: _keyPage(env, k) }, (op) => env.directory.rollKey(op, k.credentialId, { oldKeyExpiresAt }));
}

export async function revokeKeyAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const k = await businessKey(env, who, ctx.params.keyId ?? "");
  if (!k) return notFound(env, ctx, who);
  if (form.confirm !== "yes") return back(env, ctx, _keyPage(env, k), { kind: "error", text: "Not changed: tick the confirmation box." });
  return _change(env, ctx, who, form, { action: "key.revoke", totp: false, back: _keyPage(env, k) }, (op) => env.directory.revokeKey(op, k.credentialId));
}

export async function allowlistAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const k = await businessKey(env, who, ctx.params.keyId ?? "");
  if (!k) return notFound(env, ctx, who);
  const ipWhitelisted = _list(form.ipWhitelisted ?? "");
  return _change(env, ctx, who, form, { action: "key.update", totp: true, back: _keyPage(env, k) }, (op) => env.directory.updateKey(op, k.credentialId, { ipWhitelisted }));
}

// --- Internal helpers ---

const DONE: Readonly<Record<string, string>> = {
  "key.revoke": "the key is revoked: callers with it are refused from now on",
  "key.update": "the IP allowlist is saved and applies from the next request",
};

function _keyPage(env: DashboardEnv, k: CredentialDoc): string {
  return env.paths.href(`/keys/${segment(k.credentialId)}`);
}

function _list(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

/** Checks the form (idempotency key, TOTP), runs the change as the user, and answers: the key page, or back with a message. */
async function _change(
  env: DashboardEnv,
  ctx: RequestContext,
  who: Viewer,
  form: Record<string, string>,
  o: { action: string; totp: boolean; back: string },
  run: (op: DirectoryOperatorCall) => Promise<DirectoryAnswer>,
): Promise<Response> {
  const key = form[IDEMPOTENCY_FIELD] ?? "";
  if (!IDEMPOTENCY_KEY.test(key)) return back(env, ctx, o.back, { kind: "error", text: "Not changed: reload the page (the form's idempotency key is missing)." });
  let cookies: string[] = [];
  if (o.totp) {
    const t = await requireFreshTotp(env, ctx, who, form);
    if (!t.ok) {
      env.kit.log.event("dashboard_action", { requestId: ctx.requestId, actor: `dashboard:${who.user._id}`, action: o.action, result: "refused", reason: "totp" });
      return back(env, ctx, o.back, t.flash);
    }
    cookies = t.headers.map(([, v]) => v);
  }
  const actor = `dashboard:${who.user._id}`;
  const op: DirectoryOperatorCall = { credentialId: actor, actor, requestId: ctx.requestId, route: ctx.route!.id, idempotencyKey: key };
  let answer: DirectoryAnswer;
  try {
    answer = await run(op);
  } catch (e) {
    if (!isGatewayError(e)) throw e;
    const why = e.data?.violations?.map((vi) => vi.detail).join("; ");
    env.kit.log.event("dashboard_action", { requestId: ctx.requestId, actor, action: o.action, result: "error", code: e.code });
    return back(env, ctx, o.back, { kind: "error", text: `Not changed: ${e.message}${why ? ` (${why})` : ""}` }, cookies.map((c) => ["set-cookie", c]));
  }
  env.kit.log.event("dashboard_action", { requestId: ctx.requestId, actor, action: o.action, result: answer.replayed ? "replayed" : "ok" });
  if (answer.plainKey) return _keyShownOnce(env, ctx, who, answer, cookies);
  const text = answer.replayed ? "Already done (this form was sent before): nothing changed again." : `Done: ${DONE[o.action] ?? o.action}.`;
  return back(env, ctx, o.back, { kind: "ok", text }, cookies.map((c) => ["set-cookie", c]));
}

/** The new key, on this answer only (no redirect, not cached): it is never shown again. */
function _keyShownOnce(env: DashboardEnv, ctx: RequestContext, who: Viewer, answer: DirectoryAnswer, cookies: string[]): Response {
  const id = (answer.body as { key?: { id?: string } } | null)?.key?.id ?? "";
  const previous = (answer.body as { previous?: { id?: string; expiresAt?: string | null } } | null)?.previous;
  const body = html`<section class="panel"><p role="alert" class="flash ok">The key ${id ? html`<code>${id}</code> ` : EMPTY}was created. Copy it now: it is shown only on this page.</p>
<p><label for="plain-key">Key</label><input id="plain-key" readonly value="${answer.plainKey}" size="60" autocomplete="off"></p>
${previous ? html`<p>The old key <code>${previous.id ?? ""}</code> keeps working until ${previous.expiresAt ?? "now"}.</p>` : EMPTY}
<p><a href="${env.paths.href(id ? `/keys/${segment(id)}` : "/keys")}">Go to the key</a> · <a href="${env.paths.href("/keys")}">All keys</a></p></section>`;
  return screen(env, ctx, who, { title: "New key", current: "/keys", body, headers: { "cache-control": "no-store" }, cookies });
}
