/**
 * A transmission's outcome is written once the regulator has answered. When the store does not
 * answer that write (nothing written, or written with its answer lost), the processor writes it
 * again while it holds the lease: the invoice ends transmitted (or back to signed after a
 * rejection), never frozen as if its outcome were unknown, and the regulator is called once.
 * Found by the topology test on SQLite: a 4 s store hang right after a transmission froze it.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DEMO_RAW } from "../../support/gateway.ts";
import { accepted, intakeInvoice, startStoredHarness, type StoreFault } from "./stored-helpers.ts";

/** The next `left` writes that record the outcome `status` (step done) fail as `how`. */
let failing: { status: string; how: "before" | "after"; left: number } | null = null;
const fault: StoreFault = (collection, method, args) => {
  if (!failing || collection !== "stored_invoices" || method !== "findOneAndUpdate") return null;
  const set = (args[1] as { $set?: { status?: string; step?: string } }).$set;
  if (set?.status !== failing.status || set.step !== "done") return null;
  const { how } = failing;
  if (--failing.left === 0) failing = null;
  return how;
};

const businesses = structuredClone(DEMO_RAW.businesses) as Array<{ gateway?: { domains: Array<Record<string, unknown>> } }>;
for (const b of businesses) for (const d of b.gateway?.domains ?? []) if (d.mode === "stored") d.autoTransmit = true;
// A short lease: an outcome left unwritten would be frozen by the next pass within the test.
const h = await startStoredHarness({ storeFault: fault, processorConfig: { leaseMs: 1_500 }, patch: { businesses } });
test.after(() => h.close());

const settled = (inv: Record<string, any>) => inv.status === "transmitted" || inv.status === "frozen" || (inv.status === "signed" && inv.lastError);

for (const [how, times] of [
  ["before", 2],
  ["after", 1],
] as const) {
  const what = how === "before" ? `not written ${times} times` : "written with its answer lost";
  test(`a "transmitted" outcome ${what} is written again: transmitted, transmitted once at the regulator, never frozen`, async () => {
    const transmits = h.sim.state.calls("transmit");
    failing = { status: "transmitted", how, left: times };
    const { invoiceId } = await accepted(await h.intake(intakeInvoice(`OUTC${how[0]}${times}`), { key: `outcome-${how}-${times}-0001` }));
    const done = await h.waitFor(invoiceId, settled);
    assert.is(failing, null, "the fault happened");
    assert.is(done.status, "transmitted", JSON.stringify(done.lastError));
    await new Promise((r) => setTimeout(r, 2_000)); // past the lease: a pass that found it unwritten would have frozen it
    assert.is((await h.invoice(invoiceId)).status, "transmitted");
    assert.is(h.sim.state.calls("transmit") - transmits, 1, "transmitted once");
    assert.not.ok(h.tg.logs.some((l) => l.event === "stored_invoice_frozen" && l.invoiceId === invoiceId));
  });
}

test("a rejection's outcome not written is written again: back to signed with the regulator's code, transmitted once", async () => {
  const transmits = h.sim.state.calls("transmit");
  h.sim.faults.set("transmit", { kind: "status", status: 400, handler: "validation_failed", times: 1 });
  failing = { status: "signed", how: "before", left: 1 };
  const { invoiceId } = await accepted(await h.intake(intakeInvoice("OUTCREJ"), { key: "outcome-rejected-0001" }));
  const done = await h.waitFor(invoiceId, settled);
  assert.is(failing, null, "the fault happened");
  assert.is(done.status, "signed");
  assert.is(done.lastError.code, "GW_REQUEST_VALIDATION_FAILED");
  await new Promise((r) => setTimeout(r, 2_000));
  assert.is((await h.invoice(invoiceId)).status, "signed");
  assert.is(h.sim.state.calls("transmit") - transmits, 1, "transmitted once");
});

test.run();
