/**
 * Audit log: every operator change (Admin API and console actions alike, since both go through the
 * same services) newest first: who, when, what, on which target, with what changes; filter by
 * target ID and action, cursor paging. Read from the directory's audit collection with the filter,
 * order and paging of `GET /admin/audit`; the console writes nothing here itself.
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

export async function auditScreen(env: ConsoleEnv, ctx: RequestContext, session: Session): Promise<Response> {
  const q = new URLSearchParams(ctx.search);
  const targetId = (q.get("targetId") ?? "").trim().slice(0, 253);
  const action = (q.get("action") ?? "").trim();
  const cursor = q.get("cursor") ?? "";
  const valid = (action === "" || ACTION.test(action)) && (cursor === "" || CURSOR.test(cursor));
  const filter: Filter = {};
  if (targetId) filter["target.id"] = targetId;
  if (action) filter.action = action;
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
<button type="submit">Filter</button></form>
${!page ? html`<p class="flash error" role="alert">That filter or page link is not valid.</p>` : page.items.length === 0 ? html`<p>No entries.</p>` : html`<div class="table-wrap"><table><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Changes</th><th scope="col">Request</th></tr></thead><tbody>${page.items.map(
    (a) => html`<tr><td>${a.at}</td><td>${a.actor}</td><td>${a.action}</td><td>${a.target.type}: ${a.target.id}</td><td><code>${JSON.stringify(a.changes)}</code></td><td>${a.requestId ?? "—"}</td></tr>`,
  )}</tbody></table></div>`}
${page?.nextCursor ? html`<p><a href="${env.paths.href("/audit", { targetId, action, cursor: page.nextCursor })}">Older entries</a></p>` : EMPTY}`;
  return screen(env, ctx, session, { title: "Audit log", current: "/audit", body });
}
