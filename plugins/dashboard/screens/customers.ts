/**
 * Customers (COLLECTIONS_OPERATIONS: the customer service of `/api/v1/customers`): the business's
 * customers newest first (50 a page, cursor) with their dedicated virtual accounts, and one
 * customer. Another business's customer id is not found.
 */
import { EMPTY, html, type SafeHtml } from "../../../core/ui/index.ts";
import type { ApiView } from "../../invoice/dashboard-offers.ts";
import { PAGE_SIZE, cursorPager, facts, isForeign, panel, pickQuery, refusalText, row, table, when, type DataDeps, type Scope, type ViewCtx } from "./data-kit.ts";

export interface CustomerListData {
  items: ApiView[];
  nextCursor: string | null;
  refused: string | null;
}

export async function loadCustomerList(deps: DataDeps, scope: Scope, search: string): Promise<CustomerListData> {
  const q = pickQuery(search, ["cursor"]);
  try {
    const page = await deps.collections.customers(scope.businessId, { limit: PAGE_SIZE, ...(q.cursor ? { cursor: q.cursor } : {}) });
    return { ...page, refused: null };
  } catch (e) {
    const text = refusalText(e);
    if (text === null) throw e;
    return { items: [], nextCursor: null, refused: text };
  }
}

export async function loadCustomer(deps: DataDeps, scope: Scope, id: string): Promise<ApiView | null> {
  try {
    return await deps.collections.customer(scope.businessId, id);
  } catch (e) {
    if (isForeign(e)) return null;
    throw e;
  }
}

export function renderCustomerList(v: ViewCtx, d: CustomerListData): SafeHtml {
  const rows = d.items.map((c) => {
    const va = c.virtualAccount as ApiView | null;
    return row([
      html`<a href="${v.paths.href(`/customers/${encodeURIComponent(String(c.id))}`)}">${String(c.firstName)} ${String(c.lastName)}</a>`,
      String(c.email),
      String(c.phone),
      va ? html`<a href="${v.paths.href(`/virtual-accounts/${encodeURIComponent(String(va.reference))}`)}">${String(va.accountNumber)}</a>` : "none",
      when(c.createdAt as string),
    ]);
  });
  return html`${d.refused ? html`<p class="flash error" role="alert">${d.refused}</p>` : EMPTY}
${table(["Name", "E-mail", "Phone", "Dedicated account", "Created"], rows, "No customers yet: create them with POST /api/v1/customers.")}
${cursorPager(v.paths, "/customers", {}, d.nextCursor)}`;
}

export function renderCustomer(v: ViewCtx, c: ApiView): SafeHtml {
  const va = c.virtualAccount as ApiView | null;
  return panel(
    "Customer",
    facts([
      ["Name", `${String(c.firstName)} ${String(c.lastName)}`],
      ["E-mail", c.email],
      ["Phone", c.phone],
      ["Customer id", c.id],
      ["Dedicated account", va ? html`<a href="${v.paths.href(`/virtual-accounts/${encodeURIComponent(String(va.reference))}`)}">${String(va.accountNumber)} (${String(va.providerName)})</a>` : "none"],
      ["Created", when(c.createdAt as string)],
    ]),
  );
}
