/**
 * Changes on the Businesses screen: key create (the key is shown once, on the answer page, never
 * stored or logged), roll, revoke, its IP allowlist edited in place; a domain's mode change (the domain drains) and its approval; a
 * domain's sign fee and autoTransmit.
 * Each calls the admin plugin's directory service offered through the kit (DIRECTORY_OPERATIONS):
 * the Admin API routes' own validation, idempotency (the form's key) and audit entry.
 */
import type { RequestContext } from "../../../core/context.ts";
import { isGatewayError } from "../../../core/errors/gateway-error.ts";
import { EMPTY, IDEMPOTENCY_FIELD, html, postForm, radioGroup, seeOther, segment, textField, type Flash, type SafeHtml, type Session } from "../../../core/ui/index.ts";
import type { DirectoryAnswer, DirectoryOperatorCall } from "../../invoice/offers.ts";
import { screen } from "../chrome.ts";
import { FLASH_COOKIE, type ConsoleEnv } from "../env.ts";

const BUSINESS_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const IDEMPOTENCY_KEY = /^[A-Za-z0-9_-]{8,128}$/;
/** What the operator reads after a change (the audit action in brackets). */
const DONE: Readonly<Record<string, string>> = {
  "key.revoke": "the key is revoked (key.revoke)",
  "key.update": "the key's IP allowlist is replaced; every process checks the new one at once (key.update)",
  "domain.mode_change": "the domain is draining; approve it when the drain is done (domain.mode_change)",
  "domain.approve": "the domain serves in its new mode (domain.approve)",
  "domain.update": "the domain's settings are saved; every process uses them at once (domain.update)",
  "identity.review_decision": "the review is decided (an approval adds a new identity version)",
  "identity.migration": "the protected change is applied as a new identity version, and audited",
};

/** POST /businesses/:businessId/keys: a new gateway or collections key, shown once. */
export async function createKeyAction(env: ConsoleEnv, ctx: RequestContext, session: Session, form: Record<string, string>): Promise<Response> {
  const businessId = ctx.params.businessId ?? "";
  const input = {
    scheme: form.scheme ?? "",
    businessId,
    ...(form.id?.trim() ? { id: form.id.trim() } : {}),
    ...(form.ipWhitelisted?.trim() ? { ipWhitelisted: form.ipWhitelisted.split(/[\s,]+/).filter(Boolean) } : {}),
    ...(form.expiresAt?.trim() ? { expiresAt: form.expiresAt.trim() } : {}),
  };
  return runOperatorChange(env, ctx, session, form, "key.create", (op) => env.directory.createKey(op, input));
}

/** POST /businesses/:businessId/keys/:keyId/roll: a new key; the old one works for `graceHours` more. */
export async function rollKeyAction(env: ConsoleEnv, ctx: RequestContext, session: Session, form: Record<string, string>): Promise<Response> {
  const hours = Number(form.graceHours ?? "");
  const oldKeyExpiresAt = Number.isFinite(hours) && hours >= 0 ? new Date(env.now() + hours * 3_600_000).toISOString() : String(form.graceHours ?? "");
  return runOperatorChange(env, ctx, session, form, "key.roll", (op) => env.directory.rollKey(op, ctx.params.keyId ?? "", { oldKeyExpiresAt }));
}

/** POST /businesses/:businessId/keys/:keyId/revoke (confirmed). */
export async function revokeKeyAction(env: ConsoleEnv, ctx: RequestContext, session: Session, form: Record<string, string>): Promise<Response> {
  return runOperatorChange(env, ctx, session, form, "key.revoke", (op) => env.directory.revokeKey(op, ctx.params.keyId ?? ""), true);
}

/** POST /businesses/:businessId/keys/:keyId/allowlist: the key's IP allowlist replaced (empty: any address). */
export async function keyAllowlistAction(env: ConsoleEnv, ctx: RequestContext, session: Session, form: Record<string, string>): Promise<Response> {
  const ipWhitelisted = (form.ipWhitelisted ?? "").split(/[\s,]+/).filter(Boolean);
  return runOperatorChange(env, ctx, session, form, "key.update", (op) => env.directory.updateKey(op, ctx.params.keyId ?? "", { ipWhitelisted }));
}

/** POST /businesses/:businessId/domains/:host/mode-change (confirmed): the domain drains, then awaits approval. */
export async function modeChangeAction(env: ConsoleEnv, ctx: RequestContext, session: Session, form: Record<string, string>): Promise<Response> {
  return runOperatorChange(env, ctx, session, form, "domain.mode_change", (op) => env.directory.changeMode(op, ctx.params.host ?? "", { mode: form.mode ?? "" }), true);
}

