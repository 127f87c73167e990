import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { RegulatorSimulator } from "../../adapters/regulator/simulator/server.ts";
import { call, DEMO, demoInvoice, startDemoSimulator } from "./simulator-helpers.ts";

const test = suite("simulator: IRN validation, validate, sign, transmit, confirm, download, update, resources");
let sim: RegulatorSimulator;

test.before(async () => {
  sim = await startDemoSimulator();
});
test.after(async () => {
  await sim.close();
});
test.before.each(() => {
  sim.reset();
});

const MULTI_RETAIL = { businessId: "8a4b0d3f-2c5e-4f7a-9b1c-3d4e5f6a7b02", tin: "22222222-0001", serviceId: "5A7B9C1D" };
const MULTI_LOGISTICS = { businessId: "9b5c1e4a-3d6f-4a8b-8c2d-4e5f6a7b8c03", tin: "22222222-0002", serviceId: "6B8C0D2E" };
const INACTIVE_ENTITY_BUSINESS = "a06d2f5b-4e7a-4b9c-9d3e-5f6a7b8c9d04";
const NO_TEMPLATE_BUSINESS = "b17e3a6c-5f8b-4cad-8e4f-6a7b8c9d0e05";

const irnValidate = (body: unknown) => call(sim, "POST", "/api/v1/invoice/irn/validate", { body });
const sign = (body: unknown) => call(sim, "POST", "/api/v1/invoice/sign", { body });
const transmit = (irn: string) => call(sim, "POST", `/api/v1/invoice/transmit/${encodeURIComponent(irn)}`, { body: {} });

function pointers(r: { json: any }): string[] {
  return r.json.error.details.map((d: any) => d.pointer);
}

test("IRN validation: a good IRN → 200 { code: 200, data: { ok: true } }", async () => {
  const r = await irnValidate({ invoice_reference: "INV001", business_id: DEMO.businessId, irn: "INV001-94ND90NR-20240611" });
  assert.is(r.status, 200);
  assert.equal(r.json, { code: 200, data: { ok: true } });
  assert.is(sim.state.calls("irn-validate"), 1);
});

test("IRN validation: bad format, foreign service id, impossible date, reference mismatch → 400 irn_invalid", async () => {
  const cases: Array<[string, string, string]> = [
    ["INV-001-94ND90NR-20240611", "INV-001", "FORMAT"], // invoice number not alphanumeric
    ["INV001-94ND90N-20240611", "INV001", "FORMAT"], // 7-char service id
    ["INV001-94ND90NR-2024061", "INV001", "FORMAT"], // short date
    ["INV001-5A7B9C1D-20240611", "INV001", "MISMATCH"], // another business's service id
    ["INV001-94ND90NR-20240231", "INV001", "FORMAT"], // 31 February
    ["INV001-94ND90NR-20241301", "INV001", "FORMAT"], // month 13
  ];
  for (const [irn, ref, code] of cases) {
    const r = await irnValidate({ invoice_reference: ref, business_id: DEMO.businessId, irn });
    assert.is(r.status, 400, irn);
    assert.is(r.json.error.id, "irn_invalid", irn);
    assert.is(r.json.error.details[0].pointer, "/irn", irn);
    assert.is(r.json.error.details[0].code, code, irn);
  }
  const mismatch = await irnValidate({ invoice_reference: "INV002", business_id: DEMO.businessId, irn: "INV001-94ND90NR-20240611" });
  assert.is(mismatch.json.error.id, "irn_invalid");
  assert.equal(pointers(mismatch), ["/invoice_reference"]);
});

test("IRN validation: unknown business 404, inactive 400, no template 400, missing fields 400", async () => {
  const unknown = await irnValidate({ invoice_reference: "INV001", business_id: "nope", irn: "INV001-94ND90NR-20240611" });
  assert.is(unknown.status, 404);
  assert.is(unknown.json.error.id, "business_not_found");
  const inactive = await irnValidate({ invoice_reference: "INV001", business_id: INACTIVE_ENTITY_BUSINESS, irn: "INV001-7C9D1E3F-20240611" });
  assert.is(inactive.status, 400);
  assert.is(inactive.json.error.id, "business_inactive");
  const noTemplate = await irnValidate({ invoice_reference: "INV001", business_id: NO_TEMPLATE_BUSINESS, irn: "INV001-8D0E2F4A-20240611" });
  assert.is(noTemplate.status, 400);
  assert.is(noTemplate.json.error.id, "irn_template_missing");
  const missing = await irnValidate({ business_id: DEMO.businessId });
  assert.is(missing.status, 400);
  assert.is(missing.json.error.id, "validation_failed");
  assert.equal(pointers(missing), ["/invoice_reference", "/irn"]);
});

test("validate: a good document → 200 and nothing is signed", async () => {
  const r = await call(sim, "POST", "/api/v1/invoice/validate", { body: demoInvoice() });
  assert.is(r.status, 200);
  assert.equal(r.json, { code: 200, data: { ok: true } });
  assert.is(sim.state.signedIrns().length, 0);
});

