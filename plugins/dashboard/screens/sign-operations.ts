/**
 * Pass-through operations from the records the gateway keeps (the invoice kit's collections): the
 * business's sign operations (one record per idempotency key: its billing identity, status, money,
 * and the answer's status or error code; never a body) and its transmissions (one claim per
 * represented business and IRN), newest first, 50 a page on the business's indexes; and one sign
 * operation by its operationId (another business's is not found).
 *
 * Sign records expire with their idempotency window (the TTL of `signing_idempotency`): the list
 * shows what the gateway still keeps, which the page says.
 */
import { html, type SafeHtml } from "../../../core/ui/index.ts";
import { isInvalidQueryError } from "../../../adapters/ports.ts";
import { parseAttemptKey, type SignRecord } from "../../invoice/sign-attempts.ts";
import type { ClaimDoc } from "../../invoice/transmission-claims.ts";
import { PAGE_SIZE, facts, panel, pickQuery, row, table, when, type DataDeps, type Scope, type ViewCtx } from "./data-kit.ts";
import { statusBadge } from "./invoices.ts";

export interface SignOperationsData {
  signs: SignRecord[];
  signsNext: string | null;
  transmissions: ClaimDoc[];
  transmissionsNext: string | null;
  query: Record<string, string>;
}

/** Both lists, each with its own cursor (`signs`, `transmissions`); a cursor not of this list gives an empty page. */
export async function loadSignOperations(deps: DataDeps, scope: Scope, search: string): Promise<SignOperationsData> {
  const query = pickQuery(search, ["signs", "transmissions"]);
  const [signs, transmissions] = await Promise.all([
    _page(() => deps.signAttempts.find({ businessId: scope.businessId }, { sort: [{ field: "startedAtMs", direction: -1 }], limit: PAGE_SIZE, cursor: query.signs ?? null })),
    _page(() => deps.transmissions.find({ businessId: scope.businessId }, { sort: [{ field: "startedAtMs", direction: -1 }], limit: PAGE_SIZE, cursor: query.transmissions ?? null })),
  ]);
  return { signs: signs.items, signsNext: signs.nextCursor, transmissions: transmissions.items, transmissionsNext: transmissions.nextCursor, query };
}

/** One sign operation of the business by its operationId, or null. */
export async function loadSignOperation(deps: DataDeps, scope: Scope, operationId: string): Promise<SignRecord | null> {
  if (operationId.length === 0 || operationId.length > 200) return null;
  const found = await deps.signAttempts.find({ operationId }, { limit: 5 });
  return found.items.find((r) => r.businessId === scope.businessId) ?? null;
}

export function renderSignOperations(v: ViewCtx, d: SignOperationsData): SafeHtml {
  const signRows = d.signs.map((r) => {
    const k = parseAttemptKey(r.attemptKey);
    return row([
      html`<a href="${v.paths.href(`/sign-operations/${encodeURIComponent(r.operationId)}`)}">${r.operationId}</a>`,
      k?.irn,
      k?.subBusinessId,
      k ? String(k.attemptNumber) : null,
      statusBadge(r.status === "completed" ? _answerStatus(r) : r.status),
      r.money,
      k?.state,
      when(r.startedAtMs),
    ]);
  });
  const claimRows = d.transmissions.map((c) =>
    row([c.operationId, c.irn, c.subBusinessId, statusBadge(c.claimState), c.detail, c.state, when(c.startedAtMs), when(c.completedAtMs)]),
  );
  const signsQuery: Record<string, string> = d.query.transmissions ? { transmissions: d.query.transmissions } : {};
  const claimsQuery: Record<string, string> = d.query.signs ? { signs: d.query.signs } : {};
  return html`<p class="muted">Pass-through operations as the gateway records them; sign records are kept for the idempotency window, then expire.</p>
${panel(
  "Sign operations",
  html`${table(["Operation", "IRN", "Represented business", "Attempt", "Outcome", "Money", "Environment", "Started"], signRows, "No sign operations recorded.")}${_pager(v, "signs", signsQuery, d.signsNext)}`,
)}
${panel(
  "Transmissions",
  html`${table(["Operation", "IRN", "Represented business", "State", "Detail", "Environment", "Started", "Finished"], claimRows, "No transmissions recorded.")}${_pager(v, "transmissions", claimsQuery, d.transmissionsNext)}`,
)}`;
}

export function renderSignOperation(r: SignRecord): SafeHtml {
  const k = parseAttemptKey(r.attemptKey);
  const a = r.answer;
  return panel(
    "Sign operation",
    facts([
      ["Operation id", r.operationId],
      ["IRN", k?.irn],
      ["Represented business", k?.subBusinessId],
      ["Domain", k?.domain],
      ["Environment", k?.state],
      ["Attempt number", k?.attemptNumber],
      ["Record status", statusBadge(r.status)],
      ["Money", r.money],
      ["Answer", a === null ? "none yet" : a.kind === "regulator" ? `the regulator answered HTTP ${a.status}` : `${a.code}: ${a.detail}`],
      ["Resolution", r.resolution ? `${r.resolution.outcome} by ${r.resolution.by} at ${when(r.resolution.at)} (${r.resolution.basis})` : null],
      ["Started", when(r.startedAtMs)],
      ["Finished", when(r.completedAtMs)],
    ]),
  );
}

// --- Internal helpers ---

/** A completed record's outcome: signed (regulator 2xx) or rejected (an error or a refusal). */
function _answerStatus(r: SignRecord): string {
  const a = r.answer;
  if (!a) return r.status;
  return a.kind === "regulator" && a.status < 300 ? "signed" : "rejected";
}

function _pager(v: ViewCtx, name: "signs" | "transmissions", keep: Record<string, string>, next: string | null): SafeHtml {
  return next ? html`<p><a href="${v.paths.href("/sign-operations", { ...keep, [name]: next })}" rel="next">Next page of ${name}</a></p>` : html``;
}

async function _page<T>(find: () => Promise<{ items: T[]; nextCursor: string | null }>): Promise<{ items: T[]; nextCursor: string | null }> {
  try {
    return await find();
  } catch (e) {
    if (!isInvalidQueryError(e)) throw e;
    return { items: [], nextCursor: null };
  }
}