/** POST /businesses/:businessId/domains/:host/approval (confirmed): the drained domain serves in its new mode. */
export async function approveDomainAction(env: ConsoleEnv, ctx: RequestContext, session: Session, form: Record<string, string>): Promise<Response> {
  return runOperatorChange(env, ctx, session, form, "domain.approve", (op) => env.directory.approveDomain(op, ctx.params.host ?? ""), true);
}

/** POST /businesses/:businessId/domains/:host/settings: sign fee (NGN) and autoTransmit; an empty field is left as it is. */
export async function domainSettingsAction(env: ConsoleEnv, ctx: RequestContext, session: Session, form: Record<string, string>): Promise<Response> {
  const fee = (form.signFee ?? "").trim();
  const input = {
    ...(fee !== "" ? { signFee: /^[0-9]+(\.[0-9]+)?$/.test(fee) ? Number(fee) : fee } : {}),
    ...(form.autoTransmit === "yes" || form.autoTransmit === "no" ? { autoTransmit: form.autoTransmit === "yes" } : {}),
  };
  return runOperatorChange(env, ctx, session, form, "domain.update", (op) => env.directory.updateDomain(op, ctx.params.host ?? "", input));
}

/** A domain's settings form (admin only): sign fee and autoTransmit. */
export function domainSettingsForm(env: ConsoleEnv, session: Session, businessId: string, d: { _id: string; signFeeKobo: number; autoTransmit: boolean }): SafeHtml {
  const id = `ds-${d._id}`;
  return postForm({
    action: env.paths.href(`/businesses/${segment(businessId)}/domains/${segment(d._id)}/settings`),
    csrf: env.cookies.csrfToken(session),
    idempotent: true,
    layout: "inline",
    button: "secondary",
    submit: "Save",
    fields: html`<label for="${id}-fee">Sign fee (NGN)</label><input id="${id}-fee" name="signFee" inputmode="decimal" size="8" maxlength="12" value="${(d.signFeeKobo / 100).toFixed(2)}">
<label for="${id}-auto">Auto-transmit</label><select id="${id}-auto" name="autoTransmit"><option value="yes"${d.autoTransmit ? html` selected` : EMPTY}>yes</option><option value="no"${d.autoTransmit ? EMPTY : html` selected`}>no</option></select>`,
  });
}

/** The create-key form (admin only). */
export function createKeyForm(env: ConsoleEnv, session: Session, businessId: string): SafeHtml {
  return html`<section class="panel" aria-labelledby="new-key-h"><h2 id="new-key-h">Create a key</h2>${postForm({
    action: env.paths.href(`/businesses/${segment(businessId)}/keys`),
    csrf: env.cookies.csrfToken(session),
    idempotent: true,
    submit: "Create key",
    fields: html`${radioGroup("scheme", "Scheme", [
      { value: "gateway", label: "gateway (x-api-key)" },
      { value: "collections", label: "collections (Authorization: Bearer)" },
    ])}
${textField({ name: "id", label: "Key ID (optional; generated when empty)", maxLength: 64 })}
${textField({ name: "ipWhitelisted", label: "IP allowlist (addresses or CIDR ranges, comma separated; empty: any)", maxLength: 2000 })}
${textField({ name: "expiresAt", label: "Expires at (optional, ISO 8601 with a time zone)", maxLength: 40 })}`,
  })}</section>`;
}

/** A key's allowlist, roll and revoke forms (admin only). */
export function keyActions(env: ConsoleEnv, session: Session, businessId: string, keyId: string, allowlist: readonly string[]): SafeHtml {
  const base = `/businesses/${segment(businessId)}/keys/${segment(keyId)}`;
  const csrf = env.cookies.csrfToken(session);
  return html`${postForm({
    action: env.paths.href(`${base}/allowlist`),
    csrf,
    idempotent: true,
    layout: "inline",
    button: "secondary",
    submit: "Save allowlist",
    fields: html`<label for="ip-${keyId}">IP allowlist (comma separated; empty: any)</label><input id="ip-${keyId}" name="ipWhitelisted" size="24" maxlength="2000" value="${allowlist.join(", ")}">`,
  })}${postForm({
    action: env.paths.href(`${base}/roll`),
    csrf,
    idempotent: true,
    layout: "inline",
    button: "secondary",
    submit: "Roll",
    fields: html`<label for="g-${keyId}">Old key works for (hours)</label><input id="g-${keyId}" name="graceHours" type="number" min="0" max="8784" value="24" size="4">`,
  })}${postForm({ action: env.paths.href(`${base}/revoke`), csrf, idempotent: true, layout: "inline", button: "danger", submit: "Revoke", fields: _confirm(`rv-${keyId}`, "Revoke now: callers with this key are refused at once") })}`;
}

