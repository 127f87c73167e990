/**
 * Transmission and cancellation by invoice ID (issue 10 item 4, DECISIONS.md "Stored mode"): every
 * status answers as listed, both are idempotent, one regulator transmission per invoice however
 * many requests race, and cancellation bills nothing.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { accepted, expectProblem, intakeInvoice, irnOf, startStoredHarness } from "./stored-helpers.ts";

const h = await startStoredHarness();
test.after(() => h.close());

const final = (inv: Record<string, any>) => ["signed", "transmitted", "rejected", "frozen", "cancelled"].includes(inv.status);

async function signed(no: string): Promise<string> {
  const id = (await accepted(await h.intake(intakeInvoice(no), { key: `tc-${no}-key-0001` }))).invoiceId as string;
  const inv = await h.waitFor(id, final);
  assert.is(inv.status, "signed");
  return id;
}

const transmit = (id: string, body: unknown = {}) => h.call("POST", `/invoices/${id}/transmit`, { body });
const cancel = (id: string, body: unknown = {}) => h.call("POST", `/invoices/${id}/cancel`, { body });

test("signed → 202 transmitting (Location), the processor dispatches once → transmitted; again → 409 with the operationId", async () => {
  const id = await signed("TX1");
  const res = await transmit(id);
  assert.is(res.status, 202);
  assert.is(res.headers.get("location"), `/invoices/${id}`);
  const body = await res.json();
  assert.is(body.status, "transmitting");
  assert.is(body.document, undefined);
  const inv = await h.waitFor(id, (i) => i.status !== "transmitting");
  assert.is(inv.status, "transmitted");
  assert.ok(h.sim.state.isTransmitted(irnOf("TX1")));
  const again = await expectProblem(await transmit(id), 409, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED");
  assert.is(again.operationId, inv.operationId);
});

test("20 concurrent transmit requests → one 202, nineteen 409s with the same operationId, one regulator transmission", async () => {
  const id = await signed("TX2");
  const calls = h.sim.state.calls("transmit");
  const results = await Promise.all(Array.from({ length: 20 }, () => transmit(id)));
  const statuses = results.map((r) => r.status);
  assert.is(statuses.filter((s) => s === 202).length, 1, String(statuses));
  assert.is(statuses.filter((s) => s === 409).length, 19);
  const ops = new Set<string>();
  for (const r of results.filter((x) => x.status === 409)) ops.add((await r.json()).operationId);
  assert.is(ops.size, 1);
  await h.waitFor(id, (i) => i.status === "transmitted");
  assert.is(h.sim.state.calls("transmit") - calls, 1);
});

test("pending / validated / signing → 422 GW_INVOICE_NOT_TRANSMITTABLE; rejected / cancelled / frozen → 409 GW_INVOICE_STATE_CONFLICT", async () => {
  h.sim.faults.set("validate", { kind: "status", status: 503 });
  const pending = (await accepted(await h.intake(intakeInvoice("TX3"), { key: "tc-tx3-key-0001" }))).invoiceId as string;
  await expectProblem(await transmit(pending), 422, "GW_INVOICE_NOT_TRANSMITTABLE");
  h.sim.faults.clear("validate");
  await h.waitFor(pending, final);

  h.sim.faults.set("validate", { kind: "status", status: 503 });
  const cancelled = (await accepted(await h.intake(intakeInvoice("TX4"), { key: "tc-tx4-key-0001" }))).invoiceId as string;
  assert.is((await cancel(cancelled)).status, 200);
  h.sim.faults.clear("validate");
  await expectProblem(await transmit(cancelled), 409, "GW_INVOICE_STATE_CONFLICT");

  const bad = intakeInvoice("TX5");
  delete bad.invoice_line;
  const rejected = (await accepted(await h.intake(bad, { key: "tc-tx5-key-0001" }))).invoiceId as string;
  assert.is((await h.waitFor(rejected, final)).status, "rejected");
  await expectProblem(await transmit(rejected), 409, "GW_INVOICE_STATE_CONFLICT");

  h.sim.faults.set("sign", { kind: "empty", afterProcessing: true, times: 1 });
  const frozen = (await accepted(await h.intake(intakeInvoice("TX6"), { key: "tc-tx6-key-0001" }))).invoiceId as string;
  assert.is((await h.waitFor(frozen, final)).status, "frozen");
  await expectProblem(await transmit(frozen), 409, "GW_INVOICE_STATE_CONFLICT");
});

test("the transmit body must be {}: 400 GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY; an unknown id → 404; a malformed id → 400", async () => {
  const id = await signed("TX7");
  await expectProblem(await transmit(id, { irn: "x" }), 400, "GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY");
  assert.is((await h.invoice(id)).status, "signed", "nothing changed");
  await expectProblem(await transmit("6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b"), 404, "GW_INVOICE_NOT_FOUND");
  await expectProblem(await transmit("not-a-uuid"), 400, "GW_REQUEST_PATH_PARAMETER_INVALID");
});

test("an unprovable transmission (timeout after dispatch) → frozen GW_TRANSMIT_OUTCOME_UNCONFIRMED, never dispatched again", async () => {
  const id = await signed("TX8");
  h.sim.faults.set("transmit", { kind: "malformed", afterProcessing: true, times: 1 });
  const calls = h.sim.state.calls("transmit");
  assert.is((await transmit(id)).status, 202);
  const inv = await h.waitFor(id, (i) => i.status !== "transmitting");
  assert.is(inv.status, "frozen");
  assert.is(inv.lastError.code, "GW_TRANSMIT_OUTCOME_UNCONFIRMED");
  await new Promise((r) => setTimeout(r, 200));
  assert.is(h.sim.state.calls("transmit") - calls, 1);
});

test("a transmission the regulator refuses before doing it (429) is dispatched again after backoff; a rejection returns the invoice to signed", async () => {
  const id = await signed("TX9");
  h.sim.faults.set("transmit", { kind: "rate_limit", retryAfter: 1, times: 1 });
  assert.is((await transmit(id)).status, 202);
  assert.is((await h.waitFor(id, (i) => i.status !== "transmitting")).status, "transmitted");

  const id2 = await signed("TX10");
  h.sim.faults.set("transmit", { kind: "status", status: 400, handler: "validation_failed", times: 1 });
  assert.is((await transmit(id2)).status, 202);
  const back = await h.waitFor(id2, (i) => i.status !== "transmitting");
  assert.is(back.status, "signed");
  assert.is(back.lastError.code, "GW_REQUEST_VALIDATION_FAILED");
  assert.is((await transmit(id2)).status, 202, "it may be transmitted again");
  assert.is((await h.waitFor(id2, (i) => i.status !== "transmitting")).status, "transmitted");
});

test("cancel: pending → 200 cancelled, nothing billed, never processed; cancelled again → 200; signed → 409", async () => {
  const before = await h.ledger();
  h.sim.faults.set("validate", { kind: "status", status: 503 });
  const id = (await accepted(await h.intake(intakeInvoice("CAN1"), { key: "tc-can1-key-0001" }))).invoiceId as string;
  const res = await cancel(id);
  assert.is(res.status, 200);
  const body = await res.json();
  assert.is(body.status, "cancelled");
  assert.equal(body.statusHistory.map((s: { status: string }) => s.status).at(-1), "cancelled");
  assert.is((await cancel(id)).status, 200, "idempotent");
  h.sim.faults.clear("validate");
  await new Promise((r) => setTimeout(r, 200));
  assert.is((await h.invoice(id)).status, "cancelled");
  assert.not.ok(h.sim.state.isSigned(irnOf("CAN1")));
  assert.equal(await h.ledger(), before, "nothing billed");
  const raw = await h.raw(id);
  assert.is(raw?.dueAt, null);
  assert.is(raw?.irnLock, undefined, "the IRN is free again");

  const s = await signed("CAN2");
  await expectProblem(await cancel(s), 409, "GW_INVOICE_STATE_CONFLICT");
  await expectProblem(await cancel(s, { reason: "x" }), 400, "GW_REQUEST_VALIDATION_FAILED");
});

test("cancel of a validated invoice whose fee charge is unconfirmed waits for billing (409), then succeeds or the invoice signs", async () => {
  h.billing.faults = { debit: "unavailable" };
  const id = (await accepted(await h.intake(intakeInvoice("CAN3"), { key: "tc-can3-key-0001" }))).invoiceId as string;
  await h.waitFor(id, (i) => i.status === "validated" && i.lastError?.code === "GW_BILLING_SERVICE_UNAVAILABLE");
  const p = await expectProblem(await cancel(id), 409, "GW_INVOICE_STATE_CONFLICT");
  assert.match(p.detail, /billing/);
  h.billing.clear();
  assert.is((await h.waitFor(id, final)).status, "signed");
});

test("cancel while billing is being retried (signing, fee charge unconfirmed) gets the same billing 409", async () => {
  h.billing.faults = { debit: "unavailable" };
  const id = (await accepted(await h.intake(intakeInvoice("CAN4"), { key: "tc-can4-key-0001" }))).invoiceId as string;
  await h.waitFor(id, (i) => i.status === "validated" && i.lastError?.code === "GW_BILLING_SERVICE_UNAVAILABLE");
  // The processor's retry is held inside its debit, after it wrote "signing".
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const debit = h.billing.debit;
  h.billing.debit = async (...args) => {
    await gate;
    return debit(...args);
  };
  try {
    assert.is((await h.waitFor(id, (i) => i.status === "signing")).status, "signing");
    assert.is((await h.raw(id))?.billDoubt, true);
    const p = await expectProblem(await cancel(id), 409, "GW_INVOICE_STATE_CONFLICT");
    assert.match(p.detail, /billing/);
  } finally {
    h.billing.debit = debit;
    h.billing.clear();
    release();
  }
  assert.is((await h.waitFor(id, final)).status, "signed");
});

test.run();
