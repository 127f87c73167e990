/**
 * The business's Stored invoices (outbound and inbound), newest first, with the API's filters
 * (status, represented business, direction, creation dates) and its cursor, through the Stored
 * service's list (STORED_INVOICE_OPERATIONS: the `GET /invoices` query schema, the business's
 * current environment). The inbound screen is the same list with the direction fixed.
 */
import { html, type SafeHtml } from "../../../core/ui/index.ts";
import { INVOICE_STATUSES, type InvoiceDoc } from "../../invoice/stored-invoices.ts";
import { PAGE_SIZE, badge, cursorPager, pickQuery, refusalText, row, selectField, table, when, type DataDeps, type Scope, type ViewCtx } from "./data-kit.ts";

export const INVOICE_FILTERS = ["status", "subBusinessId", "direction", "createdFrom", "createdTo", "cursor"] as const;

export interface InvoiceListData {
  /** The filters as sent (known names only). */
  query: Record<string, string>;
  items: InvoiceDoc[];
  nextCursor: string | null;
  /** Why the filters were refused (the list is then empty). */
  refused: string | null;
  /** "inbound" on the inbound screen (direction fixed). */
  fixedDirection: "inbound" | null;
}

/** Loads one page; a refused filter (a bad date, a foreign cursor) is said, not thrown. */
export async function loadInvoiceList(deps: DataDeps, scope: Scope, search: string, fixedDirection: "inbound" | null = null): Promise<InvoiceListData> {
  const query = pickQuery(search, INVOICE_FILTERS);
  if (fixedDirection) query.direction = fixedDirection;
  try {
    const page = await deps.invoices.list(scope, { ...query, limit: String(PAGE_SIZE) });
    return { query, items: page.items, nextCursor: page.nextCursor, refused: null, fixedDirection };
  } catch (e) {
    const text = refusalText(e);
    if (text === null) throw e;
    return { query, items: [], nextCursor: null, refused: text, fixedDirection };
  }
}

export function renderInvoiceList(v: ViewCtx, d: InvoiceListData): SafeHtml {
  const sub = d.fixedDirection ? "/inbound" : "/invoices";
  const filters = { ...d.query };
  delete filters.cursor;
  const rows = d.items.map((i) =>
    row([
      html`<a href="${v.paths.href(`/invoices/${encodeURIComponent(i._id)}`)}">${i.irn}</a>`,
      statusBadge(i.status),
      i.direction,
      i.subBusinessId,
      when(i.createdAt),
      when(i.updatedAt),
    ]),
  );
  return html`${_filterForm(v, sub, d)}${d.refused ? html`<p class="flash error" role="alert">Filters refused: ${d.refused}</p>` : ""}
${table(["IRN", "Status", "Direction", "Represented business", "Created", "Last change"], rows, "No invoices match.")}
${cursorPager(v.paths, sub, filters, d.nextCursor)}`;
}

/** A status as a coloured badge (good, bad, waiting). */
export function statusBadge(status: string): SafeHtml {
  const kind = ["signed", "transmitted", "received", "completed", "succeeded", "settled"].includes(status)
    ? "ok"
    : ["rejected", "frozen", "cancelled", "failed", "unknown"].includes(status)
      ? "bad"
      : "warn";
  return badge(status, kind);
}

// --- Internal helpers ---

function _filterForm(v: ViewCtx, sub: string, d: InvoiceListData): SafeHtml {
  const q = d.query;
  const statuses = [["", "any"] as const, ...INVOICE_STATUSES.map((s) => [s, s] as const)];
  const direction = d.fixedDirection
    ? html``
    : selectField("direction", "Direction", [["", "any"], ["outbound", "outbound"], ["inbound", "inbound"]], q.direction);
  return html`<form method="get" action="${v.paths.href(sub)}" class="inline" aria-label="Filter invoices">
${selectField("status", "Status", statuses, q.status)}${direction}
<div><label for="f-subBusinessId">Represented business</label><input id="f-subBusinessId" name="subBusinessId" value="${q.subBusinessId ?? ""}" maxlength="255"></div>
<div><label for="f-createdFrom">Created from</label><input id="f-createdFrom" name="createdFrom" type="date" value="${q.createdFrom ?? ""}"></div>
<div><label for="f-createdTo">Created to</label><input id="f-createdTo" name="createdTo" type="date" value="${q.createdTo ?? ""}"></div>
<div><button type="submit">Filter</button></div></form>`;
}
