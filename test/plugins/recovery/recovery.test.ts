/**
 * Recovery jobs against the regulator simulator: held fees of frozen and abandoned sign attempts are
 * settled by confirm-by-IRN (confirmed when the regulator has the invoice, reversed on its own "not
 * found", an alert when neither is provable), with a resolution on the record and an audit entry;
 * stale in_progress transmission claims become unknown; overdue reconciliation is signalled; and the
 * operator's own decision through the Admin API.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { BillingIdentity } from "../../../adapters/ports.ts";
import type { AuditDoc } from "../../../core/directory-store.ts";
import { recoveryFor } from "../../../plugins/recovery/plugin.ts";
import type { SignRecord } from "../../../plugins/signing/store.ts";
import type { ClaimDoc } from "../../../plugins/transmission/service.ts";
import { ADMIN_KEY, PASSTHROUGH, SUB, expectProblem, invoice, irnOf, startSigningHarness } from "../signing/signing-helpers.ts";

const h = await startSigningHarness({ patch: { recovery: { settleAfterMs: 1, abandonedAfterMs: 60_000, overdueAfterMs: 86_400_000 } } });
test.after(() => h.close());
const recovery = recoveryFor(h.tg.gateway.kit);
const records = () => h.store.collection<SignRecord>("signing_idempotency");
const audit = () => h.store.collection<AuditDoc>("directory_audit");
const alerts = (signal: string) => h.tg.logs.filter((l) => l.event === "gateway_alert" && l.signal === signal);
const admin = (path: string, body: unknown, key: string) =>
  h.tg.call(path, { method: "POST", host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY, "x-idempotency-key": key }, body });

/** A frozen sign: the regulator never answers (afterProcessing: it did sign first). */
async function frozen(no: string, signedAtRegulator: boolean): Promise<SignRecord> {
  h.sim.faults.set("sign", { kind: "timeout", times: 1, ...(signedAtRegulator ? { afterProcessing: true } : {}) });
  const body = await expectProblem(await h.sign(invoice(no), { key: `rec-${no}-key` }), 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
  const rec = await records().findOne({ operationId: body.operationId });
  assert.is(rec?.status, "frozen");
  assert.is(rec?.money, "held");
  assert.is(h.sim.state.isSigned(irnOf(no)), signedAtRegulator);
  return rec!;
}

test("frozen, and the regulator has the invoice signed → the held fee is confirmed; resolution and audit recorded; the replay still answers 502", async () => {
  const before = await h.ledgerBalanced();
  const rec = await frozen("RC1", true);
  await new Promise((r) => setTimeout(r, 5));
  const run = await recovery.runOnce();
  assert.ok(run.ran);
  assert.is(run.confirmed, 1);
  const after = await records().get(rec._id);
  assert.is(after?.status, "resolved");
  assert.is(after?.money, "confirmed");
  assert.is(after?.resolution?.outcome, "signed");
  assert.is(after?.resolution?.by, "recovery");
  assert.is(after?.resolution?.basis, "regulator_confirm_found");
  const ledger = await h.ledgerBalanced();
  assert.is(ledger.debits, before.debits + 1, "the fee stays charged");
  assert.is(ledger.reversals, before.reversals);
  const entry = (await audit().find({ "target.id": rec.operationId })).items[0];
  assert.is(entry?.actor, "recovery");
  assert.is(entry?.action, "sign_attempt.resolve");
  assert.equal(entry?.changes, { outcome: "signed", basis: "regulator_confirm_found", money: { from: "held", to: "confirmed" } });
  await expectProblem(await h.sign(invoice("RC1"), { key: "rec-RC1-key" }), 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
  assert.is((await recovery.runOnce()).confirmed, 0, "settled once");
});

test("frozen, and the regulator says it has no such invoice → the held fee is reversed", async () => {
  const before = await h.ledgerBalanced();
  const rec = await frozen("RC2", false);
  const run = await recovery.runOnce();
  assert.is(run.reversed, 1);
  const after = await records().get(rec._id);
  assert.is(after?.money, "reversed");
  assert.is(after?.resolution?.outcome, "not_signed");
  const ledger = await h.ledgerBalanced();
  assert.is(ledger.debits, before.debits + 1);
  assert.is(ledger.reversals, before.reversals + 1, "the fee went back");
});

test("frozen, and the regulator cannot answer → nothing settled; recovery_unprovable alert; settled on a later run", async () => {
  const rec = await frozen("RC3", true);
  h.sim.faults.set("confirm", { kind: "status", status: 503, times: 1 });
  const run = await recovery.runOnce();
  assert.is(run.unprovable, 1);
  assert.is((await records().get(rec._id))?.money, "held");
  const [alert] = alerts("recovery_unprovable").filter((a) => a.operationId === rec.operationId);
  assert.ok(alert, "an alert names the operation");
  assert.is(alert!.failureClass, "regulator_server_error");
  assert.is((await recovery.runOnce()).confirmed, 1, "the next run proves it");
});

test("an abandoned attempt (holder dead after dispatch, caller never back) is frozen, then settled by the regulator's answer", async () => {
  const doc = invoice("RC4");
  // What a process that died right after dispatching leaves: in_progress, phase dispatching, debit held.
  const identity: BillingIdentity = { subBusinessId: SUB, domain: PASSTHROUGH, irn: irnOf("RC4"), attemptNumber: 1 };
  await h.billing.debit("demo", identity, 5_000, "fp-rc4");
  await records().insert({
    _id: "demo|POST /api/v1/invoice/sign|rc4",
    businessId: "demo",
    route: "POST /api/v1/invoice/sign",
    fingerprint: "fp-rc4",
    attemptKey: `TEST|${PASSTHROUGH}|${SUB}|${irnOf("RC4")}|1`,
    operationId: "0c4e4c1e-7a57-4c39-9a4f-2f1b8d3c6e04",
    status: "in_progress",
    phase: "dispatching",
    owner: "dead-request",
    startedAtMs: Date.now() - 2 * 60 * 60_000,
    completedAtMs: null,
    answer: null,
    money: "debited",
    expiresAtMs: Date.now() + 60_000,
  });
  assert.not.ok(h.sim.state.isSigned(irnOf("RC4")));
  const run = await recovery.runOnce();
  assert.is(run.reversed, 1);
  const rec = await records().get("demo|POST /api/v1/invoice/sign|rc4");
  assert.is(rec?.status, "resolved");
  assert.is(rec?.money, "reversed");
  assert.is(rec?.answer?.kind === "error" ? rec.answer.code : null, "GW_SIGN_OUTCOME_UNCONFIRMED");
  assert.ok(alerts("sign_outcome_unconfirmed").some((a) => a.operationId === "0c4e4c1e-7a57-4c39-9a4f-2f1b8d3c6e04" && a.failureClass === "abandoned"));
  await h.ledgerBalanced();
});

test("an abandoned attempt before dispatch: a debit is reversed (resolved); without one the claim is released", async () => {
  const identity: BillingIdentity = { subBusinessId: SUB, domain: PASSTHROUGH, irn: irnOf("RC5"), attemptNumber: 1 };
  await h.billing.debit("demo", identity, 5_000, "fp-rc5");
  const base = {
    businessId: "demo",
    route: "POST /api/v1/invoice/sign",
    status: "in_progress" as const,
    phase: "claimed" as const,
    owner: "dead-request",
    startedAtMs: Date.now() - 2 * 60 * 60_000,
    completedAtMs: null,
    answer: null,
    money: "none",
    expiresAtMs: Date.now() + 60_000,
  };
  await records().insert({ ...base, _id: "rc5", fingerprint: "fp-rc5", attemptKey: `TEST|${PASSTHROUGH}|${SUB}|${irnOf("RC5")}|1`, operationId: "op-rc5" });
  await records().insert({ ...base, _id: "rc6", fingerprint: "fp-rc6", attemptKey: `TEST|${PASSTHROUGH}|${SUB}|${irnOf("RC6")}|1`, operationId: "op-rc6" });
  const before = await h.ledgerBalanced();
  const run = await recovery.runOnce();
  assert.is(run.reversed, 1);
  assert.is(run.released, 1);
  assert.is((await records().get("rc5"))?.money, "reversed");
  assert.is(await records().get("rc6"), null, "nothing was held: the key may be retried");
  assert.is((await h.ledgerBalanced()).reversals, before.reversals + 1);
  assert.is(h.sim.state.calls("sign") > 0, true);
});

test("a stale in_progress transmission claim becomes unknown; the next matching request answers 502 with its operationId", async () => {
  const sign = await h.sign(invoice("RC7"), { key: "rec-RC7-key" });
  assert.is(sign.status, 201);
  const claims = h.store.collection<ClaimDoc>("transmission_claims");
  const id = `demo|TEST|${SUB}|${irnOf("RC7")}`;
  await claims.insert({
    _id: id,
    businessId: "demo",
    state: "TEST",
    subBusinessId: SUB,
    irn: irnOf("RC7"),
    operationId: "0d4e4c1e-7a57-4c39-9a4f-2f1b8d3c6e07",
    claimState: "in_progress",
    keyHash: null,
    owner: "dead-request",
    startedAtMs: Date.now() - 10 * 60_000,
    completedAtMs: null,
    detail: null,
  });
  const fresh = { ...(await claims.get(id))!, _id: `${id}-fresh`, irn: "fresh", startedAtMs: Date.now() };
  await claims.insert(fresh);
  const run = await recovery.runOnce();
  assert.is(run.claimsUnknown, 1, "only the stale claim");
  assert.is((await claims.get(id))?.claimState, "unknown");
  assert.is((await claims.get(`${id}-fresh`))?.claimState, "in_progress", "a claim inside its lifetime is left alone");
  const calls = h.sim.state.calls("transmit");
  const body = await expectProblem(await h.transmit(irnOf("RC7")), 502, "GW_TRANSMIT_OUTCOME_UNCONFIRMED");
  assert.is(body.operationId, "0d4e4c1e-7a57-4c39-9a4f-2f1b8d3c6e07");
  assert.is(h.sim.state.calls("transmit"), calls, "never dispatched");
  assert.ok(alerts("transmit_outcome_unconfirmed").some((a) => a.operationId === "0d4e4c1e-7a57-4c39-9a4f-2f1b8d3c6e07"));
  await claims.delete(`${id}-fresh`);
});

test("the operator resolves a held attempt: listed with its route, settled with a recorded decision, idempotent, then gone from the list", async () => {
  const rec = await frozen("RC8", false);
  const list = await h.tg.call("/admin/invoices/frozen", { host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY } });
  const listed = ((await list.json()).data as Array<{ operationId: string; resolveWith: string }>).find((o) => o.operationId === rec.operationId);
  assert.is(listed?.resolveWith, `POST /admin/sign-attempts/${rec.operationId}/resolution`);
  const path = `/admin/sign-attempts/${rec.operationId}/resolution`;
  const res = await admin(path, { outcome: "not_signed" }, "resolve-rc8-0001");
  assert.is(res.status, 200, await res.clone().text());
  const b = await res.json();
  assert.is(b.money, "reversed");
  assert.is(b.resolution.outcome, "not_signed");
  assert.match(b.resolution.by, /^operator:/);
  assert.is((await admin(path, { outcome: "not_signed" }, "resolve-rc8-0002")).status, 200, "the same decision again");
  await expectProblem(await admin(path, { outcome: "signed" }, "resolve-rc8-0003"), 409, "GW_INVOICE_STATE_CONFLICT");
  await expectProblem(await admin("/admin/sign-attempts/no-such-op/resolution", { outcome: "signed" }, "resolve-rc8-0004"), 404, "GW_OPERATION_NOT_FOUND");
  const again = await h.tg.call("/admin/invoices/frozen", { host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY } });
  assert.not.ok(((await again.json()).data as Array<{ operationId: string }>).some((o) => o.operationId === rec.operationId));
  const entry = (await audit().find({ "target.id": rec.operationId })).items[0];
  assert.match(entry!.actor, /^operator:/);
});

