/**
 * Held debits no record owns: a Pass-through sign claim released after its debit (a regulator 429, a
 * lost billing answer, a failed dispatch mark) leaves the fee `debited` and waits for the merchant's
 * same-key retry. When that retry never comes, this job owns the fee: once it has been held past
 * `abandonedAfterMs` with still no sign record (and no Stored invoice) for its billing identity, the
 * regulator is asked (confirm by IRN) — its own "no such invoice" proves nothing was signed and the
 * fee is reversed; anything else (signed by some attempt, no answer, no represented business) proves
 * nothing: `recovery_unprovable`, and past `overdueAfterMs` it counts as overdue reconciliation.
 */
import { randomUUID } from "node:crypto";
import { isDependencyUnavailableError, type HeldDebit } from "../../../adapters/ports.ts";
import { appendAudit } from "../../../core/directory-store.ts";
import { describeError } from "../../../core/log.ts";
import { attemptKeyOf } from "../../invoice/sign-attempts.ts";
import type { SubBusinessDoc } from "../../invoice/represented-businesses.ts";
import { unprovable } from "./settle-held.ts";
import type { RecoveryContext, RunSummary } from "./types.ts";

export async function settleUnownedDebits(c: RecoveryContext, s: RunSummary): Promise<void> {
  const { o } = c;
  if (!o.billing.heldDebits) return;
  const before = new Date(o.now() - o.abandonedAfterMs).toISOString();
  const held = await o.billing.heldDebits(before, o.batchSize);
  for (const d of held) {
    if (s.leaseLost) return;
    await _unowned(c, d, s);
  }
}

// --- Internal helpers ---

async function _unowned(c: RecoveryContext, d: HeldDebit, s: RunSummary): Promise<void> {
  const { o } = c;
  const id = d.billingIdentity;
  const sub = await c.subs.findOne({ gatewaySubBusinessId: id.subBusinessId, businessId: d.businessId });
  if (sub && (await _owned(c, d, sub))) return;
  const requestId = randomUUID();
  const found = sub ? await o.regulator.confirm(sub.state, id.irn, { requestId }) : null;
  if (!sub || !found || found.kind !== "not_found") {
    const why = !sub ? "no_represented_business" : found?.kind === "found" ? "signed_without_record" : `regulator_${found?.kind === "unknown" ? found.failureClass : "unknown"}`;
    unprovable(c, d.entryId, why, s);
    if (Date.parse(d.updatedAt) <= o.now() - o.overdueAfterMs) s.unownedOverdue++;
    return;
  }
  // A same-key retry may have claimed the attempt meanwhile: it owns the fee then.
  if (await _owned(c, d, sub)) return;
  try {
    await o.billing.reverse(d.businessId, id, "regulator_not_signed");
  } catch (e) {
    if (!isDependencyUnavailableError(e)) unprovable(c, d.entryId, "billing_refused", s);
    o.log.warn("recovery_unowned_reverse_failed", { entryId: d.entryId, error: describeError(e) });
    return;
  }
  s.reversed++;
  c.totals.reversed++;
  c.count("unowned_debits", "reversed");
  o.log.event("recovery_unowned_debit_reversed", { entryId: d.entryId, basis: "regulator_confirm_not_found" });
  await appendAudit(
    c.audit,
    { actor: "recovery", requestId, action: "held_debit.reverse", target: { type: "operation", id: d.entryId }, changes: { basis: "regulator_confirm_not_found", money: { from: "held", to: "reversed" } } },
    o.now(),
  ).catch((e) => o.log.warn("recovery_audit_failed", { entryId: d.entryId, error: describeError(e) }));
}

/** A sign record or a Stored invoice holds this billing identity: the jobs that read those own the fee. */
async function _owned(c: RecoveryContext, d: HeldDebit, sub: SubBusinessDoc): Promise<boolean> {
  const id = d.billingIdentity;
  const attemptKey = attemptKeyOf({ state: sub.state, domain: id.domain, subBusinessId: id.subBusinessId, irn: id.irn, attemptNumber: id.attemptNumber });
  if (await c.records.findOne({ attemptKey })) return true;
  return (await c.invoices.findOne({ businessId: d.businessId, subBusinessId: id.subBusinessId, irn: id.irn })) !== null;
}
