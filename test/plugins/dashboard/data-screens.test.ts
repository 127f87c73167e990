/**
 * The dashboard's data screens in process: Stored invoices (list, filters, the invoice page with its
 * timeline and QR code, the JSON download, cancel and transmit through the Stored service, a viewer
 * refused), Pass-through sign operations, represented businesses, the wallets, payment links
 * (create once, toggle, a TEST checkout), virtual accounts with the TEST deposit (once per form),
 * customers; LIVE pages without any sandbox form and its actions refused; hostile strings escaped.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openStoredInvoices } from "../../../plugins/invoice/stored-invoices.ts";
import { STORED_BUSINESS, gatewayTracker } from "../../support/gateway.ts";
import { HOOK_SECRET, eventually, startReceiver } from "../collections/payment-links/collections-helpers.ts";
import { hiddenField } from "./dashboard-helpers.ts";
import {
  BEARER_DEMO,
  BEARER_LIVE,
  HOSTILE,
  accountBody,
  api,
  customerBody,
  linkBody,
  livePatch,
  member,
  putInvoice,
  putRepresented,
  putSignRecord,
  qrMaterial,
  storeOf,
} from "./data-helpers.ts";

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

const ESCAPED = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;";

function assertEscaped(page: string, what: string): void {
  assert.not.ok(page.includes("<script>"), `${what}: a hostile string became markup`);
  assert.ok(page.includes(ESCAPED), `${what}: the hostile string is shown escaped`);
}

test("invoices: the list filters, the invoice page shows timeline, regulator message, QR code and download; hostile strings escaped", async () => {
  const tg = await start();
  await putRepresented(tg, STORED_BUSINESS, "sub-qr", qrMaterial());
  const signed = await putInvoice(tg, STORED_BUSINESS, { status: "signed", subBusinessId: "sub-qr", irn: "SIGNED1-ABCD1234-20240611" });
  const rejected = await putInvoice(tg, STORED_BUSINESS, {
    status: "rejected",
    irn: "REJ1-ABCD1234-20240611",
    subBusinessId: HOSTILE,
    lastError: { code: "GW_SIGN_REJECTED", at: new Date().toISOString(), regulatorMessage: HOSTILE },
  });
  const c = await member(tg, STORED_BUSINESS, "viewer");
  const list = await c.html("/dashboard/invoices");
  assert.ok(list.includes(signed.irn) && list.includes(rejected.irn));
  assertEscaped(list, "invoice list");
  const filtered = await c.html("/dashboard/invoices?status=signed");
  assert.ok(filtered.includes(signed.irn) && !filtered.includes(rejected.irn));
  const refused = await c.get("/dashboard/invoices?createdFrom=yesterday");
  assert.is(refused.status, 200);
  assert.match(await refused.text(), /Filters refused/);

  const page = await c.html(`/dashboard/invoices/${signed._id}`);
  for (const s of ["Status timeline", "signed by the regulator", "The regulator&#39;s answers", "Processor passes", signed.irn]) assert.ok(page.includes(s), s);
  assert.match(page, /<svg role="img" aria-label="The invoice&#39;s QR code" class="qr"|<svg role="img" aria-label="The invoice's QR code" class="qr"/);
  assert.not.match(page, /Transmit to the regulator/, "a viewer sees no transmit button");
  const noQr = await c.html(`/dashboard/invoices/${rejected._id}`);
  assert.match(noQr, /The QR code appears once the regulator has signed the invoice/);
  assertEscaped(noQr, "invoice page (regulator message, represented business)");

  const file = await c.get(`/dashboard/invoices/${signed._id}/document.json`);
  assert.is(file.status, 200);
  assert.match(file.headers.get("content-disposition") ?? "", /^attachment; filename="invoice-SIGNED1-ABCD1234-20240611\.json"$/);
  assert.equal(await file.json(), signed.document);
});

test("invoices: an owner cancels a pending invoice and transmits a signed one through the Stored service; a viewer's POST is 403 and changes nothing", async () => {
  const tg = await start();
  const pending = await putInvoice(tg, STORED_BUSINESS, { status: "pending" });
  const signed = await putInvoice(tg, STORED_BUSINESS, { status: "signed" });
  const viewer = await member(tg, STORED_BUSINESS, "viewer");
  const vpage = await viewer.html(`/dashboard/invoices/${pending._id}`);
  const refused = await viewer.post(`/dashboard/invoices/${pending._id}/cancel`, { _csrf: hiddenField(await viewer.html("/dashboard"), "_csrf") });
  assert.is(refused.status, 403);
  assert.ok(vpage.length > 0);
  const invoices = openStoredInvoices(storeOf(tg));
  assert.is((await invoices.get(pending._id))!.status, "pending");

  const owner = await member(tg, STORED_BUSINESS, "owner");
  const page = await owner.html(`/dashboard/invoices/${pending._id}`);
  assert.match(page, /Cancel the invoice/);
  const csrf = hiddenField(page, "_csrf");
  const cancel = await owner.post(`/dashboard/invoices/${pending._id}/cancel`, { _csrf: csrf, _idempotency: "k-cancel-0001" });
  assert.is(cancel.status, 303);
  assert.is((await invoices.get(pending._id))!.status, "cancelled");
  const again = await owner.post(`/dashboard/invoices/${pending._id}/cancel`, { _csrf: csrf, _idempotency: "k-cancel-0001" });
  assert.is(again.status, 303, "cancelling twice answers the same");
  assert.match(await owner.html(`/dashboard/invoices/${pending._id}`), /The invoice is cancelled/);

  assert.match(await owner.html(`/dashboard/invoices/${signed._id}`), /Transmit to the regulator/);
  const transmit = await owner.post(`/dashboard/invoices/${signed._id}/transmit`, { _csrf: csrf });
  assert.is(transmit.status, 303);
  assert.is((await invoices.get(signed._id))!.status, "transmitting");
  await owner.post(`/dashboard/invoices/${signed._id}/transmit`, { _csrf: csrf });
  assert.match(await owner.html(`/dashboard/invoices/${signed._id}`), /Not transmitted: .*in progress/);
});

test("Pass-through sign operations, represented businesses, inbound: lists and pages, hostile strings escaped", async () => {
  const tg = await start();
  const rec = await putSignRecord(tg, "demo");
  await putRepresented(tg, "demo", "sub-rep", null, HOSTILE);
  const inbound = await putInvoice(tg, "demo", { direction: "inbound", status: "received", domain: null, irn: "INB1-ABCD1234-20240611" });
  const c = await member(tg, "demo", "viewer");
  const ops = await c.html("/dashboard/sign-operations");
  assert.ok(ops.includes(rec.operationId) && ops.includes("INV1-ABCD1234-20240611"));
  const op = await c.html(`/dashboard/sign-operations/${rec.operationId}`);
  assertEscaped(op, "sign operation (the error detail)");
  const reps = await c.html("/dashboard/represented");
  assert.ok(reps.includes("sub-rep"));
  const rep = await c.html("/dashboard/represented/sub-rep");
  for (const s of ["Identity versions", "Identity reviews", "12345678-0001"]) assert.ok(rep.includes(s), s);
  assertEscaped(rep, "represented business (its name)");
  const inb = await c.html("/dashboard/inbound");
  assert.ok(inb.includes(inbound.irn));
});

test("payment links: create once from the form, toggle, a TEST checkout with a chosen outcome; a viewer sees no forms", async () => {
  const tg = await start();
  const owner = await member(tg, "demo", "developer");
  const list = await owner.html("/dashboard/payment-links");
  const csrf = hiddenField(list, "_csrf");
  const source = hiddenField(list.replace(/id="f-source_reference" name="source_reference" type="text"/, 'name="source_reference"'), "source_reference");
  const form = { _csrf: csrf, link_name: HOSTILE, narration: "Test", fee_bearer: "MERCHANT", amount: "2500", source_reference: source };
  const created = await owner.post("/dashboard/payment-links", form);
  assert.is(created.status, 303);
  const where = created.headers.get("location")!;
  assert.match(where, /^\/dashboard\/payment-links\/[^/]+$/);
  const twice = await owner.post("/dashboard/payment-links", form);
  assert.is(twice.headers.get("location"), where, "a resubmitted form finds the same link");
  const links = await api(tg, BEARER_DEMO, "/api/v1/payment-link?limit=100");
  assert.is((links as unknown as unknown[]).filter((l: any) => l.source_reference === source || l.sourceReference === source).length, 1);
  const page = await owner.html(where);
  assertEscaped(page, "payment link page");
  assert.match(page, /Sandbox checkout \(TEST\)/);
  const reference = decodeURIComponent(where.split("/").pop()!);
  const checkout = await owner.post(`/dashboard/payment-links/${encodeURIComponent(reference)}/sandbox-checkout`, { _csrf: csrf, _idempotency: "checkout-key-0001", email: "payer@example.com", amount: "", outcome: "failure" });
  assert.is(checkout.status, 303);
  const after = await owner.html(where);
  assert.match(after, /Test checkout [^:]+: failed/);
  assert.match(after, /badge bad">failed</);
  const off = await owner.post(`/dashboard/payment-links/${encodeURIComponent(reference)}/toggle`, { _csrf: csrf, activate: "false" });
  assert.is(off.status, 303);
  assert.match(await owner.html(where), /Payment link deactivated/);
  const viewer = await member(tg, "demo", "viewer");
  const vpage = await viewer.html(where);
  assert.not.match(vpage, /Sandbox checkout|Deactivate the link|Activate the link/);
  assert.not.match(await viewer.html("/dashboard/payment-links"), /Create a payment link/);
});

test("virtual accounts and the TEST deposit: once per form, the wallet credited; customers; wallets", async () => {
  const tg = await start();
  const account = await api(tg, BEARER_DEMO, "/api/v1/virtual-account", accountBody(HOSTILE));
  const customer = await api(tg, BEARER_DEMO, "/api/v1/customers", customerBody(HOSTILE));
  const dev = await member(tg, "demo", "developer");
  const list = await dev.html("/dashboard/virtual-accounts?accountType=multi_use");
  assert.ok(list.includes(String(account.accountNumber)));
  assertEscaped(list, "virtual account list");
  const page = await dev.html(`/dashboard/virtual-accounts/${encodeURIComponent(account.reference)}`);
  assert.match(page, /Sandbox deposit \(TEST\)/);
  const form = { _csrf: hiddenField(page, "_csrf"), _idempotency: hiddenField(page, "_idempotency"), account_number: String(account.accountNumber), amount: "1000", sender_name: "Ada", sender_account_number: "0123456789", sender_bank: "Bank" };
  const first = await dev.post("/dashboard/sandbox/deposits", form);
  assert.is(first.status, 303);
  const second = await dev.post("/dashboard/sandbox/deposits", form);
  assert.is(second.status, 303);
  const after = await dev.html(`/dashboard/virtual-accounts/${encodeURIComponent(account.reference)}`);
  assert.is(after.split("badge ok\">settled<").length - 1, 1, "one deposit for two submissions");
  const wallet = await dev.html("/dashboard/wallet");
  for (const s of ["Invoice-gateway wallet", "Collection wallet", "NGN 1,000.00"]) assert.ok(wallet.includes(s), s);
  const customers = await dev.html("/dashboard/customers");
  assertEscaped(customers, "customer list");
  const one = await dev.html(`/dashboard/customers/${customer.id}`);
  assert.ok(one.includes(String(customer.virtualAccount.accountNumber)));
});

test("a LIVE business's pages have no sandbox, and its sandbox actions are 404 whatever is posted", async () => {
  const tg = await start({ patch: livePatch() });
  const account = await api(tg, BEARER_LIVE, "/api/v1/virtual-account", accountBody());
  const link = await api(tg, BEARER_LIVE, "/api/v1/payment-link", linkBody());
  const owner = await member(tg, "live-shop", "owner");
  const home = await owner.html("/dashboard");
  assert.match(home, /data-environment="LIVE"/);
  const vpage = await owner.html(`/dashboard/virtual-accounts/${encodeURIComponent(account.reference)}`);
  const lpage = await owner.html(`/dashboard/payment-links/${encodeURIComponent(link.reference)}`);
  for (const [what, page] of [["account", vpage], ["link", lpage]]) {
    const forms = page!.match(/<form[^>]*>/g) ?? [];
    assert.ok(forms.every((f) => !f.includes("sandbox")), `${what}: no sandbox form`);
    assert.not.match(page!, /Sandbox (deposit|checkout)/, `${what}: no sandbox panel`);
  }
  const csrf = hiddenField(vpage, "_csrf");
  const deposit = await owner.post("/dashboard/sandbox/deposits", { _csrf: csrf, _idempotency: "live-key-00001", account_number: String(account.accountNumber), amount: "1000", sender_name: "A", sender_account_number: "0123456789", sender_bank: "B" });
  assert.is(deposit.status, 404);
  const checkout = await owner.post(`/dashboard/payment-links/${encodeURIComponent(link.reference)}/sandbox-checkout`, { _csrf: csrf, _idempotency: "live-key-00002", email: "p@example.com", outcome: "success" });
  assert.is(checkout.status, 404);
  assert.match(await owner.html("/dashboard/wallet"), /No credits yet/);
});

test("the TEST sandbox fires real webhooks at the business's endpoint: IN_FLOW_SUCCESS_EVENT for a deposit, CHECKOUT_* for a checkout", async () => {
  const receiver = await startReceiver();
  try {
    const tg = await start({ patch: { ...livePatch({ url: receiver.url, secret: HOOK_SECRET }), webhooks: { pollMs: 20 } } });
    const account = await api(tg, BEARER_DEMO, "/api/v1/virtual-account", accountBody());
    const link = await api(tg, BEARER_DEMO, "/api/v1/payment-link", linkBody());
    const dev = await member(tg, "demo", "developer");
    const page = await dev.html(`/dashboard/virtual-accounts/${encodeURIComponent(account.reference)}`);
    const csrf = hiddenField(page, "_csrf");
    await dev.post("/dashboard/sandbox/deposits", { _csrf: csrf, _idempotency: "hook-deposit-0001", account_number: String(account.accountNumber), amount: "700", sender_name: "Ada", sender_account_number: "0123456789", sender_bank: "Bank" });
    await dev.post(`/dashboard/payment-links/${encodeURIComponent(link.reference)}/sandbox-checkout`, { _csrf: csrf, _idempotency: "hook-checkout-0001", email: "payer@example.com", amount: "", outcome: "success" });
    const types = () => receiver.received.map((r) => String((JSON.parse(r.body) as { event_type?: string; type?: string }).event_type ?? (JSON.parse(r.body) as { type?: string }).type));
    await eventually(() => types().includes("IN_FLOW_SUCCESS_EVENT") && types().some((t) => t.startsWith("CHECKOUT_")), 10_000, "the sandbox's webhooks");
    assert.ok(receiver.received.every((r) => r.valid), "signed with the endpoint's secret");
  } finally {
    await receiver.close();
  }
});

test.run();
