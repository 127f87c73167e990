/**
 * Webhook deliveries: every business's messages, failed first (dead, or waiting after a failed
 * attempt), filtered by business, event type and status, each with its recent attempts' response
 * codes and next retry; one delivery's page with every attempt kept and its body; and resend — the
 * same core/webhook-deliveries.ts service `POST /admin/webhooks/deliveries/{webhookId}/resend` calls
 * (one more attempt now; the form's idempotency key makes a double submit resend once; audited).
 */
import type { WebhookAttempt, WebhookDelivery, WebhookDeliveryFilter, WebhookDeliveryStatus } from "../../../adapters/ports.ts";
import type { RequestContext } from "../../../core/context.ts";
import { openDirectoryStore } from "../../../core/directory-store.ts";
import { IDEMPOTENCY_FIELD, html, postForm, seeOther, segment, type Flash, type SafeHtml, type Session } from "../../../core/ui/index.ts";
import { WEBHOOK_ID_PATTERN, resendDelivery } from "../../../core/webhook-deliveries.ts";
import { EMPTY, badge, facts, screen } from "../chrome.ts";
import { FLASH_COOKIE, type ConsoleEnv } from "../env.ts";

const STATUSES: readonly WebhookDeliveryStatus[] = ["pending", "delivered", "dead", "no_endpoint"];
const EVENT = /^[A-Za-z0-9._:-]{1,80}$/;
const CURSOR = /^[A-Za-z0-9_-]{1,500}$/;

export async function webhooksScreen(env: ConsoleEnv, ctx: RequestContext, session: Session): Promise<Response> {
  const log = env.kit.ports.webhooks?.deliveries;
  if (!log) return screen(env, ctx, session, { title: "Webhook deliveries", current: "/webhooks", body: html`<p>This outbox keeps no delivery log.</p>` });
  const q = new URLSearchParams(ctx.search);
  const businesses = env.kit.directory.businesses();
  const businessId = businesses.some((b) => b.id === q.get("businessId")) ? q.get("businessId")! : "";
  const status = STATUSES.find((s) => s === q.get("status")) ?? "";
  const eventType = EVENT.test(q.get("eventType") ?? "") ? q.get("eventType")! : "";
  const cursor = CURSOR.test(q.get("cursor") ?? "") ? q.get("cursor")! : null;
  const filter: WebhookDeliveryFilter = { failedFirst: true, limit: 50, cursor, ...(businessId ? { businessId } : {}), ...(status ? { status } : {}), ...(eventType ? { eventType } : {}) };
  const page = await log.list(filter).catch(() => null);
  const form = html`<form method="get" action="${env.paths.href("/webhooks")}" class="inline">
<div><label for="f-business">Business</label><select id="f-business" name="businessId"><option value="">All</option>${businesses.map((b) => html`<option value="${b.id}"${b.id === businessId ? html` selected` : EMPTY}>${b.name} (${b.id})</option>`)}</select></div>
<div><label for="f-event">Event type</label><input id="f-event" name="eventType" value="${eventType}" maxlength="80"></div>
<div><label for="f-status">Status</label><select id="f-status" name="status"><option value="">Any (failed first)</option>${STATUSES.map((s) => html`<option value="${s}"${s === status ? html` selected` : EMPTY}>${s}</option>`)}</select></div>
<button type="submit">Filter</button></form>`;
  const table = !page
    ? html`<p class="flash error" role="alert">That page link is not valid.</p>`
    : page.items.length === 0
      ? html`<p>No deliveries.</p>`
      : html`<div class="table-wrap"><table><thead><tr><th scope="col">Created</th><th scope="col">Business</th><th scope="col">Event</th><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Attempts (response codes)</th><th scope="col">Next retry</th><th scope="col">Action</th></tr></thead><tbody>${page.items.map((d) => _row(env, session, d))}</tbody></table></div>`;
  const older = page?.nextCursor ? html`<p><a href="${env.paths.href("/webhooks", { businessId, status, eventType, cursor: page.nextCursor })}">More</a></p>` : EMPTY;
  return screen(env, ctx, session, { title: "Webhook deliveries", current: "/webhooks", body: html`${form}${table}${older}` });
}

export async function webhookDetailScreen(env: ConsoleEnv, ctx: RequestContext, session: Session): Promise<Response> {
  const id = ctx.params.webhookId ?? "";
  const d = WEBHOOK_ID_PATTERN.test(id) ? await env.kit.ports.webhooks?.deliveries?.get(id) : null;
  if (!d) return screen(env, ctx, session, { title: "Webhook delivery", current: "/webhooks", status: 404, body: html`<p>No webhook delivery with that id.</p>` });
  const body = html`<section class="panel"><h2>Message</h2>${facts([
    ["Webhook id", d.webhookId],
    ["Business", d.businessId],
    ["Event", d.eventType],
    ["Endpoint", d.endpointUrl ? `${d.endpointUrl}${d.endpointId ? ` (${d.endpointId})` : ""}` : null],
    ["Status", statusBadge(d)],
    ["Created", _time(d.createdAt)],
    ["Next retry", _time(d.nextAttemptAt)],
    ["Attempts", d.attempts],
  ])}${_resendForm(env, session, d)}</section>
<section class="panel"><h2>Attempts</h2>${attemptsTable(d.attemptLog)}</section>
<section class="panel"><h2>Body</h2><pre><code>${d.body}</code></pre></section>`;
  return screen(env, ctx, session, { title: `Webhook delivery ${d.webhookId}`, current: "/webhooks", body });
}

