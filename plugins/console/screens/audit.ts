/**
 * Audit log: every operator change (Admin API and console actions alike, since both go through the
 * same services) newest first: who, when, what, on which target, with what changes; filter by
 * target ID, action, actor and a time range (UTC), cursor paging. Read from the directory's audit
 * collection with the order and paging of `GET /admin/audit` (each filter has its index: target,
 * actor and action each lead one with atMs); the console writes nothing here itself.
 */
import { isInvalidQueryError, type Filter } from "../../../adapters/ports.ts";
import type { RequestContext } from "../../../core/context.ts";
import { openDirectoryStore } from "../../../core/directory-store.ts";
import { html, type Session } from "../../../core/ui/index.ts";
import { EMPTY, screen } from "../chrome.ts";
import type { ConsoleEnv } from "../env.ts";

const PAGE_SIZE = 50;
const ACTION = /^[a-z_]+\.[a-z_]+$/;
const CURSOR = /^[A-Za-z0-9._~=-]{1,500}$/;
const ACTOR = /^[A-Za-z0-9._:@-]{1,200}$/;
/** A date, or a date and time (the browser's datetime-local), in UTC; or a full ISO 8601 time. */
const WHEN = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

export async function auditScreen(env: ConsoleEnv, ctx: RequestContext, session: Session): Promise<Response> {
  const q = new URLSearchParams(ctx.search);
  const targetId = (q.get("targetId") ?? "").trim().slice(0, 253);
  const action = (q.get("action") ?? "").trim();
  const actor = (q.get("actor") ?? "").trim();
  const from = (q.get("from") ?? "").trim();
  const to = (q.get("to") ?? "").trim();
  const cursor = q.get("cursor") ?? "";
  const fromMs = _when(from);
  const toMs = _when(to);
  const valid =
    (action === "" || ACTION.test(action)) && (actor === "" || ACTOR.test(actor)) && fromMs !== null && toMs !== null && (cursor === "" || CURSOR.test(cursor));
  const filter: Filter = {};
  if (targetId) filter["target.id"] = targetId;
  if (action) filter.action = action;
  if (actor) filter.actor = actor;
  if (fromMs !== undefined || toMs !== undefined) filter.atMs = { ...(fromMs ? { $gte: fromMs } : {}), ...(toMs ? { $lt: toMs } : {}) };
  const page = valid
    ? await openDirectoryStore(env.store).audit.find(filter, { sort: [{ field: "atMs", direction: -1 }], limit: PAGE_SIZE, cursor: cursor || null }).catch((e: unknown) => {
        // A cursor that is not the store's own is a bad link, not an outage.
        if (isInvalidQueryError(e)) return null;
        throw e;
      })
    : null;
  const body = html`<form method="get" action="${env.paths.href("/audit")}" class="inline">
<div><label for="f-target">Target ID</label><input id="f-target" name="targetId" value="${targetId}" maxlength="253"></div>
<div><label for="f-action">Action</label><input id="f-action" name="action" value="${action}" maxlength="64" aria-describedby="f-action-hint"><span id="f-action-hint" class="muted">e.g. key.revoke, sign_attempt.resolve</span></div>
<div><label for="f-actor">Who</label><input id="f-actor" name="actor" value="${actor}" maxlength="200" aria-describedby="f-actor-hint"><span id="f-actor-hint" class="muted">e.g. operator:demo-operator, recovery</span></div>
<div><label for="f-from">From (UTC)</label><input id="f-from" name="from" type="datetime-local" value="${from}"></div>
<div><label for="f-to">Until (UTC)</label><input id="f-to" name="to" type="datetime-local" value="${to}"></div>
<button type="submit">Filter</button></form>
${!page ? html`<p class="flash error" role="alert">That filter or page link is not valid.</p>` : page.items.length === 0 ? html`<p>No entries.</p>` : html`<div class="table-wrap"><table><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Changes</th><th scope="col">Request</th></tr></thead><tbody>${page.items.map(
    (a) => html`<tr><td>${a.at}</td><td>${a.actor}</td><td>${a.action}</td><td>${a.target.type}: ${a.target.id}</td><td><code>${JSON.stringify(a.changes)}</code></td><td>${a.requestId ?? "—"}</td></tr>`,
  )}</tbody></table></div>`}
${page?.nextCursor ? html`<p><a href="${env.paths.href("/audit", { targetId, action, actor, from, to, cursor: page.nextCursor })}">Older entries</a></p>` : EMPTY}`;
  return screen(env, ctx, session, { title: "Audit log", current: "/audit", body });
}

// --- Internal helpers ---

/** Epoch ms of a filter time (UTC when no zone is given); undefined when empty, null when not a time. */
function _when(s: string): number | undefined | null {
  if (s === "") return undefined;
  if (!WHEN.test(s)) return null;
  const ms = Date.parse(/T.*(Z|[+-]\d{2}:\d{2})$/.test(s) ? s : s.includes("T") ? `${s}Z` : `${s}T00:00:00Z`);
  return Number.isFinite(ms) ? ms : null;
}
