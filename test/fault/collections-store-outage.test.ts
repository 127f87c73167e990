/**
 * A store outage inside a collections API handler answers 503 in the collections envelope, never a
 * 500 (found by the topology test, issue 15: a deposit and a wallet read during a hung store). The
 * checkout pages keep their own HTML 503, and a payer who resubmits the form after it gets the
 * payment finished, charged once (found by the topology test in CI: a session stored during a hung
 * store, whose resubmission answered "processing" and was never paid).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import { withStoreFaults } from "../support/store-faults.ts";
import { MINUTE, startCollections, type CollectionsHarness } from "../plugins/collections/payment-links/collections-helpers.ts";
import { body, createAccount, depositBody } from "../plugins/collections/virtual-accounts/va-helpers.ts";

/** Collections whose every call fails while `down` holds them. */
const down = new Set<string>();
/** One-shot faults, in order: the first one fails the next call of its `method` on its `collection`, then the next one waits for its call. */
const once: Array<{ collection: string; method: string; fault: "before" | "after" }> = [];
let h: CollectionsHarness;

const SESSIONS = "collections_checkout_sessions";

test.before(async () => {
  h = await startCollections({
    store: async (clock) => withStoreFaults(await createSqliteDocumentStore({ file: ":memory:", clock }), (collection, method) => {
        if (down.has(collection)) return "before";
        const next = once[0];
        return next && next.collection === collection && next.method === method ? once.shift()!.fault : null;
      }),
  });
});

test.after(async () => {
  await h.close();
});

test("a deposit whose store cannot answer is a 503 envelope with a request id; the next one settles", async () => {
  const account = await createAccount(h);
  down.add("collections_va_deposits");
  const res = await h.api("/api/v1/sandbox/virtual-account/deposit", { body: depositBody(account.accountNumber, 2_500) });
  down.clear();
  assert.is(res.status, 503);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const envelope = await body(res);
  assert.is(envelope.statusCode, 503);
  assert.is(envelope.requestId, res.headers.get("x-request-id"));
  assert.match(envelope.message, /Check its result before sending it again/);
  assert.not.match(JSON.stringify(envelope), /injected|store failure|Error/, "no internals");
  assert.ok(h.tg.logs.some((l) => l.event === "collections_dependency_unavailable" && l.requestId === envelope.requestId), "operators see the cause");
  assert.not.ok(h.tg.logs.some((l) => l.event === "gateway_internal_error"), "not an internal error");
  const again = await h.api("/api/v1/sandbox/virtual-account/deposit", { body: depositBody(account.accountNumber, 2_500) });
  assert.is(again.status, 201);
});

test("a wallet read whose store cannot answer is a 503 envelope", async () => {
  down.add("collections_wallet_entries");
  const res = await h.api("/api/v1/balances/transactions");
  down.clear();
  assert.is(res.status, 503);
  assert.is((await body(res)).statusCode, 503);
  assert.is((await h.api("/api/v1/balances/transactions")).status, 200);
});

/** Opens the checkout page of `reference` and answers its form with the page's one-time token. */
async function checkoutForm(reference: string, amount: string): Promise<Record<string, string>> {
  const html = await (await h.page(`/pay/${reference}`)).text();
  const token = /name="checkout_token" value="([^"]+)"/.exec(html)?.[1];
  assert.ok(token, "the page carries a form token");
  return { checkout_token: token!, email: "payer@example.com", amount };
}

async function sessionsOf(linkReference: string): Promise<Array<{ _id: string; status: string; processorReference: string | null; netKobo: number }>> {
  const page = await h.store.collection<{ _id: string; linkReference: string; status: string; processorReference: string | null; netKobo: number }>(SESSIONS).find({ linkReference }, { limit: 10 });
  return page.items;
}

async function creditsOf(sessionId: string): Promise<number[]> {
  const page = await h.store.collection<{ _id: string; sourceId: string; amountKobo: number }>("collections_wallet_entries").find({ sourceId: sessionId }, { limit: 10 });
  return page.items.map((e) => e.amountKobo);
}

test("a checkout stored but whose answer was lost (503 page) is paid when the payer resubmits: one charge, one credit", async () => {
  const link = await h.createLink({ link_name: "Lost answer" });
  const form = await checkoutForm(link.reference, "900");
  // The insert is written and its answer lost; the look-up of what was written fails too (a hung store).
  once.push({ collection: SESSIONS, method: "insert", fault: "after" }, { collection: SESSIONS, method: "findOne", fault: "before" });
  const first = await h.page(`/pay/${link.reference}`, { form });
  assert.is(first.status, 503, "the session was written, its answer lost: the payer sees the 503 page");
  assert.is(once.length, 0, "both faults fired");
  const [stored] = await sessionsOf(link.reference);
  assert.is(stored?.status, "pending", "the session exists");
  assert.is(h.payments.payment(stored!._id), null, "the processor was never asked");

  const again = await h.page(`/pay/${link.reference}`, { form });
  assert.is(again.status, 303, "the resubmission pays it");
  assert.match(again.headers.get("location") ?? "", new RegExp(`/success/${stored!._id}$`));
  const [paid] = await sessionsOf(link.reference);
  assert.is(paid!.status, "successful");
  assert.is(paid!.processorReference, h.payments.payment(stored!._id)!.report.processorReference);
  assert.equal(await creditsOf(stored!._id), [paid!.netKobo], "credited once");
  const third = await h.page(`/pay/${link.reference}`, { form });
  assert.is(third.headers.get("location"), again.headers.get("location"), "a later resubmission answers the same session");
  await h.payments.idle();
  assert.is(h.payments.payments().filter((p) => p.request.sessionId === stored!._id).length, 1, "one payment at the processor");
  assert.equal(await creditsOf(stored!._id), [paid!.netKobo], "still credited once");
  const completed = (await h.outbox.list({ limit: 1000 })).filter((w) => w.idempotencyKey === `CHECKOUT_COMPLETED:${stored!._id}`);
  assert.is(completed.length, 1, "one CHECKOUT_COMPLETED");
});

