/**
 * Checkout by bank transfer over real HTTP (a listening gateway, undici): choosing transfer opens
 * one single-use virtual account for the session (exact charge, the session's expiry, the
 * business's name) through the virtual-account service; a sandbox deposit settles the checkout
 * once (session successful, paymentMethod bank_transfer, one wallet credit under the session, one
 * CHECKOUT_COMPLETED, no IN_FLOW_SUCCESS_EVENT, a receipt e-mail). The cases around it: a wrong
 * amount is returned and the session stays open; a transfer after expiry is returned and the
 * session abandoned; a second transfer after success is returned; two tabs of one session share
 * one account and one charge; a settled transfer whose hand-over was lost is found by the sweep
 * (settled, not abandoned). The sandbox processor flow gains the same receipt.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RunningServer } from "../../../../core/server.ts";
import { httpCall } from "../../../support/raw-http.ts";
import { BEARER_HOOKED, HOST, MINUTE, eventually, startCollections, startReceiver, type LinkData } from "./collections-helpers.ts";

const receiver = await startReceiver();
const h = await startCollections({ webhookUrl: receiver.url });
const server: RunningServer = await h.tg.listen();
const BUSINESS = "hooked";
const BUSINESS_NAME = "Hooked Goods & Sons <Ltd>";
const AUTH = { authorization: `Bearer ${BEARER_HOOKED}`, "content-type": "application/json" };

interface Tx {
  id: string;
  reference: string;
  status: string;
  amount: number;
  chargedAmount: number;
  netAmount: number;
  paymentMethod: string;
  processorReference: string | null;
  bankTransfer?: { accountNumber: string; accountName: string; providerName: string; virtualAccountReference: string; expiresAt: string };
  createdAt: string;
}

const get = (path: string) => httpCall(server.url, path, { host: HOST });
const api = (path: string, body?: unknown) =>
  httpCall(server.url, path, { host: HOST, method: body === undefined ? "GET" : "POST", headers: AUTH, body: body === undefined ? undefined : JSON.stringify(body) });
const createLink = (body: Record<string, unknown>) => h.createLink({ fee_bearer: "MERCHANT", ...body }, BEARER_HOOKED);

/** Opens the form page, reads its token, and submits it with `fields`; answers the 303 location. */
async function startTransfer(link: LinkData, fields: Record<string, string> = {}, token?: string): Promise<{ location: string; sessionId: string }> {
  const form = await get(`/pay/${link.reference}`);
  assert.is(form.status, 200);
  const t = token ?? /name="checkout_token" value="([^"]+)"/.exec(form.text)![1]!;
  const res = await _postForm(link, { email: "payer@example.com", method: "bank_transfer", checkout_token: t, ...fields });
  assert.is(res.status, 303, res.text);
  const location = res.headers.location!;
  const m = /\/success\/([0-9a-f-]{36})$/.exec(location);
  assert.ok(m, location);
  return { location, sessionId: m![1]! };
}

