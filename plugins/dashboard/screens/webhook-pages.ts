/**
 * Webhooks (docs/dashboard.md "Webhooks"): the business's endpoints (invoice and/or collections
 * events) with the notice of one the gateway disabled for failing, adding, editing, disabling and
 * enabling them, rotating a secret (both signatures are sent during the overlap), revealing it
 * (TOTP), sending a test event; and the delivery log (failed first; filter by status, event,
 * endpoint) with each delivery's attempts and resend. The directory's endpoint service and the
 * delivery log's resend are the same ones the Admin API and the operator console call. Viewers
 * read; developers and owners change. Another business's endpoint or delivery is "not found".
 * These are the pages; the actions are in webhook-actions.ts, the section's routes in webhooks.ts.
 */
import type { WebhookAttempt, WebhookDelivery, WebhookDeliveryStatus } from "../../../adapters/ports.ts";
import type { RequestContext } from "../../../core/context.ts";
import type { WebhookEndpointView } from "../../../core/directory.ts";
import { EMPTY, html, postForm, segment, textField, type SafeHtml } from "../../../core/ui/index.ts";
import { WEBHOOK_ID_PATTERN } from "../../../core/webhook-deliveries.ts";
import { totpField } from "../auth.ts";
import { badge, facts, notFound, screen } from "../chrome.ts";
import { hasRole, type DashboardEnv, type Viewer } from "../env.ts";

const STATUSES: readonly WebhookDeliveryStatus[] = ["pending", "delivered", "dead", "no_endpoint"];
const EVENT = /^[A-Za-z0-9._:-]{1,80}$/;
const ENDPOINT = /^[A-Za-z0-9_-]{1,100}$/;
const CURSOR = /^[A-Za-z0-9_-]{1,500}$/;

export async function webhooksScreen(env: DashboardEnv, ctx: RequestContext, who: Viewer): Promise<Response> {
  const endpoints = await env.kit.directory.webhooks.list(who.business.id);
  const canEdit = hasRole(who.role, "developer");
  const add = canEdit
    ? html`<section class="panel" aria-labelledby="add-h"><h2 id="add-h">Add an endpoint</h2>${postForm({
        action: env.paths.href("/webhooks/endpoints"),
        csrf: env.cookies.csrfToken(who.session),
        fields: html`${textField({ name: "url", label: "URL", required: true, maxLength: 2000, hint: "https://… (http only for local receivers)" })}${_servicesField(["invoice", "collections"])}${textField({ name: "description", label: "Description", maxLength: 200 })}`,
        submit: "Add endpoint",
      })}</section>`
    : EMPTY;
  const body = html`<section class="panel" aria-labelledby="ep-h"><h2 id="ep-h">Endpoints</h2>${endpoints.length === 0 ? html`<p>No endpoint yet: events are recorded but not sent.</p>` : _endpointTable(env, endpoints)}</section>
${add}
<section class="panel" aria-labelledby="log-h"><h2 id="log-h">Delivery log</h2>${await _deliveryLog(env, ctx, who, endpoints)}</section>`;
  return screen(env, ctx, who, { title: "Webhooks", current: "/webhooks", body });
}

