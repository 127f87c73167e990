/**
 * A sign that fails before any regulator call releases its claim so the same key can be retried
 * (docs/signing-and-transmission.md). During a store outage the release itself can fail (found by the
 * topology test of issue 15): it is retried in the background, so the merchant's same-key retry
 * waits for it and then signs, instead of waiting and answering "already processed". A replay while
 * the store refuses writes is still answered from the key's record.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LATE_MS } from "../../support/store-faults.ts";
import { expectProblem, invoice, irnOf, startSigningHarness } from "./signing-helpers.ts";

/** Fails the next delete of a sign record (the claim release). */
let failRelease = false;
/** Performs the next insert of a sign record (the claim) after reporting it failed. */
let lateClaim = false;
/** Every write of sign records fails (reads still answer: a full disk, a lock held elsewhere). */
let refuseWrites = false;
const h = await startSigningHarness({
  storeFault: (collection, method) => {
    if (refuseWrites && collection === "signing_idempotency" && !["get", "findOne", "find", "count"].includes(method)) return "before";
    if (lateClaim && collection === "signing_idempotency" && method === "insert") {
      lateClaim = false;
      return "late";
    }
    if (!failRelease || collection !== "signing_idempotency" || method !== "deleteMany") return null;
    failRelease = false;
    return "before";
  },
});
test.after(() => h.close());

test("billing unavailable and the claim release failing too: 503, then the same-key retry signs once", async () => {
  const before = await h.ledgerBalanced();
  h.billing.faults = { debit: "unavailable", once: true };
  failRelease = true;
  await expectProblem(await h.sign(invoice("REL1"), { key: "release-key-0001", attempt: 1 }), 503, "GW_BILLING_SERVICE_UNAVAILABLE");
  assert.is(failRelease, false, "the release failed once");
  assert.is(h.sim.state.calls("sign"), 0, "the regulator was not called");

  const retry = await h.sign(invoice("REL1"), { key: "release-key-0001", attempt: 1 });
  assert.is(retry.status, 201, await retry.clone().text());
  assert.ok(h.sim.state.isSigned(irnOf("REL1")));
  assert.is(h.sim.state.calls("sign"), 1, "signed once");
  const after = await h.ledgerBalanced();
  assert.is(after.debits - before.debits, 1, "one debit");
});

test("a claim insert that lands after its failure was reported: 503, then the same-key retry signs once", async () => {
  const before = await h.ledgerBalanced();
  const signs = h.sim.state.calls("sign");
  lateClaim = true;
  const first = await h.sign(invoice("REL2"), { key: "release-key-0002", attempt: 1 });
  assert.is(first.status, 503, await first.clone().text());
  await new Promise((r) => setTimeout(r, LATE_MS + 50)); // the claim has landed now, after the first take-back
  const retry = await h.sign(invoice("REL2"), { key: "release-key-0002", attempt: 1 });
  assert.is(retry.status, 201, await retry.clone().text());
  assert.is(h.sim.state.calls("sign") - signs, 1, "signed once");
  assert.is((await h.ledgerBalanced()).debits - before.debits, 1, "one debit");
});

test("a replay while the store refuses writes still gets its recorded answer (a first attempt's claim is refused, then the record is read)", async () => {
  assert.is((await h.sign(invoice("REL3"), { key: "release-key-0003" })).status, 201);
  const signs = h.sim.state.calls("sign");
  refuseWrites = true;
  try {
    const again = await expectProblem(await h.sign(invoice("REL3"), { key: "release-key-0003" }), 409, "GW_SIGN_ATTEMPT_ALREADY_PROCESSED");
    assert.ok(again.operationId);
    await expectProblem(await h.sign(invoice("REL3", { note: "changed" }), { key: "release-key-0003" }), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
    await expectProblem(await h.sign(invoice("REL4"), { key: "release-key-0004" }), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  } finally {
    refuseWrites = false;
  }
  assert.is(h.sim.state.calls("sign"), signs, "no regulator call");
});

test.run();
