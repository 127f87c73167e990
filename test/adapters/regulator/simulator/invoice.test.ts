/**
 * Simulator: IRN validation, validate, sign, confirm, download, payment update and resources, as the
 * real API answers them: the documented invoice schema enforced (docs/Invoice_Schema.md and the
 * annotated MBS examples), the recorded invoice-type and currency lists, payment statuses PENDING /
 * PAID / CANCELED, refusals in the real envelope with free-text details.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { RegulatorSimulator } from "../../../../adapters/regulator/simulator/server.ts";
import { call, DEMO, demoInvoice, startDemoSimulator } from "./simulator-helpers.ts";

const test = suite("simulator: IRN validation, validate, sign, confirm, download, update, resources");
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

const VALIDATION_FAILED = "validation failed: we are unable to process your request. also confirm this is not a duplicate request";
const MULTI_RETAIL = { businessId: "8a4b0d3f-2c5e-4f7a-9b1c-3d4e5f6a7b02", tin: "22222222-0001", serviceId: "5A7B9C1D" };
const MULTI_LOGISTICS = { businessId: "9b5c1e4a-3d6f-4a8b-8c2d-4e5f6a7b8c03", tin: "22222222-0002", serviceId: "6B8C0D2E" };
const EXAMPLE = { businessId: "d3a05c8e-7b1d-4e2f-8a6b-8c9d0e1f2a07", tin: "66666666-0001", serviceId: "3F7A2C1E" };
const INACTIVE_ENTITY_BUSINESS = "a06d2f5b-4e7a-4b9c-9d3e-5f6a7b8c9d04";
const NO_TEMPLATE_BUSINESS = "b17e3a6c-5f8b-4cad-8e4f-6a7b8c9d0e05";

const irnValidate = (body: unknown) => call(sim, "POST", "/api/v1/invoice/irn/validate", { body });
const validate = (body: unknown) => call(sim, "POST", "/api/v1/invoice/validate", { body });
const sign = (body: unknown) => call(sim, "POST", "/api/v1/invoice/sign", { body });

/** A refusal: status, the recorded validation public message (or `publicMessage`), the details text. */
function refused(r: { status: number; json: any }, status: number, publicMessage = VALIDATION_FAILED): string {
  assert.is(r.status, status, JSON.stringify(r.json));
  assert.is(r.json.code, status);
  assert.is(r.json.data, null);
  assert.is(r.json.error.public_message, publicMessage);
  return r.json.error.details ?? "";
}

test("IRN validation: a good IRN → 200 { code: 200, data: { ok: true } }", async () => {
  const r = await irnValidate({ invoice_reference: "INV001", business_id: DEMO.businessId, irn: "INV001-94ND90NR-20240611" });
  assert.is(r.status, 200);
  assert.equal(r.json, { code: 200, data: { ok: true } });
  assert.is(sim.state.calls("irn-validate"), 1);
});

test("IRN validation: bad format, foreign service id, impossible date, reference mismatch → 400 \"irn validation failed: …\"", async () => {
  for (const [irn, ref] of [
    ["INV-001-94ND90NR-20240611", "INV-001"], // invoice number not alphanumeric
    ["INV001-94ND90N-20240611", "INV001"], // 7-char service id
    ["INV001-94ND90NR-2024061", "INV001"], // short date
    ["INV001-5A7B9C1D-20240611", "INV001"], // another business's service id
    ["INV001-94ND90NR-20240231", "INV001"], // 31 February
    ["INV001-94ND90NR-20241301", "INV001"], // month 13
    ["INV001-94ND90NR-20240611", "INV002"], // reference differs from the IRN's invoice number
  ] as const) {
    const details = refused(await irnValidate({ invoice_reference: ref, business_id: DEMO.businessId, irn }), 400);
    assert.match(details, /^irn validation failed: /, irn);
  }
});

test("IRN validation against the real template form `{{invoice_id(e.g:INV00XXX)}}-3F7A2C1E-{{YYYYMMDD(e.g:20250629)}}`", async () => {
  const ok = await irnValidate({ invoice_reference: "INV00123", business_id: EXAMPLE.businessId, irn: "INV00123-3F7A2C1E-20250629" });
  assert.is(ok.status, 200, JSON.stringify(ok.json));
  const bad = await irnValidate({ invoice_reference: "INV00123", business_id: EXAMPLE.businessId, irn: "INV00123-94ND90NR-20250629" });
  assert.match(refused(bad, 400), "template");
});

