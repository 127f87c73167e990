/**
 * End to end through the gateway against the realistic simulator, for the demo taxpayer whose IRN
 * template has the real answer's example-text form (`{{invoice_id(e.g:INV00XXX)}}-3F7A2C1E-
 * {{YYYYMMDD(e.g:20250629)}}`, entity without service_id): onboarding, billed sign, transmit, the
 * relayed reads and the payment update (CANCELED), reverification — issue 17's "done means".
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DEMO_KEY, FEE_KOBO, OPENING_KOBO, PASSTHROUGH, expectProblem, startSigningHarness } from "./signing-helpers.ts";
import { demoInvoice } from "../../adapters/regulator/simulator/simulator-helpers.ts";

const h = await startSigningHarness();
test.after(() => h.close());

const EXAMPLE = {
  email: "example-template@demo.ng",
  password: "demo-password-6",
  businessId: "d3a05c8e-7b1d-4e2f-8a6b-8c9d0e1f2a07",
  tin: "66666666-0001",
  template: "{{invoice_id(e.g:INV00XXX)}}-3F7A2C1E-{{YYYYMMDD(e.g:20250629)}}",
};
const IRN = "INV00123-3F7A2C1E-20250629";

function doc(irn = IRN): Record<string, any> {
  const d = demoInvoice("INV00123", { business_id: EXAMPLE.businessId, irn, issue_date: "2025-06-29" });
  d.accounting_supplier_party.tin = EXAMPLE.tin;
  return d;
}

test("onboarding: the entity without service_id and the example-text template → 201, template stored as the regulator sent it", async () => {
  const res = await h.tg.call("/sub-businesses", {
    method: "POST",
    host: PASSTHROUGH,
    headers: { "x-api-key": DEMO_KEY, "x-idempotency-key": "onboard-example-0001" },
    body: { regulatorCredentials: { email: EXAMPLE.email, password: EXAMPLE.password } },
  });
  const text = await res.text();
  assert.is(res.status, 201, text);
  const body = JSON.parse(text);
  assert.is(body.gatewaySubBusinessId, EXAMPLE.businessId);
  assert.is(body.irnTemplate, EXAMPLE.template);
  assert.is(body.tin, EXAMPLE.tin);
});

test("sign an IRN built from the template → 201 at the realistic simulator, one fee debited", async () => {
  const res = await h.sign(doc(), { key: "example-sign-0001", sub: EXAMPLE.businessId });
  const text = await res.text();
  assert.is(res.status, 201, text);
  assert.equal(JSON.parse(text), { code: 201, data: { ok: true } });
  assert.ok(h.sim.state.isSigned(IRN));
  assert.is((await h.ledgerBalanced()).balanceKobo, OPENING_KOBO - FEE_KOBO);
});

test("an IRN with another business's service ID is refused locally (403), before any call", async () => {
  const calls = h.sim.state.calls("sign");
  await expectProblem(await h.sign(doc("INV00124-94ND90NR-20250629"), { key: "example-sign-0002", sub: EXAMPLE.businessId }), 403, "GW_INVOICE_IRN_FORBIDDEN");
  assert.is(h.sim.state.calls("sign"), calls);
});

test("transmit, then the relayed reads and the payment update to CANCELED", async () => {
  const t = await h.transmit(IRN, {}, { sub: EXAMPLE.businessId });
  assert.is(t.status, 201, await t.clone().text());
  assert.ok(h.sim.state.isTransmitted(IRN));
  const confirm = await h.call("GET", `/api/v1/invoice/confirm/${IRN}`, { sub: EXAMPLE.businessId });
  assert.is(confirm.status, 200);
  assert.is((await confirm.json()).data.status, "TRANSMITTED");
  const update = await h.call("PATCH", `/api/v1/invoice/update/${IRN}`, { sub: EXAMPLE.businessId, body: { payment_status: "CANCELED", reference: "void-1" } });
  assert.is(update.status, 200, await update.clone().text());
  const download = await h.call("GET", `/api/v1/invoice/download/${IRN}`, { sub: EXAMPLE.businessId });
  assert.is((await download.json()).data.payment_status, "CANCELED");
  const types = await h.call("GET", "/api/v1/invoice/resources/invoice-types");
  assert.is((await types.json()).data.length, 20);
  await expectProblem(await h.call("GET", "/api/v1/invoice/resources/states"), 404, "GW_ROUTE_NOT_FOUND");
});

test("reverification against the real entity shape → unchanged", async () => {
  const res = await h.tg.call(`/sub-businesses/${EXAMPLE.businessId}/identity-reverification`, {
    method: "POST",
    host: PASSTHROUGH,
    headers: { "x-api-key": DEMO_KEY, "x-idempotency-key": "reverify-example-0001" },
    body: { regulatorCredentials: { email: EXAMPLE.email, password: EXAMPLE.password } },
  });
  const text = await res.text();
  assert.is(res.status, 200, text);
  assert.is(JSON.parse(text).status, "unchanged");
});

test.run();
