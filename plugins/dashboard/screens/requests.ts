/**
 * The request log (docs/dashboard.md "Request log"): the business's API requests of the last 7 days,
 * newest first, filtered by status (a class such as 4xx, or an exact status), public code and route,
 * paged by cursor; a search box that opens a request by its ID; a request's page with every field
 * kept. Reads go through the core's request-log service (one indexed query each); another business's
 * request ID is "not found", exactly like one that does not exist. Every viewer role may read it.
 */
import { isInvalidQueryError } from "../../../adapters/ports.ts";
import type { RequestContext } from "../../../core/context.ts";
import type { RequestLogEntry } from "../../../core/request-log/entry.ts";
import { requestIdTime } from "../../../core/request-id.ts";
import { STATUS_FILTER, createRequestLog, type RequestLog, type RequestLogFilters } from "../../../core/request-log/query.ts";
import { EMPTY, html, seeOther, segment, type SafeHtml } from "../../../core/ui/index.ts";
import { viewing } from "../auth.ts";
import { badge, facts, notFound, screen } from "../chrome.ts";
import type { DashboardEnv, Viewer } from "../env.ts";
import { getPage } from "../routes.ts";
import type { DashboardSection } from "../sections.ts";

export const requestsSection: DashboardSection = {
  nav: { label: "Requests", path: "/requests" },
  routes(env) {
    const log = createRequestLog(env.store);
    return [
      getPage(env, "/requests", "request log", viewing(env, (ctx, who) => requestsScreen(env, log, ctx, who))),
      getPage(env, "/requests/:requestId", "a request", viewing(env, (ctx, who) => requestScreen(env, log, ctx, who))),
    ];
  },
};

/** The list (or, with `requestId`, a redirect to that request when it is this business's). */
export async function requestsScreen(env: DashboardEnv, log: RequestLog, ctx: RequestContext, who: Viewer): Promise<Response> {
  const q = new URLSearchParams(ctx.search);
  const requestId = (q.get("requestId") ?? "").trim();
  const { filters, problems } = _filters(q);
  const cursor = q.get("cursor");
  let notice: SafeHtml = EMPTY;
  if (requestId !== "") {
    const hit = REQUEST_ID.test(requestId) ? await log.find(who.business.id, requestId) : null;
    if (hit) return seeOther(ctx, env.paths.href(`/requests/${segment(hit._id)}`));
    notice =
      requestIdTime(requestId) === null
        ? html`<p class="flash warn" role="status"><code>${requestId}</code> is not a Gatehouse request ID. Search by the <code>X-Request-ID</code> of the gateway's answer (a UUID whose third group starts with 7), not by an ID your software sent.</p>`
        : html`<p class="flash warn" role="status">No request <code>${requestId}</code> in this business's log of the last 7 days.</p>`;
  }
  const page = await log
    .list(who.business.id, filters, { limit: PAGE_SIZE, cursor: cursor && CURSOR.test(cursor) ? cursor : null })
    .catch((e: unknown) => {
      if (isInvalidQueryError(e)) return null; // a cursor no page gave: the first page instead
      throw e;
    })
    .then((p) => p ?? log.list(who.business.id, filters, { limit: PAGE_SIZE }));
  const next = page.nextCursor ? env.paths.href("/requests", { ...filters, cursor: page.nextCursor }) : null;
  const body = html`${_searchForm(env, requestId)}${_filterForm(env, filters)}${notice}${
    problems.length > 0 ? html`<p class="flash error" role="alert">Ignored: ${problems.join("; ")}.</p>` : EMPTY
  }<section class="panel" aria-labelledby="rl-h"><h2 id="rl-h">Requests, newest first</h2>${
    page.items.length === 0 ? html`<p>No requests match.</p>` : _table(env, page.items)
  }${next ? html`<p><a href="${next}" rel="next">Older requests</a></p>` : EMPTY}</section>`;
  return screen(env, ctx, who, { title: "Requests", current: "/requests", body });
}

