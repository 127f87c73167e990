/**
 * Unbilled direct regulator routes (DECISIONS.md "Invoice gateway") and the inbound routes that
 * always answer 503 GW_INVOICE_OPERATION_UNAVAILABLE.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { STORED, SUB, expectProblem, invoice, irnOf, startSigningHarness } from "./signing-helpers.ts";

const h = await startSigningHarness();
test.after(() => h.close());
test.after.each(() => h.sim.faults.clear());

test("resources: the regulator's status, content type and body pass through; unknown name → GW_ROUTE_NOT_FOUND; 5xx → body discarded", async () => {
  const res = await h.call("GET", "/api/v1/invoice/resources/currencies");
  const text = await res.text();
  assert.is(res.status, 200, text);
  assert.is(res.headers.get("content-type"), "application/json; charset=utf-8");
  assert.is(JSON.parse(text).code, 200);
  await expectProblem(await h.call("GET", "/api/v1/invoice/resources/nothing-here"), 404, "GW_ROUTE_NOT_FOUND");
  h.sim.faults.set("resources", { kind: "status", status: 500, times: 1 });
  await expectProblem(await h.call("GET", "/api/v1/invoice/resources/currencies"), 502, "GW_UPSTREAM_UNAVAILABLE");
  await expectProblem(await h.call("GET", "/api/v1/invoice/resources/currencies", { host: STORED }), 409, "GW_OPERATION_MODE_CONFLICT");
});

test("validate and IRN validation (x-sub-business-id; unbilled)", async () => {
  assert.is((await h.call("POST", "/api/v1/invoice/validate", { body: invoice("DV1"), sub: SUB })).status, 200);
  await expectProblem(await h.call("POST", "/api/v1/invoice/validate", { body: invoice("DV1") }), 400, "GW_SUB_BUSINESS_ID_REQUIRED");
  const ok = await h.call("POST", "/api/v1/invoice/irn/validate", {
    body: { invoice_reference: "DV1", business_id: SUB, irn: irnOf("DV1") },
    sub: SUB,
  });
  assert.is(ok.status, 200, await ok.clone().text());
  await expectProblem(
    await h.call("POST", "/api/v1/invoice/irn/validate", { body: { invoice_reference: "XX1", business_id: SUB, irn: irnOf("DV1") }, sub: SUB }),
    400,
    "GW_INVOICE_REFERENCE_MISMATCH",
  );
  await expectProblem(
    await h.call("POST", "/api/v1/invoice/irn/validate", { body: { invoice_reference: "DV1", business_id: "x", irn: irnOf("DV1") }, sub: SUB }),
    400,
    "GW_INVOICE_BUSINESS_MISMATCH",
  );
});

test("confirm, download and payment update by IRN after signing", async () => {
  assert.is((await h.sign(invoice("DR1"), { key: "dr1-key-0001" })).status, 201);
  const irn = irnOf("DR1");
  const confirm = await h.call("GET", `/api/v1/invoice/confirm/${irn}`, { sub: SUB });
  const c = JSON.parse(await confirm.text());
  assert.is(confirm.status, 200);
  assert.is(c.data.irn, irn);
  const download = await h.call("GET", `/api/v1/invoice/download/${irn}`, { sub: SUB });
  assert.is(download.status, 200);
  const update = await h.call("PATCH", `/api/v1/invoice/update/${irn}`, { sub: SUB, body: { payment_status: "PAID" } });
  assert.is(update.status, 200, await update.clone().text());
  await expectProblem(await h.call("PATCH", `/api/v1/invoice/update/${irn}`, { sub: SUB, body: { payment_status: "PAID", irn: irnOf("DR2") } }), 400, "GW_INVOICE_REFERENCE_MISMATCH");
  await expectProblem(await h.call("GET", `/api/v1/invoice/confirm/${irnOf("NOPE1")}`, { sub: SUB }), 404, "GW_INVOICE_NOT_FOUND");
  await expectProblem(await h.call("GET", `/api/v1/invoice/confirm/NOPE1-5A7B9C1D-20240611`, { sub: SUB }), 403, "GW_INVOICE_IRN_FORBIDDEN");
  await expectProblem(await h.call("GET", `/api/v1/invoice/confirm/${irn}`), 400, "GW_SUB_BUSINESS_ID_REQUIRED");
});

test("inbound download and acknowledgement always → 503 GW_INVOICE_OPERATION_UNAVAILABLE (both modes)", async () => {
  const calls = h.sim.state.totalCalls();
  const body = await expectProblem(await h.call("GET", `/api/v1/invoice/inbound/${irnOf("IN1")}/download`, { sub: SUB }), 503, "GW_INVOICE_OPERATION_UNAVAILABLE");
  assert.is(body.retry.strategy, "CONTACT_SUPPORT");
  await expectProblem(await h.call("POST", `/api/v1/invoice/inbound/${irnOf("IN1")}/acknowledge`, { sub: SUB, body: {} }), 503, "GW_INVOICE_OPERATION_UNAVAILABLE");
  await expectProblem(await h.call("GET", `/api/v1/invoice/inbound/${irnOf("IN1")}/download`, { host: STORED }), 503, "GW_INVOICE_OPERATION_UNAVAILABLE");
  assert.is(h.sim.state.totalCalls(), calls, "the regulator is never called");
});

test.run();
