/**
 * The write that records a known outcome (a sign's record completed with its answer, a
 * transmission claim's typed outcome) is tried again while the store does not answer it
 * (core/outcome-write.ts). One lost write no longer leaves the "dispatching" mark behind, which a
 * same-key retry could only answer as an unknown outcome (502, "contact support") for a sign that
 * succeeded; a write refused on every try is still logged and alerted, after three tries.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { SignRecord } from "../../../plugins/invoice/sign-attempts.ts";
import type { ClaimDoc } from "../../../plugins/invoice/transmission-claims.ts";
import { expectProblem, invoice, irnOf, startSigningHarness } from "./signing-helpers.ts";

type Fault = "before" | "after";
/** Faults for the next outcome writes, one per try, by kind of write. */
const faults = { finish: [] as Fault[], claim: [] as Fault[] };
/** Outcome writes tried, by kind. */
const tries = { finish: 0, claim: 0 };
const h = await startSigningHarness({
  storeFault: (collection, method, args) => {
    const set = (args[1] as { $set?: Record<string, unknown> } | undefined)?.$set;
    const kind =
      collection === "signing_idempotency" && method === "updateOne" && set?.phase === "done"
        ? "finish"
        : collection === "transmission_claims" && method === "findOneAndUpdate" && typeof set?.claimState === "string"
          ? "claim"
          : null;
    if (!kind) return null;
    tries[kind]++;
    return faults[kind].shift() ?? null;
  },
});
test.after(() => h.close());

const records = () => h.store.collection<SignRecord>("signing_idempotency");
const logged = (event: string) => h.tg.logs.filter((l) => l.event === event).length;

/** The sign record of invoice `no` (its attempt key holds the IRN). */
async function recordOf(no: string): Promise<SignRecord> {
  const rec = (await records().find({}, { limit: 1_000 })).items.find((r) => r.attemptKey.includes(`|${irnOf(no)}|`));
  assert.ok(rec, `the record of ${no}`);
  return rec;
}

for (const fault of ["before", "after"] as const) {
  test(`the record's finish ${fault === "before" ? "refused" : "landed with its answer lost"} once: 201, the record completed, the same-key retry answered from it; one regulator call, one debit, nothing logged as lost`, async () => {
    const no = fault === "before" ? "OWB1" : "OWA1";
    const key = `outcome-write-${fault}-0001`;
    const ledger = await h.ledgerBalanced();
    const signs = h.sim.state.calls("sign");
    const lost = logged("signing_record_write_failed");
    tries.finish = 0;
    faults.finish = [fault];

    const first = await h.sign(invoice(no), { key });
    assert.is(first.status, 201, await first.clone().text());
    assert.is(tries.finish, 2, "tried again once");
    const stored = await recordOf(no);
    assert.is(stored.status, "completed");
    assert.is(stored.phase, "done");
    assert.is(stored.money, "confirmed");

    // A completed attempt: the same key is answered "already processed" at once, with its operationId.
    const replay = await expectProblem(await h.sign(invoice(no), { key }), 409, "GW_SIGN_ATTEMPT_ALREADY_PROCESSED");
    assert.is(replay.operationId, stored.operationId);
    assert.is(h.sim.state.calls("sign") - signs, 1, "signed once");
    assert.is((await h.ledgerBalanced()).debits - ledger.debits, 1, "one debit");
    assert.is(logged("signing_record_write_failed"), lost, "nothing logged as lost");
  });
}

test("the record's finish refused on every try: still 201, three tries, then logged as lost (the stale path freezes the record later)", async () => {
  const lost = logged("signing_record_write_failed");
  tries.finish = 0;
  faults.finish = ["before", "before", "before"];
  const res = await h.sign(invoice("OWALL"), { key: "outcome-write-all-0001" });
  assert.is(res.status, 201, await res.clone().text());
  assert.is(tries.finish, 3, "three tries, no more");
  assert.is(logged("signing_record_write_failed"), lost + 1, "logged once");
  const rec = await recordOf("OWALL");
  assert.is(rec.status, "in_progress");
  assert.is(rec.phase, "dispatching", "left at the mark, never replayed as done");
});

test("a transmission's outcome write refused once: 201, the claim recorded as succeeded, a matching request 409 with its operationId; transmitted once", async () => {
  const sign = await h.sign(invoice("OWT1"), { key: "outcome-write-t1-0001" });
  assert.is(sign.status, 201, await sign.clone().text());
  const irn = irnOf("OWT1");
  const transmits = h.sim.state.calls("transmit");
  const lost = logged("transmission_claim_write_failed");
  tries.claim = 0;
  faults.claim = ["before"];

  assert.is((await h.transmit(irn, {}, { key: "outcome-write-t1-0002" })).status, 201);
  assert.is(tries.claim, 2, "tried again once");
  const claim = await h.store.collection<ClaimDoc>("transmission_claims").findOne({ irn });
  assert.ok(claim);
  assert.is(claim.claimState, "succeeded");
  const again = await expectProblem(await h.transmit(irn, {}, { key: "outcome-write-t1-0003" }), 409, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED");
  assert.is(again.operationId, claim.operationId);
  assert.is(h.sim.state.calls("transmit") - transmits, 1, "transmitted once");
  assert.is(logged("transmission_claim_write_failed"), lost, "nothing logged as lost");
});

test.run();