test("validate: problems are listed as JSON pointers", async () => {
  const doc = demoInvoice("INV001", {
    document_currency_code: "XXX",
    issue_date: "2024-02-30",
    invoice_type_code: undefined,
  });
  delete doc.invoice_line[0].invoiced_quantity;
  doc.invoice_line.push({ invoiced_quantity: -1, line_extension_amount: "10", item: {}, price: { price_amount: 1 } });
  delete doc.legal_monetary_total.payable_amount;
  const r = await call(sim, "POST", "/api/v1/invoice/validate", { body: doc });
  assert.is(r.status, 400);
  assert.is(r.json.error.id, "validation_failed");
  assert.equal(pointers(r).sort(), [
    "/document_currency_code",
    "/invoice_line/0/invoiced_quantity",
    "/invoice_line/1/invoiced_quantity",
    "/invoice_line/1/item/name",
    "/invoice_line/1/line_extension_amount",
    "/invoice_type_code",
    "/issue_date",
    "/legal_monetary_total/payable_amount",
  ]);
  const byPointer = new Map(r.json.error.details.map((d: any) => [d.pointer, d.code]));
  assert.is(byPointer.get("/invoice_line/0/invoiced_quantity"), "REQUIRED");
  assert.is(byPointer.get("/invoice_line/1/invoiced_quantity"), "RANGE");
  assert.is(byPointer.get("/invoice_line/1/line_extension_amount"), "TYPE");
  assert.is(byPointer.get("/document_currency_code"), "UNKNOWN_VALUE");

  const empty = await call(sim, "POST", "/api/v1/invoice/validate", { body: demoInvoice("INV001", { invoice_line: [] }) });
  assert.equal(pointers(empty), ["/invoice_line"]);
  const nothing = await call(sim, "POST", "/api/v1/invoice/validate", { body: {} });
  assert.equal(pointers(nothing), [
    "/business_id",
    "/irn",
    "/issue_date",
    "/invoice_type_code",
    "/document_currency_code",
    "/accounting_supplier_party",
    "/invoice_line",
    "/legal_monetary_total",
  ]);
});

test("validate: supplier TIN and IRN must belong to the business", async () => {
  const doc = demoInvoice("INV001", { irn: "INV001-5A7B9C1D-20240611" });
  doc.accounting_supplier_party.tin = "22222222-0001";
  const r = await call(sim, "POST", "/api/v1/invoice/validate", { body: doc });
  assert.is(r.status, 400);
  assert.is(r.json.error.id, "validation_failed");
  assert.equal(pointers(r), ["/irn", "/accounting_supplier_party/tin"]);
  assert.ok(r.json.error.details.every((d: any) => d.code === "MISMATCH"));
});

test("sign: success 201 { code: 201, data: { ok: true } }, then a duplicate IRN → 409 duplicate_irn", async () => {
  const first = await sign(demoInvoice("INV100"));
  assert.is(first.status, 201);
  assert.equal(first.json, { code: 201, data: { ok: true } });
  assert.ok(sim.state.isSigned("INV100-94ND90NR-20240611"));
  assert.equal(sim.state.signedIrns(), ["INV100-94ND90NR-20240611"]);
  const dup = await sign(demoInvoice("INV100"));
  assert.is(dup.status, 409);
  assert.is(dup.json.code, 409);
  assert.is(dup.json.error.id, "duplicate_irn");
  assert.is(sim.state.calls("sign"), 2);
  assert.is(sim.state.signedIrns().length, 1);
});

test("sign: validation problems, unknown, inactive and template-less businesses are 4xx and sign nothing", async () => {
  const bad = await sign(demoInvoice("INV101", { invoice_line: [] }));
  assert.is(bad.status, 400);
  assert.is(bad.json.error.id, "validation_failed");
  const unknown = await sign(demoInvoice("INV101", { business_id: "00000000-0000-4000-8000-000000000000" }));
  assert.is(unknown.status, 404);
  assert.is(unknown.json.error.id, "business_not_found");
  const inactive = await sign(demoInvoice("INV101", { business_id: INACTIVE_ENTITY_BUSINESS, irn: "INV101-7C9D1E3F-20240611" }));
  assert.is(inactive.json.error.id, "business_inactive");
  const noTemplate = await sign(demoInvoice("INV101", { business_id: NO_TEMPLATE_BUSINESS, irn: "INV101-8D0E2F4A-20240611" }));
  assert.is(noTemplate.json.error.id, "irn_template_missing");
  const notJson = await call(sim, "POST", "/api/v1/invoice/sign", { rawBody: "<xml/>" });
  assert.is(notJson.status, 400);
  assert.is(notJson.json.error.id, "invalid_json");
  assert.is(sim.state.signedIrns().length, 0);
});

