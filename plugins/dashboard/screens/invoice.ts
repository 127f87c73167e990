/**
 * One Stored invoice of the business: its status timeline with durations, the processor's attempts
 * and retry budget, the regulator's answers and refusals in words (plugins/invoice/timeline.ts, the
 * console's words too), the IRN, the QR code when the represented business gave QR material
 * (qr.ts), a download of the stored document as JSON, and the transmit and cancel buttons where
 * the status allows them. Both buttons call the Stored service's transmit and cancel
 * (STORED_INVOICE_OPERATIONS), as `POST /invoices/{id}/transmit` and `/cancel` do: idempotent by
 * the invoice's status, so a double submit changes nothing twice.
 *
 * Another business's invoice id (or one of the other environment) is not found: the screens answer 404.
 */
import { EMPTY, html, postForm, type SafeHtml } from "../../../core/ui/index.ts";
import { subKeyOf } from "../../invoice/represented-businesses.ts";
import type { InvoiceDoc } from "../../invoice/stored-invoices.ts";
import { invoiceTimeline, type InvoiceTimeline } from "../../invoice/timeline.ts";
import { facts, isForeign, panel, refusalText, row, table, when, ngn, type DataDeps, type Scope, type ViewCtx } from "./data-kit.ts";
import { statusBadge } from "./invoices.ts";
import { invoiceQr, type InvoiceQr } from "./qr.ts";

export interface InvoicePageData {
  timeline: InvoiceTimeline;
  qr: InvoiceQr;
  canTransmit: boolean;
  canCancel: boolean;
}

/** The invoice of the business, or null (unknown, another business's, the other environment). */
export async function findInvoice(deps: DataDeps, scope: Scope, invoiceId: string): Promise<InvoiceDoc | null> {
  try {
    return await deps.invoices.get(scope, invoiceId);
  } catch (e) {
    if (isForeign(e)) return null;
    throw e;
  }
}

export async function loadInvoicePage(deps: DataDeps, scope: Scope, invoiceId: string): Promise<InvoicePageData | null> {
  const doc = await findInvoice(deps, scope, invoiceId);
  if (!doc) return null;
  const sub = doc.direction === "outbound" ? await deps.subs.get(subKeyOf(doc.state, doc.subBusinessId)) : null;
  return {
    timeline: invoiceTimeline(doc),
    qr: await invoiceQr(doc, sub?.businessId === scope.businessId ? sub.crypto : null),
    canTransmit: doc.direction === "outbound" && doc.status === "signed",
    canCancel: doc.direction === "outbound" && (doc.status === "pending" || doc.status === "validated") && !doc.billDoubt,
  };
}

export function renderInvoicePage(v: ViewCtx, d: InvoicePageData): SafeHtml {
  const t = d.timeline;
  const base = `/invoices/${encodeURIComponent(t.invoiceId)}`;
  return html`${panel(
    "Invoice",
    facts([
      ["IRN", t.irn],
      ["Status", html`${statusBadge(t.status)} <span class="muted">${t.statusMeaning}</span>`],
      ["Direction", t.direction],
      ["Represented business", t.subBusinessId],
      ["Environment", t.state],
      ["Domain", t.domain],
      ["Invoice id", t.invoiceId],
      ["Operation id", t.operationId],
      ["Sign fee", ngn(t.feeKobo)],
      ["Created", when(t.createdAt)],
      ["Last change", when(t.updatedAt)],
    ]),
  )}
${_qrPanel(d.qr)}
${_actions(v, d, base)}
${panel("Status timeline", table(["Status", "Since", "Lasted", "Meaning"], t.entries.map((e) => row([statusBadge(e.status), when(e.at), e.lastedMs === null ? "now" : _duration(e.lastedMs), e.meaning]))))}
${panel("The regulator's answers", _answers(t))}
${panel(
  "Attempts",
  facts([
    ["Processor passes", t.attempts],
    ["Sign attempt", t.signAttempt],
    ["Retry budget left", `${t.budgetLeft} of ${t.budget}`],
    ["Dependency outages in a row", t.outages],
    ["Next", t.next ? `${t.next.what} (due ${when(t.next.dueAt)})` : "nothing: the invoice is idle"],
    ["Resolution", t.resolution ? `${t.resolution.outcome} by ${t.resolution.by} at ${when(t.resolution.at)}` : null],
  ]),
)}`;
}

/** The download's file name: `invoice-<IRN>.json`, the IRN reduced to characters safe in a header. */
export function documentFilename(doc: Pick<InvoiceDoc, "irn" | "_id">): string {
  const safeIrn = doc.irn.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 100) || doc._id;
  return `invoice-${safeIrn}.json`;
}

/** What a transmit or cancel from the page says afterwards (an API refusal in its words). */
export function changeOutcome(e: unknown): string | null {
  return refusalText(e);
}

// --- Internal helpers ---

function _qrPanel(qr: InvoiceQr): SafeHtml {
  if (qr.kind === "image") return panel("QR code", html`<div class="qr-wrap">${qr.svg}</div><p class="muted">From the represented business's QR material, version ${qr.cryptoVersion}.</p>`);
  return panel("QR code", html`<p class="muted">${qr.why}</p>`);
}

function _actions(v: ViewCtx, d: InvoicePageData, base: string): SafeHtml {
  const download = html`<p><a class="button" href="${v.paths.href(`${base}/document.json`)}" download>Download the document (JSON)</a></p>`;
  if (!v.canAct) return panel("Actions", html`${download}<p class="muted">Your role is viewer: transmit and cancel are for developers and owners.</p>`);
  const transmit = d.canTransmit
    ? postForm({ action: v.paths.href(`${base}/transmit`), csrf: v.csrf, idempotent: true, submit: "Transmit to the regulator", layout: "inline" })
    : EMPTY;
  const cancel = d.canCancel
    ? postForm({ action: v.paths.href(`${base}/cancel`), csrf: v.csrf, idempotent: true, submit: "Cancel the invoice", layout: "inline", button: "danger" })
    : EMPTY;
  const none = !d.canTransmit && !d.canCancel ? html`<p class="muted">Nothing to do in this status: transmit is for a signed invoice, cancel for a pending or validated one.</p>` : EMPTY;
  return panel("Actions", html`${download}${transmit}${cancel}${none}`);
}

function _answers(t: InvoiceTimeline): SafeHtml {
  const answers = table(
    ["When", "Step", "Answer", "The regulator's explanation"],
    t.answers.map((a) => row([when(a.at), a.step, html`${statusBadge(a.verdict === "accepted" ? "signed" : a.verdict === "refused" ? "rejected" : "pending")} ${a.words}`, a.regulatorMessage])),
    "The regulator has not answered yet.",
  );
  const e = t.lastError;
  const last = e
    ? html`<h3>Last error</h3>${facts([
        ["Code", e.code],
        ["In words", e.title],
        ["What it means", e.meaning],
        ["What to do", e.action],
        ["The regulator said", e.regulatorMessage],
        ["When", when(e.at)],
      ])}${e.docs ? html`<p><a href="${e.docs}">The code's documentation</a></p>` : EMPTY}`
    : EMPTY;
  return html`${answers}${last}`;
}

function _duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}
