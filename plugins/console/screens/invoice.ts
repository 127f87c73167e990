/**
 * One Stored invoice: its status timeline, the processor's attempts, the last error in words and
 * the regulator's answers (plugins/invoice/timeline.ts, shared with the merchant dashboard), and a
 * link to the resolve form when it is frozen. Never the invoice body. Also the invoice lookups of
 * the search box: by invoice ID (`_id`), IRN and operation ID, each through an index of
 * stored_invoices.
 */
import type { DocumentStore } from "../../../adapters/ports.ts";
import type { RequestContext } from "../../../core/context.ts";
import { EMPTY, html, segment, type SafeHtml, type Session } from "../../../core/ui/index.ts";
import { openStoredInvoices, type InvoiceDoc } from "../../invoice/stored-invoices.ts";
import { invoiceTimeline, type InvoiceTimeline } from "../../invoice/timeline.ts";
import { badge, facts, screen } from "../chrome.ts";
import type { ConsoleEnv } from "../env.ts";

const INVOICE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A Stored invoice the search found, and by which identifier. */
export interface InvoiceHit {
  matched: "invoice ID" | "IRN" | "operation ID";
  invoice: Pick<InvoiceDoc, "_id" | "businessId" | "status" | "irn">;
}

export async function invoiceScreen(env: ConsoleEnv, ctx: RequestContext, session: Session): Promise<Response> {
  const id = ctx.params.invoiceId ?? "";
  const doc = INVOICE_ID.test(id) ? await openStoredInvoices(env.store).get(id) : null;
  if (!doc) return screen(env, ctx, session, { title: "Not found", current: "/search", status: 404, body: html`<p>No Stored invoice with that ID.</p>` });
  const t = invoiceTimeline(doc);
  const body = html`${_summary(env, t)}${_history(t)}${_answers(t)}${_lastError(t)}`;
  return screen(env, ctx, session, { title: `Invoice ${t.irn}`, current: "/search", body });
}

/** The Stored invoices `q` names as invoice ID, IRN or operation ID (indexed lookups, at most 10 per kind). */
export async function findInvoices(store: DocumentStore, q: string): Promise<InvoiceHit[]> {
  const invoices = openStoredInvoices(store);
  const [byId, byIrn, byOperation] = await Promise.all([invoices.get(q), invoices.find({ irn: q }, { limit: 10 }), invoices.find({ operationId: q }, { limit: 10 })]);
  const hits: InvoiceHit[] = [];
  const seen = new Set<string>();
  const add = (matched: InvoiceHit["matched"], d: InvoiceDoc) => {
    if (seen.has(d._id)) return;
    seen.add(d._id);
    hits.push({ matched, invoice: { _id: d._id, businessId: d.businessId, status: d.status, irn: d.irn } });
  };
  if (byId) add("invoice ID", byId);
  byIrn.items.forEach((d) => add("IRN", d));
  byOperation.items.forEach((d) => add("operation ID", d));
  return hits;
}

/** The invoice page's link. */
export function invoiceHref(env: ConsoleEnv, invoiceId: string): string {
  return env.paths.href(`/invoices/${segment(invoiceId)}`);
}

// --- Internal helpers ---

function _summary(env: ConsoleEnv, t: InvoiceTimeline): SafeHtml {
  const frozen = t.status === "frozen" ? html` <a href="${env.paths.href(`/frozen/stored-invoice/${segment(t.invoiceId)}`)}">Resolve this frozen invoice</a>` : EMPTY;
  return html`<section class="panel" aria-labelledby="inv-h"><h2 id="inv-h">Invoice</h2>
<p>${_statusBadge(t.status)} ${t.statusMeaning}.${frozen}</p>
${facts([
  ["Invoice ID", t.invoiceId],
  ["IRN", t.irn],
  ["Operation ID", t.operationId],
  ["Business", html`<a href="${env.paths.href(`/businesses/${segment(t.businessId)}`)}">${t.businessId}</a>`],
  ["Sub-business", t.subBusinessId],
  ["Direction", t.direction],
  ["Regulator state", t.state],
  ["Domain", t.domain],
  ["Sign fee (kobo)", t.feeKobo],
  ["Processor passes", t.attempts],
  ["Sign attempt", t.signAttempt],
  ["Retry budget left", `${t.budgetLeft} of ${t.budget}`],
  ["Dependency outages (backing off)", t.outages],
  ["Next", t.next ? `${t.next.what}, due ${t.next.dueAt}` : "nothing: the invoice is idle"],
  ["Resolution", t.resolution ? `${t.resolution.outcome} by ${t.resolution.by} at ${t.resolution.at}` : null],
  ["Created", t.createdAt],
  ["Updated", t.updatedAt],
])}
<p class="muted">The invoice body is never shown here.</p></section>`;
}

function _history(t: InvoiceTimeline): SafeHtml {
  return html`<section class="panel" aria-labelledby="hist-h"><h2 id="hist-h">Status timeline</h2>
<div class="table-wrap"><table><thead><tr><th scope="col">Status</th><th scope="col">Since</th><th scope="col">Lasted</th><th scope="col">Meaning</th></tr></thead><tbody>${t.entries.map(
    (e) => html`<tr${e.current ? html` aria-current="step"` : EMPTY}><td>${_statusBadge(e.status)}</td><td>${e.at}</td><td>${e.lastedMs === null ? "now" : _duration(e.lastedMs)}</td><td>${e.meaning}</td></tr>`,
  )}</tbody></table></div></section>`;
}

function _answers(t: InvoiceTimeline): SafeHtml {
  return html`<section class="panel" aria-labelledby="ans-h"><h2 id="ans-h">Regulator answers</h2>
${t.answers.length === 0 ? html`<p>The regulator has not answered yet.</p>` : html`<div class="table-wrap"><table><thead><tr><th scope="col">At</th><th scope="col">Step</th><th scope="col">Answer</th><th scope="col">In words</th><th scope="col">The regulator's message</th></tr></thead><tbody>${t.answers.map(
  (a) => html`<tr><td>${a.at}</td><td>${a.step}</td><td>${badge(a.verdict, a.verdict === "accepted" ? "ok" : a.verdict === "refused" ? "bad" : "warn")}</td><td>${a.words}</td><td>${a.regulatorMessage ?? "—"}</td></tr>`,
)}</tbody></table></div>`}</section>`;
}

function _lastError(t: InvoiceTimeline): SafeHtml {
  const e = t.lastError;
  return html`<section class="panel" aria-labelledby="err-h"><h2 id="err-h">Last error</h2>
${e ? facts([
  ["Code", e.code],
  ["What it means", e.title],
  ["Detail", e.meaning],
  ["What to do", e.action],
  ["From", e.fromRegulator ? "the regulator" : "the gateway or a dependency"],
  ["The regulator's message", e.regulatorMessage],
  ["At", e.at],
  ["Documentation", e.docs ? html`<a href="${e.docs}">${e.docs}</a>` : null],
]) : html`<p>None.</p>`}</section>`;
}

function _statusBadge(status: string): SafeHtml {
  const kind = status === "rejected" || status === "frozen" ? "bad" : status === "transmitted" || status === "signed" || status === "received" ? "ok" : status === "cancelled" ? "muted" : "warn";
  return badge(status, kind);
}

function _duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}
