/**
 * The business's represented businesses (onboarding's reads, REPRESENTED_BUSINESS_READS: the views
 * `GET /sub-businesses` answers, 50 a page with its cursor): their onboarding state (identity
 * version, whether the regulator business is active, a pending review, QR material), and one
 * represented business with its identity versions, reviews and migrations. Another business's id
 * is not found. Taxpayer credentials are never stored, so never shown; QR material only by its
 * fingerprint.
 */
import { EMPTY, html, type SafeHtml } from "../../../core/ui/index.ts";
import type { ApiView } from "../../invoice/dashboard-offers.ts";
import { PAGE_SIZE, badge, cursorPager, facts, isForeign, panel, pickQuery, refusalText, row, table, when, type DataDeps, type Scope, type ViewCtx } from "./data-kit.ts";

export interface RepresentedListData {
  items: ApiView[];
  nextCursor: string | null;
  refused: string | null;
}

export interface RepresentedPageData {
  business: ApiView;
  history: ApiView;
}

export async function loadRepresentedList(deps: DataDeps, scope: Scope, search: string): Promise<RepresentedListData> {
  const q = pickQuery(search, ["cursor"]);
  try {
    const page = await deps.represented.list(scope, { limit: PAGE_SIZE, ...(q.cursor ? { cursor: q.cursor } : {}) });
    return { items: page.data, nextCursor: page.nextCursor, refused: null };
  } catch (e) {
    const text = refusalText(e);
    if (text === null) throw e;
    return { items: [], nextCursor: null, refused: text };
  }
}

/** One represented business of the business with its identity history, or null. */
export async function loadRepresented(deps: DataDeps, scope: Scope, gatewaySubBusinessId: string): Promise<RepresentedPageData | null> {
  try {
    const [business, history] = await Promise.all([deps.represented.get(scope, gatewaySubBusinessId), deps.represented.identityVersions(scope, gatewaySubBusinessId)]);
    return { business, history };
  } catch (e) {
    if (isForeign(e) || refusalText(e) !== null) return null;
    throw e;
  }
}

export function renderRepresentedList(v: ViewCtx, d: RepresentedListData): SafeHtml {
  const rows = d.items.map((b) => {
    const identity = _identity(b.regulatorIdentity);
    return row([
      html`<a href="${v.paths.href(`/represented/${encodeURIComponent(String(b.gatewaySubBusinessId))}`)}">${String(b.gatewaySubBusinessId)}</a>`,
      String(b.registeredName ?? ""),
      String(b.tin ?? ""),
      identity.active ? badge("active at the regulator", "ok") : badge("inactive at the regulator", "bad"),
      `version ${String(b.identityVersion)}`,
      b.cryptoFingerprint ? `version ${String(b.cryptoVersion)}` : "none",
      when(b.createdAt as string),
    ]);
  });
  return html`${d.refused ? html`<p class="flash error" role="alert">${d.refused}</p>` : EMPTY}
${table(["Id", "Registered name", "TIN", "Regulator", "Identity", "QR material", "Onboarded"], rows, "No represented businesses yet: onboard one with POST /sub-businesses.")}
${cursorPager(v.paths, "/represented", {}, d.nextCursor)}`;
}

export function renderRepresented(d: RepresentedPageData): SafeHtml {
  const b = d.business;
  const h = d.history;
  const identity = _identity(b.regulatorIdentity);
  const versions = _list(h.versions).map((x) => {
    const id = _identity(x.identity);
    return row([String(x.version), x.current ? badge("current", "ok") : "", String(x.source), id.businessName, id.tin, id.active ? "active" : "inactive", when(x.createdAt as string)]);
  });
  const reviews = _list(h.reviews).map((r) =>
    row([String(r.reviewId), _reviewBadge(String(r.status)), String(r.driftClass), _list(r.changedFields as unknown).join(", "), r.requiresProtectedMigration ? "yes" : "no", when(r.createdAt as string), when(r.decidedAt as string)]),
  );
  const migrations = _list(h.migrations).map((m) => row([String(m.migrationId), String(m.reviewId), when(m.at as string)]));
  return html`${panel(
    "Represented business",
    facts([
      ["Id", b.gatewaySubBusinessId],
      ["Registered name", b.registeredName],
      ["TIN", b.tin],
      ["Regulator business id", b.externalBusinessId],
      ["Reference", b.reference],
      ["IRN template", b.irnTemplate],
      ["At the regulator", identity.active ? badge("active", "ok") : badge("inactive: invoices are refused", "bad")],
      ["Identity version", b.identityVersion],
      ["Pending review", h.pendingReviewId ?? "none"],
      ["QR material", b.cryptoFingerprint ? `version ${String(b.cryptoVersion)} (${String(b.cryptoFingerprint)})` : "none"],
      ["Environment", b.state],
      ["Onboarded", when(b.createdAt as string)],
      ["Last change", when(b.updatedAt as string)],
    ]),
  )}
${panel("Identity versions", table(["Version", "", "Source", "Business name", "TIN", "Regulator", "Recorded"], versions))}
${panel("Identity reviews", table(["Review", "Status", "Drift", "Changed fields", "Protected migration", "Opened", "Decided"], reviews, "No reviews: the identity has not drifted."))}
${migrations.length > 0 ? panel("Protected migrations", table(["Migration", "Review", "Applied"], migrations)) : EMPTY}`;
}

// --- Internal helpers ---

function _identity(x: unknown): { businessName: string; tin: string; active: boolean } {
  const o = (typeof x === "object" && x !== null ? x : {}) as Record<string, unknown>;
  return { businessName: String(o.businessName ?? ""), tin: String(o.tin ?? ""), active: o.active === true };
}

function _list(x: unknown): ApiView[] {
  return Array.isArray(x) ? (x as ApiView[]) : [];
}

function _reviewBadge(status: string): SafeHtml {
  return badge(status, status === "pending" ? "warn" : status === "rejected" ? "bad" : "ok");
}