/** One request, if it is this business's (404 otherwise, whatever the reason). */
export async function requestScreen(env: DashboardEnv, log: RequestLog, ctx: RequestContext, who: Viewer): Promise<Response> {
  const id = ctx.params.requestId ?? "";
  const entry = REQUEST_ID.test(id) ? await log.find(who.business.id, id) : null;
  if (!entry) return notFound(env, ctx, who);
  const body = html`<section class="panel" aria-labelledby="rq-h"><h2 id="rq-h">${entry.method} <code>${entry.path}</code></h2>${facts([
    ["Request ID", html`<code>${entry._id}</code>`],
    ["Time", new Date(entry.at).toISOString()],
    ["Status", _status(entry.status)],
    ["Code", entry.code],
    ["Route", entry.route ?? "no route matched"],
    ["Query", entry.query],
    ["Duration", `${entry.durationMs} ms`],
    ["Host", entry.host],
    ["Credential", entry.credentialId],
  ])}<p class="muted">Bodies, keys and query values other than the documented safe ones are never kept.</p></section>
<p><a href="${env.paths.href("/requests")}">Back to the request log</a></p>`;
  return screen(env, ctx, who, { title: `Request ${entry._id}`, current: "/requests", body });
}

// --- Internal helpers ---

const PAGE_SIZE = 50;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,200}$/;
const CURSOR = /^[A-Za-z0-9_-]{1,512}$/;
const CODE = /^(GW_[A-Z0-9_]{1,80}|none)$/;
const ROUTE = /^(\/[A-Za-z0-9._~:{}-]*){1,20}$|^unmatched$/;

/** The filters of the query string; a malformed one is left out and named. */
function _filters(q: URLSearchParams): { filters: RequestLogFilters; problems: string[] } {
  const filters: RequestLogFilters = {};
  const problems: string[] = [];
  const take = (name: "status" | "code" | "route", pattern: RegExp, what: string) => {
    const v = (q.get(name) ?? "").trim();
    if (v === "") return;
    if (pattern.test(v)) filters[name] = v;
    else problems.push(`${name} must be ${what}`);
  };
  take("status", STATUS_FILTER, "a status (404) or a class (4xx)");
  take("code", CODE, "a GW_ code or none");
  take("route", ROUTE, "a route template such as /invoices/:id, or unmatched");
  return { filters, problems };
}

function _searchForm(env: DashboardEnv, requestId: string): SafeHtml {
  return html`<form method="get" action="${env.paths.href("/requests")}" class="inline" role="search"><div><label for="f-requestId">Request ID</label><input id="f-requestId" name="requestId" value="${requestId}" maxlength="200" autocomplete="off"></div><button type="submit">Find</button></form>`;
}

function _filterForm(env: DashboardEnv, f: RequestLogFilters): SafeHtml {
  const option = (value: string, label: string) => html`<option value="${value}"${f.status === value ? html` selected` : EMPTY}>${label}</option>`;
  return html`<form method="get" action="${env.paths.href("/requests")}" class="inline"><div><label for="f-status">Status</label><select id="f-status" name="status">${option("", "any")}${option("2xx", "2xx")}${option("4xx", "4xx")}${option("5xx", "5xx")}${
    f.status && !["2xx", "4xx", "5xx"].includes(f.status) ? option(f.status, f.status) : EMPTY
  }</select></div><div><label for="f-code">Code</label><input id="f-code" name="code" value="${f.code ?? ""}" maxlength="84" placeholder="GW_… or none"></div><div><label for="f-route">Route</label><input id="f-route" name="route" value="${f.route ?? ""}" maxlength="200" placeholder="/invoices/:id"></div><button type="submit">Filter</button></form>`;
}

function _table(env: DashboardEnv, items: readonly RequestLogEntry[]): SafeHtml {
  return html`<div class="table-wrap"><table><thead><tr><th scope="col">Time</th><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Status</th><th scope="col">Code</th><th scope="col">Duration</th><th scope="col">Request ID</th></tr></thead><tbody>${items.map(
    (e) =>
      html`<tr><td>${new Date(e.at).toISOString()}</td><td>${e.method}</td><td><code>${e.path}</code></td><td>${_status(e.status)}</td><td>${e.code ?? "—"}</td><td>${e.durationMs} ms</td><td><a href="${env.paths.href(`/requests/${segment(e._id)}`)}"><code>${e._id}</code></a></td></tr>`,
  )}</tbody></table></div>`;
}

function _status(status: number): SafeHtml {
  return badge(String(status), status >= 500 ? "bad" : status >= 400 ? "warn" : "ok");
}
