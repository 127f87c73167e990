/**
 * Payment links (COLLECTIONS_OPERATIONS, the services and schemas of the `/api/v1/payment-link`
 * routes): the list (page, status, search), one link with its transactions, a create form (the
 * API's body fields; its 422 comes back as the form's message) and the activate / deactivate
 * switch. A double-submitted create is answered by the link its source reference already names
 * (the reference is minted into the form), so it creates once.
 *
 * On a TEST business the link's page also has the sandbox checkout (sandbox.ts).
 */
import { randomUUID } from "node:crypto";
import { isCollectionsError } from "../../../core/errors/gateway-error.ts";
import { EMPTY, html, postForm, textField, type SafeHtml } from "../../../core/ui/index.ts";
import type { ApiView, CountedPage, DashboardCaller } from "../../invoice/dashboard-offers.ts";
import { badge, facts, isForeign, numberPager, panel, pickQuery, refusalText, row, selectField, table, when, type DataDeps, type Scope, type ViewCtx } from "./data-kit.ts";
import { statusBadge } from "./invoices.ts";
import { sandboxCheckoutForm } from "./sandbox.ts";

const LINK_PAGE = 20;

/** What an action did, for the flash message after its redirect. */
export interface ActionResult {
  kind: "ok" | "error" | "warn";
  text: string;
  /** Where to go back to (a path under the dashboard). */
  back: string;
}

export interface LinkListData {
  page: (CountedPage & { page: number }) | null;
  query: Record<string, string>;
  refused: string | null;
}

export interface LinkPageData {
  link: ApiView;
  transactions: CountedPage & { page: number };
}

export async function loadLinkList(deps: DataDeps, scope: Scope, search: string): Promise<LinkListData> {
  const query = pickQuery(search, ["page", "status", "search"]);
  try {
    const page = await deps.collections.paymentLinks(scope.businessId, { ...query, limit: String(LINK_PAGE) });
    return { page: { ...page, page: Number(query.page ?? "1") }, query, refused: null };
  } catch (e) {
    const text = refusalText(e);
    if (text === null) throw e;
    return { page: null, query, refused: text };
  }
}

/** One link of the business with a page of its transactions, or null. */
export async function loadLinkPage(deps: DataDeps, scope: Scope, reference: string, search: string): Promise<LinkPageData | null> {
  const query = pickQuery(search, ["page"]);
  try {
    const link = await deps.collections.paymentLink(scope.businessId, reference);
    const transactions = await deps.collections.linkTransactions(scope.businessId, reference, { page: query.page ?? "1", limit: String(LINK_PAGE) });
    return { link, transactions: { ...transactions, page: Number(query.page ?? "1") } };
  } catch (e) {
    if (isForeign(e)) return null;
    throw e;
  }
}

export function renderLinkList(v: ViewCtx, d: LinkListData): SafeHtml {
  const filters = { ...d.query };
  delete filters.page;
  const rows = (d.page?.items ?? []).map((l) =>
    row([
      html`<a href="${v.paths.href(`/payment-links/${encodeURIComponent(String(l.reference))}`)}">${String(l.linkName)}</a>`,
      String(l.reference),
      String(l.sourceReference),
      l.amount === null ? "customer chooses" : `NGN ${String(l.amount)}`,
      _linkStatus(String(l.status)),
      when(l.createdAt as string),
    ]),
  );
  return html`<form method="get" action="${v.paths.href("/payment-links")}" class="inline" aria-label="Filter payment links">
${selectField("status", "Status", [["", "any"], ["active", "active"], ["inactive", "inactive"]], d.query.status)}
<div><label for="f-search">Name or reference</label><input id="f-search" name="search" type="search" maxlength="100" value="${d.query.search ?? ""}"></div>
<div><button type="submit">Filter</button></div></form>
${d.refused ? html`<p class="flash error" role="alert">Filters refused: ${d.refused}</p>` : EMPTY}
${table(["Name", "Reference", "Source reference", "Amount", "Status", "Created"], rows, "No payment links match.")}
${d.page ? numberPager(v.paths, "/payment-links", filters, d.page.page, LINK_PAGE, d.page.total) : EMPTY}
${v.canAct ? panel("Create a payment link", _createForm(v)) : EMPTY}`;
}

