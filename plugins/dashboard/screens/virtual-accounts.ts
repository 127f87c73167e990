/**
 * Virtual accounts (COLLECTIONS_OPERATIONS, the service and query schema of
 * `GET /api/v1/virtual-account`): the list with the API's filters (reference, account number, type,
 * status, search, creation dates, sort; page and limit, 50 a page here), and one account by its
 * reference with its deposits (settled or refunded, with the reason). On a TEST business the
 * account's page has the sandbox deposit form (sandbox.ts). Another business's reference is not found.
 */
import { EMPTY, html, type SafeHtml } from "../../../core/ui/index.ts";
import type { ApiView, CountedPage } from "../../invoice/dashboard-offers.ts";
import { PAGE_SIZE, facts, isForeign, numberPager, panel, pickQuery, refusalText, row, selectField, table, when, type DataDeps, type Scope, type ViewCtx } from "./data-kit.ts";
import { statusBadge } from "./invoices.ts";
import { sandboxDepositForm } from "./sandbox.ts";

export const VA_FILTERS = ["reference", "accountNumber", "accountType", "status", "search", "startDate", "endDate", "sort", "page"] as const;

export interface AccountListData {
  page: (CountedPage & { page: number }) | null;
  query: Record<string, string>;
  refused: string | null;
}

export interface AccountPageData {
  account: ApiView;
  deposits: ApiView[];
}

export async function loadAccountList(deps: DataDeps, scope: Scope, search: string): Promise<AccountListData> {
  const query = pickQuery(search, VA_FILTERS);
  try {
    const page = await deps.collections.virtualAccounts(scope.businessId, { ...query, limit: String(PAGE_SIZE) });
    return { page: { ...page, page: Number(query.page ?? "1") }, query, refused: null };
  } catch (e) {
    const text = refusalText(e);
    if (text === null) throw e;
    return { page: null, query, refused: text };
  }
}

export async function loadAccountPage(deps: DataDeps, scope: Scope, reference: string): Promise<AccountPageData | null> {
  try {
    return await deps.collections.virtualAccount(scope.businessId, reference);
  } catch (e) {
    if (isForeign(e)) return null;
    throw e;
  }
}

export function renderAccountList(v: ViewCtx, d: AccountListData): SafeHtml {
  const filters = { ...d.query };
  delete filters.page;
  const rows = (d.page?.items ?? []).map((a) =>
    row([
      html`<a href="${v.paths.href(`/virtual-accounts/${encodeURIComponent(String(a.reference))}`)}">${String(a.accountName)}</a>`,
      String(a.accountNumber),
      String(a.reference),
      String(a.sourceReference),
      String(a.accountType),
      statusBadge(String(a.status)),
      _amount(a),
      when(a.createdAt as string),
    ]),
  );
  return html`${_filterForm(v, d.query)}${d.refused ? html`<p class="flash error" role="alert">Filters refused: ${d.refused}</p>` : EMPTY}
${table(["Name", "Account number", "Reference", "Source reference", "Type", "Status", "Expected amount", "Created"], rows, "No virtual accounts match.")}
${d.page ? numberPager(v.paths, "/virtual-accounts", filters, d.page.page, PAGE_SIZE, d.page.total) : EMPTY}`;
}

export function renderAccountPage(v: ViewCtx, d: AccountPageData): SafeHtml {
  const a = d.account;
  const fixed = (a.amount as { value?: number | null } | undefined)?.value ?? null;
  const rows = d.deposits.map((x) => {
    const sender = (x.sender ?? {}) as Record<string, unknown>;
    return row([String(x.reference), statusBadge(String(x.status)), `NGN ${String(x.amount)}`, `${String(sender.accountName ?? "")} (${String(sender.bankName ?? "")})`, x.reason as string | null, when(x.receivedAt as string), when(x.settledAt as string | null)]);
  });
  const open = a.status === "active";
  return html`${panel(
    "Virtual account",
    facts([
      ["Name", a.accountName],
      ["Account number", a.accountNumber],
      ["Bank", a.providerName],
      ["Reference", a.reference],
      ["Source reference", a.sourceReference],
      ["Type", a.accountType],
      ["Status", statusBadge(String(a.status))],
      ["Expected amount", _amount(a)],
      ["Customer", a.customerId],
      ["Expires", when(a.expiresAt as string | null)],
      ["Environment", a.businessState],
      ["Created", when(a.createdAt as string)],
    ]),
  )}
${v.test && v.canAct ? panel("Sandbox deposit (TEST)", open ? sandboxDepositForm(v, String(a.accountNumber), fixed) : html`<p class="muted">The account is ${String(a.status)}: a deposit would be refunded. ${sandboxDepositForm(v, String(a.accountNumber), fixed)}</p>`) : EMPTY}
${panel("Deposits (oldest first, at most 100)", table(["Reference", "Status", "Amount", "Sender", "Refund reason", "Received", "Settled"], rows, "No deposits yet."))}`;
}

// --- Internal helpers ---

function _amount(a: ApiView): string {
  const amount = a.amount as { formatted?: string | null } | undefined;
  return amount?.formatted ?? "any amount";
}

function _filterForm(v: ViewCtx, q: Record<string, string>): SafeHtml {
  return html`<form method="get" action="${v.paths.href("/virtual-accounts")}" class="inline" aria-label="Filter virtual accounts">
${selectField("status", "Status", [["", "any"], ["active", "active"], ["inactive", "inactive"], ["expired", "expired"]], q.status)}
${selectField("accountType", "Type", [["", "any"], ["single_use", "single_use"], ["multi_use", "multi_use"]], q.accountType)}
<div><label for="f-search">Search</label><input id="f-search" name="search" type="search" maxlength="100" value="${q.search ?? ""}"></div>
<div><label for="f-accountNumber">Account number</label><input id="f-accountNumber" name="accountNumber" maxlength="10" value="${q.accountNumber ?? ""}"></div>
<div><label for="f-startDate">Created from</label><input id="f-startDate" name="startDate" type="date" value="${q.startDate ?? ""}"></div>
<div><label for="f-endDate">Created to</label><input id="f-endDate" name="endDate" type="date" value="${q.endDate ?? ""}"></div>
${selectField("sort", "Order", [["DESC", "newest first"], ["ASC", "oldest first"]], q.sort)}
<div><button type="submit">Filter</button></div></form>`;
}
