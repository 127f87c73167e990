/**
 * The transitions several steps share: rejected (terminal, the IRN freed), frozen (an outcome that
 * cannot be proved: never replayed), a dependency outage (the invoice waits, its budget untouched),
 * and the dispatch mark recorded before the regulator is called.
 */
import type { GwCode } from "../../../core/errors/catalog.ts";
import { OUTCOME_WRITE_TRIES } from "../../../core/outcome-write.ts";
import type { InvoiceDoc, Step } from "../../invoice/stored-invoices.ts";
import type { Pass, StepResult } from "./types.ts";
import { backoff, finish, lastErrorOf, statusFields, write } from "./writes.ts";

export async function reject(p: Pass, code: string, regulatorMessage: string | undefined, reason: string, extra: Partial<InvoiceDoc> = {}): Promise<StepResult> {
  const d = p.cur;
  const lastError = lastErrorOf(code, regulatorMessage);
  p.rt.o.log.event("stored_invoice_rejected", { invoiceId: d._id, operationId: d.operationId, code, reason });
  return finish(
    p,
    { ...statusFields(d, "rejected"), step: "done", lastError, reverseFor: null, ...extra },
    p.rt.o.webhooks.event(d, "invoice.rejected", "rejected", lastError.at, lastError),
    null,
    ["irnLock"],
  );
}

export async function freeze(p: Pass, code: GwCode, reason: string): Promise<StepResult> {
  const d = p.cur;
  const { o } = p.rt;
  const lastError = lastErrorOf(code);
  o.log.error("stored_invoice_frozen", { invoiceId: d._id, operationId: d.operationId, code, reason, alert: "immediate" });
  o.alerts?.raise({
    signal: code === "GW_TRANSMIT_OUTCOME_UNCONFIRMED" ? "transmit_outcome_unconfirmed" : "sign_outcome_unconfirmed",
    dependency: `regulator:${d.state}`,
    operation: code === "GW_TRANSMIT_OUTCOME_UNCONFIRMED" ? "transmit" : "sign",
    failureClass: reason,
    operationId: d.operationId,
    code,
  });
  return finish(p, { ...statusFields(d, "frozen"), step: "done", lastError }, o.webhooks.event(d, "invoice.frozen", "frozen", lastError.at, lastError), null);
}

/** A dependency outage: record where the invoice waits, back off (the budget is untouched). */
export async function outage(p: Pass, code: string, set: Partial<InvoiceDoc>): Promise<StepResult> {
  p.outage = true;
  const outages = p.cur.outages + 1;
  p.rt.o.log.warn("stored_dependency_backoff", { invoiceId: p.cur._id, code, outages, status: set.status ?? p.cur.status });
  return finish(p, { ...set, outages, lastError: lastErrorOf(code) }, [], Date.now() + backoff(p.rt.o, outages));
}

/**
 * Marks a dispatch (`step`) before the regulator is called. When the store does not acknowledge the
 * mark, it may have landed or may still land (a hung server applies its queue when it resumes), but
 * the regulator was certainly not called: a fence write, while the lease is still ours, moves the
 * invoice back to `back` past both revisions (rev + 2), so a mark that landed is undone and one that
 * lands later fails its compare-and-set. Otherwise the next pass would freeze an invoice that was
 * never sent. The pass then ends with a backoff.
 */
export async function mark(p: Pass, step: "dispatching" | "transmitting", back: Step, set: Partial<InvoiceDoc> = {}): Promise<StepResult> {
  const before = p.cur.rev;
  const marked = await write(p, { ...set, step });
  if (marked !== "failed") return marked;
  const { rt } = p;
  const id = p.cur._id;
  const ours = { "lease.owner": rt.owner, "lease.until": p.lease.until };
  const fenced = (d: InvoiceDoc | null | undefined): boolean => !!d && d.rev === before + 2 && d.step === back && d.lease?.owner === rt.owner;
  // As many tries as an outcome write gets.
  for (let i = 0; i < OUTCOME_WRITE_TRIES; i++) {
    await new Promise((r) => setTimeout(r, 100 * (i + 1)));
    let fresh: InvoiceDoc | null | undefined = await rt.invoices
      .findOneAndUpdate({ _id: id, rev: { $in: [before, before + 1] }, ...ours }, { $set: { step: back, rev: before + 2, updatedAt: new Date().toISOString() } })
      .catch(() => undefined);
    // Not answered, or nothing matched: an earlier fence may have landed; see what is stored.
    if (!fenced(fresh)) fresh = await rt.invoices.get(id).catch(() => undefined);
    if (fresh === undefined) continue;
    if (!fenced(fresh)) {
      if (!fresh || fresh.lease?.owner !== rt.owner || fresh.lease.until !== p.lease.until) {
        // The lease ended before the mark was known: whoever holds the invoice now may find the
        // mark (it may land late) and freeze it; this says why.
        rt.o.log.warn("stored_dispatch_mark_unresolved", { invoiceId: id, step, lease: "lost" });
        return "lost";
      }
      continue; // still at `before` or `before + 1`: fence again
    }
    p.cur = fresh!;
    rt.o.log.warn("stored_dispatch_mark_taken_back", { invoiceId: id, step });
    p.outage = true;
    return finish(p, {}, [], Date.now() + backoff(rt.o, p.cur.outages + 1));
  }
  // Still unknown: the lease expires and the next pass freezes the invoice (it cannot prove more).
  rt.o.log.warn("stored_dispatch_mark_unresolved", { invoiceId: id, step });
  return "failed";
}
