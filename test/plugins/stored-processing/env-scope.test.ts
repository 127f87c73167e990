/**
 * Stored invoice reads are scoped to the business's current environment (TEST / LIVE), over real
 * HTTP: an invoice of the same business kept under the other environment is not found by the read,
 * the list, transmit or cancel.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { STORED_COLLECTIONS, type InvoiceDoc } from "../../../plugins/stored-processing/store.ts";
import { accepted, expectProblem, intakeInvoice, startStoredHarness } from "./stored-helpers.ts";

const h = await startStoredHarness({ processor: false });
test.after(() => h.close());

test("an invoice of the business's other environment (LIVE while it is TEST) → 404 on read, transmit and cancel; not listed", async () => {
  const mine = (await accepted(await h.intake(intakeInvoice("ENV1"), { key: "env-scope-0001" }))).invoiceId as string;
  const other = (await accepted(await h.intake(intakeInvoice("ENV2"), { key: "env-scope-0002" }))).invoiceId as string;
  // The same business's invoice, kept under LIVE (taken in while the business was LIVE).
  assert.ok(await h.store.collection<InvoiceDoc>(STORED_COLLECTIONS.invoices).updateOne({ _id: other }, { $set: { state: "LIVE" } }));

  assert.is((await h.call("GET", `/invoices/${mine}`)).status, 200);
  await expectProblem(await h.call("GET", `/invoices/${other}`), 404, "GW_INVOICE_NOT_FOUND");
  await expectProblem(await h.call("POST", `/invoices/${other}/transmit`, { body: {} }), 404, "GW_INVOICE_NOT_FOUND");
  await expectProblem(await h.call("POST", `/invoices/${other}/cancel`, { body: {} }), 404, "GW_INVOICE_NOT_FOUND");
  const list = await h.call("GET", "/invoices?limit=100");
  assert.is(list.status, 200);
  const ids = ((await list.json()) as { data: { invoiceId: string }[] }).data.map((d) => d.invoiceId);
  assert.ok(ids.includes(mine));
  assert.not.ok(ids.includes(other), "the other environment's invoice is not listed");
});

test.run();
