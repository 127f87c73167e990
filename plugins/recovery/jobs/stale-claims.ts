/**
 * Stale transmission claims: Pass-through claims `in_progress` past the stale age → `unknown`
 * (502 GW_TRANSMIT_OUTCOME_UNCONFIRMED from then on; never replayed).
 */
import type { RecoveryContext, RunSummary } from "./types.ts";

export async function markStaleClaims(c: RecoveryContext, s: RunSummary): Promise<void> {
  const { o, claims } = c;
  const page = await claims.find({ claimState: "in_progress", startedAtMs: { $lte: o.now() - o.claimStaleAfterMs } }, { limit: o.batchSize });
  for (const claim of page.items) {
    if (s.leaseLost) return;
    const marked = await claims.findOneAndUpdate(
      { _id: claim._id, owner: claim.owner, claimState: "in_progress" },
      { $set: { claimState: "unknown", detail: "stale_claim", completedAtMs: o.now() } },
    );
    if (!marked) continue;
    s.claimsUnknown++;
    c.totals.claimsUnknown++;
    c.count("stale_claims", "unknown");
    o.log.error("transmission_outcome_unconfirmed", { operationId: claim.operationId, reason: "stale_claim", alert: "immediate" });
    o.alerts?.raise({ signal: "transmit_outcome_unconfirmed", operation: "transmit", failureClass: "stale_claim", operationId: claim.operationId, code: "GW_TRANSMIT_OUTCOME_UNCONFIRMED" });
  }
}
