/**
 * Sessions without completion: a slow processor leaves a session pending; after 30 minutes
 * (controllable clock) it is abandoned — lazily when read, and by the plugin's sweeper worker —
 * with one CHECKOUT_CANCELLED; a payment reported after that is refunded, never credited. The
 * worker also completes the effects of a final state left unfinished (a crash after the state change).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { MINUTE, dataOf, eventually, startCollections, type CollectionsHarness, type LinkData } from "./collections-helpers.ts";

interface Tx {
  id: string;
  status: string;
  refund: { amount: number; refundReference: string | null } | null;
  paidAt: string | null;
}

async function txOf(h: CollectionsHarness, link: LinkData): Promise<Tx[]> {
  return dataOf<Tx[]>(await h.api(`/api/v1/payment-link/find-by-reference/${link.reference}/transactions`));
}

async function credits(h: CollectionsHarness, sessionId: string): Promise<number> {
  const page = await h.store.collection("collections_wallet_entries").find({ sourceId: sessionId });
  return page.items.length;
}

function sessionIdOf(location: string | null): string {
  return /\/success\/([0-9a-f-]{36})$/.exec(location ?? "")![1]!;
}

test("a slow processor: the form answers 303 to a processing page (202) that refreshes itself", async () => {
  const h = await startCollections({ delayReportMs: 1_500, payTimeoutMs: 30 });
  try {
    const link = await h.createLink({ link_name: "Slow" });
    const res = await h.pay(link.reference, { email: "slow@example.com", amount: "100" });
    assert.is(res.status, 303);
    const status = await h.page(res.headers.get("location")!);
    assert.is(status.status, 202);
    const html = await status.text();
    assert.match(html, /Payment processing/);
    assert.match(html, /<meta http-equiv="refresh" content="5">/);
    // The report arrives later and settles the session.
    await h.payments.idle();
    await eventually(async () => (await txOf(h, link))[0]!.status === "successful", 3_000, "settlement");
    const done = await h.page(res.headers.get("location")!);
    assert.is(done.status, 200);
    assert.match(await done.text(), /Payment successful/);
  } finally {
    await h.close();
  }
});

test("no completion within 30 minutes → abandoned on read, CHECKOUT_CANCELLED once; a late payment is refunded, never credited", async () => {
  // The processor decides after 5 s of real time: the session is abandoned before (the sweep's
  // look-up finds no decided payment), and the payment arrives late.
  const h = await startCollections({ delayReportMs: 5_000, payTimeoutMs: 20 });
  try {
    const link = await h.createLink({ link_name: "Forgotten" });
    const res = await h.pay(link.reference, { email: "late@example.com", amount: "250" });
    assert.is(res.status, 303);
    const sessionId = sessionIdOf(res.headers.get("location"));
    assert.is((await txOf(h, link))[0]!.status, "pending");

    h.clock.advance(29 * MINUTE);
    assert.is((await txOf(h, link))[0]!.status, "pending", "29 minutes: still pending");

    h.clock.advance(2 * MINUTE);
    const tx = await txOf(h, link);
    assert.is(tx[0]!.status, "abandoned", "31 minutes: abandoned when read");
    assert.is((await dataOf<Tx[]>(await h.api(`/api/v1/payment-link/find-by-reference/${link.reference}/transactions?status=abandoned`))).length, 1);
    const page = await h.page(`/pay/${link.reference}/success/${sessionId}`);
    assert.is(page.status, 200);
    assert.match(await page.text(), /Payment not completed/);
    let hooks = (await h.webhooks("demo")).filter((w) => w.idempotencyKey.endsWith(sessionId));
    assert.equal(hooks.map((w) => w.eventType), ["CHECKOUT_CANCELLED"]);

    // The processor's report arrives after the session was abandoned: refund, never credit.
    await h.payments.idle();
    await eventually(async () => (await txOf(h, link))[0]!.status === "refunded", 3_000, "the late payment's refund");
    const refunded = (await txOf(h, link))[0]!;
    assert.is(refunded.refund!.amount, 250);
    assert.match(refunded.refund!.refundReference!, /^SBR-/);
    assert.is(h.payments.payment(sessionId)!.refund!.amountKobo, 25_000);
    assert.is(await credits(h, sessionId), 0, "never credited");
    hooks = (await h.webhooks("demo")).filter((w) => w.idempotencyKey.endsWith(sessionId));
    assert.equal(hooks.map((w) => w.eventType).sort(), ["CHECKOUT_CANCELLED", "CHECKOUT_REFUNDED"]);
  } finally {
    await h.close();
  }
});

test("the sweeper worker abandons stale sessions without any read, once", async () => {
  const h = await startCollections({ delayReportMs: 60_000, payTimeoutMs: 20, sweepIntervalMs: 25 });
  try {
    const link = await h.createLink({ link_name: "Swept" });
    const sessions: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await h.pay(link.reference, { email: `s${i}@example.com`, amount: "100" });
      sessions.push(sessionIdOf(res.headers.get("location")));
    }
    const coll = h.store.collection<{ _id: string; status: string }>("collections_checkout_sessions");
    await new Promise((r) => setTimeout(r, 100));
    assert.ok((await coll.find({ linkId: link.id })).items.every((s) => s.status === "pending"), "young sessions are left alone");
    h.clock.advance(30 * MINUTE + 1);
    await eventually(async () => (await coll.find({ linkId: link.id })).items.every((s) => s.status === "abandoned"), 3_000, "the sweep");
    await new Promise((r) => setTimeout(r, 100)); // more sweeps run
    await txOf(h, link); // and a lazy read
    for (const id of sessions) {
      const hooks = (await h.webhooks("demo")).filter((w) => w.idempotencyKey.endsWith(id));
      assert.equal(hooks.map((w) => w.eventType), ["CHECKOUT_CANCELLED"]);
    }
    assert.ok(h.tg.logs.some((l) => l.event === "collections_checkout_state_changed" && l.to === "abandoned"));
  } finally {
    await h.close();
  }
});

test("the worker completes a final state's effects left unfinished (credit and webhook), exactly once", async () => {
  const h = await startCollections({ sweepIntervalMs: 25 });
  try {
    const link = await h.createLink({ link_name: "Crashed mid-settlement" });
    const res = await h.pay(link.reference, { email: "c@example.com", amount: "400" });
    const sessionId = sessionIdOf(res.headers.get("location"));
    await h.payments.idle();
    // Simulate a crash right after the state change: the credit and the webhook never happened.
    const sessions = h.store.collection("collections_checkout_sessions");
    await h.store.collection("collections_wallet_entries").deleteMany({ sourceId: sessionId });
    await h.store.collection("webhook_outbox").deleteMany({ idempotencyKey: `CHECKOUT_COMPLETED:${sessionId}` });
    await sessions.findOneAndUpdate({ _id: sessionId }, { $set: { effectsPending: true, updatedAt: h.clock.now() } });
    await new Promise((r) => setTimeout(r, 100));
    assert.is(await credits(h, sessionId), 0, "a fresh state change is left to the request that made it");
    h.clock.advance(11_000);
    await eventually(async () => (await sessions.get(sessionId))?.effectsPending === false, 3_000, "the re-drive");
    assert.is(await credits(h, sessionId), 1);
    const hooks = (await h.webhooks("demo")).filter((w) => w.idempotencyKey.endsWith(sessionId));
    assert.equal(hooks.map((w) => w.eventType), ["CHECKOUT_COMPLETED"]);
    // A redelivered report afterwards changes nothing.
    h.payments.redeliver(sessionId, 3);
    await h.payments.idle();
    assert.is(await credits(h, sessionId), 1);
    assert.is((await h.webhooks("demo")).filter((w) => w.idempotencyKey.endsWith(sessionId)).length, 1);
  } finally {
    await h.close();
  }
});

test("sessions whose effects keep failing do not hold the re-drive's places: a session behind 100 of them is still credited", async () => {
  const h = await startCollections({ sweepIntervalMs: 25 });
  try {
    const link = await h.createLink({ link_name: "Behind a blocked queue" });
    const res = await h.pay(link.reference, { email: "q@example.com", amount: "500" });
    const sessionId = sessionIdOf(res.headers.get("location"));
    await h.payments.idle();
    const sessions = h.store.collection<Record<string, unknown> & { _id: string }>("collections_checkout_sessions");
    const paid = (await sessions.get(sessionId))!;
    // 100 older sessions whose refund the processor refuses for good (it never took their payment).
    const { formToken: _token, ...template } = paid;
    for (let i = 0; i < 100; i++)
      await sessions.insert({
        ...template,
        _id: `blocked-${i}`,
        reference: `PLT-BLOCKED-${i}`,
        status: "refunded",
        refund: { amountKobo: 100, reason: "test", refundReference: null },
        effectsPending: true,
        updatedAt: h.clock.now() - 60_000 - i,
      });
    // The paid session lost its credit and webhook in a crash.
    await h.store.collection("collections_wallet_entries").deleteMany({ sourceId: sessionId });
    await h.store.collection("webhook_outbox").deleteMany({ idempotencyKey: `CHECKOUT_COMPLETED:${sessionId}` });
    await sessions.findOneAndUpdate({ _id: sessionId }, { $set: { effectsPending: true, updatedAt: h.clock.now() - 30_000 } });
    h.clock.advance(1_000);
    await eventually(async () => (await credits(h, sessionId)) === 1, 5_000, "the session behind the blocked ones is re-driven");
    // The webhook is enqueued after the credit (a commit later).
    const hooks = async () => (await h.webhooks("demo")).filter((w) => w.idempotencyKey.endsWith(sessionId)).map((w) => w.eventType);
    await eventually(async () => (await hooks()).length > 0, 3_000, "the re-drive enqueues the webhook");
    assert.equal(await hooks(), ["CHECKOUT_COMPLETED"]);
    // The re-drive clears the session's flag after its effects (a write of its own, a commit later).
    await eventually(async () => (await sessions.get(sessionId))?.effectsPending === false, 3_000, "the re-drive finishes the session");
    assert.is((await sessions.find({ effectsPending: true }, { limit: 200 })).items.length, 100, "the blocked ones are still owed (and retried)");
  } finally {
    await h.close();
  }
});

test.run();
