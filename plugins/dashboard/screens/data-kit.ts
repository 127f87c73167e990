/**
 * What the dashboard's data screens (invoices, represented businesses, wallet, payment links,
 * virtual accounts, customers, the sandbox) share: the services they call, each offered by the
 * plugin that owns it through the invoice kit (so a screen and its API route call the same code),
 * the records of the invoice kit they read directly, the view context a renderer draws with, and
 * small drawing helpers (tables, facts, pagers, money).
 *
 * Every read is scoped to the signed-in user's business and its environment; an id of another
 * business is "not found" (`isForeign`), never a leak.
 */
import type { Collection, DocumentStore } from "../../../adapters/ports.ts";
import type { RegulatorState } from "../../../adapters/regulator/port.ts";
import { isCollectionsError, isGatewayError } from "../../../core/errors/gateway-error.ts";
import type { PluginKit } from "../../../core/plugin.ts";
import { EMPTY, html, isSafeHtml, type HtmlValue, type PagePaths, type SafeHtml } from "../../../core/ui/index.ts";
import {
  COLLECTIONS_OPERATIONS,
  REPRESENTED_BUSINESS_READS,
  STORED_INVOICE_OPERATIONS,
  type CollectionsOperations,
  type RepresentedBusinessReads,
  type StoredInvoiceOperations,
} from "../../invoice/dashboard-offers.ts";
import { WALLET_OPERATIONS, type WalletOperations } from "../../invoice/offers.ts";
import { openRepresentedBusinesses, type SubBusinessDoc } from "../../invoice/represented-businesses.ts";
import { openSignAttempts, type SignRecord } from "../../invoice/sign-attempts.ts";
import { openTransmissionClaims, type ClaimDoc } from "../../invoice/transmission-claims.ts";

/** The offers the data screens read (the dashboard plugin declares them in `uses`). */
export const DATA_OFFERS = [STORED_INVOICE_OPERATIONS, REPRESENTED_BUSINESS_READS, COLLECTIONS_OPERATIONS, WALLET_OPERATIONS] as const;

export interface DataDeps {
  invoices: StoredInvoiceOperations;
  represented: RepresentedBusinessReads;
  collections: CollectionsOperations;
  /** The invoice-gateway wallet (sign charges, credits) as the Admin API reads it. */
  wallet: WalletOperations;
  /** The invoice kit's records: Pass-through sign operations and transmissions, represented businesses (QR material). */
  signAttempts: Collection<SignRecord>;
  transmissions: Collection<ClaimDoc>;
  subs: Collection<SubBusinessDoc>;
  now: () => number;
}

/** The services and records, from the kit (during the dashboard plugin's setup). */
export function createDataDeps(kit: PluginKit, now: () => number = Date.now): DataDeps {
  return dataDepsFrom(kit.ports.documentStore, {
    invoices: kit.offers.get(STORED_INVOICE_OPERATIONS),
    represented: kit.offers.get(REPRESENTED_BUSINESS_READS),
    collections: kit.offers.get(COLLECTIONS_OPERATIONS),
    wallet: kit.offers.get(WALLET_OPERATIONS),
    now,
  });
}

export function dataDepsFrom(store: DocumentStore, services: Pick<DataDeps, "invoices" | "represented" | "collections" | "wallet" | "now">): DataDeps {
  return { ...services, signAttempts: openSignAttempts(store), transmissions: openTransmissionClaims(store), subs: openRepresentedBusinesses(store) };
}

/** Whose data a screen reads: the session's business and its environment. */
export interface Scope {
  businessId: string;
  state: RegulatorState;
}

/** What a renderer draws with: links, the form token, whether the user may change things, TEST or LIVE. */
export interface ViewCtx {
  paths: PagePaths;
  csrf: string;
  /** developer or owner (a viewer sees no forms; the server refuses them anyway). */
  canAct: boolean;
  /** A TEST business (the sandbox forms show). */
  test: boolean;
}

/** Page sizes of the data screens' lists (every list is bounded). */
export const PAGE_SIZE = 50;

