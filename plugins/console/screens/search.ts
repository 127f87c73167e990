/**
 * The one search box: a request ID, an operation ID, a Stored invoice ID or an IRN finds the records
 * it names, each linked to its page; a request ID is also looked up in the request log (any
 * business, last 7 days), shown below them with its route, status and code. Every lookup uses an
 * index of its collection: the request log's `_id`, operation IDs
 * (sign attempts, transmission claims, Stored invoices), invoice IDs (`_id`), IRNs, and request IDs among the operations
 * that are frozen (held sign fees, unknown transmissions: the money/claim-state indexes narrow the
 * scan) — what an on-call engineer has from a merchant's complaint.
 */
import type { RequestContext } from "../../../core/context.ts";
import { createRequestLog } from "../../../core/request-log/query.ts";
import { html, segment, type Session } from "../../../core/ui/index.ts";
import { openSignAttempts } from "../../invoice/sign-attempts.ts";
import { openTransmissionClaims } from "../../invoice/transmission-claims.ts";
import { EMPTY, screen } from "../chrome.ts";
import type { ConsoleEnv } from "../env.ts";
import { findInvoices, invoiceHref } from "./invoice.ts";

const IDENTIFIER = /^[A-Za-z0-9._:-]{1,200}$/;

interface Hit {
  what: string;
  matched: string;
  kind: "passthrough-sign" | "passthrough-transmit" | "stored-invoice";
  /** The hit's page: the frozen-operation page, or a Stored invoice's own page. */
  href?: string;
  id: string;
  businessId: string;
  status: string;
}

export async function searchScreen(env: ConsoleEnv, ctx: RequestContext, session: Session): Promise<Response> {
  const q = (new URLSearchParams(ctx.search).get("q") ?? "").trim();
  const valid = IDENTIFIER.test(q);
  const [hits, request] = valid ? await Promise.all([findIdentifier(env, q), createRequestLog(env.store).findAny(q)]) : [[], null];
  const logged = request === null ? EMPTY : html`<h2>In the request log</h2>
<p><code>${request._id}</code>: ${request.method} <code>${request.path}</code> (route ${request.route ?? "none"}) of business ${request.businessId}, status ${request.status}${request.code ? ` ${request.code}` : ""}, ${request.durationMs} ms, at ${new Date(request.at).toISOString()}.</p>`;
  const body = html`<p>Searches request IDs (the request log, and frozen operations), operation IDs, Stored invoice IDs and IRNs.</p>
${q === "" ? EMPTY : !valid ? html`<p class="flash error" role="alert">An ID has only letters, digits and . _ : - (at most 200).</p>` : hits.length === 0 && request === null ? html`<p>Nothing found for <code>${q}</code>.</p>` : hits.length === 0 ? logged : html`<h2>${hits.length} found for <code>${q}</code></h2>
<div class="table-wrap"><table><thead><tr><th scope="col">What</th><th scope="col">Matched by</th><th scope="col">Business</th><th scope="col">Status</th><th scope="col">Open</th></tr></thead><tbody>${hits.map(
        (h) => html`<tr><td>${h.what}</td><td>${h.matched}</td><td>${h.businessId}</td><td>${h.status}</td><td><a href="${h.href ?? env.paths.href(`/frozen/${segment(h.kind)}/${segment(h.id)}`)}">${h.id}</a></td></tr>`,
      )}</tbody></table></div>${logged}`}`;
  return screen(env, ctx, session, { title: "Search", current: "/search", body });
}

/** Every record `q` names, as request ID, operation ID or invoice ID. */
export async function findIdentifier(env: ConsoleEnv, q: string): Promise<Hit[]> {
  const signs = openSignAttempts(env.store);
  const claims = openTransmissionClaims(env.store);
  const [signByOp, signByReq, claimByOp, claimByReq, invoices] = await Promise.all([
    signs.find({ operationId: q }, { limit: 5 }),
    signs.find({ money: "held", owner: q }, { limit: 10 }),
    claims.find({ operationId: q }, { limit: 5 }),
    claims.find({ claimState: "unknown", owner: q }, { limit: 10 }),
    findInvoices(env.store, q),
  ]);
  const hits: Hit[] = [];
  const sign = (matched: string) => (r: (typeof signByOp.items)[number]) =>
    hits.push({ what: "Pass-through sign attempt", matched, kind: "passthrough-sign", id: r.operationId, businessId: r.businessId, status: `${r.status}, money ${r.money}` });
  const claim = (matched: string) => (c: (typeof claimByOp.items)[number]) =>
    hits.push({ what: "Pass-through transmission", matched, kind: "passthrough-transmit", id: c.operationId, businessId: c.businessId, status: c.claimState });
  signByOp.items.forEach(sign("operation ID"));
  signByReq.items.forEach(sign("request ID"));
  claimByOp.items.forEach(claim("operation ID"));
  claimByReq.items.forEach(claim("request ID"));
  for (const { matched, invoice } of invoices)
    hits.push({ what: "Stored invoice", matched, kind: "stored-invoice", id: invoice._id, businessId: invoice.businessId, status: invoice.status, href: invoiceHref(env, invoice._id) });
  return hits;
}
