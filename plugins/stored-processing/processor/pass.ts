/**
 * One pass over one claimed invoice: the steps of its status model, one after another, until the
 * invoice is handed back (idle, or due again later), the lease is lost, or the store stops
 * answering. Webhooks recorded on the invoice go out first; a settlement owed comes before the next
 * step. A pass that finds "dispatching" or "transmitting" recorded by an earlier holder cannot prove
 * what the regulator did: frozen. While the processor stops, a pass hands its invoice back at its
 * next step (never between a dispatch mark and the regulator's answer).
 */
import type { Lease } from "../../../adapters/ports.ts";
import { describeError } from "../../../core/log.ts";
import type { InvoiceDoc } from "../../invoice/stored-invoices.ts";
import { reverse, settle } from "./steps/money.ts";
import { bill } from "./steps/sign.ts";
import { transmit } from "./steps/transmit.ts";
import { validate } from "./steps/validate.ts";
import { freeze } from "./transitions.ts";
import type { Pass, ProcessorRuntime, StepResult } from "./types.ts";
import { backoff, finish, statusFields, write } from "./writes.ts";

/** Steps one pass may take before it hands the invoice back (a loop guard, never reached normally). */
const MAX_STEPS = 32;

/** Runs one pass; true when it met a dependency outage (the processor then pauses its claims). */
export async function runPass(rt: ProcessorRuntime, doc: InvoiceDoc & { lease: Lease }): Promise<boolean> {
  const p: Pass = { rt, cur: doc, lease: doc.lease, flushed: false, worked: false, counted: false, settleFailed: false, outage: false };
  try {
    await _machine(p);
  } catch (e) {
    rt.o.log.error("stored_processor_pass_failed", { invoiceId: doc._id, error: describeError(e) });
    p.outage = true;
    await finish(p, {}, [], Date.now() + backoff(rt.o, p.cur.outages + 1)).catch(() => undefined);
  }
  return p.outage;
}

// --- Internal helpers ---

async function _machine(p: Pass): Promise<void> {
  const { rt } = p;
  for (let steps = 0; steps < MAX_STEPS; steps++) {
    const d = p.cur;
    if (rt.stopping() && d.step !== "dispatching" && d.step !== "transmitting") {
      await finish(p, {}, [], Date.now());
      return;
    }
    if (d.events.length > 0 && !p.flushed) {
      try {
        await rt.o.webhooks.enqueue(d, d.events);
        p.flushed = true;
      } catch (e) {
        rt.o.log.warn("stored_webhook_enqueue_failed", { invoiceId: d._id, error: describeError(e) });
        p.outage = true;
      }
    }
    const next = d.settle && !p.settleFailed ? await settle(p) : await _step(p, d);
    if (next === "done" || next === "lost" || next === "failed") return;
  }
  rt.o.log.error("stored_processor_step_limit", { invoiceId: p.cur._id, step: p.cur.step });
  await finish(p, {}, [], Date.now() + backoff(rt.o, 1));
}

/** The invoice's next step, by where the record says it is. */
function _step(p: Pass, d: InvoiceDoc): Promise<StepResult> {
  switch (d.step) {
    case "validate":
      return validate(p);
    case "bill":
      return d.status === "validated" ? write(p, { ...statusFields(d, "signing") }) : bill(p);
    case "dispatching":
      return freeze(p, "GW_SIGN_OUTCOME_UNCONFIRMED", "interrupted_sign");
    case "reverse":
      return reverse(p);
    case "transmit":
      return transmit(p);
    case "transmitting":
      return freeze(p, "GW_TRANSMIT_OUTCOME_UNCONFIRMED", "interrupted_transmit");
    case "done":
      return finish(p, {}, [], null);
  }
}