function _postForm(link: LinkData, fields: Record<string, string>) {
  return httpCall(server.url, `/pay/${link.reference}`, {
    host: HOST,
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
}

function accountNumberOf(html: string): string {
  const m = /<span class="account-number" id="account-number">(\d{10})<\/span>/.exec(html);
  assert.ok(m, "the account number on the page");
  return m![1]!;
}

async function deposit(accountNumber: string, amount: number) {
  const res = await api("/api/v1/sandbox/virtual-account/deposit", {
    account_number: accountNumber,
    amount,
    sender_name: "Ada Obi",
    sender_account_number: "0123456789",
    sender_bank: "Sample Bank",
  });
  assert.is(res.status, 201, res.text);
  return (res.json() as { data: { status: string; reason: string | null; sessionId: string; reference: string } }).data;
}

async function tx(link: LinkData, sessionId: string): Promise<Tx> {
  const res = await api(`/api/v1/payment-link/find-by-reference/${link.reference}/transactions`);
  assert.is(res.status, 200);
  const found = (res.json() as { data: Tx[] }).data.find((t) => t.id === sessionId);
  assert.ok(found, "the transaction");
  return found!;
}

/** The wallet: its balance (sum of credits) and the credits of one source id. */
async function wallet(sourceId?: string): Promise<{ balance: number; entries: Array<{ sourceType: string; sourceId: string; amountKobo: number }> }> {
  const all = await h.store
    .collection<{ _id: string; businessId: string; sourceType: string; sourceId: string; amountKobo: number }>("collections_wallet_entries")
    .find({ businessId: BUSINESS }, { limit: 10_000 });
  return {
    balance: all.items.reduce((s, e) => s + e.amountKobo, 0),
    entries: sourceId ? all.items.filter((e) => e.sourceId === sourceId) : all.items,
  };
}

async function hooksFor(sessionId: string, accountNumber?: string) {
  const all = await h.webhooks(BUSINESS);
  return {
    checkout: all.filter((w) => w.idempotencyKey.endsWith(`:${sessionId}`)).map((w) => w.eventType),
    inflow: accountNumber
      ? all.filter((w) => w.eventType === "IN_FLOW_SUCCESS_EVENT" && (JSON.parse(w.body) as { data: { recipient: { accountNumber: string } } }).data.recipient.accountNumber === accountNumber)
      : [],
  };
}

test("the form offers the method: bank transfer or the sandbox card processor (default: the processor, as before)", async () => {
  const link = await createLink({ link_name: "Choice" });
  const html = (await get(`/pay/${link.reference}`)).text;
  assert.match(html, /<legend>Payment method<\/legend>/);
  assert.match(html, /<input type="radio" id="method-bank_transfer" name="method" value="bank_transfer"[^>]*><label for="method-bank_transfer">Bank transfer<\/label>/);
  assert.match(html, /<input type="radio" id="method-processor" name="method" value="processor"[^>]* checked><label for="method-processor">Sandbox card processor<\/label>/);
  assert.not.match(html, /<script/i, "the form page has no script");
});

test("pay by transfer: one single-use account (exact amount, session expiry, business name); a deposit completes the checkout once", async () => {
  const link = await createLink({ link_name: "Robes", amount: 2500 });
  const before = await wallet();
  const { location, sessionId } = await startTransfer(link);
  const page = await get(location);
  assert.is(page.status, 202, "waiting for the transfer");
  assert.match(page.headers["content-security-policy"]!, /default-src 'self'/);
  const accountNumber = accountNumberOf(page.text);
  assert.ok(page.text.includes("Gatehouse Sandbox Bank"), "the bank");
  assert.ok(page.text.includes(`<dd id="account-name">Hooked Goods &amp; Sons &lt;Ltd&gt;</dd>`), "the account name is the business's, escaped");
  assert.ok(page.text.includes(`<dd class="amount" id="transfer-amount">NGN 2,500.00</dd>`));
  assert.match(page.text, /<span class="countdown" id="countdown" role="timer">(29:59|30:00)<\/span>/);
  assert.match(page.text, /<button type="button" class="copy" data-copy="\d{10}" hidden>Copy account number<\/button>/);
  assert.match(page.text, /<noscript><meta http-equiv="refresh" content="15"><\/noscript>/, "refreshes without script");
  assert.match(page.text, /<script src="\/pay\/-\/transfer.js" defer><\/script>/);
  assert.ok(page.text.includes(`href="${location}"`), "a link to check the status");

  const script = await get("/pay/-/transfer.js");
  assert.is(script.status, 200);
  assert.match(script.headers["content-type"]!, /^text\/javascript/);

  // The account is a real single_use virtual account of the business, found through the API.
  const pending = await tx(link, sessionId);
  assert.is(pending.paymentMethod, "bank_transfer");
  assert.is(pending.status, "pending");
  assert.is(pending.bankTransfer?.accountNumber, accountNumber);
  const found = await api(`/api/v1/virtual-account/find?sourceReference=CHK-${pending.reference}`);
  assert.is(found.status, 200);
  const va = (found.json() as { data: Record<string, unknown> }).data;
  assert.is(va.accountType, "single_use");
  assert.is(va.accountNumber, accountNumber);
  assert.is(va.accountName, BUSINESS_NAME);
  assert.equal(va.amount, { value: 2500, currency: "NGN", formatted: "NGN 2,500.00" });
  const session = await h.store.collection<{ _id: string; expiresAt: number }>("collections_checkout_sessions").get(sessionId);
  assert.is(va.expiresAt, new Date(session!.expiresAt).toISOString().slice(0, 19).replace("T", " "), "expires with the session");
  assert.is(va.status, "active");

  const status = await get(`/pay/${link.reference}/status/${sessionId}`);
  assert.equal((status.json() as { data: unknown }).data, { status: "pending", version: "pending:0" });
  assert.is((await get(`/pay/${link.reference}/status/00000000-0000-4000-8000-000000000000`)).status, 404);

  const d = await deposit(accountNumber, 2500);
  assert.is(d.status, "settled");

  const paid = await tx(link, sessionId);
  assert.is(paid.status, "successful");
  assert.is(paid.paymentMethod, "bank_transfer");
  assert.is(paid.processorReference, d.reference, "the transfer's reference");
  const after = await wallet(sessionId);
  assert.is(after.balance - before.balance, Math.round(paid.netAmount * 100), "credited once, the net amount");
  assert.equal(
    after.entries.map((e) => e.sourceType),
    ["payment_link_checkout"],
    "one credit, under the session",
  );
  assert.is((await wallet(d.sessionId)).entries.length, 0, "the deposit itself credits nothing");
  const hooks = await hooksFor(sessionId, accountNumber);
  assert.equal(hooks.checkout, ["CHECKOUT_COMPLETED"]);
  assert.is(hooks.inflow.length, 0, "no IN_FLOW_SUCCESS_EVENT for a checkout's account");
  await eventually(
    async () => {
      await h.outbox.deliverDue();
      return receiver.received.some((r) => r.body.includes(sessionId));
    },
    5_000,
    "CHECKOUT_COMPLETED delivered",
  );
  const delivered = receiver.received.filter((r) => r.body.includes(sessionId));
  assert.is(delivered.length, 1);
  assert.ok(delivered[0]!.valid, "signed");
  const body = JSON.parse(delivered[0]!.body) as { event_type: string; data: Tx };
  assert.is(body.event_type, "CHECKOUT_COMPLETED");
  assert.is(body.data.paymentMethod, "bank_transfer");
  assert.is(body.data.bankTransfer?.accountNumber, accountNumber);

  const receipts = h.mails().filter((m) => m.includes(paid.reference));
  assert.is(receipts.length, 1, "one receipt");
  assert.match(receipts[0]!, /To: payer@example\.com/);
  assert.match(receipts[0]!, /NGN 2,500\.00/);
  assert.ok(receipts[0]!.includes("Hooked Goods & Sons <Ltd>"), "the business");
  assert.match(receipts[0]!, /Paid at: \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
  assert.match(receipts[0]!, /Payment method: Bank transfer/);

  const success = await get(location);
  assert.is(success.status, 200);
  assert.match(success.text, /Payment successful/);
  assert.match(success.text, /A receipt has been sent to your e-mail address\./);
  assert.equal(((await get(`/pay/${link.reference}/status/${sessionId}`)).json() as { data: unknown }).data, { status: "successful", version: "successful:1" });
  const vaAfter = (await api(`/api/v1/virtual-account/find?sourceReference=CHK-${pending.reference}`)).json() as { data: { status: string } };
  assert.is(vaAfter.data.status, "expired", "a single_use account that took its payment is expired");
});

test("wrong amount: returned, the session stays open and the page says so; the right amount then completes it", async () => {
  const link = await createLink({ link_name: "Wrong amount", amount: 3000 });
  const before = await wallet();
  const { location, sessionId } = await startTransfer(link);
  const accountNumber = accountNumberOf((await get(location)).text);

  const wrong = await deposit(accountNumber, 2999);
  assert.is(wrong.status, "refunded");
  assert.is(wrong.reason, "amount_mismatch");
  assert.is((await tx(link, sessionId)).status, "pending", "the session stays open");
  const page = await get(location);
  assert.is(page.status, 202);
  assert.match(page.text, /Transfer returned/);
  assert.ok(page.text.includes("We received NGN 2,999.00, which is not the amount due, and returned it to the account it came from."));
  assert.ok(page.text.includes("This payment is still open: transfer exactly NGN 3,000.00 before the time runs out."));
  assert.is(accountNumberOf(page.text), accountNumber, "the same account");
  assert.equal(((await get(`/pay/${link.reference}/status/${sessionId}`)).json() as { data: unknown }).data, { status: "pending", version: "pending:1" });
  assert.is((await wallet()).balance, before.balance, "nothing credited");

  const right = await deposit(accountNumber, 3000);
  assert.is(right.status, "settled");
  assert.is((await tx(link, sessionId)).status, "successful");
  assert.is((await wallet(sessionId)).entries.length, 1);
  assert.equal((await hooksFor(sessionId, accountNumber)).checkout, ["CHECKOUT_COMPLETED"]);
});

test("after expiry: the transfer is returned and the session is abandoned (CHECKOUT_CANCELLED); nothing credited", async () => {
  const link = await createLink({ link_name: "Too late", amount: 1500 });
  const before = await wallet();
  const { location, sessionId } = await startTransfer(link);
  const accountNumber = accountNumberOf((await get(location)).text);
  h.clock.advance(31 * MINUTE);
  const late = await deposit(accountNumber, 1500);
  assert.is(late.status, "refunded");
  assert.is(late.reason, "account_expired");
  assert.equal(((await get(`/pay/${link.reference}/status/${sessionId}`)).json() as { data: unknown }).data, { status: "abandoned", version: "abandoned:1" });
  const page = await get(location);
  assert.is(page.status, 200);
  assert.match(page.text, /Payment not completed/);
  assert.ok(page.text.includes("A transfer of NGN 1,500.00 arrived after this account expired and was returned to the account it came from."));
  assert.is((await tx(link, sessionId)).status, "abandoned");
  assert.is((await wallet()).balance, before.balance, "nothing credited");
  assert.equal((await hooksFor(sessionId, accountNumber)).checkout, ["CHECKOUT_CANCELLED"]);
});

test("a second transfer after success is returned; still one credit, one CHECKOUT_COMPLETED, one receipt", async () => {
  const link = await createLink({ link_name: "Twice", amount: 1200 });
  const { location, sessionId } = await startTransfer(link);
  const accountNumber = accountNumberOf((await get(location)).text);
  assert.is((await deposit(accountNumber, 1200)).status, "settled");
  const mid = await wallet();
  const again = await deposit(accountNumber, 1200);
  assert.is(again.status, "refunded");
  assert.is(again.reason, "account_used");
  assert.is((await wallet()).balance, mid.balance, "the second transfer credits nothing");
  assert.is((await wallet(sessionId)).entries.length, 1);
  assert.equal((await hooksFor(sessionId, accountNumber)).checkout, ["CHECKOUT_COMPLETED"]);
  const t = await tx(link, sessionId);
  assert.is(h.mails().filter((m) => m.includes(t.reference)).length, 1);
  const page = await get(location);
  assert.match(page.text, /Payment successful/);
  assert.ok(page.text.includes("A further transfer of NGN 1,200.00 arrived after this payment was complete and was returned"));
});

test("two tabs of one session (the same form sent twice at once): one account, one charge", async () => {
  const link = await createLink({ link_name: "Two tabs", amount: 800 });
  const form = await get(`/pay/${link.reference}`);
  const token = /name="checkout_token" value="([^"]+)"/.exec(form.text)![1]!;
  const fields = { email: "tabs@example.com", method: "bank_transfer", checkout_token: token };
  const [a, b] = await Promise.all([_postForm(link, fields), _postForm(link, fields)]);
  assert.is(a.status, 303);
  assert.is(b.status, 303);
  assert.is(a.headers.location, b.headers.location, "one session");
  const [pa, pb] = await Promise.all([get(a.headers.location!), get(b.headers.location!)]);
  const accountNumber = accountNumberOf(pa.text);
  assert.is(accountNumberOf(pb.text), accountNumber, "one account");
  const sessionId = /\/success\/([0-9a-f-]{36})$/.exec(a.headers.location!)![1]!;
  const accounts = await h.store.collection<{ _id: string; checkoutSessionId?: string }>("collections_virtual_accounts").find({ checkoutSessionId: sessionId }, { limit: 10 });
  assert.is(accounts.items.length, 1, "one account for the session");

  const before = await wallet();
  const both = await Promise.all([deposit(accountNumber, 800), deposit(accountNumber, 800)]);
  assert.equal(both.map((d) => d.status).sort(), ["refunded", "settled"], "one transfer settles, the other is returned");
  const after = await wallet(sessionId);
  assert.is(after.entries.length, 1, "one credit");
  assert.is(after.balance - before.balance, Math.round((await tx(link, sessionId)).netAmount * 100));
  assert.equal((await hooksFor(sessionId, accountNumber)).checkout, ["CHECKOUT_COMPLETED"]);
});

test("a transfer settled whose hand-over to the checkout was lost (a crash): the sweep settles the session instead of abandoning it", async () => {
  const link = await createLink({ link_name: "Crash", amount: 700 });
  const { location, sessionId } = await startTransfer(link);
  accountNumberOf((await get(location)).text);
  const t = await tx(link, sessionId);
  const accounts = h.store.collection<{ _id: string; checkoutSessionId?: string; accountNumber: string; accountName: string; reference: string; sourceReference: string }>(
    "collections_virtual_accounts",
  );
  const account = (await accounts.find({ checkoutSessionId: sessionId }, { limit: 1 })).items[0]!;
  // What a gateway that died between deciding the deposit and handing it over leaves behind.
  const now = h.clock.now();
  const depositId = `999999${String(now).slice(-12)}000000000001`;
  await h.store.collection("collections_va_deposits").insert({
    _id: depositId,
    businessId: BUSINESS,
    reference: "VAT-CRASHCRASHCRASH0",
    virtualAccountId: account._id,
    virtualAccountReference: account.reference,
    sourceReference: account.sourceReference,
    accountNumber: account.accountNumber,
    accountName: account.accountName,
    accountType: "single_use",
    checkoutSessionId: sessionId,
    amountKobo: 70_000,
    currency: "NGN",
    sender: { accountName: "Ada Obi", accountNumber: "0123456789", bankName: "Sample Bank" },
    status: "settled",
    refund: null,
    effectsPending: false,
    receivedAt: now,
    settledAt: now,
    refundedAt: null,
    updatedAt: now,
  });
  await accounts.updateOne({ _id: account._id }, { $set: { consumed: true, consumedBySessionId: depositId, consumedAt: now, openUntil: 0 } });
  h.clock.advance(31 * MINUTE);
  const settled = await tx(link, sessionId); // the listing runs the sweep for the link
  assert.is(settled.status, "successful", "settled from the account, not abandoned");
  assert.is(settled.processorReference, "VAT-CRASHCRASHCRASH0");
  assert.is((await wallet(sessionId)).entries.length, 1);
  assert.equal((await hooksFor(sessionId)).checkout, ["CHECKOUT_COMPLETED"]);
  assert.is(h.mails().filter((m) => m.includes(t.reference)).length, 1, "the receipt");
});

test("the sandbox processor flow keeps working and now sends the same receipt", async () => {
  const link = await createLink({ link_name: "Card pay" });
  const form = await get(`/pay/${link.reference}`);
  const token = /name="checkout_token" value="([^"]+)"/.exec(form.text)![1]!;
  const res = await _postForm(link, { email: "card@example.com", amount: "1000", outcome: "success", checkout_token: token });
  assert.is(res.status, 303);
  const sessionId = /\/success\/([0-9a-f-]{36})$/.exec(res.headers.location!)![1]!;
  const t = await tx(link, sessionId);
  assert.is(t.status, "successful");
  assert.is(t.paymentMethod, "sandbox");
  assert.is(t.bankTransfer, undefined, "no transfer fields on a processor payment");
  // The processor's report may settle the session beside the request: the receipt follows at once.
  await eventually(() => h.mails().some((m) => m.includes(t.reference)), 3_000, "the receipt");
  const receipts = h.mails().filter((m) => m.includes(t.reference));
  assert.is(receipts.length, 1);
  assert.match(receipts[0]!, /Payment method: Card \(payment processor\)/);
  assert.match((await get(res.headers.location!)).text, /A receipt has been sent to your e-mail address\./);
});

test.after(async () => {
  await h.close();
  await receiver.close();
});

test.run();
