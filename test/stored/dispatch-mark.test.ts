/**
 * The processor marks a dispatch (step "dispatching" before the sign, "transmitting" before the
 * transmission) in a write whose answer can be lost while the write itself lands (a store that
 * answers late: found by the topology test of issue 15). The regulator was certainly not called, so
 * the processor takes the mark back while it still holds the lease: the invoice is signed and
 * transmitted once, never frozen as if its outcome were unprovable.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DEMO_RAW } from "../support/gateway.ts";
import { accepted, intakeInvoice, startStoredHarness, type StoreFault } from "./stored-helpers.ts";

/** Loses the answer (the write lands) of the first processor write that sets `step` to `lost`. */
let lost: string | null = null;
const fault: StoreFault = (collection, method, args) => {
  if (lost === null || collection !== "stored_invoices" || method !== "findOneAndUpdate") return null;
  const set = (args[1] as { $set?: { step?: string } }).$set;
  if (set?.step !== lost) return null;
  lost = null;
  return "after";
};

const businesses = structuredClone(DEMO_RAW.businesses) as Array<{ gateway?: { domains: Array<Record<string, unknown>> } }>;
for (const d of businesses[0]!.gateway!.domains) if (d.mode === "stored") d.autoTransmit = true;
const h = await startStoredHarness({ storeFault: fault, patch: { businesses } });
test.after(() => h.close());

for (const step of ["dispatching", "transmitting"] as const) {
  test(`a "${step}" mark whose answer was lost is taken back: transmitted once, never frozen; one debit`, async () => {
    const before = await h.ledger();
    const signs = h.sim.state.calls("sign");
    const transmits = h.sim.state.calls("transmit");
    lost = step;
    const { invoiceId } = await accepted(await h.intake(intakeInvoice(`MARK${step.length}`), { key: `mark-${step}-0001` }));
    const done = await h.waitFor(invoiceId, (inv) => inv.status === "transmitted" || inv.status === "frozen");
    assert.is(lost, null, "the answer of the mark was lost");
    assert.is(done.status, "transmitted", JSON.stringify(done.lastError));
    assert.ok(h.tg.logs.some((l) => l.event === "stored_dispatch_mark_taken_back" && l.invoiceId === invoiceId && l.step === step));
    assert.is(h.sim.state.calls("sign") - signs, 1, "signed once");
    assert.is(h.sim.state.calls("transmit") - transmits, 1, "transmitted once");
    const after = await h.ledger();
    assert.is(after.debits - before.debits, 1, "one debit");
    assert.is(after.reversals, before.reversals);
  });
}

test.run();
