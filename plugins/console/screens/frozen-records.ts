/**
 * One frozen operation with every fact the recovery jobs keep about it, read from the invoice
 * kit's collections by the key its Admin API route uses (operationId; a Stored invoice's id).
 * Never the invoice body: a sign attempt's stored answer shows only its kind and code, a Stored
 * invoice's document is left out.
 */
import type { DocumentStore } from "../../../adapters/ports.ts";
import { parseAttemptKey, openSignAttempts } from "../../invoice/sign-attempts.ts";
import { openStoredInvoices } from "../../invoice/stored-invoices.ts";
import { openTransmissionClaims } from "../../invoice/transmission-claims.ts";

export const FROZEN_KINDS = ["passthrough-sign", "passthrough-transmit", "stored-invoice"] as const;
export type FrozenKind = (typeof FROZEN_KINDS)[number];

/** The outcomes an operator may record, per kind (the Admin API bodies' picklists). */
export const OUTCOMES: Record<FrozenKind, readonly string[]> = {
  "passthrough-sign": ["signed", "not_signed"],
  "passthrough-transmit": ["transmitted", "not_transmitted"],
  "stored-invoice": ["signed", "not_signed", "transmitted", "not_transmitted"],
};

export interface FrozenRecord {
  kind: FrozenKind;
  operationId: string;
  businessId: string;
  /** Whether a decision may still be recorded. */
  open: boolean;
  /** The outcomes an operator may record for this one (a frozen Stored invoice: by the step it froze in). */
  outcomes: readonly string[];
  facts: Array<[string, unknown]>;
}

export function isFrozenKind(s: string | undefined): s is FrozenKind {
  return (FROZEN_KINDS as readonly string[]).includes(s ?? "");
}

/** The record, or null when there is none. */
export async function readFrozenRecord(store: DocumentStore, kind: FrozenKind, id: string): Promise<FrozenRecord | null> {
  if (kind === "passthrough-sign") {
    const r = await openSignAttempts(store).findOne({ operationId: id });
    if (!r) return null;
    const k = parseAttemptKey(r.attemptKey);
    return {
      kind,
      operationId: r.operationId,
      businessId: r.businessId,
      open: r.money === "held",
      outcomes: OUTCOMES[kind],
      facts: [
        ["Operation ID", r.operationId],
        ["Request ID (first caller)", r.owner],
        ["Business", r.businessId],
        ["Regulator state", k?.state],
        ["Domain", k?.domain],
        ["Sub-business", k?.subBusinessId],
        ["IRN", k?.irn],
        ["Attempt number", k?.attemptNumber],
        ["Status", r.status],
        ["Phase", r.phase],
        ["Money", r.money],
        ["Answer", r.answer ? (r.answer.kind === "error" ? `error ${r.answer.code}` : `regulator HTTP ${r.answer.status}`) : null],
        ["Started", new Date(r.startedAtMs).toISOString()],
        ["Completed", r.completedAtMs === null ? null : new Date(r.completedAtMs).toISOString()],
        ["Resolution", r.resolution ? `${r.resolution.outcome} by ${r.resolution.by} at ${r.resolution.at} (${r.resolution.basis})` : null],
      ],
    };
  }
  if (kind === "passthrough-transmit") {
    const c = await openTransmissionClaims(store).findOne({ operationId: id });
    if (!c) return null;
    return {
      kind,
      operationId: c.operationId,
      businessId: c.businessId,
      open: c.claimState === "unknown",
      outcomes: OUTCOMES[kind],
      facts: [
        ["Operation ID", c.operationId],
        ["Request ID (first caller)", c.owner],
        ["Business", c.businessId],
        ["Regulator state", c.state],
        ["Sub-business", c.subBusinessId],
        ["IRN", c.irn],
        ["Claim state", c.claimState],
        ["Detail", c.detail],
        ["Started", new Date(c.startedAtMs).toISOString()],
        ["Completed", c.completedAtMs === null ? null : new Date(c.completedAtMs).toISOString()],
        ["Resolution", c.resolution ? `${c.resolution.outcome} by ${c.resolution.by} at ${c.resolution.at}` : null],
      ],
    };
  }
  const d = await openStoredInvoices(store).get(id);
  if (!d) return null;
  return {
    kind,
    operationId: d.operationId,
    businessId: d.businessId,
    open: d.status === "frozen",
    outcomes: d.lastError?.code === "GW_SIGN_OUTCOME_UNCONFIRMED" ? ["signed", "not_signed"] : ["transmitted", "not_transmitted"],
    facts: [
      ["Invoice ID", d._id],
      ["Operation ID", d.operationId],
      ["Business", d.businessId],
      ["Regulator state", d.state],
      ["Domain", d.domain],
      ["Sub-business", d.subBusinessId],
      ["IRN", d.irn],
      ["Status", d.status],
      ["Step", d.step],
      ["Sign attempt", d.signAttempt],
      ["Processor passes", d.attempts],
      ["Last error", d.lastError ? `${d.lastError.code} at ${d.lastError.at}` : null],
      ["Status history", d.statusHistory.map((h) => `${h.status} ${h.at}`).join(" → ")],
      ["Resolution", d.resolution ? `${d.resolution.outcome} by ${d.resolution.by} at ${d.resolution.at}` : null],
    ],
  };
}
