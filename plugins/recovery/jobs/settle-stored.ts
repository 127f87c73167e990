/**
 * Frozen Stored signs, settled against the regulator (confirm by IRN) through the Stored plugin's
 * own resolution (the kit's FROZEN_INVOICE_RESOLVER offer, which wakes the processor): it holds the
 * invoice → "signed" (the held debit is confirmed); its own "no such invoice" → "not_signed" (the
 * debit is reversed and the invoice signed again under the next attempt; the regulator refuses a
 * second sign of one IRN anyway); anything else proves nothing → an alert.
 */
import { randomUUID } from "node:crypto";
import { appendAudit } from "../../../core/directory-store.ts";
import { describeError } from "../../../core/log.ts";
import { unprovable } from "./settle-held.ts";
import type { RecoveryContext, RunSummary, SettleOutcome } from "./types.ts";

export async function settleFrozenStored(c: RecoveryContext, s: RunSummary): Promise<void> {
  const { o } = c;
  if (!o.stored) return;
  const before = new Date(o.now() - o.settleAfterMs).toISOString();
  const page = await c.invoices.find({ status: "frozen", "lastError.code": "GW_SIGN_OUTCOME_UNCONFIRMED", updatedAt: { $lte: before } }, { limit: o.batchSize });
  for (const d of page.items) {
    if (s.leaseLost) return;
    const requestId = randomUUID();
    const confirmed = await o.regulator.confirm(d.state, d.irn, { requestId });
    if (confirmed.kind === "unknown") {
      unprovable(c, d.operationId, `regulator_${confirmed.failureClass}`, s);
      continue;
    }
    const outcome: SettleOutcome = confirmed.kind === "found" ? "signed" : "not_signed";
    try {
      await o.stored.resolve({ requestId, credentialId: "recovery", actor: "recovery" }, d._id, outcome);
    } catch (e) {
      o.log.warn("recovery_stored_resolve_failed", { invoiceId: d._id, error: describeError(e) });
      continue;
    }
    if (outcome === "signed") s.confirmed++;
    else s.reversed++;
    c.count("stored_signs", outcome);
    await appendAudit(
      c.audit,
      { actor: "recovery", requestId, action: "invoice.resolve", target: { type: "operation", id: d.operationId }, changes: { invoiceId: d._id, outcome, basis: `regulator_confirm_${confirmed.kind}` } },
      o.now(),
    ).catch(() => undefined);
  }
}