test("a payment whose report the store could not take is settled when the payer resubmits: the processor's first outcome, no second charge", async () => {
  const link = await h.createLink({ link_name: "Report not taken" });
  const form = await checkoutForm(link.reference, "1200");
  // The session is stored and paid; every read of it fails until the answer is sent: the report's
  // delivery to the listener, the request's own application of it and the answer's read (this
  // harness's sandbox does not redeliver, so only the resubmission can settle it).
  const getFails = { collection: SESSIONS, method: "get", fault: "before" } as const;
  once.push(getFails, getFails, getFails);
  const first = await h.page(`/pay/${link.reference}`, { form });
  await h.payments.idle();
  assert.is(first.status, 503);
  const [stored] = await sessionsOf(link.reference);
  assert.is(stored?.status, "pending", "the report was not taken");
  const charged = h.payments.payment(stored!._id);
  assert.ok(charged, "the processor charged it");
  assert.is(once.length, 0, "both faults fired");

  const again = await h.page(`/pay/${link.reference}`, { form });
  assert.is(again.status, 303);
  const [paid] = await sessionsOf(link.reference);
  assert.is(paid!.status, "successful");
  assert.is(paid!.processorReference, charged!.report.processorReference, "settled by the first charge's report");
  assert.is(h.payments.payments().filter((p) => p.request.sessionId === stored!._id).length, 1, "no second charge");
  assert.equal(await creditsOf(stored!._id), [paid!.netKobo], "credited once");
});

test("a payment whose every report was lost is settled from the processor's answer when the session would be abandoned, not abandoned", async () => {
  const link = await h.createLink({ link_name: "Reports lost" });
  const form = await checkoutForm(link.reference, "1300");
  const getFails = { collection: SESSIONS, method: "get", fault: "before" } as const;
  once.push(getFails, getFails, getFails);
  assert.is((await h.page(`/pay/${link.reference}`, { form })).status, 503);
  await h.payments.idle();
  const [stored] = await sessionsOf(link.reference);
  assert.is(stored?.status, "pending", "charged, every report lost, the payer left");

  h.clock.advance(31 * MINUTE);
  await h.api(`/api/v1/payment-link/find-by-reference/${link.reference}/transactions`); // the lazy sweep
  const [settled] = await sessionsOf(link.reference);
  assert.is(settled!.status, "successful", "the processor's answer settles it");
  assert.is(settled!.processorReference, h.payments.payment(stored!._id)!.report.processorReference);
  assert.equal(await creditsOf(stored!._id), [settled!.netKobo], "credited once");
  const events = (await h.outbox.list({ limit: 1000 })).filter((w) => w.idempotencyKey.endsWith(stored!._id)).map((w) => w.eventType);
  assert.equal(events, ["CHECKOUT_COMPLETED"], "completed, never cancelled");
  assert.ok(h.tg.logs.some((l) => l.event === "collections_payment_report_recovered" && l.sessionId === stored!._id), "operators see the recovery");
});

test("a processor that does not answer before abandonment: the session waits for the next sweep; abandoned once it says it has no payment", async () => {
  const link = await h.createLink({ link_name: "Processor silent" });
  const form = await checkoutForm(link.reference, "1400");
  // The session is stored; the processor is never asked (the first look-up for the form fails after the insert).
  once.push({ collection: SESSIONS, method: "insert", fault: "after" }, { collection: SESSIONS, method: "findOne", fault: "before" });
  assert.is((await h.page(`/pay/${link.reference}`, { form })).status, 503);
  const [stored] = await sessionsOf(link.reference);
  assert.is(h.payments.payment(stored!._id), null);

  const lookup = h.payments.lookup;
  h.payments.lookup = () => Promise.reject(new Error("processor unreachable"));
  try {
    h.clock.advance(31 * MINUTE);
    await h.api(`/api/v1/payment-link/find-by-reference/${link.reference}/transactions`);
    assert.is((await sessionsOf(link.reference))[0]!.status, "pending", "not abandoned while the processor cannot say");
    assert.ok(h.tg.logs.some((l) => l.event === "collections_payment_lookup_failed" && l.sessionId === stored!._id));
  } finally {
    h.payments.lookup = lookup;
  }
  await h.api(`/api/v1/payment-link/find-by-reference/${link.reference}/transactions`);
  assert.is((await sessionsOf(link.reference))[0]!.status, "abandoned", "no payment at the processor: abandoned");
  assert.equal(await creditsOf(stored!._id), []);
});

test.run();
