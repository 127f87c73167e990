/**
 * POST /api/v1/invoice/sign over the regulator simulator with the real document ledger behind a
 * fault-injecting wrapper: every row of spec §3.2, the §4.2 rule 4 checks, idempotent replays, and
 * after each scenario the money accounted for (ledger balanced; debit + reversal, or debit held).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { REPRESENTED_BUSINESSES_COLLECTION, subKeyOf } from "../../../plugins/invoice/represented-businesses.ts";
import { DEMO_KEY, OTHER, OTHER_KEY, STORED, SUB, expectProblem, invoice, irnOf, startSigningHarness } from "./signing-helpers.ts";

const h = await startSigningHarness();
test.after(() => h.close());
test.after.each(() => {
  h.billing.clear();
  h.sim.faults.clear();
});
const signCalls = () => h.sim.state.calls("sign");

test("signed: the regulator's status and body pass through; the debit is confirmed; the same key and attempt again → 409 GW_SIGN_ATTEMPT_ALREADY_PROCESSED with the operationId, no second call", async () => {
  const before = await h.ledgerBalanced();
  const res = await h.sign(invoice("OK1"), { key: "ok1-key-0001" });
  const text = await res.text();
  assert.is(res.status, 201, text);
  assert.is(res.headers.get("content-type"), "application/json; charset=utf-8");
  assert.ok(res.headers.get("x-request-id"));
  assert.ok(h.sim.state.isSigned(irnOf("OK1")));
  const calls = signCalls();
  const again = await expectProblem(await h.sign(invoice("OK1"), { key: "ok1-key-0001" }), 409, "GW_SIGN_ATTEMPT_ALREADY_PROCESSED");
  assert.ok(again.operationId, "the operationId of the processed attempt");
  assert.is(again.retry.strategy, "CONTACT_SUPPORT");
  assert.is(signCalls(), calls, "no second regulator call");
  const after = await h.ledgerBalanced();
  assert.is(after.debits - before.debits, 1, "one debit");
  assert.is(after.reversals, before.reversals);
  assert.is(before.balanceKobo - after.balanceKobo, 5_000);
});

test("same key, different content → 409 GW_IDEMPOTENCY_CONTENT_CONFLICT (content includes attempt number and sub-business)", async () => {
  assert.is((await h.sign(invoice("CC1"), { key: "cc1-key-0001" })).status, 201);
  await expectProblem(await h.sign(invoice("CC1", { note: "changed" }), { key: "cc1-key-0001" }), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  await expectProblem(await h.sign(invoice("CC1"), { key: "cc1-key-0001", attempt: 2 }), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
});

test("same attempt number with a NEW key after completion → 409 GW_BILLING_ATTEMPT_CONFLICT with the first attempt's operationId, no regulator call, no debit", async () => {
  assert.is((await h.sign(invoice("AP1"), { key: "ap1-key-0001" })).status, 201);
  const first = await expectProblem(await h.sign(invoice("AP1"), { key: "ap1-key-0001" }), 409, "GW_SIGN_ATTEMPT_ALREADY_PROCESSED");
  const before = await h.ledgerBalanced();
  const calls = signCalls();
  const body = await expectProblem(await h.sign(invoice("AP1"), { key: "ap1-key-0002" }), 409, "GW_BILLING_ATTEMPT_CONFLICT");
  assert.is(body.operationId, first.operationId);
  assert.is(body.retry.strategy, "CONTACT_SUPPORT");
  assert.is(signCalls(), calls);
  assert.is((await h.ledgerBalanced()).debits, before.debits);
});

test("represented business and invoice checks (§4.2 rule 4), before any debit or regulator call", async () => {
  const before = await h.ledgerBalanced();
  const calls = signCalls();
  await expectProblem(await h.sign(invoice("V1"), { sub: null }), 400, "GW_SUB_BUSINESS_ID_REQUIRED");
  await expectProblem(await h.sign(invoice("V1"), { key: null }), 400, "GW_IDEMPOTENCY_KEY_REQUIRED");
  await expectProblem(await h.sign(invoice("V1"), { attempt: "0" }), 400, "GW_ATTEMPT_NUMBER_INVALID");
  await expectProblem(await h.sign(invoice("V1"), { sub: "unknown-sub" }), 404, "GW_SUB_BUSINESS_NOT_FOUND");
  await expectProblem(await h.sign(invoice("V1"), { host: OTHER, apiKey: OTHER_KEY }), 403, "GW_SUB_BUSINESS_FORBIDDEN");
  await expectProblem(await h.sign(invoice("V1", { business_id: "someone-else" })), 400, "GW_INVOICE_BUSINESS_MISMATCH");
  const tinDoc = invoice("V1");
  tinDoc.accounting_supplier_party.tin = "99999999-0009";
  await expectProblem(await h.sign(tinDoc), 400, "GW_INVOICE_SUPPLIER_TIN_MISMATCH");
  await expectProblem(await h.sign(invoice("V1", { irn: "not an irn" })), 400, "GW_INVOICE_IRN_INVALID");
  await expectProblem(await h.sign(invoice("V1", { irn: "V1-94ND90NR-20240231" })), 400, "GW_INVOICE_IRN_INVALID");
  await expectProblem(await h.sign(invoice("V1", { irn: undefined })), 400, "GW_INVOICE_IRN_INVALID");
  await expectProblem(await h.sign(invoice("V1", { irn: "V1-5A7B9C1D-20240611" })), 403, "GW_INVOICE_IRN_FORBIDDEN");
  await expectProblem(await h.sign(invoice("V1", { invoice_reference: "OTHER" })), 400, "GW_INVOICE_REFERENCE_MISMATCH");
  await expectProblem(await h.sign(invoice("V1", { fee: "1.00" })), 400, "GW_REQUEST_SERVER_FIELD_SUPPLIED");
  // On a Stored domain the sign path is the Stored intake (docs/stored-mode.md); a Pass-through-only route is 409.
  await expectProblem(await h.call("POST", "/api/v1/invoice/validate", { host: STORED, sub: SUB, body: invoice("V1") }), 409, "GW_OPERATION_MODE_CONFLICT");
  assert.is(signCalls(), calls, "regulator not called");
  assert.is((await h.ledgerBalanced()).debits, before.debits, "nothing debited");
  // A refused request claimed nothing: the same key then works.
  assert.is((await h.sign(invoice("V1"))).status, 201);
});

test("a replay is answered from the key's record even when the checks would refuse the request today (the represented business gone)", async () => {
  assert.is((await h.sign(invoice("RP1"), { key: "rp1-key-0001" })).status, 201);
  const subs = h.store.collection(REPRESENTED_BUSINESSES_COLLECTION);
  const sub = (await subs.get(subKeyOf("TEST", SUB)))!;
  assert.ok(await subs.delete(sub._id));
  try {
    await expectProblem(await h.sign(invoice("RP2"), { key: "rp2-key-0001" }), 404, "GW_SUB_BUSINESS_NOT_FOUND");
    const calls = signCalls();
    const again = await expectProblem(await h.sign(invoice("RP1"), { key: "rp1-key-0001" }), 409, "GW_SIGN_ATTEMPT_ALREADY_PROCESSED");
    assert.ok(again.operationId);
    await expectProblem(await h.sign(invoice("RP1", { note: "changed" }), { key: "rp1-key-0001" }), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
    assert.is(signCalls(), calls);
  } finally {
    await subs.insert(sub);
  }
});

test("billing unavailable before any debit → 503 GW_BILLING_SERVICE_UNAVAILABLE, regulator not called; the same-key retry signs with one debit", async () => {
  const before = await h.ledgerBalanced();
  const calls = signCalls();
  h.billing.faults = { debit: "unavailable", once: true };
  const body = await expectProblem(await h.sign(invoice("BU1"), { key: "bu1-key-0001" }), 503, "GW_BILLING_SERVICE_UNAVAILABLE");
  assert.is(body.retry.strategy, "SAME_IDEMPOTENCY_KEY");
  assert.is(signCalls(), calls, "regulator not called");
  assert.is((await h.ledgerBalanced()).debits, before.debits);
  assert.is((await h.sign(invoice("BU1"), { key: "bu1-key-0001" })).status, 201);
  assert.is((await h.ledgerBalanced()).debits, before.debits + 1);
});

test("billing answer lost after the debit committed → 503; the same-key retry replays the debit (never two debits)", async () => {
  const before = await h.ledgerBalanced();
  const calls = signCalls();
  h.billing.faults = { debit: "unavailable_after_commit", once: true };
  await expectProblem(await h.sign(invoice("BL1"), { key: "bl1-key-0001" }), 503, "GW_BILLING_SERVICE_UNAVAILABLE");
  assert.is(signCalls(), calls, "regulator not called");
  assert.is((await h.sign(invoice("BL1"), { key: "bl1-key-0001" })).status, 201);
  const after = await h.ledgerBalanced();
  assert.is(after.debits, before.debits + 1, "exactly one debit");
  assert.is(before.balanceKobo - after.balanceKobo, 5_000);
});

test("billing identity conflict → 409 GW_BILLING_ATTEMPT_CONFLICT (same IRN and attempt, different content, debit already on the ledger)", async () => {
  const before = await h.ledgerBalanced();
  h.billing.faults = { debit: "unavailable_after_commit", once: true };
  await expectProblem(await h.sign(invoice("BC1"), { key: "bc1-key-0001" }), 503, "GW_BILLING_SERVICE_UNAVAILABLE");
  const calls = signCalls();
  await expectProblem(await h.sign(invoice("BC1", { note: "other content" }), { key: "bc1-key-0002" }), 409, "GW_BILLING_ATTEMPT_CONFLICT");
  assert.is(signCalls(), calls);
  assert.is((await h.ledgerBalanced()).debits, before.debits + 1, "the one held debit only");
});

test("regulator rejects, reversal confirmed → 422 GW_SIGN_REJECTED; debit + reversal; the replay repeats it; the next attempt with a new key signs", async () => {
  const before = await h.ledgerBalanced();
  h.sim.faults.set("sign", { kind: "status", status: 400, times: 1 });
  const body = await expectProblem(await h.sign(invoice("RJ1"), { key: "rj1-key-0001" }), 422, "GW_SIGN_REJECTED");
  assert.is(body.retry.strategy, "AFTER_CORRECTION");
  let after = await h.ledgerBalanced();
  assert.is(after.debits, before.debits + 1);
  assert.is(after.reversals, before.reversals + 1);
  assert.is(after.balanceKobo, before.balanceKobo, "money returned");
  const calls = signCalls();
  await expectProblem(await h.sign(invoice("RJ1"), { key: "rj1-key-0001" }), 422, "GW_SIGN_REJECTED");
  assert.is(signCalls(), calls, "replay: no regulator call");
  assert.is((await h.sign(invoice("RJ1"), { key: "rj1-key-0002", attempt: 2 })).status, 201);
  after = await h.ledgerBalanced();
  assert.is(after.debits, before.debits + 2);
  assert.is(before.balanceKobo - after.balanceKobo, 5_000);
});

test("regulator rejects, reversal not confirmed → 503 GW_SIGN_REVERSAL_UNCONFIRMED; the debit is held (never a second one)", async () => {
  const before = await h.ledgerBalanced();
  h.sim.faults.set("sign", { kind: "status", status: 400, times: 1 });
  h.billing.faults = { reverse: "unavailable" };
  const body = await expectProblem(await h.sign(invoice("RU1"), { key: "ru1-key-0001" }), 503, "GW_SIGN_REVERSAL_UNCONFIRMED");
  assert.ok(body.operationId);
  const after = await h.ledgerBalanced();
  assert.is(after.debits, before.debits + 1);
  assert.is(after.reversals, before.reversals);
  await expectProblem(await h.sign(invoice("RU1"), { key: "ru1-key-0001" }), 503, "GW_SIGN_REVERSAL_UNCONFIRMED");
  assert.is((await h.ledgerBalanced()).debits, before.debits + 1);
});

test("signed but settlement cannot complete → 503 GW_SIGN_RECOVERY_UNAVAILABLE; signed once, debited once", async () => {
  const before = await h.ledgerBalanced();
  h.billing.faults = { confirm: "unavailable" };
  const body = await expectProblem(await h.sign(invoice("RC1"), { key: "rc1-key-0001" }), 503, "GW_SIGN_RECOVERY_UNAVAILABLE");
  assert.ok(body.operationId);
  assert.ok(h.sim.state.isSigned(irnOf("RC1")));
  const calls = signCalls();
  await expectProblem(await h.sign(invoice("RC1"), { key: "rc1-key-0001" }), 503, "GW_SIGN_RECOVERY_UNAVAILABLE");
  assert.is(signCalls(), calls);
  const after = await h.ledgerBalanced();
  assert.is(after.debits, before.debits + 1);
  assert.is(after.reversals, before.reversals);
});

const AMBIGUOUS: Array<[string, Record<string, unknown>]> = [
  ["malformed envelope", { kind: "malformed", afterProcessing: true }],
  ["empty body", { kind: "empty", afterProcessing: true }],
  ["renamed envelope", { kind: "renamed", afterProcessing: true }],
  ["ok:false", { kind: "ok_false", afterProcessing: true }],
  ["HTTP 500", { kind: "status", status: 500 }],
  ["connection reset after signing", { kind: "reset", afterProcessing: true }],
  ["timeout after signing (regulator killed mid-call)", { kind: "timeout", afterProcessing: true }],
];

for (const [name, fault] of AMBIGUOUS) {
  test(`ambiguous (${name}) → 502 GW_SIGN_OUTCOME_UNCONFIRMED with operationId; frozen; debit held, never reversed; the replay answers the same 502 without a regulator call`, async () => {
    const no = `AM${AMBIGUOUS.findIndex(([n]) => n === name)}`;
    const key = `amb-key-${no}-0001`;
    const before = await h.ledgerBalanced();
    h.sim.faults.set("sign", { ...fault, times: 1 } as never);
    const calls = signCalls();
    const first = await expectProblem(await h.sign(invoice(no), { key }), 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
    assert.ok(first.operationId);
    assert.is(first.retry.strategy, "CONTACT_SUPPORT");
    assert.is(signCalls(), calls + 1);
    const replay = await expectProblem(await h.sign(invoice(no), { key }), 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
    assert.is(replay.operationId, first.operationId);
    assert.is(signCalls(), calls + 1, "never replayed to the regulator");
    // A new key for the same attempt cannot start a second execution either.
    await expectProblem(await h.sign(invoice(no), { key: `amb-key-${no}-0002` }), 409, "GW_BILLING_ATTEMPT_CONFLICT");
    assert.is(signCalls(), calls + 1);
    const after = await h.ledgerBalanced();
    assert.is(after.debits, before.debits + 1, "debit present");
    assert.is(after.reversals, before.reversals, "not reversed");
  });
}

test("wallet declined → 402 GW_BILLING_WALLET_DECLINED, regulator not called (business `other`, balance 0)", async () => {
  const onboard = await h.tg.call("/sub-businesses", {
    method: "POST",
    host: OTHER,
    headers: { "x-api-key": OTHER_KEY, "x-idempotency-key": "onboard-other-0001" },
    body: { regulatorCredentials: { email: "multi@demo.ng", password: "demo-password-2" }, tin: "22222222-0001" },
  });
  assert.is(onboard.status, 201, await onboard.clone().text());
  const doc = invoice("WD1", { business_id: "8a4b0d3f-2c5e-4f7a-9b1c-3d4e5f6a7b02", irn: "WD1-5A7B9C1D-20240611" });
  doc.accounting_supplier_party.tin = "22222222-0001";
  const calls = signCalls();
  const body = await expectProblem(
    await h.sign(doc, { host: OTHER, apiKey: OTHER_KEY, sub: "8a4b0d3f-2c5e-4f7a-9b1c-3d4e5f6a7b02", key: "wd1-key-0001" }),
    402,
    "GW_BILLING_WALLET_DECLINED",
  );
  assert.is(body.retry.strategy, "AFTER_CORRECTION");
  assert.is(signCalls(), calls);
  const w = await h.billing.wallet("other");
  assert.is(w.balanceKobo, 0);
  assert.is(w.entries.filter((e) => e.type === "debit").length, 0);
});

test("20 identical sign requests at once → exactly one regulator sign and one debit; one 201, the others 409 GW_SIGN_ATTEMPT_ALREADY_PROCESSED with its operationId", async () => {
  const before = await h.ledgerBalanced();
  const calls = signCalls();
  h.sim.faults.set("sign", { kind: "latency", ms: 200, times: 1 });
  const answers = await Promise.all(Array.from({ length: 20 }, () => h.sign(invoice("CON1"), { key: "con1-key-0001" })));
  const texts = await Promise.all(answers.map((r) => r.text()));
  assert.is(answers.filter((r) => r.status === 201).length, 1, texts.join("\n"));
  const others = texts.filter((_, i) => answers[i]!.status !== 201).map((t) => JSON.parse(t) as { code: string; operationId: string });
  assert.ok(others.every((b) => b.code === "GW_SIGN_ATTEMPT_ALREADY_PROCESSED" && b.operationId === others[0]!.operationId), texts.join("\n"));
  assert.is(signCalls(), calls + 1, "one regulator sign");
  const after = await h.ledgerBalanced();
  assert.is(after.debits, before.debits + 1, "one debit");
});

test("20 sign requests at once, same IRN and attempt, 20 different keys → one regulator sign, one debit, the rest 409 GW_BILLING_ATTEMPT_CONFLICT", async () => {
  const before = await h.ledgerBalanced();
  const calls = signCalls();
  h.sim.faults.set("sign", { kind: "latency", ms: 200, times: 1 });
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => h.sign(invoice("CON2"), { key: `con2-key-${String(i).padStart(4, "0")}` })));
  const statuses = answers.map((r) => r.status).sort();
  assert.is(statuses.filter((s) => s === 201).length, 1, statuses.join(","));
  assert.is(statuses.filter((s) => s === 409).length, 19);
  assert.is(signCalls(), calls + 1);
  assert.is((await h.ledgerBalanced()).debits, before.debits + 1);
});

test("a concurrent duplicate waits for the first request and learns it was processed (no second execution)", async () => {
  // The harness waits up to regulator timeout + 5 s; a 1.5 s regulator latency stays within it,
  // so the duplicate sees the first one's end: signed, so 409 with its operationId.
  const calls = signCalls();
  h.sim.faults.set("sign", { kind: "latency", ms: 400, times: 1 });
  const [a, b] = await Promise.all([h.sign(invoice("DUP1"), { key: "dup1-key-0001" }), h.sign(invoice("DUP1"), { key: "dup1-key-0001" })]);
  assert.equal([a.status, b.status].sort(), [201, 409]);
  const dup = a.status === 409 ? a : b;
  assert.is(((await dup.json()) as { code: string }).code, "GW_SIGN_ATTEMPT_ALREADY_PROCESSED");
  assert.is(signCalls(), calls + 1);
});

test("only the sign route is billed: validation and reads leave the wallet unchanged", async () => {
  const before = await h.ledgerBalanced();
  const res = await h.call("POST", "/api/v1/invoice/validate", { body: invoice("UB1"), sub: SUB });
  assert.is(res.status, 200, await res.clone().text());
  const r2 = await h.call("GET", "/api/v1/invoice/resources/currencies");
  assert.is(r2.status, 200);
  assert.is((await h.ledgerBalanced()).balanceKobo, before.balanceKobo);
  void DEMO_KEY;
});

test.run();
