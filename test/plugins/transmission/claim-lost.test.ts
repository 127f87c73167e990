/**
 * A transmission claim whose insert landed but whose answer the store lost, or that landed after its
 * failure was reported (found by the topology test of issue 15): the request answers 503 (nothing dispatched) and the claim is taken back, so the
 * merchant's same-key retry transmits — once — instead of answering "in progress" for a claim that
 * would never dispatch and later turn "unknown".
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LATE_MS } from "../../support/store-faults.ts";
import { expectProblem, invoice, irnOf, startSigningHarness } from "../signing/signing-helpers.ts";

/** Faults to apply once each, by `collection.method`: "after" loses the answer of a write that lands, "before" refuses it, "late" performs it later. */
const once = new Map<string, "before" | "after" | "late">();
/** While true, every take-back (delete) of a claim is refused. */
let refuseTakeBack = false;
const h = await startSigningHarness({
  storeFault: (collection, method) => {
    if (refuseTakeBack && collection === "transmission_claims" && method === "deleteMany") return "before";
    const f = once.get(`${collection}.${method}`);
    if (f) once.delete(`${collection}.${method}`);
    return f ?? null;
  },
});
test.after(() => h.close());
const transmits = () => h.sim.state.calls("transmit");

async function signed(no: string): Promise<string> {
  const res = await h.sign(invoice(no), { key: `cl-sign-${no}-0001` });
  assert.is(res.status, 201, await res.clone().text());
  return irnOf(no);
}

test("the claim insert's answer lost: 503, regulator not called; the same-key retry transmits once", async () => {
  const irn = await signed("CL1");
  const before = transmits();
  once.set("transmission_claims.insert", "after");
  await expectProblem(await h.transmit(irn, {}, { key: "cl-transmit-0001" }), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  assert.is(transmits(), before, "nothing dispatched");
  assert.is((await h.transmit(irn, {}, { key: "cl-transmit-0001" })).status, 201);
  assert.is(transmits() - before, 1, "transmitted once");
  assert.ok(h.sim.state.isTransmitted(irn));
});

test("…and the store refusing the take-back too: the same-key retry waits for the background take-back, then transmits once", async () => {
  const irn = await signed("CL2");
  const before = transmits();
  once.set("transmission_claims.insert", "after");
  once.set("transmission_claims.deleteMany", "before");
  await expectProblem(await h.transmit(irn, {}, { key: "cl-transmit-0002" }), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  assert.is(once.size, 0, "both faults happened");
  assert.is((await h.transmit(irn, {}, { key: "cl-transmit-0002" })).status, 201);
  assert.is(transmits() - before, 1, "transmitted once");
});

test("a claim insert that lands after its failure was reported: the same-key retry waits for the repeated take-back, then transmits once", async () => {
  const irn = await signed("CL4");
  const before = transmits();
  once.set("transmission_claims.insert", "late");
  await expectProblem(await h.transmit(irn, {}, { key: "cl-transmit-0004" }), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  await new Promise((r) => setTimeout(r, LATE_MS + 50)); // the claim has landed now, after its take-back's first run
  assert.is((await h.transmit(irn, {}, { key: "cl-transmit-0004" })).status, 201);
  assert.is(transmits() - before, 1, "transmitted once");
});

test("while the claim cannot be taken back, another key gets 409 at once (only the same key waits); once it can, the same key transmits", async () => {
  const irn = await signed("CL3");
  const before = transmits();
  once.set("transmission_claims.insert", "after");
  refuseTakeBack = true;
  await expectProblem(await h.transmit(irn, {}, { key: "cl-transmit-0003" }), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  await expectProblem(await h.transmit(irn, {}, { key: "cl-transmit-other" }), 409, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED");
  refuseTakeBack = false;
  assert.is((await h.transmit(irn, {}, { key: "cl-transmit-0003" })).status, 201, "the background take-back landed while the retry waited");
  assert.is(transmits() - before, 1, "transmitted once");
});

test.run();
