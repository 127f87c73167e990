/**
 * The operator's decisions (admin routes): on a held Pass-through sign attempt (the same settlement
 * as the job), and on a Pass-through transmission whose outcome is unknown. A retried request with
 * the same decision gets what was recorded.
 */
import { appendAudit } from "../../../core/directory-store.ts";
import { describeError } from "../../../core/log.ts";
import { parseAttemptKey, type SignRecord } from "../../invoice/sign-attempts.ts";
import { settleHeld } from "./settle-held.ts";
import type { Decider, RecoveryContext, SettleOutcome, TransmissionOutcome, TransmissionResolution } from "./types.ts";

export async function resolveSignAttempt(c: RecoveryContext, operationId: string, outcome: SettleOutcome, by: Decider): Promise<SignRecord | "not_found" | "not_held"> {
  const r = await c.records.findOne({ operationId });
  if (!r) return "not_found";
  // The same decision again (a retried request): the recorded settlement.
  if (r.money !== "held") return r.resolution?.outcome === outcome ? r : "not_held";
  const k = parseAttemptKey(r.attemptKey);
  if (!k) return "not_found";
  const updated = await settleHeld(c, r, k, outcome, by.actor, by.requestId, "operator_decision", null);
  if (!updated) {
    const again = await c.records.findOne({ operationId });
    if (again && again.money !== "held") return again.resolution?.outcome === outcome ? again : "not_held";
    throw new Error("the settlement could not be recorded");
  }
  return updated;
}

/**
 * "transmitted" records the claim as succeeded (a matching request then answers 409 with its
 * operationId); "not_transmitted" removes the claim, so the merchant may transmit the IRN again.
 */
export async function resolveTransmission(
  c: RecoveryContext,
  operationId: string,
  outcome: TransmissionOutcome,
  by: Decider,
): Promise<TransmissionResolution | "not_found" | "not_unknown"> {
  const claim = await c.claims.findOne({ operationId });
  if (!claim) return outcome === "not_transmitted" ? _releasedBefore(c, operationId) : "not_found";
  if (claim.claimState !== "unknown") {
    // The same decision again (a retried request): what was recorded.
    if (outcome === "transmitted" && claim.resolution?.outcome === "transmitted")
      return { operationId, businessId: claim.businessId, claimState: "succeeded", resolution: claim.resolution };
    return "not_unknown";
  }
  const at = new Date(c.o.now()).toISOString();
  const resolution = { outcome, by: by.actor, at };
  if (outcome === "transmitted") {
    const done = await c.claims.findOneAndUpdate(
      { _id: claim._id, operationId, claimState: "unknown" },
      { $set: { claimState: "succeeded", detail: "operator_resolved", resolution: { outcome: "transmitted", by: by.actor, at } } },
    );
    if (!done) return resolveTransmission(c, operationId, outcome, by);
  } else if ((await c.claims.deleteMany({ _id: claim._id, operationId, claimState: "unknown" })) === 0) {
    return resolveTransmission(c, operationId, outcome, by);
  }
  c.count("transmissions", outcome);
  c.o.log.event("recovery_transmission_resolved", { operationId, outcome, by: "operator" });
  await appendAudit(
    c.audit,
    {
      actor: by.actor,
      requestId: by.requestId,
      action: "transmission.resolve",
      target: { type: "operation", id: operationId },
      // A released claim is deleted: its audit record keeps the business, to answer the same decision again.
      changes: outcome === "transmitted" ? { outcome } : { outcome, businessId: claim.businessId },
    },
    c.o.now(),
  ).catch((e) => c.o.log.warn("recovery_audit_failed", { operationId, error: describeError(e) }));
  return { operationId, businessId: claim.businessId, claimState: outcome === "transmitted" ? "succeeded" : "released", resolution };
}

// --- Internal helpers ---

/**
 * A not_transmitted decision asked again: the claim it released is gone, so the audit log answers
 * what was recorded (the rule of every resolution route: the same decision again is 200).
 */
async function _releasedBefore(c: RecoveryContext, operationId: string): Promise<TransmissionResolution | "not_found"> {
  const { items } = await c.audit.find({ "target.id": operationId, action: "transmission.resolve" }, { limit: 10 });
  const entry = items.find((e) => e.changes.outcome === "not_transmitted" && typeof e.changes.businessId === "string");
  if (!entry) return "not_found";
  return {
    operationId,
    businessId: entry.changes.businessId as string,
    claimState: "released",
    resolution: { outcome: "not_transmitted", by: entry.actor, at: entry.at },
  };
}
