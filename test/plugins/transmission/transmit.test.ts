/**
 * POST /api/v1/invoice/transmit/:irn over the regulator simulator: durable claims (spec §3.3),
 * the `{}` body rule, concurrency (one regulator transmission per claim) and ambiguous outcomes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { UUID_V7 } from "../../support/assertions.ts";
import { STORED, expectProblem, invoice, irnOf, startSigningHarness } from "../signing/signing-helpers.ts";
import type { ClaimDoc } from "../../../plugins/invoice/transmission-claims.ts";

const h = await startSigningHarness();
test.after(() => h.close());
test.after.each(() => h.sim.faults.clear());
const tCalls = () => h.sim.state.calls("transmit");

async function signed(no: string): Promise<string> {
  const res = await h.sign(invoice(no), { key: `t-sign-${no}-0001` });
  assert.is(res.status, 201, await res.clone().text());
  return irnOf(no);
}

test("transmits once (regulator answer passed through); a matching request → 409 GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED with the operationId, no dispatch", async () => {
  const irn = await signed("TR1");
  const res = await h.transmit(irn);
  const text = await res.text();
  assert.is(res.status, 201, text);
  assert.equal(JSON.parse(text), { code: 201, data: { ok: true } });
  assert.ok(h.sim.state.isTransmitted(irn));
  const calls = tCalls();
  const again = await expectProblem(await h.transmit(irn), 409, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED");
  assert.match(again.operationId, UUID_V7);
  assert.is(again.retry.strategy, "DO_NOT_RETRY");
  const withKey = await expectProblem(await h.transmit(irn, {}, { key: "tr1-key-0001" }), 409, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED");
  assert.is(withKey.operationId, again.operationId);
  assert.is(tCalls(), calls);
});

test("body must be exactly {} → 400 GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY; header and IRN checks; Stored domain → 409", async () => {
  const irn = await signed("TR2");
  const calls = tCalls();
  await expectProblem(await h.transmit(irn, { a: 1 }), 400, "GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY");
  await expectProblem(await h.transmit(irn, [] as unknown), 400, "GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY");
  await expectProblem(await h.transmit(irn, {}, { sub: null }), 400, "GW_SUB_BUSINESS_ID_REQUIRED");
  await expectProblem(await h.transmit(irn, {}, { sub: "nobody" }), 404, "GW_SUB_BUSINESS_NOT_FOUND");
  await expectProblem(await h.transmit("bad-irn"), 400, "GW_INVOICE_IRN_INVALID");
  await expectProblem(await h.transmit("TR2-5A7B9C1D-20240611"), 403, "GW_INVOICE_IRN_FORBIDDEN");
  await expectProblem(await h.transmit(irn, {}, { host: STORED }), 409, "GW_OPERATION_MODE_CONFLICT");
  assert.is(tCalls(), calls);
  assert.is((await h.transmit(irn)).status, 201);
});

test("10 concurrent transmits of one IRN → exactly one regulator transmission; the others 409 with the same operationId", async () => {
  const irn = await signed("TR3");
  const calls = tCalls();
  h.sim.faults.set("transmit", { kind: "latency", ms: 200, times: 1 });
  const answers = await Promise.all(Array.from({ length: 10 }, () => h.transmit(irn)));
  const ok = answers.filter((r) => r.status === 201);
  assert.is(ok.length, 1);
  const ids = new Set<string>();
  for (const r of answers.filter((r) => r.status !== 201)) ids.add((await expectProblem(r, 409, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED")).operationId);
  assert.is(ids.size, 1);
  assert.is(tCalls(), calls + 1);
});

for (const [name, fault] of [
  ["malformed", { kind: "malformed", afterProcessing: true }],
  ["reset after processing", { kind: "reset", afterProcessing: true }],
  ["HTTP 503", { kind: "status", status: 503 }],
] as const) {
  test(`unclassifiable dispatch (${name}) → 502 GW_TRANSMIT_OUTCOME_UNCONFIRMED with operationId; claim unknown; never replayed`, async () => {
    const irn = await signed(`TU${name.length}`);
    h.sim.faults.set("transmit", { ...fault, times: 1 } as never);
    const calls = tCalls();
    const first = await expectProblem(await h.transmit(irn), 502, "GW_TRANSMIT_OUTCOME_UNCONFIRMED");
    assert.ok(first.operationId);
    const again = await expectProblem(await h.transmit(irn), 502, "GW_TRANSMIT_OUTCOME_UNCONFIRMED");
    assert.is(again.operationId, first.operationId);
    assert.is(tCalls(), calls + 1);
  });
}

test("regulator rejection (IRN never signed) → its mapped error; the claim is recorded as rejected (409 afterwards)", async () => {
  const irn = irnOf("NEVERSIGNED1");
  await expectProblem(await h.transmit(irn), 404, "GW_INVOICE_NOT_FOUND");
  const calls = tCalls();
  await expectProblem(await h.transmit(irn), 409, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED");
  assert.is(tCalls(), calls);
});

test("a typed rejection, cause fixed: the same key (or none) → 409; a NEW key is a new attempt that transmits (new operationId, the rejected one kept)", async () => {
  const irn = irnOf("FIXED1");
  const rejected = await expectProblem(await h.transmit(irn, {}, { key: "fixed1-key-0001" }), 404, "GW_INVOICE_NOT_FOUND");
  assert.ok(rejected.operationId);
  // The merchant fixes the cause: the invoice is signed now.
  assert.is((await h.sign(invoice("FIXED1"), { key: "t-sign-FIXED1-0001" })).status, 201);
  const calls = tCalls();
  await expectProblem(await h.transmit(irn, {}, { key: "fixed1-key-0001" }), 409, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED");
  await expectProblem(await h.transmit(irn), 409, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED");
  assert.is(tCalls(), calls, "nothing dispatched for the same key or no key");
  const res = await h.transmit(irn, {}, { key: "fixed1-key-0002" });
  assert.is(res.status, 201, await res.clone().text());
  assert.ok(h.sim.state.isTransmitted(irn));
  const after = await expectProblem(await h.transmit(irn, {}, { key: "fixed1-key-0003" }), 409, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED");
  assert.is.not(after.operationId, rejected.operationId, "the new attempt has its own operationId");
  const claim = await h.store.collection<ClaimDoc>("transmission_claims").findOne({ irn });
  assert.is(claim?.claimState, "succeeded");
  assert.equal(claim?.rejectedAttempts?.map((a) => a.operationId), [rejected.operationId], "the rejected attempt is kept");
});

test("a regulator throw (throttled: certainly not transmitted) releases the claim; the retry transmits", async () => {
  const irn = await signed("TR5");
  h.sim.faults.set("transmit", { kind: "rate_limit", retryAfter: 1, times: 1 });
  await expectProblem(await h.transmit(irn), 429, "GW_RATE_LIMIT_EXCEEDED");
  assert.is((await h.transmit(irn)).status, 201);
});

test.run();