/** A domain's mode-change or approval form (admin only). */
export function domainActions(env: ConsoleEnv, session: Session, businessId: string, d: { _id: string; mode: string; approval: string }): SafeHtml {
  const base = `/businesses/${segment(businessId)}/domains/${segment(d._id)}`;
  const csrf = env.cookies.csrfToken(session);
  if (d.approval !== "approved")
    return postForm({ action: env.paths.href(`${base}/approval`), csrf, idempotent: true, layout: "inline", submit: "Approve", fields: _confirm(`ap-${d._id}`, "The drain is done: serve in the new mode") });
  const other = d.mode === "stored" ? "passthrough" : "stored";
  return postForm({
    action: env.paths.href(`${base}/mode-change`),
    csrf,
    idempotent: true,
    layout: "inline",
    button: "danger",
    submit: `Change to ${other}`,
    fields: html`<input type="hidden" name="mode" value="${other}">${_confirm(`mc-${d._id}`, "Drain this domain (customers get 503 until approval)")}`,
  });
}

/**
 * Checks the form, runs the change as the signed-in operator (through a service its Admin API route
 * calls, idempotent on the form's key), and answers: the key page, or back to the business with a message.
 */
export async function runOperatorChange(
  env: ConsoleEnv,
  ctx: RequestContext,
  session: Session,
  form: Record<string, string>,
  action: string,
  run: (op: DirectoryOperatorCall) => Promise<DirectoryAnswer>,
  confirmed = false,
): Promise<Response> {
  const businessId = ctx.params.businessId ?? "";
  const back = BUSINESS_ID.test(businessId) ? env.paths.href(`/businesses/${segment(businessId)}`) : env.paths.href("/businesses");
  const key = form[IDEMPOTENCY_FIELD] ?? "";
  if (!IDEMPOTENCY_KEY.test(key)) return _back(env, ctx, back, { kind: "error", text: "Not changed: reload the page (the form's idempotency key is missing)." });
  if (confirmed && form.confirm !== "yes") return _back(env, ctx, back, { kind: "error", text: "Not changed: tick the confirmation box." });
  const op: DirectoryOperatorCall = { credentialId: session.sub, requestId: ctx.requestId, route: ctx.route!.id, idempotencyKey: key };
  let answer: DirectoryAnswer;
  try {
    answer = await run(op);
  } catch (e) {
    if (!isGatewayError(e)) throw e;
    const why = e.data?.violations?.map((vi) => `${vi.field || vi.location}: ${vi.detail}`).join("; ");
    env.kit.log.event("console_action", { requestId: ctx.requestId, actor: `operator:${session.sub}`, action, result: "error", code: e.code });
    return _back(env, ctx, back, { kind: "error", text: `Not changed: ${e.message}${why ? ` (${why})` : ""}` });
  }
  env.kit.log.event("console_action", { requestId: ctx.requestId, actor: `operator:${session.sub}`, action, result: answer.replayed ? "replayed" : "ok" });
  if (answer.plainKey) return _keyShownOnce(env, ctx, session, back, answer);
  const text = answer.replayed ? "Already done (this form was submitted before): nothing changed again." : `Done: ${DONE[action] ?? action}.`;
  return _back(env, ctx, back, { kind: "ok", text });
}

// --- Internal helpers ---

function _confirm(id: string, label: string): SafeHtml {
  return html`<input type="checkbox" id="${id}" name="confirm" value="yes" required> <label for="${id}" class="inline-label">${label}</label>`;
}

/** The new key, on this answer only (no redirect, not cached): it is never shown again. */
function _keyShownOnce(env: ConsoleEnv, ctx: RequestContext, session: Session, back: string, answer: DirectoryAnswer): Response {
  const id = (answer.body as { key?: { id?: string } } | null)?.key?.id ?? "";
  const body = html`<section class="panel"><p role="alert" class="flash ok">The key ${id ? html`<code>${id}</code> ` : EMPTY}was created. Copy it now: it is shown only on this page.</p>
<p><label for="plain-key">Key</label><input id="plain-key" readonly value="${answer.plainKey}" size="60" autocomplete="off"></p>
<p><a href="${back}">Back to the business</a></p></section>`;
  return screen(env, ctx, session, { title: "New key", current: "/businesses", body, headers: { "cache-control": "no-store" } });
}

function _back(env: ConsoleEnv, ctx: RequestContext, location: string, flash: Flash): Response {
  return seeOther(ctx, location, [["set-cookie", env.cookies.seal(FLASH_COOKIE, flash, 60_000, ctx.req.url.startsWith("https:"))]]);
}
