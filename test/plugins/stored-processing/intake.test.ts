/**
 * Stored intake over real HTTP (issue 10 item 1, "Bad input and faults"): 202 with Location, written
 * before the answer; idempotent per key; the identity checks of spec §4.2 rule 4 and §7.7; violations
 * with JSON Pointers (≤ 20); server-managed fields; the modes of the sign route; a store that cannot
 * confirm the write; 50 concurrent identical intakes; one live invoice per IRN.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { STORED_COLLECTIONS, type InvoiceDoc } from "../../../plugins/stored-processing/store.ts";
import { UUID } from "../../support/assertions.ts";
import {
  OTHER,
  OTHER_KEY,
  PASSTHROUGH,
  STORED,
  SUB,
  accepted,
  demoInvoice,
  expectProblem,
  intakeInvoice,
  irnOf,
  startStoredHarness,
  type StoreFault,
} from "./stored-helpers.ts";

let fault: StoreFault | null = null;
// The processor is off: these tests look at what intake stored, not at what happens next.
const h = await startStoredHarness({ processor: false, storeFault: (c, m, a) => fault?.(c, m, a) ?? null });
test.after(() => h.close());

const invoices = () => h.store.collection<InvoiceDoc>(STORED_COLLECTIONS.invoices);

test("202 Accepted: { invoiceId, status pending, irn, subBusinessId, createdAt } and Location; stored before the answer", async () => {
  const res = await h.intake(intakeInvoice("ACC1"), { key: "intake-acc1-0001" });
  assert.is(res.status, 202);
  const body = await res.json();
  assert.equal(Object.keys(body).sort(), ["createdAt", "invoiceId", "irn", "status", "subBusinessId"]);
  assert.match(body.invoiceId, UUID);
  assert.is(body.status, "pending");
  assert.is(body.irn, irnOf("ACC1"));
  assert.is(body.subBusinessId, SUB);
  assert.is(res.headers.get("location"), `/invoices/${body.invoiceId}`);
  const stored = await invoices().get(body.invoiceId);
  assert.is(stored?.status, "pending");
  assert.is(stored?.direction, "outbound");
  assert.is(stored?.createdAt, body.createdAt);
  assert.equal(stored?.document, demoInvoice("ACC1"), "the document as sent");
  const inv = await h.invoice(body.invoiceId);
  assert.equal(inv.statusHistory, [{ status: "pending", at: body.createdAt }]);
  assert.is(inv.budgetLeft, 5);
  assert.is(inv.attempts, 0);
});

test("business_id and irn may be left to the gateway: filled from the represented business and its IRN template", async () => {
  const body = await accepted(await h.intake(intakeInvoice("GEN1", { gatewayIds: true }), { key: "intake-gen1-0001" }));
  assert.is(body.irn, irnOf("GEN1"));
  const inv = await h.invoice(body.invoiceId);
  assert.is(inv.document.business_id, SUB);
  assert.is(inv.document.irn, irnOf("GEN1"));
  assert.is(inv.document.invoice_reference, "GEN1");
  // Without irn, invoice_reference (and issue_date) are needed.
  const noRef = intakeInvoice("GEN2", { gatewayIds: true });
  delete noRef.invoice_reference;
  const p = await expectProblem(await h.intake(noRef, { key: "intake-gen2-0001" }), 400, "GW_INVOICE_IRN_INVALID");
  assert.equal(p.errors.map((e: { pointer: string; code: string }) => [e.pointer, e.code]), [["/irn", "REQUIRED"]]);
  const noDate = intakeInvoice("GEN3", { gatewayIds: true });
  delete noDate.issue_date;
  const d = await expectProblem(await h.intake(noDate, { key: "intake-gen3-0001" }), 400, "GW_REQUEST_VALIDATION_FAILED");
  assert.equal(d.errors.map((e: { pointer: string }) => e.pointer), ["/issue_date"]);
});

test("the regulator's template form {{invoice_id(e.g:INV00XXX)}}-…-{{YYYYMMDD(e.g:…)}} builds the IRN (example-template@demo.ng)", async () => {
  const onboard = await h.call("POST", "/sub-businesses", {
    headers: { "x-idempotency-key": "onboard-example-template-0001" },
    body: { regulatorCredentials: { email: "example-template@demo.ng", password: "demo-password-6" } },
  });
  assert.is(onboard.status, 201, await onboard.clone().text());
  const sub = ((await onboard.json()) as { gatewaySubBusinessId: string }).gatewaySubBusinessId;
  const doc = intakeInvoice("TPL1", { gatewayIds: true, overrides: { accounting_supplier_party: { ...demoInvoice("TPL1").accounting_supplier_party, tin: "66666666-0001" } } });
  const body = await accepted(await h.intake(doc, { key: "intake-tpl1-0001", sub }));
  assert.is(body.irn, "TPL1-3F7A2C1E-20240611");
  const inv = await h.invoice(body.invoiceId);
  assert.is(inv.document.irn, "TPL1-3F7A2C1E-20240611");
});

test("the same key and content → the same 202 (same invoiceId); other content → 409 GW_IDEMPOTENCY_CONTENT_CONFLICT", async () => {
  const first = await accepted(await h.intake(intakeInvoice("IDEM1"), { key: "intake-idem-0001" }));
  const again = await h.intake(intakeInvoice("IDEM1"), { key: "intake-idem-0001" });
  const second = await accepted(again);
  assert.is(second.invoiceId, first.invoiceId);
  assert.is(again.headers.get("location"), `/invoices/${first.invoiceId}`);
  // The same content written differently (key order, whitespace) is the same content.
  const reordered = JSON.stringify(Object.fromEntries(Object.entries(intakeInvoice("IDEM1")).reverse()), null, 2);
  assert.is((await accepted(await h.intake(reordered, { key: "intake-idem-0001" }))).invoiceId, first.invoiceId);
  await expectProblem(await h.intake(intakeInvoice("IDEM1", { overrides: { note: "changed" } }), { key: "intake-idem-0001" }), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  // The filled-in fields are not content: sending them explicitly is other content.
  const ids = await accepted(await h.intake(intakeInvoice("IDEM2", { gatewayIds: true }), { key: "intake-idem-0002" }));
  assert.is((await accepted(await h.intake(intakeInvoice("IDEM2", { gatewayIds: true }), { key: "intake-idem-0002" }))).invoiceId, ids.invoiceId);
  await expectProblem(await h.intake({ ...intakeInvoice("IDEM2", { gatewayIds: true }), business_id: SUB }, { key: "intake-idem-0002" }), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  // The same document for another represented business under the same key is other content too.
  await expectProblem(await h.intake(intakeInvoice("IDEM1"), { key: "intake-idem-0001", sub: "another-sub" }), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  assert.is(await invoices().count({ irn: irnOf("IDEM1") }), 1);
});

test("50 concurrent identical intakes → one invoice, fifty identical 202s", async () => {
  const results = await Promise.all(Array.from({ length: 50 }, () => h.intake(intakeInvoice("CONC1"), { key: "intake-conc-0001" })));
  const ids = new Set<string>();
  for (const r of results) ids.add((await accepted(r)).invoiceId);
  assert.is(ids.size, 1);
  assert.is(await invoices().count({ irn: irnOf("CONC1") }), 1);
});

test("a second live invoice for the same IRN under another key → 409 GW_INVOICE_STATE_CONFLICT; once cancelled the IRN is free", async () => {
  const first = await accepted(await h.intake(intakeInvoice("DUP1"), { key: "intake-dup1-0001" }));
  const p = await expectProblem(await h.intake(intakeInvoice("DUP1"), { key: "intake-dup1-0002" }), 409, "GW_INVOICE_STATE_CONFLICT");
  assert.match(p.detail, new RegExp(first.invoiceId));
  assert.is((await h.call("POST", `/invoices/${first.invoiceId}/cancel`, { body: {} })).status, 200);
  await accepted(await h.intake(intakeInvoice("DUP1"), { key: "intake-dup1-0002" }));
});

test("represented business and invoice identity (§4.2 rule 4, §7.7)", async () => {
  await expectProblem(await h.intake(intakeInvoice("ID1"), { sub: null }), 400, "GW_SUB_BUSINESS_ID_REQUIRED");
  await expectProblem(await h.intake(intakeInvoice("ID1"), { sub: "bad id with spaces", key: "intake-id-0001" }), 400, "GW_SUB_BUSINESS_ID_INVALID");
  await expectProblem(await h.intake(intakeInvoice("ID1"), { sub: "8a4b0d3f-2c5e-4f7a-9b1c-3d4e5f6a7b02", key: "intake-id-0002" }), 404, "GW_SUB_BUSINESS_NOT_FOUND");
  const mismatch = await expectProblem(
    await h.intake(intakeInvoice("ID2", { overrides: { business_id: "00000000-0000-4000-8000-000000000000" } }), { key: "intake-id-0003" }),
    400,
    "GW_INVOICE_BUSINESS_MISMATCH",
  );
  assert.equal(mismatch.errors.map((e: { pointer: string }) => e.pointer), ["/business_id"]);
  const tin = demoInvoice("ID3");
  tin.accounting_supplier_party.tin = "99999999-0001";
  await expectProblem(await h.intake(tin, { key: "intake-id-0004" }), 400, "GW_INVOICE_SUPPLIER_TIN_MISMATCH");
  await expectProblem(await h.intake(intakeInvoice("ID4", { overrides: { irn: "ID4-5A7B9C1D-20240611" } }), { key: "intake-id-0005" }), 403, "GW_INVOICE_IRN_FORBIDDEN");
  await expectProblem(await h.intake(intakeInvoice("ID5", { overrides: { irn: "not-an-irn" } }), { key: "intake-id-0006" }), 400, "GW_INVOICE_IRN_INVALID");
  await expectProblem(await h.intake(intakeInvoice("ID6", { overrides: { invoice_reference: "OTHER6" } }), { key: "intake-id-0007" }), 400, "GW_INVOICE_REFERENCE_MISMATCH");
  assert.is(await invoices().count({ irn: { $in: [irnOf("ID2"), irnOf("ID3"), irnOf("ID6")] } }), 0, "nothing accepted");
});

test("a represented business of another top-level business → 403 GW_SUB_BUSINESS_FORBIDDEN", async () => {
  const onboard = await h.call("POST", "/sub-businesses", {
    host: OTHER,
    apiKey: OTHER_KEY,
    headers: { "x-idempotency-key": "onboard-other-0001" },
    body: { regulatorCredentials: { email: "multi@demo.ng", password: "demo-password-2" }, tin: "22222222-0001" },
  });
  assert.is(onboard.status, 201, await onboard.clone().text());
  await expectProblem(await h.intake(intakeInvoice("FORB1"), { sub: "8a4b0d3f-2c5e-4f7a-9b1c-3d4e5f6a7b02", key: "intake-forb-0001" }), 403, "GW_SUB_BUSINESS_FORBIDDEN");
});

test("malformed intake → 400 GW_REQUEST_VALIDATION_FAILED with JSON Pointers, at most 20", async () => {
  const bad = demoInvoice("BAD1");
  bad.accounting_supplier_party = "nope";
  bad.issue_date = "11/06/2024";
  bad.invoice_line = Array.from({ length: 30 }, () => 7);
  const p = await expectProblem(await h.intake(bad, { key: "intake-bad-0001" }), 400, "GW_REQUEST_VALIDATION_FAILED");
  assert.is(p.errors.length, 20);
  const pointers = p.errors.map((e: { pointer: string }) => e.pointer);
  assert.ok(pointers.includes("/accounting_supplier_party"));
  assert.ok(pointers.includes("/issue_date"));
  assert.ok(pointers.includes("/invoice_line/0"));
  for (const e of p.errors) {
    assert.is(e.location, "body");
    assert.ok(e.detail.length <= 256);
    assert.not.ok(e.detail.includes("11/06/2024"), "the rejected value is never repeated");
  }
  await expectProblem(await h.intake("[1,2]", { key: "intake-bad-0002" }), 400, "GW_REQUEST_VALIDATION_FAILED");
  await expectProblem(await h.intake("{not json", { key: "intake-bad-0003" }), 400, "GW_REQUEST_INVALID_JSON");
});

test("server-managed fields → 400 GW_REQUEST_SERVER_FIELD_SUPPLIED; nothing accepted", async () => {
  const p = await expectProblem(await h.intake(intakeInvoice("SRV1", { overrides: { mode: "passthrough", fee: "0.00" } }), { key: "intake-srv-0001" }), 400, "GW_REQUEST_SERVER_FIELD_SUPPLIED");
  assert.equal(p.errors.map((e: { pointer: string }) => e.pointer).sort(), ["/fee", "/mode"]);
  assert.is(await invoices().count({ irn: irnOf("SRV1") }), 0);
});

test("headers: x-idempotency-key is required (and validated) on intake", async () => {
  await expectProblem(await h.intake(intakeInvoice("KEY1"), { key: null }), 400, "GW_IDEMPOTENCY_KEY_REQUIRED");
  await expectProblem(await h.intake(intakeInvoice("KEY1"), { key: "short" }), 400, "GW_IDEMPOTENCY_KEY_INVALID");
});

test("the body limit is the large-body limit (1 MiB): beyond it 413", async () => {
  const big = intakeInvoice("BIG1", { overrides: { note: "x".repeat(900 * 1024) } });
  await accepted(await h.intake(big, { key: "intake-big-0001" }));
  const tooBig = intakeInvoice("BIG2", { overrides: { note: "x".repeat(1100 * 1024) } });
  await expectProblem(await h.intake(tooBig, { key: "intake-big-0002" }), 413, "GW_REQUEST_BODY_TOO_LARGE");
});

test("modes: Pass-through routes on the Stored domain and Stored routes on the Pass-through domain → 409 GW_OPERATION_MODE_CONFLICT", async () => {
  const validate = await h.call("POST", "/api/v1/invoice/validate", { host: STORED, headers: { "x-sub-business-id": SUB }, body: demoInvoice("MODE1") });
  await expectProblem(validate, 409, "GW_OPERATION_MODE_CONFLICT");
  await expectProblem(await h.call("POST", `/api/v1/invoice/transmit/${irnOf("MODE1")}`, { host: STORED, headers: { "x-sub-business-id": SUB }, body: {} }), 409, "GW_OPERATION_MODE_CONFLICT");
  await expectProblem(await h.call("GET", "/invoices", { host: PASSTHROUGH }), 409, "GW_OPERATION_MODE_CONFLICT");
  await expectProblem(await h.call("GET", "/invoices/6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b", { host: PASSTHROUGH }), 409, "GW_OPERATION_MODE_CONFLICT");
  await expectProblem(await h.call("POST", "/invoices/6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b/cancel", { host: PASSTHROUGH, body: {} }), 409, "GW_OPERATION_MODE_CONFLICT");
  // The sign path itself answers in both modes, each with its own body and answer. The Pass-through
  // host belongs to another business (one approved domain per business), which does not represent SUB.
  const pass = await h.call("POST", "/api/v1/invoice/sign", {
    host: PASSTHROUGH,
    headers: { "x-sub-business-id": SUB, "x-idempotency-key": "mode-pass-sign-0001", "x-attempt-number": "1" },
    body: demoInvoice("MODE2"),
  });
  await expectProblem(pass, 403, "GW_SUB_BUSINESS_FORBIDDEN");
  await accepted(await h.intake(intakeInvoice("MODE3"), { key: "mode-stored-0001" }));
});

test("the inbound download / acknowledge routes keep answering 503 GW_INVOICE_OPERATION_UNAVAILABLE on a Stored domain", async () => {
  await expectProblem(await h.call("GET", `/api/v1/invoice/inbound/${irnOf("X1")}/download`), 503, "GW_INVOICE_OPERATION_UNAVAILABLE");
  await expectProblem(await h.call("POST", `/api/v1/invoice/inbound/${irnOf("X1")}/acknowledge`, { body: {} }), 503, "GW_INVOICE_OPERATION_UNAVAILABLE");
});

test("the store cannot take the write → 503 GW_INVOICE_INTAKE_UNAVAILABLE (same key); nothing accepted, the retry is accepted once", async () => {
  fault = (c, m) => (c === STORED_COLLECTIONS.invoices && m === "insert" ? "before" : null);
  const p = await expectProblem(await h.intake(intakeInvoice("DOWN1"), { key: "intake-down-0001" }), 503, "GW_INVOICE_INTAKE_UNAVAILABLE");
  assert.is(p.retry.sameIdempotencyKey, true);
  fault = null;
  assert.is(await invoices().count({ irn: irnOf("DOWN1") }), 0, "nothing half-written is visible");
  // The whole store down: the first read already fails.
  fault = (c) => (c === STORED_COLLECTIONS.invoices ? "before" : null);
  await expectProblem(await h.intake(intakeInvoice("DOWN1"), { key: "intake-down-0001" }), 503, "GW_INVOICE_INTAKE_UNAVAILABLE");
  fault = null;
  const ok = await accepted(await h.intake(intakeInvoice("DOWN1"), { key: "intake-down-0001" }));
  assert.is(await invoices().count({ irn: irnOf("DOWN1") }), 1);
  assert.is((await accepted(await h.intake(intakeInvoice("DOWN1"), { key: "intake-down-0001" }))).invoiceId, ok.invoiceId);
});

test("the write landed but its confirmation was lost → 503; the same key then answers that very invoice", async () => {
  fault = (c, m) => (c === STORED_COLLECTIONS.invoices && m === "insert" ? "after" : null);
  await expectProblem(await h.intake(intakeInvoice("LOST1"), { key: "intake-lost-0001" }), 503, "GW_INVOICE_INTAKE_UNAVAILABLE");
  fault = null;
  const stored = await invoices().findOne({ irn: irnOf("LOST1") });
  assert.ok(stored, "the write did land");
  const body = await accepted(await h.intake(intakeInvoice("LOST1"), { key: "intake-lost-0001" }));
  assert.is(body.invoiceId, stored!._id);
  assert.is(await invoices().count({ irn: irnOf("LOST1") }), 1);
});

test("no raw idempotency key, TIN or invoice data in logs", async () => {
  await accepted(await h.intake(intakeInvoice("LOG1"), { key: "intake-secret-key-0001" }));
  const logs = JSON.stringify(h.tg.logs);
  assert.not.ok(logs.includes("intake-secret-key-0001"));
  assert.not.ok(logs.includes("12345678-0001"));
  assert.not.ok(logs.includes("USB keyboard"));
  const stored = JSON.stringify((await invoices().find({}, { limit: 1000 })).items);
  assert.not.ok(stored.includes("intake-secret-key-0001"), "only the key's HMAC is stored");
});

test.run();
