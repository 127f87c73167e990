/**
 * Stored → Pass-through with a backlog, over real HTTP: after the operator's mode change and approval
 * the processor still finishes the invoices the domain took in as Stored, and their routes stay
 * reachable on the (now Pass-through) domain — read, list, transmit, cancel — while any other invoice
 * id there is still 409 GW_OPERATION_MODE_CONFLICT.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ADMIN_KEY, STORED, accepted, expectProblem, intakeInvoice, startStoredHarness } from "./stored-helpers.ts";

const h = await startStoredHarness();
test.after(() => h.close());
let n = 0;
const admin = async (path: string, body: unknown) => {
  const res = await h.call("POST", path, { host: "localhost", apiKey: null, headers: { "x-admin-api-key": ADMIN_KEY, "x-idempotency-key": `backlog-admin-${++n}-0001` }, body });
  assert.ok(res.status < 300, `${path}: ${res.status} ${await res.clone().text()}`);
  return res.json() as Promise<Record<string, any>>;
};

test("Stored → Pass-through approved with invoices in flight: their read, list, transmit and cancel keep answering on the domain", async () => {
  const a = (await accepted(await h.intake(intakeInvoice("BL1"), { key: "backlog-bl1-0001" }))).invoiceId as string;
  const b = (await accepted(await h.intake(intakeInvoice("BL2"), { key: "backlog-bl2-0001" }))).invoiceId as string;
  await admin(`/admin/domains/${STORED}/mode-change`, { mode: "passthrough" });
  const approved = await admin(`/admin/domains/${STORED}/approval`, {});
  assert.is(approved.mode, "passthrough");

  // The processor finishes the backlog; its reads answer on the domain now in Pass-through mode.
  const inv = await h.waitFor(a, (i) => i.status === "signed");
  assert.is(inv.status, "signed");
  const list = await h.call("GET", "/invoices");
  assert.is(list.status, 200, await list.clone().text());
  const ids = ((await list.json()) as { data: { invoiceId: string }[] }).data.map((d) => d.invoiceId);
  assert.ok(ids.includes(a) && ids.includes(b), JSON.stringify(ids));
  const sent = await h.call("POST", `/invoices/${a}/transmit`, { body: {} });
  assert.is(sent.status, 202, await sent.clone().text());
  await h.waitFor(a, (i) => i.status === "transmitted");
  const bDone = await h.waitFor(b, (i) => i.status === "signed");
  await expectProblem(await h.call("POST", `/invoices/${bDone.invoiceId}/cancel`, { body: {} }), 409, "GW_INVOICE_STATE_CONFLICT");

  // Not one of this domain's Stored invoices: the mode conflict, as before.
  await expectProblem(await h.call("GET", "/invoices/6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b"), 409, "GW_OPERATION_MODE_CONFLICT");
  // New Stored intake is over: the sign route is Pass-through's now.
  const sign = await h.call("POST", "/api/v1/invoice/sign", { headers: { "x-sub-business-id": "nobody-here", "x-idempotency-key": "backlog-sign-0001" }, body: {} });
  assert.ok(sign.status !== 202, "no Stored intake on a Pass-through domain");
});

test.run();