/** POST /webhooks/:webhookId/resend. */
export async function resendWebhookAction(env: ConsoleEnv, ctx: RequestContext, session: Session, form: Record<string, string>): Promise<Response> {
  const id = ctx.params.webhookId ?? "";
  const key = form[IDEMPOTENCY_FIELD] ?? "";
  const log = env.kit.ports.webhooks?.deliveries;
  let flash: Flash;
  if (!log || !/^[A-Za-z0-9_-]{8,128}$/.test(key)) flash = { kind: "error", text: "Reload the page and try again (the form's idempotency key is missing)." };
  else {
    const r = await resendDelivery(log, openDirectoryStore(env.store).audit, { actor: `operator:${session.sub}`, requestId: ctx.requestId }, id, key, undefined, env.now());
    flash = !r
      ? { kind: "error", text: "No webhook delivery with that id." }
      : r.reason === "no_endpoint"
        ? { kind: "error", text: "This message was recorded without an endpoint; there is nowhere to send it." }
        : { kind: "ok", text: r.resent ? "Resent: one more attempt is on its way." : "Already resent with this form; nothing more was sent." };
    env.kit.log.event("console_action", { requestId: ctx.requestId, actor: `operator:${session.sub}`, action: "webhook_delivery.resend", webhookId: id, result: flash.kind });
  }
  const back = WEBHOOK_ID_PATTERN.test(id) ? `/webhooks/${segment(id)}` : "/webhooks";
  return seeOther(ctx, env.paths.href(back), [["set-cookie", env.cookies.seal(FLASH_COOKIE, flash, 60_000, ctx.req.url.startsWith("https:"))]]);
}

/** A delivery's status as a badge: failed ones stand out. */
export function statusBadge(d: WebhookDelivery): SafeHtml {
  if (d.status === "delivered") return badge("delivered", "ok");
  if (d.status === "dead") return badge(d.lastError ? `dead (${d.lastError})` : "dead", "bad");
  if (d.status === "no_endpoint") return badge("no endpoint", "muted");
  return d.failed ? badge(`retrying (${d.lastError})`, "warn") : badge("pending", "muted");
}

/** Every attempt kept: time, response status, duration, error class. */
export function attemptsTable(attempts: readonly WebhookAttempt[]): SafeHtml {
  if (attempts.length === 0) return html`<p>No attempt yet.</p>`;
  return html`<div class="table-wrap"><table><thead><tr><th scope="col">Time</th><th scope="col">Response</th><th scope="col">Duration</th><th scope="col">Error</th><th scope="col">Kind</th></tr></thead><tbody>${attempts.map(
    (a) => html`<tr><td>${_time(a.at)}</td><td>${a.statusCode ?? "no answer"}</td><td>${a.durationMs} ms</td><td>${a.error ?? "—"}</td><td>${a.manual ? "resend / manual" : "scheduled"}</td></tr>`,
  )}</tbody></table></div>`;
}

// --- Internal helpers ---

function _row(env: ConsoleEnv, session: Session, d: WebhookDelivery): SafeHtml {
  const codes = d.attemptLog.slice(-5).map((a) => a.statusCode ?? a.error ?? "—").join(" · ");
  return html`<tr><td><a href="${env.paths.href(`/webhooks/${segment(d.webhookId)}`)}">${_time(d.createdAt)}</a></td><td>${d.businessId}</td><td>${d.eventType}</td><td>${d.endpointUrl ?? "—"}</td><td>${statusBadge(d)}</td><td>${d.attempts}${codes ? html` <span class="muted">(${codes})</span>` : EMPTY}</td><td>${_time(d.nextAttemptAt)}</td><td>${_resendForm(env, session, d)}</td></tr>`;
}

function _resendForm(env: ConsoleEnv, session: Session, d: WebhookDelivery): SafeHtml {
  if (d.status === "no_endpoint") return html`<span class="muted">no endpoint</span>`;
  if (session.role !== "admin") return html`<span class="muted">read-only</span>`;
  return postForm({ action: env.paths.href(`/webhooks/${segment(d.webhookId)}/resend`), csrf: env.cookies.csrfToken(session), idempotent: true, submit: "Resend", layout: "inline", button: "secondary" });
}

function _time(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
