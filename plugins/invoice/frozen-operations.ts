/**
 * Frozen operations for operators (spec §3.2: an ambiguous sign or transmission is frozen, never
 * replayed automatically; support resolves it). `GET /admin/invoices/frozen` lists every source's
 * frozen operations, newest first, with one cursor across sources.
 *
 * The seam: a FrozenSource reads one kind of frozen operation from the document store (the records
 * are the invoice kit's, plugins/invoice/).
 * `frozenSources()` lists them: the Pass-through sign attempts whose fee is held (`signing_idempotency`,
 * resolved with `POST /admin/sign-attempts/{operationId}/resolution`), the Pass-through transmissions
 * whose outcome is unknown (`transmission_claims`, resolved with
 * `POST /admin/transmissions/{operationId}/resolution`) and Stored mode's frozen invoices
 * (plugins/stored-processing, status "frozen"; resolved with `POST /admin/invoices/{invoiceId}/resolution`).
 */
import type { DocumentStore, Filter } from "../../adapters/ports.ts";
import { openSignAttempts, parseAttemptKey, type SignRecord } from "./sign-attempts.ts";
import { openStoredInvoices, type InvoiceDoc } from "./stored-invoices.ts";
import { openTransmissionClaims, type ClaimDoc } from "./transmission-claims.ts";

export interface FrozenOperation {
  /** Which source: "passthrough-sign", "passthrough-transmit" or "stored-invoice". */
  kind: string;
  operationId: string;
  /** The Stored invoice's id (null for a Pass-through sign attempt). */
  invoiceId: string | null;
  businessId: string;
  state: string | null;
  domain: string | null;
  subBusinessId: string | null;
  irn: string | null;
  attemptNumber: number | null;
  /** Where the money stands: "held" (debited, neither confirmed nor reversed), … */
  money: string | null;
  /** The public code the caller was answered. */
  code: string | null;
  frozenAt: string;
  frozenAtMs: number;
  /** The operator route that records a decision for it. */
  resolveWith: string;
}

export interface FrozenQuery {
  businessId?: string;
  /** Only operations strictly older than this position (frozenAtMs desc, then operationId desc). */
  before?: { ms: number; operationId: string };
  limit: number;
}

export interface FrozenSource {
  readonly kind: string;
  /** At most `limit` operations, newest first. */
  list(query: FrozenQuery): Promise<FrozenOperation[]>;
}

/** Every source of frozen operations. */
export function frozenSources(store: DocumentStore): FrozenSource[] {
  return [passthroughSignSource(store), passthroughTransmitSource(store), storedInvoiceSource(store)];
}

/** Stored invoices the processor froze (an unprovable sign or transmission): `operationId` is the invoice's. */
export function storedInvoiceSource(store: DocumentStore): FrozenSource {
  const invoices = openStoredInvoices(store);
  return {
    kind: "stored-invoice",
    async list(q) {
      const filter: Filter = { status: "frozen" };
      if (q.businessId) filter.businessId = q.businessId;
      if (q.before) {
        const at = new Date(q.before.ms).toISOString();
        filter.$or = [{ updatedAt: { $lt: at } }, { updatedAt: at, operationId: { $lt: q.before.operationId } }];
      }
      const page = await invoices.find(filter, {
        sort: [
          { field: "updatedAt", direction: -1 },
          { field: "operationId", direction: -1 },
        ],
        limit: q.limit,
      });
      return page.items.map(_invoiceView);
    },
  };
}

/** The Pass-through sign attempts whose fee is held: outcome unprovable, or settlement unconfirmed (signing plugin). */
export function passthroughSignSource(store: DocumentStore): FrozenSource {
  const records = openSignAttempts(store);
  return {
    kind: "passthrough-sign",
    async list(q) {
      // Frozen attempts, and completed ones whose fee is still held (reversal or settlement unconfirmed).
      const filter: Filter = { money: "held" };
      if (q.businessId) filter.businessId = q.businessId;
      if (q.before)
        filter.$or = [
          { completedAtMs: { $lt: q.before.ms } },
          { completedAtMs: q.before.ms, operationId: { $lt: q.before.operationId } },
        ];
      const page = await records.find(filter, {
        sort: [
          { field: "completedAtMs", direction: -1 },
          { field: "operationId", direction: -1 },
        ],
        limit: q.limit,
      });
      return page.items.map(_signView);
    },
  };
}

