/**
 * The processor marks a dispatch (step "dispatching" before the sign, "transmitting" before the
 * transmission) in a write whose answer can be lost while the write itself lands, or that lands
 * after its failure was reported (a hung store applying its queue: both found by the topology test
 * of issue 15). The regulator was certainly not called, so
 * the processor takes the mark back while it still holds the lease: the invoice is signed and
 * transmitted once, never frozen as if its outcome were unprovable.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DEMO_RAW } from "../../support/gateway.ts";
import { LATE_MS } from "../../support/store-faults.ts";
import { accepted, intakeInvoice, startStoredHarness, type StoreFault } from "./stored-helpers.ts";

/** The first processor write that sets `step` to `lost`: its answer is lost ("after": it lands) or it lands later ("late"). */
let lost: string | null = null;
let how: "after" | "late" = "after";
const fault: StoreFault = (collection, method, args) => {
  if (lost === null || collection !== "stored_invoices" || method !== "findOneAndUpdate") return null;
  const set = (args[1] as { $set?: { step?: string } }).$set;
  if (set?.step !== lost) return null;
  lost = null;
  return how;
};

const businesses = structuredClone(DEMO_RAW.businesses) as Array<{ gateway?: { domains: Array<Record<string, unknown>> } }>;
for (const b of businesses) for (const d of b.gateway?.domains ?? []) if (d.mode === "stored") d.autoTransmit = true;
const h = await startStoredHarness({ storeFault: fault, patch: { businesses } });
test.after(() => h.close());

for (const mode of ["after", "late"] as const)
  for (const step of ["dispatching", "transmitting"] as const) {
    const what = mode === "after" ? "whose answer was lost" : "that lands after its failure was reported";
    test(`a "${step}" mark ${what} is taken back: transmitted once, never frozen; one debit`, async () => {
      const before = await h.ledger();
      const signs = h.sim.state.calls("sign");
      const transmits = h.sim.state.calls("transmit");
      how = mode;
      lost = step;
      const { invoiceId } = await accepted(await h.intake(intakeInvoice(`MARK${mode[0]}${step.length}`), { key: `mark-${mode}-${step}-0001` }));
      const done = await h.waitFor(invoiceId, (inv) => inv.status === "transmitted" || inv.status === "frozen");
      assert.is(lost, null, "the fault happened");
      assert.is(done.status, "transmitted", JSON.stringify(done.lastError));
      assert.ok(h.tg.logs.some((l) => l.event === "stored_dispatch_mark_taken_back" && l.invoiceId === invoiceId && l.step === step));
      await new Promise((r) => setTimeout(r, LATE_MS + 100)); // a late mark has landed (or failed) by now
      assert.is((await h.invoice(invoiceId)).status, "transmitted", "a late mark changed nothing");
      assert.is(h.sim.state.calls("sign") - signs, 1, "signed once");
      assert.is(h.sim.state.calls("transmit") - transmits, 1, "transmitted once");
      const after = await h.ledger();
      assert.is(after.debits - before.debits, 1, "one debit");
      assert.is(after.reversals, before.reversals);
    });
  }

test.run();
