/**
 * The merchant client against a real gateway over HTTP (Pass-through domain, regulator simulator,
 * the real ledger behind the fault-injecting wrapper): every retry strategy through a real fault —
 * 429 with Retry-After from the regulator, capacity 503, billing unavailable, an unconfirmed
 * outcome, a confirmed rejection and the next attempt, both §7.2 exceptions, a lost rotation
 * answer — with the money checked afterwards from the operator's wallet and the ledger invariant.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isProblemError, type ProblemError } from "../../client/index.ts";
import type { RunningServer } from "../../core/server.ts";
import { startSigningHarness, invoice, irnOf, SUB, type SigningHarness } from "../plugins/signing/signing-helpers.ts";
import { until } from "../support/assertions.ts";
import { gatewayClient, recorder, startFaultyProxy, testRuntime, wallet } from "./client-helpers.ts";

const FEE = 50;
let h: SigningHarness;
let server: RunningServer;

test.before(async () => {
  h = await startSigningHarness({ patch: { limits: { capacity: { perDomain: 1, retryAfterSeconds: 1 } } } });
  server = await h.tg.listen();
});
test.after(async () => {
  await h.close();
});
test.after.each(() => {
  h.sim.faults.clear();
  h.billing.clear();
});

async function rejection<E = ProblemError>(p: Promise<unknown>): Promise<E> {
  try {
    await p;
  } catch (e) {
    return e as E;
  }
  throw new Error("expected the call to fail");
}

const debits = (w: Awaited<ReturnType<typeof wallet>>) => w.entries.filter((e) => e.type === "debit").length;
const reversals = (w: Awaited<ReturnType<typeof wallet>>) => w.entries.filter((e) => e.type === "reversal").length;

test("reads and the onboarding replay: typed answers, the same key answers the same represented business", async () => {
  const { records, onAttempt } = recorder();
  const gw = gatewayClient(server.url, undefined, { onAttempt });
  const list = await gw.subBusinesses.list({ limit: 10 });
  assert.is(list.data.data[0]!.gatewaySubBusinessId, SUB, "the harness onboarded the demo taxpayer");
  const again = await gw.subBusinesses.onboard(
    { regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } },
    { idempotencyKey: "onboard-signing-0001" },
  );
  assert.is(again.status, 200, "a replay of the harness's onboarding");
  assert.is(again.data.gatewaySubBusinessId, SUB);
  assert.is(again.idempotencyKey, "onboard-signing-0001");
  const one = await gw.subBusinesses.get(SUB);
  assert.is(one.data.tin, "12345678-0001");
  const versions = await gw.subBusinesses.identityVersions(SUB);
  assert.is(versions.data.currentVersion, 1);
  const reverified = await gw.subBusinesses.reverify(SUB, { regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } });
  assert.is(reverified.data.status, "unchanged");
  assert.match(reverified.idempotencyKey!, /^gh-[0-9a-f-]{36}$/, "a generated key");
  const currencies = await gw.invoices.resource("currencies");
  assert.ok(Array.isArray(currencies.data.data), "the regulator's list, relayed");
  assert.is(records.length, 6);
  for (const r of records) {
    assert.ok(r.ok && r.send === 1 && r.next === "return");
    assert.match(r.requestId!, /^[0-9a-f-]{36}$/, "the gateway's request id stored with the key");
  }
  assert.is(records[1]!.idempotencyKey, "onboard-signing-0001");
});

test("SAME_IDEMPOTENCY_KEY: billing unavailable once → the client resends the same key, attempt number and bytes; one debit", async () => {
  const before = await wallet(server.url);
  h.billing.faults = { debit: "unavailable", once: true };
  const { records, onAttempt } = recorder();
  const { runtime, waits } = testRuntime();
  const gw = gatewayClient(server.url, undefined, { onAttempt, runtime });
  const res = await gw.invoices.sign(SUB, invoice("CL001"));
  assert.is(res.status, 201);
  assert.is(res.data.code, 201);
  assert.is(res.sends, 2);
  assert.is(waits.length, 1, "one backoff wait");
  assert.equal(records.map((r) => [r.code, r.next]), [["GW_BILLING_SERVICE_UNAVAILABLE", "retry"], [null, "return"]]);
  assert.ok(records.every((r) => r.idempotencyKey === res.idempotencyKey && r.attemptNumber === 1), "one key and attempt number for the operation");
  assert.is(new Set(res.requestIds).size, 2, "each send has its own request id, all kept");
  assert.is(h.billing.injected.debit, 1);
  const after = await wallet(server.url);
  assert.is(debits(after) - debits(before), 1, "one debit");
  assert.is(Math.round((before.balance - after.balance) * 100), FEE * 100, "charged once");
  assert.is(h.sim.state.calls("sign") > 0, true);
  await h.ledgerBalanced();
});

test("BACKOFF: the regulator throttles (429, Retry-After 1) → GW_RATE_LIMIT_EXCEEDED; the client waits ≥ 1 s and resends; charged once", async () => {
  const before = await wallet(server.url);
  const calls = h.sim.state.calls("sign");
  h.sim.faults.set("sign", { kind: "rate_limit", retryAfter: 1, times: 1 });
  const { records, onAttempt } = recorder();
  const { runtime, waits } = testRuntime(true);
  const gw = gatewayClient(server.url, undefined, { onAttempt, runtime });
  const res = await gw.invoices.sign(SUB, invoice("CL002"));
  assert.is(res.status, 201);
  assert.equal(records.map((r) => [r.status, r.code]), [[429, "GW_RATE_LIMIT_EXCEEDED"], [201, null]]);
  assert.ok(waits[0]! >= 1_000, `waited at least Retry-After: ${waits[0]} ms`);
  assert.is(h.sim.state.calls("sign") - calls, 2, "throttled once, signed once");
  const after = await wallet(server.url);
  assert.is(debits(after) - debits(before), 1, "the throttled attempt's debit was kept and reused, never a second");
  assert.is(reversals(after), reversals(before));
  assert.is(Math.round((before.balance - after.balance) * 100), FEE * 100);
  await h.ledgerBalanced();
});

test("BACKOFF: capacity 503 while another sign holds the domain's slot → waits Retry-After and resends; each invoice charged once", async () => {
  const before = await wallet(server.url);
  h.sim.faults.set("sign", { kind: "latency", ms: 900, times: 1 });
  const { records, onAttempt } = recorder();
  const { runtime, waits } = testRuntime(true);
  const calls = h.sim.state.calls("sign");
  const holder = gatewayClient(server.url).invoices.sign(SUB, invoice("CL003"));
  // The holder is at the regulator (held 900 ms) and keeps the domain's one slot until it answers.
  await until(() => h.sim.state.calls("sign") > calls);
  const gw = gatewayClient(server.url, undefined, { onAttempt, runtime });
  const res = await gw.invoices.sign(SUB, invoice("CL004"));
  assert.is((await holder).status, 201);
  assert.is(res.status, 201);
  assert.is(records[0]!.code, "GW_GATEWAY_CAPACITY_EXCEEDED");
  assert.ok(waits[0]! >= 1_000, "Retry-After 1 s (limits.capacity.retryAfterSeconds)");
  assert.is(records.at(-1)!.ok, true);
  const after = await wallet(server.url);
  assert.is(debits(after) - debits(before), 2, "two invoices, two debits");
  assert.is(Math.round((before.balance - after.balance) * 100), 2 * FEE * 100);
  await h.ledgerBalanced();
});

test("CONTACT_SUPPORT: an unprovable sign (malformed success) → GW_SIGN_OUTCOME_UNCONFIRMED, never resent; one held debit", async () => {
  const before = await wallet(server.url);
  const calls = h.sim.state.calls("sign");
  h.sim.faults.set("sign", { kind: "malformed", times: 1 });
  const { records, onAttempt } = recorder();
  const gw = gatewayClient(server.url, undefined, { onAttempt });
  const err = await rejection(gw.invoices.sign(SUB, invoice("CL005")));
  assert.ok(isProblemError(err));
  assert.is(err.code, "GW_SIGN_OUTCOME_UNCONFIRMED");
  assert.is(err.status, 502);
  assert.is(err.strategy, "CONTACT_SUPPORT");
  assert.ok(err.contactSupport);
  assert.ok(err.operationId, "the operation id for support");
  assert.is(err.sends, 1, "never resubmitted");
  assert.is(err.requestId, records[0]!.requestId);
  assert.is(h.sim.state.calls("sign") - calls, 1);
  const after = await wallet(server.url);
  assert.is(debits(after) - debits(before), 1, "one debit, held for support");
  assert.is(reversals(after), reversals(before), "not reversed: the outcome is unknown");
  await h.ledgerBalanced();
});

test("AFTER_CORRECTION → signWithNextAttempt: the regulator rejects (fee reversed); the corrected invoice goes as attempt 2 with a new key", async () => {
  const before = await wallet(server.url);
  const gw = gatewayClient(server.url);
  const bad = invoice("CL006", { invoice_type_code: "383" });
  const err = await rejection(gw.invoices.sign(SUB, bad));
  assert.is(err.code, "GW_SIGN_REJECTED");
  assert.is(err.strategy, "AFTER_CORRECTION");
  assert.is(err.sends, 1);
  assert.is(err.attemptNumber, 1);
  const next = await gw.invoices.signWithNextAttempt(SUB, err, invoice("CL006"));
  assert.is(next.status, 201);
  assert.is(next.attemptNumber, 2);
  assert.not.equal(next.idempotencyKey, err.idempotencyKey, "a new key for the new attempt");
  const after = await wallet(server.url);
  assert.is(debits(after) - debits(before), 2);
  assert.is(reversals(after) - reversals(before), 1);
  assert.is(Math.round((before.balance - after.balance) * 100), FEE * 100, "net: one fee, for the signed attempt");
  await h.ledgerBalanced();

  // Anything but a confirmed rejection is refused: nothing may be resubmitted after an unknown outcome.
  h.sim.faults.set("sign", { kind: "malformed", times: 1 });
  const unknown = await rejection(gw.invoices.sign(SUB, invoice("CL007")));
  assert.is(unknown.code, "GW_SIGN_OUTCOME_UNCONFIRMED");
  assert.throws(() => gw.invoices.signWithNextAttempt(SUB, unknown, invoice("CL007")), /GW_SIGN_REJECTED/);
});

test("DO_NOT_RETRY, and exception 2: a reused onboarding key with other content → CONTACT_SUPPORT, one send", async () => {
  const gw = gatewayClient(server.url);
  const err = await rejection(
    gw.subBusinesses.onboard({ regulatorCredentials: { email: "multi@demo.ng", password: "demo-password-2" }, tin: "22222222-0001" }, { idempotencyKey: "onboard-signing-0001" }),
  );
  assert.is(err.code, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  assert.is(err.returnedStrategy, "DO_NOT_RETRY");
  assert.is(err.strategy, "CONTACT_SUPPORT", "exception 2 overrides it");
  assert.is(err.stopReason, "exception_2_content_conflict");
  assert.is(err.sends, 1);
  assert.is(err.idempotencyKey, "onboard-signing-0001", "the key to give support");

  const route = await rejection(gw.invoices.transmit(SUB, "not-an-irn"));
  assert.is(route.code, "GW_INVOICE_IRN_INVALID");
  assert.equal(route.violations, [{ location: "path", field: "irn", code: "FORMAT", detail: "IRN malformed" }], "violations carried");
});

test("exception 2 on rotation: a stale expectedCryptoVersion → CONTACT_SUPPORT, never looped; cryptoVersion unchanged", async () => {
  const gw = gatewayClient(server.url);
  const before = (await gw.subBusinesses.get(SUB)).data.cryptoVersion;
  const err = await rejection(
    gw.subBusinesses.rotateCryptoMaterial(SUB, { publicKey: "PK-stale", certificate: "CERT-stale", expectedCryptoVersion: before + 5 }),
  );
  assert.is(err.code, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  assert.is(err.strategy, "CONTACT_SUPPORT");
  assert.is(err.stopReason, "exception_2_content_conflict");
  assert.is(err.sends, 1);
  assert.is((await gw.subBusinesses.get(SUB)).data.cryptoVersion, before);
});

test("exception 1: the rotation's answer is lost, then held past the timeout → never resent (CONTACT_SUPPORT); each rotation applied once", async () => {
  const proxy = await startFaultyProxy(server.port);
  try {
    const direct = gatewayClient(server.url);
    const start = (await direct.subBusinesses.get(SUB)).data.cryptoVersion;
    const { records, onAttempt } = recorder();
    const gw = gatewayClient(proxy.url, undefined, { onAttempt, timeoutMs: 1_000 });
    const version = async () => (await direct.subBusinesses.get(SUB)).data.cryptoVersion;

    proxy.loseAnswers(1);
    const lost = await rejection(gw.subBusinesses.rotateCryptoMaterial(SUB, { publicKey: "PK-lost", certificate: "CERT-lost1" }));
    assert.is(lost.kind, "connection");
    assert.is(lost.strategy, "CONTACT_SUPPORT");
    assert.is(lost.stopReason, "exception_1_rotation");
    assert.is(lost.sends, 1);
    assert.match(lost.idempotencyKey!, /^gh-/, "the key to give support");
    assert.is(await version(), start + 1, "the gateway applied it once; the client did not replay it");

    proxy.holdAnswers(1);
    const held = await rejection(gw.subBusinesses.rotateCryptoMaterial(SUB, { publicKey: "PK-held", certificate: "CERT-held1" }));
    assert.is(held.kind, "connection");
    assert.is(held.stopReason, "exception_1_rotation");
    assert.is(held.sends, 1);
    // The held rotation may still be running at the gateway when the client gives up: wait for it.
    for (let i = 0; i < 50 && (await version()) < start + 2; i++) await new Promise((r) => setTimeout(r, 50));
    assert.is(await version(), start + 2, "applied once");
    assert.is(records.length, 2);
    assert.ok(records.every((r) => r.requestId === null && r.next === "throw" && r.strategy === "CONTACT_SUPPORT"));
    assert.is(proxy.faulted, 2);
  } finally {
    await proxy.close();
  }
});

test("a lost sign answer is never replayed; the same bytes resent by the merchant later with the same key get 409 GW_SIGN_ATTEMPT_ALREADY_PROCESSED (the attempt was processed), no second debit", async () => {
  const proxy = await startFaultyProxy(server.port);
  try {
    const before = await wallet(server.url);
    const gw = gatewayClient(proxy.url);
    proxy.loseAnswers(1);
    const lost = await rejection(gw.invoices.sign(SUB, invoice("CL008")));
    assert.is(lost.kind, "connection");
    assert.is(lost.stopReason, "outcome_unknown");
    assert.is(lost.sends, 1);
    const again = await rejection(gw.invoices.sign(SUB, invoice("CL008"), { idempotencyKey: lost.idempotencyKey!, attemptNumber: 1 }));
    assert.is(again.code, "GW_SIGN_ATTEMPT_ALREADY_PROCESSED", "processed: told so, with the operationId");
    assert.ok(again.operationId);
    const after = await wallet(server.url);
    assert.is(debits(after) - debits(before), 1);
    assert.is(h.sim.state.signedIrns().filter((i) => i === irnOf("CL008")).length, 1);
    await h.ledgerBalanced();
  } finally {
    await proxy.close();
  }
});

test("transmit and the direct reads: typed and relayed; a second transmit gets the existing operationId (DO_NOT_RETRY)", async () => {
  const gw = gatewayClient(server.url);
  await gw.invoices.sign(SUB, invoice("CL009"));
  const sent = await gw.invoices.transmit(SUB, irnOf("CL009"));
  assert.is(sent.status, 201);
  const again = await rejection(gw.invoices.transmit(SUB, irnOf("CL009")));
  assert.is(again.code, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED");
  assert.is(again.strategy, "DO_NOT_RETRY");
  assert.ok(again.operationId);
  assert.is(again.sends, 1);
  assert.is((await gw.invoices.confirm(SUB, irnOf("CL009"))).status, 200);
  assert.is((await gw.invoices.validateIrn(SUB, { invoice_reference: "CL010", business_id: SUB, irn: irnOf("CL010") })).status, 200);
  assert.is((await gw.invoices.validate(SUB, invoice("CL010"))).status, 200);
  assert.is((await gw.invoices.updatePayment(SUB, irnOf("CL009"), { payment_status: "PAID" })).status, 200);
  const download = await gw.invoices.download(SUB, irnOf("CL009"));
  assert.is(download.status, 200);
});

test.run();
