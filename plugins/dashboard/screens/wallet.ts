/**
 * The business's money in one screen: the invoice-gateway wallet (balance, the sign charges and
 * their reversals, the credits, newest first; as the Admin API's wallet read answers it through
 * WALLET_OPERATIONS, read only here: top-ups are the operator's) and the collection wallet (what
 * checkouts and deposits credited, `GET /api/v1/balances/transactions` with its page and limit).
 * A ledger that cannot answer is said in its panel; the other panel still draws.
 */
import { isDependencyUnavailableError } from "../../../adapters/ports.ts";
import { isGatewayError } from "../../../core/errors/gateway-error.ts";
import { html, type SafeHtml } from "../../../core/ui/index.ts";
import type { CountedPage } from "../../invoice/dashboard-offers.ts";
import type { WalletSummary } from "../../invoice/offers.ts";
import { PAGE_SIZE, badge, facts, ngn, numberPager, panel, pickQuery, refusalText, row, table, when, type DataDeps, type Scope, type ViewCtx } from "./data-kit.ts";

export interface WalletData {
  invoice: WalletSummary | { unavailable: string };
  collection: (CountedPage & { balanceKobo: number; page: number; limit: number }) | { unavailable: string };
  query: Record<string, string>;
}

export async function loadWallet(deps: DataDeps, scope: Scope, search: string): Promise<WalletData> {
  const query = pickQuery(search, ["page"]);
  const page = Number(query.page ?? "1");
  const [invoice, collection] = await Promise.all([
    deps.wallet.wallet(scope.businessId, PAGE_SIZE).catch((e: unknown) => ({ unavailable: _why(e) })),
    deps.collections
      .wallet(scope.businessId, { page: query.page ?? "1", limit: String(PAGE_SIZE) })
      .then((w) => ({ ...w, page, limit: PAGE_SIZE }))
      .catch((e: unknown) => ({ unavailable: _why(e) })),
  ]);
  return { invoice, collection, query };
}

export function renderWallet(v: ViewCtx, d: WalletData): SafeHtml {
  return html`${panel("Invoice-gateway wallet", _invoiceWallet(d.invoice))}${panel("Collection wallet", _collectionWallet(v, d))}`;
}

// --- Internal helpers ---

function _invoiceWallet(w: WalletData["invoice"]): SafeHtml {
  if ("unavailable" in w) return html`<p class="flash error" role="alert">${w.unavailable}</p>`;
  const rows = w.entries.map((e) => {
    const id = e.billingIdentity as Record<string, unknown> | undefined;
    const what = e.type === "debit" ? "sign charge" : e.type === "reversal" ? "sign charge reversed" : "credit";
    const ref = id ? `IRN ${String(id.irn ?? "")}, attempt ${String(id.attemptNumber ?? "")}, ${String(id.subBusinessId ?? "")}` : String(e.reference ?? "");
    return row([when(e.createdAt as string), what, `NGN ${String(e.amount)}`, ref]);
  });
  return html`${facts([
    ["Balance", `NGN ${String(w.balance)}`],
    ["State", w.suspended ? badge("suspended: new sign charges are refused", "bad") : badge("in good standing", "ok")],
  ])}<h3>Sign charges and credits (newest ${PAGE_SIZE})</h3>${table(["When", "What", "Amount", "For"], rows, "No charges or credits yet.")}`;
}

function _collectionWallet(v: ViewCtx, d: WalletData): SafeHtml {
  const w = d.collection;
  if ("unavailable" in w) return html`<p class="flash error" role="alert">${w.unavailable}</p>`;
  const rows = w.items.map((e) => row([when(e.createdAt as string), String(e.sourceType ?? e.type ?? ""), String(e.reference ?? e.sourceReference ?? ""), _amount(e)]));
  return html`${facts([["Balance", ngn(w.balanceKobo)]])}<h3>Credits</h3>${table(["When", "From", "Reference", "Amount"], rows, "No credits yet: checkouts and deposits credit this wallet.")}
${numberPager(v.paths, "/wallet", {}, w.page, w.limit, w.total)}`;
}

function _amount(e: Record<string, unknown>): string {
  const a = e.amount ?? e.amountNgn;
  return a === undefined ? "—" : `NGN ${String(a)}`;
}

function _why(e: unknown): string {
  if (isDependencyUnavailableError(e)) return `The ledger is unavailable (${e.dependency}); try again shortly.`;
  const text = refusalText(e);
  if (text !== null) return text;
  if (isGatewayError(e)) return `${e.code}: the ledger could not answer.`;
  throw e;
}
