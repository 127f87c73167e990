/**
 * Alerts and dead letters: the alert channel's figures, the dead-letter stream (filter dead /
 * replayed, newest first, cursor paging) with each alert's runbook section, and replay — the same
 * `AlertChannel.replay` the Admin API route `POST /admin/alerts/dead-letters/{alertId}/replay`
 * calls (one delivery attempt now; a replayed letter is not sent again, so a double submit has one
 * effect).
 */
import type { DeadLetter } from "../../../adapters/ports.ts";
import type { RequestContext } from "../../../core/context.ts";
import { html, postForm, seeOther, segment, type Flash, type SafeHtml, type Session } from "../../../core/ui/index.ts";
import { EMPTY, badge, facts, screen } from "../chrome.ts";
import { FLASH_COOKIE, type ConsoleEnv } from "../env.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CURSOR = /^[A-Za-z0-9._~=-]{1,500}$/;

export async function alertsScreen(env: ConsoleEnv, ctx: RequestContext, session: Session): Promise<Response> {
  if (!env.alerts) return screen(env, ctx, session, { title: "Alerts", current: "/alerts", body: html`<p>No alert channel is configured.</p>` });
  const q = new URLSearchParams(ctx.search);
  const status = q.get("status") === "replayed" ? "replayed" : "dead";
  const cursor = q.get("cursor");
  const [channel, page] = await Promise.all([env.alerts.status(), env.alerts.deadLetters({ limit: 50, status, cursor: cursor && CURSOR.test(cursor) ? cursor : null })]);
  const tabs = html`<p>Show: ${(["dead", "replayed"] as const).map(
    (s) => html`<a href="${env.paths.href("/alerts", { status: s })}"${s === status ? html` aria-current="true"` : EMPTY}>${s === "dead" ? "waiting (dead)" : "replayed"}</a> `,
  )}</p>`;
  const body = html`<section class="panel"><h2>Alert channel</h2>${facts([
    ["Status", channel.status],
    ["Channels", channel.channels.join(", ") || "log only"],
    ["Sent / suppressed / delivery failures", `${channel.sent} / ${channel.suppressed} / ${channel.deliveryFailures}`],
    ["Chat webhook", channel.webhook.configured ? `configured, ${channel.webhook.pending} pending` : "not configured"],
  ])}</section>
<h2>Dead letters</h2>${tabs}
${page.items.length === 0 ? html`<p>None.</p>` : html`<div class="table-wrap"><table><thead><tr><th scope="col">Dead since</th><th scope="col">Alert</th><th scope="col">Runbook</th><th scope="col">Delivery</th><th scope="col">Action</th></tr></thead><tbody>${page.items.map((l) => _row(env, session, l))}</tbody></table></div>`}
${page.nextCursor ? html`<p><a href="${env.paths.href("/alerts", { status, cursor: page.nextCursor })}">Older</a></p>` : EMPTY}`;
  return screen(env, ctx, session, { title: "Alerts and dead letters", current: "/alerts", body });
}

/** POST /alerts/:alertId/replay. */
export async function replayAction(env: ConsoleEnv, ctx: RequestContext, session: Session): Promise<Response> {
  const id = ctx.params.alertId ?? "";
  let flash: Flash;
  if (!env.alerts || !UUID.test(id)) flash = { kind: "error", text: "No dead letter with that alert id." };
  else {
    const r = await env.alerts.replay(id);
    flash = !r
      ? { kind: "error", text: "No dead letter with that alert id." }
      : r.delivered
        ? { kind: "ok", text: "Delivered: the letter is now marked replayed." }
        : { kind: "error", text: `The chat webhook did not accept the alert (${r.letter.lastFailure.failureClass}); it stays in the dead-letter stream.` };
    env.kit.log.event("console_action", { requestId: ctx.requestId, actor: `operator:${session.sub}`, action: "alert.replay", alertId: id, result: flash.kind });
  }
  return seeOther(ctx, env.paths.href("/alerts"), [["set-cookie", env.cookies.seal(FLASH_COOKIE, flash, 60_000, ctx.req.url.startsWith("https:"))]]);
}

// --- Internal helpers ---

function _row(env: ConsoleEnv, session: Session, l: DeadLetter): SafeHtml {
  const a = l.alert;
  const sev = a.severity === "critical" ? "bad" : a.severity === "warning" ? "warn" : "muted";
  const action =
    l.status !== "dead"
      ? html`<span class="muted">replayed ${l.replayedAt ?? ""}</span>`
      : session.role === "admin"
        ? postForm({ action: env.paths.href(`/alerts/${segment(l.id)}/replay`), csrf: env.cookies.csrfToken(session), idempotent: true, submit: "Replay", layout: "inline", button: "secondary" })
        : html`<span class="muted">read-only</span>`;
  return html`<tr><td>${l.deadAt}</td><td>${badge(a.severity, sev)} <strong>${a.signal}</strong>: ${a.summary}${a.requestIds.length ? html`<br><span class="muted">requests: ${a.requestIds.slice(0, 3).join(", ")}</span>` : EMPTY}</td><td><code>${a.runbook}</code></td><td>${l.attempts} attempts, last: ${l.lastFailure.failureClass}${
    l.lastFailure.upstreamStatus ? ` (HTTP ${l.lastFailure.upstreamStatus})` : ""
  }</td><td>${action}</td></tr>`;
}