test("sign: each business of the multi entity signs with its own service id", async () => {
  for (const b of [MULTI_RETAIL, MULTI_LOGISTICS]) {
    const doc = demoInvoice("M1", { business_id: b.businessId, irn: `M1-${b.serviceId}-20240611` });
    doc.accounting_supplier_party.tin = b.tin;
    const r = await sign(doc);
    assert.is(r.status, 201, JSON.stringify(r.json));
  }
  const crossed = demoInvoice("M2", { business_id: MULTI_RETAIL.businessId, irn: `M2-${MULTI_LOGISTICS.serviceId}-20240611` });
  crossed.accounting_supplier_party.tin = MULTI_RETAIL.tin;
  const r = await sign(crossed);
  assert.is(r.status, 400);
  assert.equal(pointers(r), ["/irn"]);
});

test("transmit: without sign → 404 irn_not_found; after sign → 201; again → 409 already_transmitted", async () => {
  const irn = "INV200-94ND90NR-20240611";
  const early = await transmit(irn);
  assert.is(early.status, 404);
  assert.is(early.json.error.id, "irn_not_found");
  assert.is((await sign(demoInvoice("INV200"))).status, 201);
  const ok = await transmit(irn);
  assert.is(ok.status, 201);
  assert.equal(ok.json, { code: 201, data: { ok: true } });
  assert.ok(sim.state.isTransmitted(irn));
  assert.equal(sim.state.transmittedIrns(), [irn]);
  const again = await transmit(irn);
  assert.is(again.status, 409);
  assert.is(again.json.error.id, "already_transmitted");
  // An empty body is accepted too.
  assert.is((await sign(demoInvoice("INV201"))).status, 201);
  const noBody = await call(sim, "POST", "/api/v1/invoice/transmit/INV201-94ND90NR-20240611");
  assert.is(noBody.status, 201);
  assert.is(sim.state.calls("transmit"), 4);
});

test("confirm, download and update by IRN", async () => {
  const irn = "INV300-94ND90NR-20240611";
  const missing = await call(sim, "GET", `/api/v1/invoice/confirm/${irn}`);
  assert.is(missing.status, 404);
  assert.is(missing.json.error.id, "irn_not_found");
  assert.is((await call(sim, "GET", `/api/v1/invoice/download/${irn}`)).status, 404);
  assert.is((await call(sim, "PATCH", `/api/v1/invoice/update/${irn}`, { body: { payment_status: "PAID" } })).status, 404);

  const doc = demoInvoice("INV300");
  await sign(doc);
  const confirm = await call(sim, "GET", `/api/v1/invoice/confirm/${irn}`);
  assert.is(confirm.status, 200);
  assert.is(confirm.json.code, 200);
  assert.is(confirm.json.data.irn, irn);
  assert.is(confirm.json.data.business_id, DEMO.businessId);
  assert.is(confirm.json.data.status, "SIGNED");
  assert.is(confirm.json.data.payment_status, "PENDING");
  assert.type(confirm.json.data.signed_at, "string");
  assert.is(confirm.json.data.transmitted_at, null);
  assert.not.ok("invoice" in confirm.json.data);

  await transmit(irn);
  const update = await call(sim, "PATCH", `/api/v1/invoice/update/${irn}`, { body: { payment_status: "PAID" } });
  assert.is(update.status, 200);
  assert.equal(update.json, { code: 200, data: { ok: true } });
  const bad = await call(sim, "PATCH", `/api/v1/invoice/update/${irn}`, { body: { payment_status: "LATE" } });
  assert.is(bad.status, 400);
  assert.equal(pointers(bad), ["/payment_status"]);

  const download = await call(sim, "GET", `/api/v1/invoice/download/${irn}`);
  assert.is(download.status, 200);
  assert.is(download.json.data.status, "TRANSMITTED");
  assert.is(download.json.data.payment_status, "PAID");
  assert.type(download.json.data.transmitted_at, "string");
  assert.equal(download.json.data.invoice, doc);
  assert.is(sim.state.invoice(irn)?.payment_status, "PAID");
});

test("resources: every list answers 200 with a non-empty array; unknown name → 404", async () => {
  const names = [
    "currencies",
    "invoice-types",
    "tax-categories",
    "payment-means",
    "services-codes",
    "vat-exemptions",
    "hs-codes",
    "countries",
    "states",
    "lgas",
  ];
  for (const name of names) {
    const r = await call(sim, "GET", `/api/v1/invoice/resources/${name}`);
    assert.is(r.status, 200, name);
    assert.is(r.json.code, 200);
    assert.ok(Array.isArray(r.json.data) && r.json.data.length > 0, name);
  }
  const currencies = await call(sim, "GET", "/api/v1/invoice/resources/currencies");
  assert.ok(currencies.json.data.some((c: any) => c.code === "NGN"));
  const unknown = await call(sim, "GET", "/api/v1/invoice/resources/planets");
  assert.is(unknown.status, 404);
  assert.is(unknown.json.error.id, "resource_not_found");
  assert.is(sim.state.calls("resources"), names.length + 2);
});

test("reset forgets signed and transmitted invoices", async () => {
  await sign(demoInvoice("INV400"));
  await transmit("INV400-94ND90NR-20240611");
  sim.reset();
  assert.equal(sim.state.signedIrns(), []);
  assert.equal(sim.state.transmittedIrns(), []);
  assert.is((await sign(demoInvoice("INV400"))).status, 201);
});

test.run();
