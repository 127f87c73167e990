/**
 * The checkout through its HTML form (DECISIONS.md "Checkout"): the page, form validation, the
 * sandbox outcomes, settlement into the wallet exactly once, fixed-amount mismatch → refunded,
 * the CHECKOUT_* webhooks (enqueued once each, delivered signed), unavailable links, resubmitted
 * forms, LIVE businesses, and the link's transactions and wallet credits through the API.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  BEARER_HOOKED,
  BEARER_LIVE,
  BEARER_OTHER,
  dataOf,
  eventually,
  sourceRef,
  startCollections,
  startReceiver,
  type LinkData,
} from "./collections-helpers.ts";

const receiver = await startReceiver();
const h = await startCollections({ webhookUrl: receiver.url });

interface Tx {
  id: string;
  reference: string;
  linkReference: string;
  amount: number;
  fee: number;
  feeBearer: string;
  chargedAmount: number;
  netAmount: number;
  currency: string;
  status: string;
  customerEmail: string;
  paymentMethod: string;
  createdAt: string;
  paidAt: string | null;
  refund: { amount: number; reason: string; refundReference: string | null } | null;
}
interface ListBody<T> {
  data: T[];
  meta: Record<string, number>;
}

async function transactions(link: LinkData, query = "", key?: string): Promise<ListBody<Tx>> {
  const res = await h.api(`/api/v1/payment-link/find-by-reference/${link.reference}/transactions${query}`, { key });
  assert.is(res.status, 200);
  return (await res.json()) as ListBody<Tx>;
}

async function balance(businessId: string): Promise<number> {
  return h.tg.gateway.kit.ports.documentStore
    .collection<{ _id: string; businessId: string; amountKobo: number }>("collections_wallet_entries")
    .find({ businessId }, { limit: 1000 })
    .then((p) => p.items.reduce((s, e) => s + e.amountKobo, 0));
}

function sessionIdOf(location: string | null): string {
  const m = /\/success\/([0-9a-f-]{36})$/.exec(location ?? "");
  assert.ok(m, `a success location, got ${location}`);
  return m![1]!;
}

test("the checkout page: accessible HTML with business, link, narration, amount input, e-mail, sandbox outcomes, Pay", async () => {
  const link = await h.createLink({ link_name: "Choir robes", narration: "Robes <for> the choir & band" });
  const res = await h.page(`/pay/${link.reference}`);
  assert.is(res.status, 200);
  assert.is(res.headers.get("content-type"), "text/html; charset=utf-8");
  assert.match(res.headers.get("content-security-policy")!, /default-src 'self'/);
  const html = await res.text();
  assert.match(html, /^<!doctype html>\n<html lang="en">/);
  assert.match(html, /<title>Pay Demo Ventures Ltd: Choir robes<\/title>/);
  assert.match(html, /<h1 id="page-title">Choir robes<\/h1>/);
  assert.ok(html.includes("Demo Ventures Ltd"));
  assert.ok(html.includes("Robes &lt;for&gt; the choir &amp; band"), "text is escaped");
  assert.match(html, /<label for="amount">Amount \(NGN\)<\/label>/);
  assert.match(html, /<input id="amount" name="amount"/);
  assert.match(html, /Minimum NGN 100\.00/);
  assert.match(html, /<label for="email">E-mail address<\/label>/);
  assert.match(html, /<input id="email" name="email" type="email"/);
  assert.match(html, /<legend>Sandbox outcome<\/legend>/);
  for (const v of ["success", "failure", "duplicate_report"]) assert.match(html, new RegExp(`<input type="radio" id="outcome-${v}" name="outcome" value="${v}"`));
  assert.match(html, /<form method="post" action="\/pay\/PL-[A-Z2-9]{16}"/);
  assert.match(html, /<button type="submit">Pay<\/button>/);
  assert.not.match(html, /<script/i, "no script");
});

test("fixed amount: shown, not editable; a CUSTOMER bearer sees the fee added", async () => {
  const link = await h.createLink({ link_name: "Ticket", amount: 5000, fee_bearer: "CUSTOMER" });
  const html = await (await h.page(`/pay/${link.reference}`)).text();
  assert.ok(html.includes("NGN 5,000.00"));
  assert.not.match(html, /<input id="amount"/);
  assert.match(html, /<input type="hidden" name="amount" value="5000.00">/);
  assert.ok(html.includes("A processing fee of NGN 75.00 is added: you pay NGN 5,075.00."));
  assert.match(html, /<button type="submit">Pay NGN 5,075.00<\/button>/);
});

test("unknown link → 404 page", async () => {
  const res = await h.page("/pay/PL-UNKNOWNUNKNOWN00");
  assert.is(res.status, 404);
  assert.match(await res.text(), /Payment link not found/);
  const post = await h.page("/pay/PL-UNKNOWNUNKNOWN00", { form: { email: "a@example.com", amount: "100" } });
  assert.is(post.status, 404);
});

test("success (MERCHANT bears the fee): 303 to the success page, one credit of amount − fee, CHECKOUT_COMPLETED once", async () => {
  const link = await h.createLink({ link_name: "Consulting", fee_bearer: "MERCHANT" });
  const before = await balance("demo");
  const res = await h.pay(link.reference, { email: "buyer@example.com", amount: "10,000.00", outcome: "success" });
  assert.is(res.status, 303);
  const location = res.headers.get("location");
  assert.match(location!, new RegExp(`^/pay/${link.reference}/success/`));
  const sessionId = sessionIdOf(location);

  const success = await h.page(location!);
  assert.is(success.status, 200);
  const html = await success.text();
  assert.match(html, /Payment successful/);
  assert.ok(html.includes("NGN 10,000.00"));
  assert.not.ok(html.includes("buyer@example.com"), "the success page does not show the e-mail");

  await h.payments.idle();
  assert.is(await balance("demo"), before + 1_000_000 - 15_000, "NGN 10,000 − 1.5 % fee (NGN 150)");
  const tx = (await transactions(link)).data;
  assert.is(tx.length, 1);
  const t = tx[0]!;
  assert.is(t.id, sessionId);
  assert.match(t.reference, /^PLT-[A-Z2-9]{16}$/);
  assert.is(t.linkReference, link.reference);
  assert.is(t.amount, 10000);
  assert.is(t.fee, 150);
  assert.is(t.feeBearer, "MERCHANT");
  assert.is(t.chargedAmount, 10000);
  assert.is(t.netAmount, 9850);
  assert.is(t.currency, "NGN");
  assert.is(t.status, "successful");
  assert.is(t.customerEmail, "buyer@example.com");
  assert.is(t.paymentMethod, "sandbox");
  assert.match(t.createdAt, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  assert.match(t.paidAt!, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

  const hooks = (await h.webhooks("demo")).filter((w) => w.idempotencyKey.endsWith(sessionId));
  assert.equal(hooks.map((w) => w.eventType), ["CHECKOUT_COMPLETED"]);
  assert.is(hooks[0]!.idempotencyKey, `CHECKOUT_COMPLETED:${sessionId}`);
  assert.is(hooks[0]!.status, "no_endpoint", "demo configures no webhook endpoint");
  const payload = JSON.parse(hooks[0]!.body) as { event_type: string; data: Tx };
  assert.is(payload.event_type, "CHECKOUT_COMPLETED");
  assert.is(payload.data.reference, t.reference);
  assert.is(payload.data.status, "successful");
  assert.is(payload.data.amount, 10000);
});

test("CUSTOMER bears the fee: the customer is charged amount + fee, the wallet gets the amount; the fee is capped", async () => {
  const link = await h.createLink({ link_name: "Big order", fee_bearer: "CUSTOMER" });
  const before = await balance("demo");
  const res = await h.pay(link.reference, { email: "big@example.com", amount: "200000" });
  assert.is(res.status, 303);
  const sessionId = sessionIdOf(res.headers.get("location"));
  await h.payments.idle();
  assert.is(h.payments.payment(sessionId)!.report.amountKobo, 20_000_000 + 200_000, "NGN 200,000 + capped fee NGN 2,000");
  assert.is(await balance("demo"), before + 20_000_000);
  const t = (await transactions(link)).data[0]!;
  assert.equal([t.amount, t.fee, t.chargedAmount, t.netAmount], [200000, 2000, 202000, 200000]);
});

test("redirect_link: a successful payment is redirected there (303)", async () => {
  const link = await h.createLink({ link_name: "With redirect", redirect_link: "https://shop.example.com/thanks?order=7" });
  const res = await h.pay(link.reference, { email: "r@example.com", amount: "150" });
  assert.is(res.status, 303);
  assert.is(res.headers.get("location"), "https://shop.example.com/thanks?order=7");
});

test("duplicate processor report → one session, one credit, one CHECKOUT_COMPLETED enqueued", async () => {
  const link = await h.createLink({ link_name: "Twice reported", amount: 3000 });
  const before = await balance("demo");
  const res = await h.pay(link.reference, { email: "dup@example.com", outcome: "duplicate_report" });
  assert.is(res.status, 303);
  const sessionId = sessionIdOf(res.headers.get("location"));
  await h.payments.idle();
  assert.is(h.payments.payment(sessionId)!.deliveries, 2, "the processor did report twice");
  assert.is(h.payments.listenerFailures(), 0);
  assert.is(await balance("demo"), before + 300_000 - 4_500);
  const credits = await h.tg.gateway.kit.ports.documentStore
    .collection("collections_wallet_entries")
    .find({ sourceId: sessionId });
  assert.is(credits.items.length, 1);
  const hooks = (await h.webhooks("demo")).filter((w) => w.idempotencyKey.endsWith(sessionId));
  assert.equal(hooks.map((w) => w.eventType), ["CHECKOUT_COMPLETED"]);
  assert.is((await transactions(link)).data.length, 1);
});

test("many concurrent redeliveries of one report still credit once and enqueue once", async () => {
  const link = await h.createLink({ link_name: "Storm", amount: 1000 });
  const before = await balance("demo");
  const res = await h.pay(link.reference, { email: "storm@example.com", outcome: "success" });
  const sessionId = sessionIdOf(res.headers.get("location"));
  await h.payments.idle();
  // pay() again is idempotent (same outcome, no new charge, no new report)…
  const again = await h.payments.pay({ ...h.payments.payment(sessionId)!.request });
  assert.is(again.processorReference, h.payments.payment(sessionId)!.report.processorReference);
  // …and the processor redelivers the same report 20 times at once.
  h.payments.redeliver(sessionId, 20);
  await h.payments.idle();
  assert.is(h.payments.payment(sessionId)!.deliveries, 21);
  assert.is(h.payments.listenerFailures(), 0);
  assert.is(await balance("demo"), before + 100_000 - 1_500);
  const hooks = (await h.webhooks("demo")).filter((w) => w.idempotencyKey.endsWith(sessionId));
  assert.is(hooks.length, 1);
});

test("failure → 402 page that allows a retry; CHECKOUT_FAILED; nothing credited", async () => {
  const link = await h.createLink({ link_name: "Might fail" });
  const before = await balance("demo");
  const res = await h.pay(link.reference, { email: "f@example.com", amount: "500", outcome: "failure" });
  assert.is(res.status, 402);
  const html = await res.text();
  assert.match(html, /<h2 id="notice-title">Payment failed<\/h2>/);
  assert.match(html, /role="status"/);
  assert.match(html, /You can try again/);
  assert.match(html, /<form method="post"/, "the form is there to retry");
  assert.match(html, /value="f@example.com"/, "the e-mail is kept");
  assert.match(html, /value="500.00"/, "the amount is kept");
  await h.payments.idle();
  assert.is(await balance("demo"), before);
  const tx = (await transactions(link)).data;
  assert.is(tx.length, 1);
  assert.is(tx[0]!.status, "failed");
  assert.is(tx[0]!.paidAt, null);
  const hooks = (await h.webhooks("demo")).filter((w) => w.idempotencyKey.endsWith(tx[0]!.id));
  assert.equal(hooks.map((w) => w.eventType), ["CHECKOUT_FAILED"]);

  // retry with the new form token → success
  const retryToken = /name="checkout_token" value="([^"]+)"/.exec(html)![1]!;
  const retry = await h.page(`/pay/${link.reference}`, { form: { checkout_token: retryToken, email: "f@example.com", amount: "500", outcome: "success" } });
  assert.is(retry.status, 303);
  await h.payments.idle();
  assert.is(await balance("demo"), before + 50_000 - 750);
  const statuses = (await transactions(link)).data.map((t) => t.status).sort();
  assert.equal(statuses, ["failed", "successful"]);
});

test("fixed amount mismatch (a tampered form) → refunded at the processor, never credited, CHECKOUT_REFUNDED", async () => {
  const link = await h.createLink({ link_name: "Fixed 2000", amount: 2000 });
  const before = await balance("demo");
  const res = await h.pay(link.reference, { email: "t@example.com", amount: "1500" });
  assert.is(res.status, 402);
  const html = await res.text();
  assert.match(html, /Payment refunded/);
  assert.match(html, /does not match/);
  await h.payments.idle();
  assert.is(await balance("demo"), before, "never credited");
  const tx = (await transactions(link)).data;
  assert.is(tx.length, 1);
  const t = tx[0]!;
  assert.is(t.status, "refunded");
  assert.is(t.refund!.amount, 1500);
  assert.match(t.refund!.refundReference!, /^SBR-/);
  assert.is(h.payments.payment(t.id)!.refund!.amountKobo, 150_000, "the sandbox refunded the charge");
  const hooks = (await h.webhooks("demo")).filter((w) => w.idempotencyKey.endsWith(t.id));
  assert.equal(hooks.map((w) => w.eventType), ["CHECKOUT_REFUNDED"]);
  assert.is((JSON.parse(hooks[0]!.body) as { data: Tx }).data.refund!.refundReference, t.refund!.refundReference);

  // The untampered form pays the fixed amount.
  const ok = await h.pay(link.reference, { email: "t@example.com" });
  assert.is(ok.status, 303);
  await h.payments.idle();
  assert.is(await balance("demo"), before + 200_000 - 3_000);
});

test("form errors → 422 re-rendered page with an error summary and field errors, no session", async () => {
  const link = await h.createLink({ link_name: "Validate me" });
  const res = await h.pay(link.reference, { email: "not-an-email", amount: "99.99" });
  assert.is(res.status, 422);
  const html = await res.text();
  assert.match(html, /<title>Error: /);
  assert.match(html, /<div class="error-summary" role="alert"/);
  assert.match(html, /<a href="#amount">The minimum amount is NGN 100.00.<\/a>/);
  assert.match(html, /<a href="#email">Enter an e-mail address like name@example.com.<\/a>/);
  assert.match(html, /<input id="amount"[^>]*aria-describedby="amount-hint amount-error" aria-invalid="true">/);
  assert.match(html, /<input id="email"[^>]*aria-describedby="email-hint email-error" aria-invalid="true">/);
  assert.match(html, /<p class="field-error" id="email-error">/);
  assert.match(html, /value="not-an-email"/, "the input is kept for correction");
  const empty = await h.pay(link.reference, {});
  assert.is(empty.status, 422);
  const emptyHtml = await empty.text();
  assert.match(emptyHtml, /Enter the amount you want to pay\./);
  assert.match(emptyHtml, /Enter your e-mail address\./);
  const wrongOutcome = await h.pay(link.reference, { email: "a@example.com", amount: "100", outcome: "steal" });
  assert.is(wrongOutcome.status, 422);
  assert.equal((await transactions(link)).data, []);
});

test("a JSON body to the checkout form is refused (form posts only)", async () => {
  const link = await h.createLink({ link_name: "Form only" });
  const res = await h.tg.call(`/pay/${link.reference}`, { method: "POST", host: "localhost", body: { email: "a@example.com", amount: "100" } });
  assert.is(res.status, 415);
});

test("a resubmitted form (same token) answers the same session: no second charge", async () => {
  const link = await h.createLink({ link_name: "Double click" });
  const page = await (await h.page(`/pay/${link.reference}`)).text();
  const token = /name="checkout_token" value="([^"]+)"/.exec(page)![1]!;
  const form = { checkout_token: token, email: "dc@example.com", amount: "700" };
  const [a, b] = await Promise.all([h.page(`/pay/${link.reference}`, { form }), h.page(`/pay/${link.reference}`, { form })]);
  assert.is(a.status, 303);
  assert.is(b.status, 303);
  assert.is(a.headers.get("location"), b.headers.get("location"));
  const c = await h.page(`/pay/${link.reference}`, { form });
  assert.is(c.headers.get("location"), a.headers.get("location"));
  await h.payments.idle();
  assert.is((await transactions(link)).data.length, 1);
});

test("inactive link: the page explains (403) and the POST is refused; re-activated it accepts payments", async () => {
  const link = await h.createLink({ link_name: "Paused" });
  await h.api("/api/v1/payment-link/toggle-status", { body: { link_id: link.reference, activate: false } });
  const page = await h.page(`/pay/${link.reference}`);
  assert.is(page.status, 403);
  const html = await page.text();
  assert.match(html, /This payment link is not accepting payments/);
  assert.not.match(html, /<form/);
  const post = await h.pay(link.reference, { email: "p@example.com", amount: "100" });
  assert.is(post.status, 403);
  assert.equal((await transactions(link)).data, []);
  await h.api("/api/v1/payment-link/toggle-status", { body: { link_id: link.reference, activate: true } });
  assert.is((await h.page(`/pay/${link.reference}`)).status, 200);
  assert.is((await h.pay(link.reference, { email: "p@example.com", amount: "100" })).status, 303);
});

test("outside the window: before start_date → 403, after end_date → 410; both refuse the POST", async () => {
  const now = h.clock.now();
  const day = 86_400_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  const future = await h.createLink({ link_name: "Opens later", start_date: iso(now + day) });
  // A link cannot be created already closed: this one closes a second after it is made.
  const past = await h.createLink({ link_name: "Closed", start_date: iso(now - 3 * day), end_date: iso(now + 1000) });
  h.clock.advance(2000);
  const f = await h.page(`/pay/${future.reference}`);
  assert.is(f.status, 403);
  assert.match(await f.text(), /This payment link is not open yet/);
  const p = await h.page(`/pay/${past.reference}`);
  assert.is(p.status, 410);
  assert.match(await p.text(), /This payment link has closed/);
  assert.is((await h.page(`/pay/${future.reference}`, { form: { email: "w@example.com", amount: "100" } })).status, 403);
  assert.is((await h.page(`/pay/${past.reference}`, { form: { email: "w@example.com", amount: "100" } })).status, 410);
  assert.equal((await transactions(future)).data, []);
  assert.equal((await transactions(past)).data, []);
  // When the clock reaches the start, the link opens.
  h.clock.advance(day + 1000);
  try {
    assert.is((await h.page(`/pay/${future.reference}`)).status, 200);
  } finally {
    h.clock.advance(-(day + 1000));
  }
});

test("a LIVE business: no sandbox selector; the sandbox refuses LIVE money → failed, nothing credited", async () => {
  const link = await h.createLink({ link_name: "Live goods" }, BEARER_LIVE);
  const html = await (await h.page(`/pay/${link.reference}`)).text();
  assert.not.match(html, /Sandbox outcome/);
  const res = await h.pay(link.reference, { email: "l@example.com", amount: "100", outcome: "success" });
  assert.is(res.status, 402);
  assert.match(await res.text(), /did not accept the payment/);
  const tx = (await transactions(link, "", BEARER_LIVE)).data;
  assert.is(tx[0]!.status, "failed");
  assert.is(await balance("live-shop"), 0);
  const hooks = await h.webhooks("live-shop");
  assert.equal(hooks.map((w) => w.eventType), ["CHECKOUT_FAILED"]);
});

test("an unclear processor error (not a refusal): the session stays pending (processing), never failed; the resubmission is charged once and settles it", async () => {
  const link = await h.createLink({ link_name: "Flaky processor" });
  const page = await (await h.page(`/pay/${link.reference}`)).text();
  const token = /name="checkout_token" value="([^"]+)"/.exec(page)![1]!;
  const form = { checkout_token: token, email: "u@example.com", amount: "800" };
  const pay = h.payments.pay;
  h.payments.pay = () => Promise.reject(new Error("socket hang up"));
  let first: Response;
  try {
    first = await h.page(`/pay/${link.reference}`, { form });
  } finally {
    h.payments.pay = pay;
  }
  assert.is(first.status, 303);
  const sessionId = sessionIdOf(first.headers.get("location"));
  const processing = await h.page(first.headers.get("location")!);
  assert.is(processing.status, 202, "the payer sees 'processing', not 'nothing was charged'");
  assert.match(await processing.text(), /Payment processing/);
  assert.is((await transactions(link)).data[0]!.status, "pending");
  assert.ok(h.tg.logs.some((l) => l.event === "collections_payment_outcome_unknown" && l.sessionId === sessionId));

  const again = await h.page(`/pay/${link.reference}`, { form });
  assert.is(again.status, 303);
  assert.is(again.headers.get("location"), first.headers.get("location"));
  await h.payments.idle();
  assert.is((await transactions(link)).data[0]!.status, "successful");
  assert.is(h.payments.payments().filter((p) => p.request.sessionId === sessionId).length, 1, "charged once");
  const hooks = (await h.webhooks("demo")).filter((w) => w.idempotencyKey.endsWith(sessionId));
  assert.equal(hooks.map((w) => w.eventType), ["CHECKOUT_COMPLETED"], "never CHECKOUT_FAILED");
});

test("transactions: pagination, meta, status filter, search over the transaction reference, by source reference too", async () => {
  const source = sourceRef("txlist");
  const link = await h.createLink({ link_name: "Busy link", source_reference: source });
  const outcomes = ["success", "failure", "success", "success", "failure", "success", "success"];
  for (const outcome of outcomes) {
    await h.pay(link.reference, { email: "many@example.com", amount: "100", outcome });
    h.clock.advance(1000);
  }
  await h.payments.idle();
  const all = await transactions(link, "?limit=3");
  assert.equal(all.meta, { current_page: 1, from: 1, last_page: 3, per_page: 3, to: 3, total: 7 });
  const last = await transactions(link, "?limit=3&page=3");
  assert.is(last.data.length, 1);
  assert.equal(last.meta, { current_page: 3, from: 7, last_page: 3, per_page: 3, to: 7, total: 7 });
  const ok = await transactions(link, "?status=successful");
  assert.is(ok.meta.total, 5);
  assert.ok(ok.data.every((t) => t.status === "successful"));
  const failed = await transactions(link, "?status=failed");
  assert.is(failed.meta.total, 2);
  const target = ok.data[2]!;
  const found = await transactions(link, `?search=${target.reference.slice(4, 14).toLowerCase()}`);
  assert.equal(found.data.map((t) => t.id), [target.id]);
  const bySource = await h.api(`/api/v1/payment-link/source-reference/${source}/transactions?status=successful&limit=100`);
  assert.is(bySource.status, 200);
  assert.is(((await bySource.json()) as ListBody<Tx>).meta.total, 5);
  // Newest first
  const times = (await transactions(link, "?limit=100")).data.map((t) => t.createdAt);
  assert.equal(times, [...times].sort().reverse());
});

test("wallet: credits listed at /api/v1/balances/transactions equal the sum of successful net amounts", async () => {
  // The other business pays into its own wallet only.
  const link = await h.createLink({ link_name: "Other shop", fee_bearer: "CUSTOMER" }, BEARER_OTHER);
  await h.pay(link.reference, { email: "o@example.com", amount: "1234.56" });
  await h.payments.idle();

  for (const [business, key] of [
    ["demo", undefined],
    ["other", BEARER_OTHER],
  ] as const) {
    const res = await h.api("/api/v1/balances/transactions?limit=100", { key });
    assert.is(res.status, 200);
    const body = (await res.json()) as ListBody<{ amount: number; type: string; sourceId: string; currency: string; reference: string }>;
    const credited = Math.round(body.data.reduce((s, e) => s + e.amount * 100, 0));
    // Sum of net amounts of every successful transaction of every link of the business.
    let links: LinkData[] = [];
    for (let page = 1; ; page++) {
      const l = (await (await h.api(`/api/v1/payment-link?limit=100&page=${page}`, { key })).json()) as ListBody<LinkData>;
      links = links.concat(l.data);
      if (page >= l.meta.last_page!) break;
    }
    let expected = 0;
    const successful = new Set<string>();
    for (const l of links) {
      const tx = (await (await h.api(`/api/v1/payment-link/find-by-reference/${l.reference}/transactions?status=successful&limit=100`, { key })).json()) as ListBody<Tx>;
      for (const t of tx.data) {
        expected += Math.round(t.netAmount * 100);
        successful.add(t.id);
      }
    }
    assert.ok(expected > 0, `${business} has successful payments`);
    assert.is(credited, expected, `${business}: credits == sum of successful net amounts`);
    assert.is(body.meta.total, successful.size, "one credit per successful session");
    assert.equal(new Set(body.data.map((e) => e.sourceId)), successful);
    assert.ok(body.data.every((e) => e.type === "credit" && e.currency === "NGN"));
    assert.is(credited, await balance(business));
  }
  const paged = (await (await h.api("/api/v1/balances/transactions?limit=2&page=2")).json()) as ListBody<unknown>;
  assert.is(paged.meta.per_page, 2);
  assert.is(paged.meta.current_page, 2);
});

test("webhooks to a configured endpoint are delivered signed (Standard Webhooks) with { event_type, data }", async () => {
  const link = await h.createLink({ link_name: "Hooked", amount: 100, fee_bearer: "CUSTOMER" }, BEARER_HOOKED);
  const ok = await h.pay(link.reference, { email: "hk@example.com", outcome: "duplicate_report" });
  const okSession = sessionIdOf(ok.headers.get("location"));
  await h.pay(link.reference, { email: "hk@example.com", outcome: "failure" });
  await h.payments.idle();
  await h.outbox.deliverDue();
  await eventually(() => receiver.received.length >= 2, 3_000, "two deliveries");
  assert.is(receiver.received.length, 2, "one per session, though one payment was reported twice");
  assert.ok(receiver.received.every((r) => r.valid), "signatures verify with the business secret");
  const events = receiver.received.map((r) => JSON.parse(r.body) as { event_type: string; data: Tx }).sort((a, b) => a.event_type.localeCompare(b.event_type));
  assert.equal(events.map((e) => e.event_type), ["CHECKOUT_COMPLETED", "CHECKOUT_FAILED"]);
  assert.is(events[0]!.data.id, okSession);
  assert.is(events[0]!.data.linkReference, link.reference);
  assert.is(events[0]!.data.feeBearer, "CUSTOMER", "the link's fee_bearer, as sent");
  const ids = receiver.received.map((r) => r.headers["webhook-id"]);
  assert.is(new Set(ids).size, 2);
});

test("the success page of an unknown session is 404; another link's session is not shown", async () => {
  const a = await h.createLink({ link_name: "A" });
  const b = await h.createLink({ link_name: "B" });
  const res = await h.pay(a.reference, { email: "s@example.com", amount: "100" });
  const sessionId = sessionIdOf(res.headers.get("location"));
  assert.is((await h.page(`/pay/${b.reference}/success/${sessionId}`)).status, 404);
  assert.is((await h.page(`/pay/${a.reference}/success/00000000-0000-4000-8000-000000000000`)).status, 404);
});

test("store down: the checkout page answers a 503 HTML page with Retry-After, the API its envelope", async () => {
  const down = await startCollections();
  try {
    const link = await down.createLink({ link_name: "Outage" });
    await down.store.close();
    const page = await down.page(`/pay/${link.reference}`);
    assert.is(page.status, 503);
    assert.is(page.headers.get("retry-after"), "30");
    assert.match(page.headers.get("content-type")!, /^text\/html/);
    assert.match(await page.text(), /Payments are temporarily unavailable/);
    const api = await down.api(`/api/v1/payment-link/find-by-reference/${link.reference}`);
    assert.is(api.status, 503, "a dependency failure (here at authentication), never an unexplained 500");
    assert.is(((await api.json()) as { statusCode: number }).statusCode, 503);
  } finally {
    await down.close();
  }
});

test("logs never carry customer e-mail addresses or keys", () => {
  const text = JSON.stringify(h.tg.logs);
  for (const secret of ["buyer@example.com", "dup@example.com", "sk_test_demo_0001", "whsec_"]) assert.not.ok(text.includes(secret), secret);
});

test.after(async () => {
  await h.close();
  await receiver.close();
});
test.run();