test("IRN validation: business id not a UUID, unknown, inactive, without template, fields missing", async () => {
  assert.is(refused(await irnValidate({ invoice_reference: "INV001", business_id: "nope", irn: "INV001-94ND90NR-20240611" }), 400), "invalid UUID length: 4");
  refused(await irnValidate({ invoice_reference: "INV001", business_id: "00000000-0000-4000-8000-000000000000", irn: "INV001-94ND90NR-20240611" }), 404, "business not found");
  assert.is(refused(await irnValidate({ invoice_reference: "INV001", business_id: INACTIVE_ENTITY_BUSINESS, irn: "INV001-7C9D1E3F-20240611" }), 400), "business is not active");
  assert.is(refused(await irnValidate({ invoice_reference: "INV001", business_id: NO_TEMPLATE_BUSINESS, irn: "INV001-8D0E2F4A-20240611" }), 400), "business has no irn template");
  refused(await irnValidate({ business_id: DEMO.businessId }), 400);
});

test("validate: a good document → 200 and nothing is signed", async () => {
  const r = await validate(demoInvoice());
  assert.is(r.status, 200, JSON.stringify(r.json));
  assert.equal(r.json, { code: 200, data: { ok: true } });
  assert.is(sim.state.signedIrns().length, 0);
});

test("validate: the documented schema's required fields, named in the free-text details", async () => {
  const nothing = refused(await validate({}), 400);
  for (const field of [
    "business_id is required",
    "irn is required",
    "issue_date is required",
    "invoice_type_code is required",
    "document_currency_code is required",
    "tax_currency_code is required",
    "accounting_supplier_party is required",
    "legal_monetary_total is required",
    "invoice_line is required",
  ]) {
    assert.match(nothing, field);
  }
});

for (const [name, change, expected] of [
  ["supplier e-mail (\"now mandatory\")", (d: Record<string, any>) => delete d.accounting_supplier_party.email, "accounting_supplier_party.email is required"],
  ["supplier TIN", (d: Record<string, any>) => delete d.accounting_supplier_party.tin, "accounting_supplier_party.tin is required"],
  ["customer e-mail", (d: Record<string, any>) => delete d.accounting_customer_party.email, "accounting_customer_party.email is required"],
  ["tax_currency_code (sandbox notes: mandatory)", (d: Record<string, any>) => delete d.tax_currency_code, "tax_currency_code is required"],
  ["a telephone without +", (d: Record<string, any>) => (d.accounting_supplier_party.telephone = "08012345678"), "must start with +"],
  ["a party without id, name or address", (d: Record<string, any>) => (d.accounting_customer_party = { tin: "1", email: "a@b.ng" }), "accounting_customer_party.party_name is required"],
  ["an address field", (d: Record<string, any>) => delete d.accounting_supplier_party.postal_address.city_name, "postal_address.city_name is required"],
  ["a line's hsn_code", (d: Record<string, any>) => delete d.invoice_line[0].hsn_code, "invoice_line[0].hsn_code is required"],
  ["a line's price_unit", (d: Record<string, any>) => delete d.invoice_line[0].price.price_unit, "invoice_line[0].price.price_unit is required"],
  ["a zero quantity", (d: Record<string, any>) => (d.invoice_line[0].invoiced_quantity = 0), "invoice_line[0].invoiced_quantity must be greater than 0"],
  ["an empty invoice_line", (d: Record<string, any>) => (d.invoice_line = []), "invoice_line must have at least one line"],
  ["a payable amount", (d: Record<string, any>) => delete d.legal_monetary_total.payable_amount, "legal_monetary_total.payable_amount is required"],
  ["an impossible issue date", (d: Record<string, any>) => (d.issue_date = "2024-02-30"), "issue_date must be a date YYYY-MM-DD"],
  ["an unknown currency", (d: Record<string, any>) => (d.document_currency_code = "XXX"), "document_currency_code is not a known code"],
  ["invoice type 383 (not in the recorded list)", (d: Record<string, any>) => (d.invoice_type_code = "383"), "invoice_type_code is not a known code"],
  ["payment_status REJECTED", (d: Record<string, any>) => (d.payment_status = "REJECTED"), "payment_status is not a known code"],
] as const) {
  test(`validate: ${name} → 400 naming it`, async () => {
    const doc = demoInvoice();
    change(doc);
    assert.match(refused(await validate(doc), 400), expected);
  });
}