export function renderLinkPage(v: ViewCtx, d: LinkPageData): SafeHtml {
  const l = d.link;
  const ref = encodeURIComponent(String(l.reference));
  const active = l.status === "active";
  const toggle = v.canAct
    ? postForm({
        action: v.paths.href(`/payment-links/${ref}/toggle`),
        csrf: v.csrf,
        fields: html`<input type="hidden" name="activate" value="${active ? "false" : "true"}">`,
        submit: active ? "Deactivate the link" : "Activate the link",
        layout: "inline",
        button: active ? "danger" : "primary",
      })
    : EMPTY;
  const rows = d.transactions.items.map((t) =>
    row([String(t.reference), statusBadge(String(t.status)), `NGN ${String(t.amount)}`, `NGN ${String(t.fee)}`, String(t.customerEmail), String(t.paymentMethod), t.failureReason as string | null, when(t.createdAt as string)]),
  );
  return html`${panel(
    "Payment link",
    facts([
      ["Name", l.linkName],
      ["Status", _linkStatus(String(l.status))],
      ["Reference", l.reference],
      ["Source reference", l.sourceReference],
      ["Link", l.linkUrl],
      ["Narration", l.narration],
      ["Amount", l.amount === null ? "the customer chooses" : `NGN ${String(l.amount)}`],
      ["Fee paid by", l.feeBearer],
      ["Redirect", l.redirectLink],
      ["Open from", when(l.startDate as string | null)],
      ["Open until", when(l.endDate as string | null)],
      ["Created", when(l.createdAt as string)],
    ]),
  )}${toggle}
${v.test && v.canAct ? panel("Sandbox checkout (TEST)", sandboxCheckoutForm(v, String(l.reference), l.amount === null)) : EMPTY}
${panel("Transactions", html`${table(["Reference", "Status", "Amount", "Fee", "Customer", "Method", "Why it failed", "Started"], rows, "No transactions yet.")}${numberPager(v.paths, `/payment-links/${ref}`, {}, d.transactions.page, LINK_PAGE, d.transactions.total)}`)}`;
}

/** POST /payment-links: the create form → the API's body → the link service. */
export async function createLinkAction(deps: DataDeps, caller: DashboardCaller, form: Record<string, string>): Promise<ActionResult> {
  const body = _linkBody(form);
  try {
    const link = await deps.collections.createPaymentLink(caller.businessId, body);
    return { kind: "ok", text: `Payment link "${String(link.linkName)}" created.`, back: `/payment-links/${encodeURIComponent(String(link.reference))}` };
  } catch (e) {
    if (isCollectionsError(e) && e.status === 409 && typeof body.source_reference === "string") return _alreadyCreated(deps, caller, body.source_reference);
    const text = refusalText(e);
    if (text === null) throw e;
    return { kind: "error", text: `Not created: ${text}`, back: "/payment-links" };
  }
}

/** POST /payment-links/:reference/toggle: activate=true|false. */
export async function toggleLinkAction(deps: DataDeps, caller: DashboardCaller, reference: string, form: Record<string, string>): Promise<ActionResult | null> {
  const activate = form.activate === "true";
  try {
    const link = await deps.collections.togglePaymentLink(caller.businessId, reference, activate);
    return { kind: "ok", text: `Payment link ${link.status === "active" ? "activated" : "deactivated"}.`, back: `/payment-links/${encodeURIComponent(reference)}` };
  } catch (e) {
    if (isForeign(e)) return null;
    const text = refusalText(e);
    if (text === null) throw e;
    return { kind: "error", text, back: `/payment-links/${encodeURIComponent(reference)}` };
  }
}

// --- Internal helpers ---

function _linkStatus(status: string): SafeHtml {
  return badge(status, status === "active" ? "ok" : "muted");
}

function _createForm(v: ViewCtx): SafeHtml {
  return postForm({
    action: v.paths.href("/payment-links"),
    csrf: v.csrf,
    submit: "Create the link",
    fields: html`${textField({ name: "link_name", label: "Name", required: true, maxLength: 250 })}
${textField({ name: "narration", label: "Narration", required: true, maxLength: 250 })}
${selectField("fee_bearer", "Fee paid by", [["MERCHANT", "the business (MERCHANT)"], ["CUSTOMER", "the customer (CUSTOMER)"]], "MERCHANT")}
${textField({ name: "amount", label: "Amount (NGN)", hint: "empty: the customer chooses (at least 100)", maxLength: 20 })}
${textField({ name: "source_reference", label: "Your reference", value: `dash-${randomUUID()}`, required: true, maxLength: 250, hint: "unique in your business; a resubmitted form finds the same link" })}
${textField({ name: "customer_emails", label: "Send it to (e-mails, comma-separated)", maxLength: 2000 })}
${textField({ name: "redirect_link", label: "Redirect after payment (https URL)", maxLength: 2000 })}`,
  });
}

/** The form's text fields as the API's JSON body (empty fields left out, as an API caller would). */
function _linkBody(form: Record<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of ["link_name", "narration", "fee_bearer", "source_reference", "redirect_link"]) {
    const value = (form[name] ?? "").trim();
    if (value !== "") body[name] = value;
  }
  const amount = (form.amount ?? "").trim();
  if (amount !== "") body.amount = /^\d+(\.\d{1,2})?$/.test(amount) ? Number(amount) : amount;
  const emails = (form.customer_emails ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (emails.length > 0) body.customer_emails = emails;
  return body;
}

async function _alreadyCreated(deps: DataDeps, caller: DashboardCaller, sourceReference: string): Promise<ActionResult> {
  const link = await deps.collections.paymentLinkBySourceReference(caller.businessId, sourceReference).catch(() => null);
  if (!link) return { kind: "error", text: "Not created: that reference is already used by another link.", back: "/payment-links" };
  return { kind: "warn", text: "This form was submitted before: the link it created is below (nothing created again).", back: `/payment-links/${encodeURIComponent(String(link.reference))}` };
}
