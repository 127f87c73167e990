/**
 * Catalog coverage over real HTTP, Pass-through signing: the sign route's refusals, billing and
 * regulator outcomes (spec §7.7–§7.9), read off a listening gateway's socket. The in-process suites
 * of test/plugins/signing and test/plugins/admin cover the behaviour (ledger, regulator calls) in depth.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { callOverHttp } from "../support/over-http.ts";
import { ADMIN_KEY, OTHER, OTHER_KEY, PASSTHROUGH, STORED, SUB, expectProblem, invoice, startSigningHarness } from "../plugins/signing/signing-helpers.ts";
import { demoEntity } from "../plugins/onboarding/onboarding-helpers.ts";

const h = await startSigningHarness();
await callOverHttp(h.tg);
test.after(() => h.close());
test.after.each(() => {
  h.billing.clear();
  h.sim.faults.clear();
});

test("over HTTP: processed attempt, content conflict, attempt conflict", async () => {
  assert.is((await h.sign(invoice("HOK1"), { key: "http-ok1-0001" })).status, 201);
  await expectProblem(await h.sign(invoice("HOK1"), { key: "http-ok1-0001" }), 409, "GW_SIGN_ATTEMPT_ALREADY_PROCESSED");
  await expectProblem(await h.sign(invoice("HOK1", { note: "changed" }), { key: "http-ok1-0001" }), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  await expectProblem(await h.sign(invoice("HOK1"), { key: "http-ok1-0002" }), 409, "GW_BILLING_ATTEMPT_CONFLICT");
});

test("over HTTP: represented business and invoice checks", async () => {
  await expectProblem(await h.sign(invoice("HV1"), { sub: null }), 400, "GW_SUB_BUSINESS_ID_REQUIRED");
  await expectProblem(await h.sign(invoice("HV1"), { sub: "bad id with spaces" }), 400, "GW_SUB_BUSINESS_ID_INVALID");
  await expectProblem(await h.sign(invoice("HV1"), { key: null }), 400, "GW_IDEMPOTENCY_KEY_REQUIRED");
  await expectProblem(await h.sign(invoice("HV1"), { attempt: "0" }), 400, "GW_ATTEMPT_NUMBER_INVALID");
  await expectProblem(await h.sign(invoice("HV1"), { sub: "unknown-sub" }), 404, "GW_SUB_BUSINESS_NOT_FOUND");
  await expectProblem(await h.sign(invoice("HV1"), { host: OTHER, apiKey: OTHER_KEY }), 403, "GW_SUB_BUSINESS_FORBIDDEN");
  await expectProblem(await h.sign(invoice("HV1", { business_id: "someone-else" })), 400, "GW_INVOICE_BUSINESS_MISMATCH");
  const tinDoc = invoice("HV1");
  tinDoc.accounting_supplier_party.tin = "99999999-0009";
  await expectProblem(await h.sign(tinDoc), 400, "GW_INVOICE_SUPPLIER_TIN_MISMATCH");
  await expectProblem(await h.sign(invoice("HV1", { irn: "not an irn" })), 400, "GW_INVOICE_IRN_INVALID");
  await expectProblem(await h.sign(invoice("HV1", { irn: "HV1-5A7B9C1D-20240611" })), 403, "GW_INVOICE_IRN_FORBIDDEN");
  await expectProblem(await h.sign(invoice("HV1", { invoice_reference: "OTHER" })), 400, "GW_INVOICE_REFERENCE_MISMATCH");
  await expectProblem(await h.sign(invoice("HV1", { fee: "1.00" })), 400, "GW_REQUEST_SERVER_FIELD_SUPPLIED");
  await expectProblem(await h.call("POST", "/api/v1/invoice/validate", { host: STORED, sub: SUB, body: invoice("HV1") }), 409, "GW_OPERATION_MODE_CONFLICT");
});

test("over HTTP: billing outcomes", async () => {
  h.billing.faults = { debit: "unavailable", once: true };
  await expectProblem(await h.sign(invoice("HBU1"), { key: "http-bu1-0001" }), 503, "GW_BILLING_SERVICE_UNAVAILABLE");
  const suspend = (suspended: boolean) =>
    h.tg.call("/admin/wallets/demo/suspension", { method: "POST", host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY }, body: { suspended } });
  assert.is((await suspend(true)).status, 200);
  await expectProblem(await h.sign(invoice("HSU1"), { key: "http-su1-0001" }), 422, "GW_BILLING_REQUEST_REJECTED");
  assert.is((await suspend(false)).status, 200);
});

test("over HTTP: no API key → 401 GW_AUTH_API_KEY_REQUIRED; an empty wallet → 402 GW_BILLING_WALLET_DECLINED", async () => {
  await expectProblem(await h.tg.call("/api/v1/invoice/resources/currencies", { host: PASSTHROUGH }), 401, "GW_AUTH_API_KEY_REQUIRED");
  const onboard = await h.tg.call("/sub-businesses", {
    method: "POST",
    host: OTHER,
    headers: { "x-api-key": OTHER_KEY, "x-idempotency-key": "http-onboard-other-0001" },
    body: { regulatorCredentials: { email: "multi@demo.ng", password: "demo-password-2" }, tin: "22222222-0001" },
  });
  assert.is(onboard.status, 201, await onboard.clone().text());
  const doc = invoice("HWD1", { business_id: "8a4b0d3f-2c5e-4f7a-9b1c-3d4e5f6a7b02", irn: "HWD1-5A7B9C1D-20240611" });
  doc.accounting_supplier_party.tin = "22222222-0001";
  const sub = "8a4b0d3f-2c5e-4f7a-9b1c-3d4e5f6a7b02";
  await expectProblem(await h.sign(doc, { host: OTHER, apiKey: OTHER_KEY, sub, key: "http-wd1-0001" }), 402, "GW_BILLING_WALLET_DECLINED");
});

test("over HTTP: regulator outcomes after the debit", async () => {
  h.sim.faults.set("sign", { kind: "status", status: 400, times: 1 });
  await expectProblem(await h.sign(invoice("HRJ1"), { key: "http-rj1-0001" }), 422, "GW_SIGN_REJECTED");
  h.sim.faults.set("sign", { kind: "status", status: 400, times: 1 });
  h.billing.faults = { reverse: "unavailable" };
  await expectProblem(await h.sign(invoice("HRU1"), { key: "http-ru1-0001" }), 503, "GW_SIGN_REVERSAL_UNCONFIRMED");
  h.billing.clear();
  h.billing.faults = { confirm: "unavailable" };
  await expectProblem(await h.sign(invoice("HRC1"), { key: "http-rc1-0001" }), 503, "GW_SIGN_RECOVERY_UNAVAILABLE");
  h.billing.clear();
  h.sim.faults.set("sign", { kind: "status", status: 500, times: 1 } as never);
  await expectProblem(await h.sign(invoice("HAM1"), { key: "http-am1-0001" }), 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
});

test("over HTTP: a pending protected migration → 409 GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED; another reverification → 409 GW_IDENTITY_REVIEW_CONFLICT", async () => {
  h.sim.faults.set("entity", { ...demoEntity({ tin: "12345678-0099" }), times: 1 });
  const creds = { regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } };
  const rv = await h.call("POST", `/sub-businesses/${SUB}/identity-reverification`, { body: creds, headers: { "x-idempotency-key": "http-pm-reverify-0001" } });
  assert.is(rv.status, 200, await rv.clone().text());
  await expectProblem(await h.sign(invoice("HPM2"), { key: "http-pm2-0001" }), 409, "GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED");
  // Another reverification while that review is pending → 409 GW_IDENTITY_REVIEW_CONFLICT.
  const again = await h.call("POST", `/sub-businesses/${SUB}/identity-reverification`, { body: creds, headers: { "x-idempotency-key": "http-pm-reverify-0002" } });
  await expectProblem(again, 409, "GW_IDENTITY_REVIEW_CONFLICT");
});

test.run();
