/**
 * What is still open (held sign fees, frozen Stored invoices, unknown transmissions), and how much
 * of it is past `recovery.overdueAfterMs` (the run raises `reconciliation_overdue` for it).
 */
import type { RecoveryContext } from "./types.ts";

export async function countOpen(c: RecoveryContext): Promise<Record<string, number>> {
  const { o, records, invoices, claims } = c;
  const overdueAt = o.now() - o.overdueAfterMs;
  const overdueIso = new Date(overdueAt).toISOString();
  const [heldSigns, frozenStored, unknownClaims, heldOverdue, abandonedOverdue, storedOverdue, claimsOverdue] = await Promise.all([
    records.count({ money: "held" }),
    invoices.count({ status: "frozen" }),
    claims.count({ claimState: "unknown" }),
    records.count({ money: "held", completedAtMs: { $lte: overdueAt } }),
    records.count({ status: "in_progress", startedAtMs: { $lte: overdueAt } }),
    invoices.count({ status: "frozen", updatedAt: { $lte: overdueIso } }),
    claims.count({ claimState: "unknown", completedAtMs: { $lte: overdueAt } }),
  ]);
  return {
    heldSignAttempts: heldSigns,
    frozenStoredInvoices: frozenStored,
    unknownTransmissions: unknownClaims,
    overdue: heldOverdue + abandonedOverdue + storedOverdue + claimsOverdue,
  };
}