test("validate: invoice types follow the recorded list (380 Credit Note, 381 Commercial Invoice, 385 … 397)", async () => {
  for (const code of ["380", "381", "384", "385", "386", "388", "394", "395", "396", "397", "408"]) {
    const r = await validate(demoInvoice("INV001", { invoice_type_code: code }));
    assert.is(r.status, 200, code);
  }
});

test("validate: supplier TIN and IRN must belong to the business; referenced parties must exist", async () => {
  const doc = demoInvoice("INV001", { irn: "INV001-5A7B9C1D-20240611" });
  doc.accounting_supplier_party.tin = "22222222-0001";
  const details = refused(await validate(doc), 400);
  assert.match(details, "irn validation failed");
  assert.match(details, "accounting_supplier_party.tin does not match");
  const withParty = demoInvoice("INV001");
  withParty.accounting_customer_party = { id: "00000000-0000-4000-8000-00000000abcd", tin: "1", email: "a@b.ng" };
  assert.match(refused(await validate(withParty), 400), "accounting_customer_party.id party not found");
});

test("sign: success 201 { code: 201, data: { ok: true } }; a duplicate → the real 400 \"validation failed … not a duplicate request\"", async () => {
  const first = await sign(demoInvoice("INV100"));
  assert.is(first.status, 201);
  assert.equal(first.json, { code: 201, data: { ok: true } });
  assert.equal(sim.state.signedIrns(), ["INV100-94ND90NR-20240611"]);
  const dup = await sign(demoInvoice("INV100"));
  assert.is(refused(dup, 400), "an invoice with this irn already exists");
  assert.is(sim.state.calls("sign"), 2);
  assert.is(sim.state.signedIrns().length, 1);
});

test("sign: schema problems, unknown, inactive and template-less businesses, non-JSON bodies are refused and sign nothing", async () => {
  refused(await sign(demoInvoice("INV101", { invoice_line: [] })), 400);
  refused(await sign(demoInvoice("INV101", { business_id: "00000000-0000-4000-8000-000000000000" })), 404, "business not found");
  assert.is(refused(await sign(demoInvoice("INV101", { business_id: INACTIVE_ENTITY_BUSINESS, irn: "INV101-7C9D1E3F-20240611" })), 400), "business is not active");
  assert.is(refused(await sign(demoInvoice("INV101", { business_id: NO_TEMPLATE_BUSINESS, irn: "INV101-8D0E2F4A-20240611" })), 400), "business has no irn template");
  assert.is(refused(await call(sim, "POST", "/api/v1/invoice/sign", { rawBody: "<xml/>" }), 400), "request body is not valid JSON");
  assert.is(sim.state.signedIrns().length, 0);
});

test("sign: each business signs with the service ID of its own template (plain and example-text forms)", async () => {
  for (const b of [MULTI_RETAIL, MULTI_LOGISTICS, EXAMPLE]) {
    const doc = demoInvoice("M1", { business_id: b.businessId, irn: `M1-${b.serviceId}-20240611` });
    doc.accounting_supplier_party.tin = b.tin;
    const r = await sign(doc);
    assert.is(r.status, 201, JSON.stringify(r.json));
  }
  const crossed = demoInvoice("M2", { business_id: MULTI_RETAIL.businessId, irn: `M2-${MULTI_LOGISTICS.serviceId}-20240611` });
  crossed.accounting_supplier_party.tin = MULTI_RETAIL.tin;
  assert.match(refused(await sign(crossed), 400), "irn validation failed");
});

