/**
 * The regulator process dies mid-call (issue 5 item 7): the simulator signs the invoice, then is
 * shut down (every socket destroyed) before its answer leaves. The attempt is frozen, the money is
 * accounted for (one debit, held, not reversed), and no replay ever reaches the regulator again.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { UUID_V7 } from "../../support/assertions.ts";
import { FEE_KOBO, OPENING_KOBO, expectProblem, invoice, irnOf, startSigningHarness } from "./signing-helpers.ts";

const h = await startSigningHarness();
test.after(() => h.close());

test("regulator killed after signing, before answering: 502 GW_SIGN_OUTCOME_UNCONFIRMED, one debit held, frozen", async () => {
  const before = await h.ledgerBalanced();
  // The simulator processes the sign, then holds the answer for 400 ms; we kill it meanwhile.
  h.sim.faults.set("sign", { kind: "latency", ms: 400, afterProcessing: true, times: 1 });
  const pending = h.sign(invoice("KILL1"), { key: "killed-mid-call-0001" });
  const deadline = Date.now() + 5_000;
  while (!h.sim.state.isSigned(irnOf("KILL1"))) {
    assert.ok(Date.now() < deadline, "the simulator never received the sign");
    await new Promise((r) => setTimeout(r, 10));
  }
  await h.sim.close();

  const problem = await expectProblem(await pending, 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
  assert.is(problem.retry.strategy, "CONTACT_SUPPORT");
  assert.match(problem.operationId, UUID_V7, "support gets an operationId (a time-ordered UUID)");

  const after = await h.ledgerBalanced();
  assert.is(after.debits - before.debits, 1, "exactly one debit for the attempt");
  assert.is(after.reversals - before.reversals, 0, "an unprovable outcome is never reversed automatically");
  assert.is(after.balanceKobo, before.balanceKobo - FEE_KOBO);
  assert.ok(after.balanceKobo <= OPENING_KOBO);

  // Replays (the simulator is gone: any regulator call would fail differently) get the same frozen answer.
  const replay = await expectProblem(await h.sign(invoice("KILL1"), { key: "killed-mid-call-0001" }), 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
  assert.is(replay.operationId, problem.operationId);
  const final = await h.ledgerBalanced();
  assert.is(final.debits, after.debits, "no second debit on replay");
});

test.run();