test("the operator resolves an unknown transmission: not_transmitted releases it (the next transmit dispatches once); transmitted records it (409 from then on)", async () => {
  const transmitAndLoseTheAnswer = async (no: string) => {
    assert.is((await h.sign(invoice(no), { key: `rec-${no}-key` })).status, 201);
    h.sim.faults.set("transmit", { kind: "renamed", afterProcessing: false, times: 1 });
    return (await expectProblem(await h.transmit(irnOf(no)), 502, "GW_TRANSMIT_OUTCOME_UNCONFIRMED")).operationId as string;
  };
  const released = await transmitAndLoseTheAnswer("RC10");
  const path = (op: string) => `/admin/transmissions/${op}/resolution`;
  const res = await admin(path(released), { outcome: "not_transmitted" }, "resolve-tx-0001");
  assert.is(res.status, 200, await res.clone().text());
  assert.equal(((await res.json()) as { claimState: string }).claimState, "released");
  const repeat = await admin(path(released), { outcome: "not_transmitted" }, "resolve-tx-0001b");
  assert.is(repeat.status, 200, "the same decision again, under another key");
  assert.equal(((await repeat.json()) as { claimState: string; businessId: string }).businessId, "demo");
  const calls = h.sim.state.calls("transmit");
  assert.is((await h.transmit(irnOf("RC10"))).status, 201, "transmitted again");
  assert.is(h.sim.state.calls("transmit"), calls + 1, "one dispatch");

  const recorded = await transmitAndLoseTheAnswer("RC11");
  assert.is((await admin(path(recorded), { outcome: "transmitted" }, "resolve-tx-0002")).status, 200);
  assert.is((await admin(path(recorded), { outcome: "transmitted" }, "resolve-tx-0003")).status, 200, "the same decision again");
  await expectProblem(await admin(path(recorded), { outcome: "not_transmitted" }, "resolve-tx-0004"), 409, "GW_INVOICE_STATE_CONFLICT");
  const before = h.sim.state.calls("transmit");
  const again = await expectProblem(await h.transmit(irnOf("RC11")), 409, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED");
  assert.is(again.operationId, recorded);
  assert.is(h.sim.state.calls("transmit"), before, "never dispatched again");
  const entries = (await audit().find({ "target.id": recorded })).items;
  assert.equal(entries.map((e) => [e.action, e.changes]), [["transmission.resolve", { outcome: "transmitted" }]]);
});

test("overdue reconciliation: anything unresolved past the configured age raises reconciliation_overdue", async () => {
  const rec = await frozen("RC9", true);
  h.sim.faults.set("confirm", { kind: "status", status: 503 });
  await records().findOneAndUpdate({ _id: rec._id }, { $set: { completedAtMs: Date.now() - 2 * 86_400_000 } });
  const run = await recovery.runOnce();
  h.sim.faults.clear("confirm");
  assert.ok(run.overdue >= 1);
  const [a] = alerts("reconciliation_overdue");
  assert.ok(a, "the alert was sent");
  assert.ok((a!.count as number) >= 1);
  const report = (await recovery.report()) as { open: Record<string, number> };
  assert.ok(report.open.overdue! >= 1);
});

test.run();