test("confirm, download and update by IRN; payment status PENDING / PAID / CANCELED (+ reference)", async () => {
  const irn = "INV300-94ND90NR-20240611";
  refused(await call(sim, "GET", `/api/v1/invoice/confirm/${irn}`), 404, "invoice not found");
  assert.is((await call(sim, "GET", `/api/v1/invoice/download/${irn}`)).status, 404);
  assert.is((await call(sim, "PATCH", `/api/v1/invoice/update/${irn}`, { body: { payment_status: "PAID" } })).status, 404);

  const doc = demoInvoice("INV300");
  await sign(doc);
  const confirm = await call(sim, "GET", `/api/v1/invoice/confirm/${irn}`);
  assert.is(confirm.status, 200);
  assert.equal(
    [confirm.json.data.irn, confirm.json.data.business_id, confirm.json.data.status, confirm.json.data.payment_status, confirm.json.data.transmitted_at],
    [irn, DEMO.businessId, "SIGNED", "PENDING", null],
  );
  assert.not.ok("invoice" in confirm.json.data);

  for (const status of ["PAID", "CANCELED", "PENDING"]) {
    const update = await call(sim, "PATCH", `/api/v1/invoice/update/${irn}`, { body: { payment_status: status, reference: `ref-${status}` } });
    assert.is(update.status, 200, status);
    assert.equal(update.json, { code: 200, data: { ok: true } });
    assert.is(sim.state.invoice(irn)?.payment_status, status);
    assert.is(sim.state.invoice(irn)?.payment_reference, `ref-${status}`);
  }
  for (const body of [{ payment_status: "REJECTED" }, { payment_status: "LATE" }, {}, { payment_status: "PAID", reference: 7 }]) {
    refused(await call(sim, "PATCH", `/api/v1/invoice/update/${irn}`, { body }), 400);
  }
  await call(sim, "PATCH", `/api/v1/invoice/update/${irn}`, { body: { payment_status: "CANCELED" } });
  const download = await call(sim, "GET", `/api/v1/invoice/download/${irn}`);
  assert.is(download.status, 200);
  assert.is(download.json.data.payment_status, "CANCELED");
  assert.equal(download.json.data.invoice, doc);
});

test("resources: the recorded lists with their real field names; the modelled ones; an unknown list is no route", async () => {
  const get = (name: string) => call(sim, "GET", `/api/v1/invoice/resources/${name}`, { noAuth: true });
  const types = await get("invoice-types");
  assert.is(types.json.data.length, 20);
  assert.equal(types.json.data.slice(0, 2), [
    { code: "380", value: "Credit Note" },
    { code: "381", value: "Commercial Invoice" },
  ]);
  assert.ok(!types.json.data.some((t: { code: string }) => t.code === "383"));
  const currencies = await get("currencies");
  assert.equal(currencies.json.data.find((c: { code: string }) => c.code === "NGN"), {
    symbol: "₦",
    name: "Nigerian Naira",
    symbol_native: "₦",
    decimal_digits: 2,
    rounding: 0,
    code: "NGN",
    name_plural: "Nigerian nairas",
  });
  assert.equal(Object.keys((await get("services-codes")).json.data[0]), ["description", "code"]);
  assert.equal(Object.keys((await get("vat-exemptions")).json.data[0]), ["heading_no", "harmonized_system_code", "tariff_category", "tariff", "description"]);
  const ng = (await get("countries")).json.data.find((c: { alpha_2: string }) => c.alpha_2 === "NG");
  assert.is(ng.name, "Nigeria");
  assert.is(ng.country_code, "566");
  for (const name of ["tax-categories", "payment-means", "hs-codes"]) {
    const r = await get(name);
    assert.is(r.status, 200, name);
    assert.ok(Array.isArray(r.json.data) && r.json.data.length > 0, name);
  }
  const unknown = await get("states");
  assert.is(unknown.status, 404);
  assert.not.ok("error" in unknown.json);
});

test("reset forgets signed and transmitted invoices", async () => {
  await sign(demoInvoice("INV400"));
  await call(sim, "POST", "/api/v1/invoice/transmit/INV400-94ND90NR-20240611", { body: {} });
  sim.reset();
  assert.equal(sim.state.signedIrns(), []);
  assert.equal(sim.state.transmittedIrns(), []);
  assert.is((await sign(demoInvoice("INV400"))).status, 201);
});

test.run();