export async function endpointScreen(env: DashboardEnv, ctx: RequestContext, who: Viewer, revealed: string | null = null): Promise<Response> {
  const ep = await env.kit.directory.webhooks.get(who.business.id, ctx.params.endpointId ?? "");
  if (!ep) return notFound(env, ctx, who);
  const base = `/webhooks/endpoints/${segment(ep.id)}`;
  const csrf = env.cookies.csrfToken(who.session);
  const form = (sub: string, submit: string, fields: SafeHtml = EMPTY, idempotent = false, button: "primary" | "secondary" | "danger" = "secondary") =>
    postForm({ action: env.paths.href(`${base}${sub}`), csrf, submit, fields, idempotent, button });
  const actions = hasRole(who.role, "developer")
    ? html`<section class="panel" aria-labelledby="edit-h"><h2 id="edit-h">Edit</h2>${form(
        "",
        "Save",
        html`${textField({ name: "url", label: "URL", value: ep.url, required: true, maxLength: 2000 })}${_servicesField(ep.services)}${textField({ name: "description", label: "Description", value: ep.description, maxLength: 200 })}`,
        false,
        "primary",
      )}
${form("/enabled", ep.enabled ? "Disable endpoint" : "Enable endpoint", html`<input type="hidden" name="enabled" value="${ep.enabled ? "false" : "true"}">`, false, ep.enabled ? "danger" : "primary")}</section>
<section class="panel" aria-labelledby="sec-h"><h2 id="sec-h">Signing secret</h2>${facts(ep.secrets.map((s) => [s.hint, s.expiresAtMs === null ? "current" : `still signing until ${new Date(s.expiresAtMs).toISOString()}`]))}
${revealed ? html`<p role="status">Secret (shown once; store it in your receiver's configuration): <code id="revealed-secret">${revealed}</code></p>` : form("/reveal", "Reveal secret", totpField())}
${form("/rotate", "Rotate secret", html`<p class="muted">A new secret; deliveries carry both signatures until the overlap ends.</p>`)}</section>
<section class="panel" aria-labelledby="test-h"><h2 id="test-h">Test</h2>${form("/test", "Send test event", html`<p class="muted">Sends a signed <code>webhook.test</code> event to this endpoint.</p>`, true, "primary")}</section>`
    : html`<p class="muted">Your role is viewer: read-only.</p>`;
  const body = html`<section class="panel" aria-labelledby="ep-h"><h2 id="ep-h">Endpoint</h2>${facts([
    ["URL", ep.url],
    ["Events", ep.services.join(", ")],
    ["Description", ep.description],
    ["State", _endpointState(ep)],
    ["Source", ep.source === "config" ? "the config file (a change there applies unless edited here)" : "added in the dashboard"],
    ["Failing since", ep.failingSinceMs === null ? null : new Date(ep.failingSinceMs).toISOString()],
  ])}<p><a href="${env.paths.href("/webhooks", { endpointId: ep.id })}">Its deliveries</a></p></section>${actions}`;
  return screen(env, ctx, who, { title: `Webhook endpoint ${ep.id}`, current: "/webhooks", body, ...(revealed ? { headers: { "cache-control": "no-store" } } : {}) });
}

export async function deliveryScreen(env: DashboardEnv, ctx: RequestContext, who: Viewer): Promise<Response> {
  const id = ctx.params.webhookId ?? "";
  const d = WEBHOOK_ID_PATTERN.test(id) ? await env.kit.ports.webhooks?.deliveries?.get(id, who.business.id) : null;
  if (!d) return notFound(env, ctx, who);
  const resend =
    hasRole(who.role, "developer") && d.status !== "no_endpoint"
      ? postForm({ action: env.paths.href(`/webhooks/deliveries/${segment(d.webhookId)}/resend`), csrf: env.cookies.csrfToken(who.session), idempotent: true, submit: "Resend", button: "secondary" })
      : EMPTY;
  const body = html`<section class="panel" aria-labelledby="d-h"><h2 id="d-h">Delivery</h2>${facts([
    ["Webhook id", d.webhookId],
    ["Event", d.eventType],
    ["Endpoint", d.endpointUrl],
    ["Status", _deliveryBadge(d)],
    ["Created", _time(d.createdAt)],
    ["Next retry", _time(d.nextAttemptAt)],
    ["Attempts", d.attempts],
  ])}${resend}</section>
<section class="panel" aria-labelledby="a-h"><h2 id="a-h">Attempts</h2>${_attempts(d.attemptLog)}</section>
<section class="panel" aria-labelledby="b-h"><h2 id="b-h">Body</h2><pre><code>${d.body}</code></pre></section>`;
  return screen(env, ctx, who, { title: `Webhook delivery ${d.webhookId}`, current: "/webhooks", body });
}

// --- Internal helpers ---

/** The services checkboxes of an endpoint form (one field per service: repeated names keep only the last). */
function _servicesField(checked: readonly string[]): SafeHtml {
  const box = (value: string, label: string) =>
    html`<div><input type="checkbox" id="f-services-${value}" name="service_${value}" value="on"${checked.includes(value) ? html` checked` : EMPTY}> <label for="f-services-${value}">${label}</label></div>`;
  return html`<fieldset><legend>Events</legend>${box("invoice", "Invoice events (invoice.signed, …)")}${box("collections", "Collections events (CHECKOUT_COMPLETED, …)")}</fieldset>`;
}

function _endpointTable(env: DashboardEnv, endpoints: readonly WebhookEndpointView[]): SafeHtml {
  return html`<div class="table-wrap"><table><thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Description</th></tr></thead><tbody>${endpoints.map(
    (e) => html`<tr><td><a href="${env.paths.href(`/webhooks/endpoints/${segment(e.id)}`)}">${e.url}</a></td><td>${e.services.join(", ")}</td><td>${_endpointState(e)}</td><td>${e.description}</td></tr>`,
  )}</tbody></table></div>`;
}

/** Enabled, disabled by a person, or the notice of an endpoint the gateway disabled for failing. */
function _endpointState(e: WebhookEndpointView): SafeHtml {
  if (e.enabled) return e.failingSinceMs === null ? badge("enabled", "ok") : badge(`enabled, failing since ${new Date(e.failingSinceMs).toISOString()}`, "warn");
  if (e.disabled?.reason === "failing")
    return html`${badge("disabled", "bad")} <span role="alert">Every delivery failed since ${new Date(e.disabled.failingSinceMs ?? e.disabled.at).toISOString()} (last: ${e.disabled.lastError ?? "unknown"}), so it was disabled on ${new Date(e.disabled.at).toISOString()}. Fix the receiver, enable it again and resend what you need.</span>`;
  return badge("disabled", "muted");
}

function _deliveryBadge(d: WebhookDelivery): SafeHtml {
  if (d.status === "delivered") return badge("delivered", "ok");
  if (d.status === "dead") return badge(d.lastError ? `failed (${d.lastError})` : "failed", "bad");
  if (d.status === "no_endpoint") return badge("no endpoint", "muted");
  return d.failed ? badge(`retrying (${d.lastError})`, "warn") : badge("pending", "muted");
}


async function _deliveryLog(env: DashboardEnv, ctx: RequestContext, who: Viewer, endpoints: readonly WebhookEndpointView[]): Promise<SafeHtml> {
  const log = env.kit.ports.webhooks?.deliveries;
  if (!log) return html`<p>No delivery log is kept.</p>`;
  const q = new URLSearchParams(ctx.search);
  const status = STATUSES.find((s) => s === q.get("status")) ?? "";
  const eventType = EVENT.test(q.get("eventType") ?? "") ? q.get("eventType")! : "";
  const endpointId = ENDPOINT.test(q.get("endpointId") ?? "") ? q.get("endpointId")! : "";
  const cursor = CURSOR.test(q.get("cursor") ?? "") ? q.get("cursor")! : null;
  const page = await log
    .list({ businessId: who.business.id, failedFirst: true, limit: 50, cursor, ...(status ? { status } : {}), ...(eventType ? { eventType } : {}), ...(endpointId ? { endpointId } : {}) })
    .catch(() => null);
  const filters = html`<form method="get" action="${env.paths.href("/webhooks")}" class="inline">
<div><label for="f-status">Status</label><select id="f-status" name="status"><option value="">Any (failed first)</option>${STATUSES.map((s) => html`<option value="${s}"${s === status ? html` selected` : EMPTY}>${s}</option>`)}</select></div>
<div><label for="f-event">Event</label><input id="f-event" name="eventType" value="${eventType}" maxlength="80"></div>
<div><label for="f-endpoint">Endpoint</label><select id="f-endpoint" name="endpointId"><option value="">All</option>${endpoints.map((e) => html`<option value="${e.id}"${e.id === endpointId ? html` selected` : EMPTY}>${e.url}</option>`)}</select></div>
<button type="submit">Filter</button></form>`;
  if (!page) return html`${filters}<p class="flash error" role="alert">That page link is not valid.</p>`;
  if (page.items.length === 0) return html`${filters}<p>No deliveries.</p>`;
  const rows = page.items.map((d) => {
    const last = d.attemptLog.at(-1);
    return html`<tr><td><a href="${env.paths.href(`/webhooks/deliveries/${segment(d.webhookId)}`)}">${d.eventType}</a></td><td>${_time(d.createdAt)}</td><td>${d.endpointUrl ?? "—"}</td><td>${_deliveryBadge(d)}</td><td>${d.attempts}</td><td>${last ? html`${last.statusCode ?? "no answer"} in ${last.durationMs} ms` : "—"}</td><td>${_time(d.nextAttemptAt) ?? "—"}</td></tr>`;
  });
  const more = page.nextCursor ? html`<p><a href="${env.paths.href("/webhooks", { status, eventType, endpointId, cursor: page.nextCursor })}">More</a></p>` : EMPTY;
  return html`${filters}<div class="table-wrap"><table><thead><tr><th scope="col">Event</th><th scope="col">Time</th><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last response</th><th scope="col">Next retry</th></tr></thead><tbody>${rows}</tbody></table></div>${more}`;
}

function _attempts(attempts: readonly WebhookAttempt[]): SafeHtml {
  if (attempts.length === 0) return html`<p>No attempt yet.</p>`;
  return html`<div class="table-wrap"><table><thead><tr><th scope="col">Time</th><th scope="col">Response</th><th scope="col">Duration</th><th scope="col">Error</th><th scope="col">Kind</th></tr></thead><tbody>${attempts.map(
    (a) => html`<tr><td>${_time(a.at)}</td><td class="response-code">${a.statusCode ?? "no answer"}</td><td>${a.durationMs} ms</td><td>${a.error ?? "—"}</td><td>${a.manual ? "resend or test" : "scheduled"}</td></tr>`,
  )}</tbody></table></div>`;
}

function _time(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