/** A "not found" of another plugin's service: the id is unknown or another business's (the dashboard answers 404). */
export function isForeign(e: unknown): boolean {
  if (isCollectionsError(e)) return e.status === 404;
  if (!isGatewayError(e)) return false;
  return ["GW_INVOICE_NOT_FOUND", "GW_SUB_BUSINESS_NOT_FOUND", "GW_SUB_BUSINESS_FORBIDDEN", "GW_OPERATION_NOT_FOUND"].includes(e.code);
}

/** What a refused input or change says, in words (a catalog error's detail, the envelope's field list). */
export function refusalText(e: unknown): string | null {
  if (isCollectionsError(e)) return [e.message, ...e.errors.map((f) => `${f.field} ${f.message}`)].join(" ");
  if (isGatewayError(e) && e.status < 500) {
    const violations = (e.info.violations ?? []).map((v) => `${v.field ?? v.location}: ${v.detail}`);
    return [e.message, ...violations].join(" ");
  }
  return null;
}

/** A table with a header row; `empty` when there are no rows. */
export function table(headers: readonly string[], rows: readonly SafeHtml[], empty = "Nothing here yet."): SafeHtml {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<div class="table-wrap"><table><thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** A table row of cells (each escaped unless already markup). */
export function row(cells: readonly HtmlValue[]): SafeHtml {
  return html`<tr>${cells.map((c) => html`<td>${c === null || c === undefined || c === "" ? "—" : c}</td>`)}</tr>`;
}

/** A definition list of facts; empty values show as "—". */
export function facts(rows: ReadonlyArray<readonly [string, unknown]>): SafeHtml {
  return html`<dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v === null || v === undefined || v === "" ? "—" : isSafeHtml(v) ? v : String(v)}</dd>`)}</dl>`;
}

export function badge(text: string, kind: "ok" | "bad" | "warn" | "muted"): SafeHtml {
  return html`<span class="badge ${kind}">${text}</span>`;
}

/** A panel with a heading. */
export function panel(title: string, body: SafeHtml): SafeHtml {
  const id = `s-${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  return html`<section class="panel" aria-labelledby="${id}"><h2 id="${id}">${title}</h2>${body}</section>`;
}

/** "Next page" for a cursor list (the filters kept). */
export function cursorPager(paths: PagePaths, sub: string, query: Record<string, string>, nextCursor: string | null): SafeHtml {
  return nextCursor ? html`<p><a href="${paths.href(sub, { ...query, cursor: nextCursor })}" rel="next">Next page</a></p>` : EMPTY;
}

/** Previous / next for a page/limit list. */
export function numberPager(paths: PagePaths, sub: string, query: Record<string, string>, page: number, limit: number, total: number): SafeHtml {
  const prev = page > 1 ? html`<a href="${paths.href(sub, { ...query, page: String(page - 1) })}" rel="prev">Previous page</a> ` : EMPTY;
  const next = page * limit < total ? html`<a href="${paths.href(sub, { ...query, page: String(page + 1) })}" rel="next">Next page</a>` : EMPTY;
  return html`<p>${prev}${next} <span class="muted">${total} in all</span></p>`;
}

/** Kobo → "NGN 1,234.50". */
export function ngn(kobo: number): string {
  return `NGN ${(kobo / 100).toLocaleString("en-NG", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** Epoch ms or ISO text → "2026-11-29 05:40:12 UTC". */
export function when(t: number | string | null | undefined): string {
  if (t === null || t === undefined || t === "") return "—";
  const d = new Date(typeof t === "number" ? t : t);
  return Number.isNaN(d.getTime()) ? String(t) : `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** Only the query parameters a screen knows, as text (unknown ones are dropped, never echoed). */
export function pickQuery(search: string, names: readonly string[]): Record<string, string> {
  const params = new URLSearchParams(search);
  const out: Record<string, string> = {};
  for (const n of names) {
    const v = params.get(n);
    if (v !== null && v !== "") out[n] = v;
  }
  return out;
}

/** A select box with its label; `value` selected. */
export function selectField(name: string, label: string, options: readonly (readonly [string, string])[], value: string | undefined): SafeHtml {
  return html`<div><label for="f-${name}">${label}</label><select id="f-${name}" name="${name}">${options.map(
    ([v, l]) => html`<option value="${v}"${v === (value ?? "") ? html` selected` : EMPTY}>${l}</option>`,
  )}</select></div>`;
}