/** The Pass-through transmissions whose regulator outcome is unknown (transmission plugin; never replayed). */
export function passthroughTransmitSource(store: DocumentStore): FrozenSource {
  const claims = openTransmissionClaims(store);
  return {
    kind: "passthrough-transmit",
    async list(q) {
      const filter: Filter = { claimState: "unknown" };
      if (q.businessId) filter.businessId = q.businessId;
      if (q.before)
        filter.$or = [
          { completedAtMs: { $lt: q.before.ms } },
          { completedAtMs: q.before.ms, operationId: { $lt: q.before.operationId } },
        ];
      const page = await claims.find(filter, {
        sort: [
          { field: "completedAtMs", direction: -1 },
          { field: "operationId", direction: -1 },
        ],
        limit: q.limit,
      });
      return page.items.map(_claimView);
    },
  };
}

// --- Internal helpers ---

function _claimView(c: ClaimDoc): FrozenOperation {
  const at = c.completedAtMs ?? c.startedAtMs;
  return {
    kind: "passthrough-transmit",
    operationId: c.operationId,
    invoiceId: null,
    businessId: c.businessId,
    state: c.state,
    domain: null,
    subBusinessId: c.subBusinessId,
    irn: c.irn,
    attemptNumber: null,
    // Transmission is not billed.
    money: null,
    code: "GW_TRANSMIT_OUTCOME_UNCONFIRMED",
    frozenAt: new Date(at).toISOString(),
    frozenAtMs: at,
    resolveWith: `POST /admin/transmissions/${c.operationId}/resolution`,
  };
}

function _signView(r: SignRecord): FrozenOperation {
  const k = parseAttemptKey(r.attemptKey);
  const at = r.completedAtMs ?? r.startedAtMs;
  return {
    kind: "passthrough-sign",
    operationId: r.operationId,
    invoiceId: null,
    businessId: r.businessId,
    state: k?.state ?? null,
    domain: k?.domain ?? null,
    subBusinessId: k?.subBusinessId ?? null,
    irn: k?.irn ?? null,
    attemptNumber: k?.attemptNumber ?? null,
    money: r.money ?? null,
    code: r.answer?.kind === "error" ? r.answer.code : null,
    frozenAt: new Date(at).toISOString(),
    frozenAtMs: at,
    resolveWith: `POST /admin/sign-attempts/${r.operationId}/resolution`,
  };
}

function _invoiceView(d: InvoiceDoc): FrozenOperation {
  const at = Date.parse(d.updatedAt);
  const code = d.lastError?.code ?? null;
  return {
    kind: "stored-invoice",
    operationId: d.operationId,
    invoiceId: d._id,
    businessId: d.businessId,
    state: d.state,
    domain: d.domain,
    subBusinessId: d.subBusinessId,
    irn: d.irn,
    attemptNumber: d.signAttempt,
    // A frozen sign holds its debit; a frozen transmission was signed and billed before.
    money: code === "GW_SIGN_OUTCOME_UNCONFIRMED" ? "held" : code === "GW_TRANSMIT_OUTCOME_UNCONFIRMED" ? "confirmed" : null,
    code,
    frozenAt: d.updatedAt,
    frozenAtMs: at,
    resolveWith: `POST /admin/invoices/${d._id}/resolution`,
  };
}

/** Newest first across every source, then cut to `limit`: each source is asked for `limit`. */
export async function listFrozen(sources: readonly FrozenSource[], q: FrozenQuery): Promise<{ data: FrozenOperation[]; nextCursor: string | null }> {
  const all = (await Promise.all(sources.map((s) => s.list({ ...q, limit: q.limit + 1 })))).flat();
  all.sort((a, b) => b.frozenAtMs - a.frozenAtMs || (a.operationId < b.operationId ? 1 : a.operationId > b.operationId ? -1 : 0));
  const data = all.slice(0, q.limit);
  const last = data[data.length - 1];
  return { data, nextCursor: all.length > q.limit && last ? encodeFrozenCursor(last) : null };
}

export function encodeFrozenCursor(op: Pick<FrozenOperation, "frozenAtMs" | "operationId">): string {
  return Buffer.from(JSON.stringify([op.frozenAtMs, op.operationId]), "utf8").toString("base64url");
}

/** The position a cursor names, or null when it is not one of ours. */
export function decodeFrozenCursor(cursor: string): FrozenQuery["before"] | null {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(v) && v.length === 2 && Number.isFinite(v[0]) && typeof v[1] === "string" && v[1].length <= 200)
      return { ms: v[0] as number, operationId: v[1] };
  } catch {
    // not ours
  }
  return null;
}
