/**
 * Simulator: the "Exchange E-Invoice" routes (transmit with its webhook precondition, confirm receipt,
 * lookup by IRN / TIN / party, self-health-check, pull), parties and invoice search — the documented
 * endpoints of FIRS-MBS Endpoints 1.0.md (mukhtar-github/taxpoynt-platform).
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { RegulatorSimulator } from "../../../../adapters/regulator/simulator/server.ts";
import { call, DEMO, demoInvoice, startDemoSimulator, startTestSimulator } from "./simulator-helpers.ts";

const test = suite("simulator: exchange routes, parties, invoice search");
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

const irnOf = (no: string) => `${no}-${DEMO.serviceId}-20240611`;
const sign = async (no: string, overrides: Record<string, unknown> = {}) => {
  const r = await call(sim, "POST", "/api/v1/invoice/sign", { body: demoInvoice(no, overrides) });
  assert.is(r.status, 201, JSON.stringify(r.json));
  return irnOf(no);
};
const transmit = (irn: string, body: unknown = {}) => call(sim, "POST", `/api/v1/invoice/transmit/${encodeURIComponent(irn)}`, { body });
const confirmReceipt = (irn: string) => call(sim, "PATCH", `/api/v1/invoice/transmit/${encodeURIComponent(irn)}`, { body: {} });

test("transmit: never signed → 404; signed → 201; again → 409; an empty body (the documented curl sends \"\") is accepted", async () => {
  const early = await transmit(irnOf("T1"));
  assert.is(early.status, 404);
  assert.is(early.json.error.public_message, "invoice not found");
  const irn = await sign("T1");
  const ok = await transmit(irn);
  assert.is(ok.status, 201);
  assert.equal(ok.json, { code: 201, data: { ok: true } });
  assert.equal(sim.state.transmittedIrns(), [irn]);
  assert.is((await transmit(irn)).status, 409);
  const other = await sign("T2");
  assert.is((await call(sim, "POST", `/api/v1/invoice/transmit/${other}`, { rawBody: '""' })).status, 201);
  assert.is((await call(sim, "POST", `/api/v1/invoice/transmit/${await sign("T3")}`)).status, 201);
});

test("transmit: a business whose webhook URL is not set up → 400 \"webhook url is not setup\", nothing transmitted", async () => {
  const tsim = await startTestSimulator();
  try {
    const irn = "NW1-NOWH0001-20240611";
    const doc = demoInvoice("NW1", { business_id: "b1000000-0000-4000-8000-000000001101", irn });
    doc.accounting_supplier_party.tin = "10000011-0001";
    assert.is((await call(tsim, "POST", "/api/v1/invoice/sign", { body: doc })).status, 201);
    const r = await call(tsim, "POST", `/api/v1/invoice/transmit/${irn}`, { body: {} });
    assert.is(r.status, 400);
    assert.is(r.json.error.public_message, "webhook url is not setup");
    assert.is(r.json.error.handler, "transmit_actions");
    assert.not.ok(tsim.state.isTransmitted(irn));
  } finally {
    await tsim.close();
  }
});

test("confirm receipt (PATCH …/transmit/{IRN}): only for a transmitted invoice; idempotent", async () => {
  const irn = await sign("R1");
  assert.is((await confirmReceipt(irn)).status, 404, "not transmitted yet");
  await transmit(irn);
  const r = await confirmReceipt(irn);
  assert.is(r.status, 200);
  assert.equal(r.json, { code: 200, data: { ok: true } });
  const at = sim.state.invoice(irn)!.receipt_confirmed_at;
  assert.type(at, "string");
  assert.is((await confirmReceipt(irn)).status, 200);
  assert.is(sim.state.invoice(irn)!.receipt_confirmed_at, at);
  assert.ok(sim.state.isReceiptConfirmed(irn));
  assert.is(sim.state.calls("confirm-receipt"), 3);
});

test("lookup by IRN, by TIN (supplier or customer) and by party id", async () => {
  const irn = await sign("L1");
  assert.is((await call(sim, "GET", `/api/v1/invoice/transmit/lookup/${irn}`)).status, 404, "not transmitted");
  await transmit(irn);
  const byIrn = await call(sim, "GET", `/api/v1/invoice/transmit/lookup/${irn}`);
  assert.is(byIrn.status, 200);
  assert.is(byIrn.json.data.irn, irn);
  assert.is(byIrn.json.data.supplier_tin, DEMO.tin);
  assert.is(byIrn.json.data.receipt_confirmed, false);
  for (const tin of [DEMO.tin, "99999999-0001"]) {
    const byTin = await call(sim, "GET", `/api/v1/invoice/transmit/lookup/tin/${tin}`);
    assert.equal(byTin.json.data.map((x: { irn: string }) => x.irn), [irn], tin);
  }
  assert.equal((await call(sim, "GET", "/api/v1/invoice/transmit/lookup/tin/00000000-0000")).json.data, []);

  const party = await call(sim, "POST", "/api/v1/invoice/party", {
    body: { business_id: DEMO.businessId, party_name: "Acme Buyers Ltd", tin: "99999999-0001", email: "accounts@acme.ng", postal_address: { street_name: "1 Marina", city_name: "Lagos", postal_zone: "101001", country: "NG" } },
  });
  const partyId = party.json.data.id as string;
  const doc = demoInvoice("L2");
  doc.accounting_customer_party = { id: partyId, tin: "99999999-0001", email: "accounts@acme.ng" };
  assert.is((await call(sim, "POST", "/api/v1/invoice/sign", { body: doc })).status, 201);
  await transmit(irnOf("L2"));
  const byParty = await call(sim, "GET", `/api/v1/invoice/transmit/lookup/party/${partyId}`);
  assert.equal(byParty.json.data.map((x: { irn: string }) => x.irn), [irnOf("L2")]);
  assert.is(sim.state.calls("transmit-lookup"), 6);
});

test("pull: transmitted invoices, filtered by confirmed and by date range", async () => {
  const a = await sign("P1");
  const b = await sign("P2");
  await sign("P3");
  await transmit(a);
  await transmit(b);
  await confirmReceipt(a);
  const pull = async (q: string) => (await call(sim, "GET", `/api/v1/invoice/transmit/pull${q}`)).json.data.map((x: { irn: string }) => x.irn).sort();
  assert.equal(await pull(""), [a, b]);
  assert.equal(await pull("?confirmed=true"), [a]);
  assert.equal(await pull("?confirmed=false"), [b]);
  const today = new Date().toISOString().slice(0, 10);
  assert.equal(await pull(`?confirmed=true&from=${today}&to=${today}`), [a]);
  assert.equal(await pull("?from=2023-01-11&to=2025-01-10"), []);
  assert.is((await call(sim, "GET", "/api/v1/invoice/transmit/pull?from=yesterday")).status, 400);
});

test("self-health-check answers ok with credentials", async () => {
  const r = await call(sim, "GET", "/api/v1/invoice/transmit/self-health-check");
  assert.is(r.status, 200);
  assert.equal(r.json, { code: 200, data: { ok: true } });
});

test("party: create (201, with a postal address id), refuse incomplete ones, search by business with party_name and paging", async () => {
  const create = (body: Record<string, unknown>) => call(sim, "POST", "/api/v1/invoice/party", { body });
  const address = { street_name: "91, owonikoko street", city_name: "Malta", postal_zone: "023401", country: "NG" };
  const first = await create({ business_id: DEMO.businessId, party_name: "Dangote Group TMZ", tin: "TIN-000001", email: "business@email.com", telephone: "+23480254000000", postal_address: address });
  assert.is(first.status, 201);
  assert.is(first.json.code, 201);
  assert.match(first.json.data.id, /^[0-9a-f-]{36}$/);
  assert.match(first.json.data.postal_address_id, /^[0-9a-f-]{36}$/);
  // A second party reusing the first one's postal_address_id.
  const second = await create({ business_id: DEMO.businessId, party_name: "Other Buyer", tin: "TIN-000002", email: "b@x.ng", postal_address_id: first.json.data.postal_address_id });
  assert.is(second.status, 201);
  for (const [body, text] of [
    [{ business_id: DEMO.businessId, party_name: "X", tin: "T", postal_address: address }, "email is required"],
    [{ business_id: DEMO.businessId, party_name: "X", email: "x@y.ng", postal_address: address }, "tin is required"],
    [{ business_id: DEMO.businessId, party_name: "X", tin: "T", email: "x@y.ng" }, "postal_address or postal_address_id is required"],
    [{ business_id: DEMO.businessId, party_name: "X", tin: "T", email: "x@y.ng", telephone: "0803", postal_address: address }, "telephone must start with +"],
    [{ business_id: "31569955-0001", party_name: "X", tin: "T", email: "x@y.ng", postal_address: address }, "invalid UUID length: 13"],
  ] as const) {
    const r = await create(body);
    assert.is(r.status, 400, text);
    assert.match(r.json.error.details, text);
  }
  assert.is(sim.state.parties().length, 2);

  const search = async (q: string) => (await call(sim, "GET", `/api/v1/invoice/party/${DEMO.businessId}${q}`)).json.data;
  const all = await search("?size=20&page=1&sort_by=created_at&sort_direction_desc=true");
  assert.is(all.page.totalCount, 2);
  assert.equal(all.items.map((p: { party_name: string }) => p.party_name).sort(), ["Dangote Group TMZ", "Other Buyer"]);
  assert.equal((await search("?party_name=dangote")).items.map((p: { tin: string }) => p.tin), ["TIN-000001"]);
  const paged = await search("?size=1&page=2");
  assert.equal(paged.page, { page: 2, size: 1, hasNextPage: false, hasPreviousPage: true, totalCount: 2 });
  assert.is((await call(sim, "GET", "/api/v1/invoice/party/31569955-0001")).status, 400, "the recorded example's id is not a UUID");
});

test("invoice search (GET /api/v1/invoice/{BUSINESS_ID}) with the documented filters", async () => {
  await sign("S1");
  await sign("S2", { invoice_type_code: "380", due_date: "2024-06-14" });
  await call(sim, "PATCH", `/api/v1/invoice/update/${irnOf("S1")}`, { body: { payment_status: "PAID" } });
  const search = async (q: string) => (await call(sim, "GET", `/api/v1/invoice/${DEMO.businessId}${q}`)).json.data;
  const all = await search("?size=20&page=1&sort_by=created_at&sort_direction_desc=true");
  assert.is(all.page.totalCount, 2);
  assert.equal((await search(`?irn=${irnOf("S2")}`)).items.map((x: { irn: string }) => x.irn), [irnOf("S2")]);
  assert.equal((await search("?payment_status=PAID")).items.map((x: { irn: string }) => x.irn), [irnOf("S1")]);
  assert.equal((await search("?invoice_type_code=380&due_date=2024-06-14&document_currency_code=NGN&tax_currency_code=NGN")).items.length, 1);
  assert.equal((await search("?issue_date=2024-06-14")).items, []);
  assert.is((await call(sim, "GET", "/api/v1/invoice/00000000-0000-4000-8000-000000000000")).status, 404);
});

test.run();
