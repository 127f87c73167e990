/**
 * The merchant client against real gateways over HTTP, for Stored mode and the collections service,
 * and the webhook helpers on real deliveries: a Stored intake whose 202 is lost is resent with the
 * same key and answers the same invoice (one invoice, one debit); the invoice's signed webhooks
 * verify and parse; collections calls answer typed envelopes, a 429 is waited out, validation
 * errors carry every field, a deposit's IN_FLOW_SUCCESS_EVENT verifies and dedupes by webhook-id.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  isCollectionsApiError,
  parseCollectionsWebhook,
  parseInvoiceWebhook,
  parseWebhook,
  WebhookVerificationError,
  type CollectionsApiError,
  type IntakeDocument,
  type ProblemError,
} from "../../client/index.ts";
import { BEARER_HOOKED, HOOK_SECRET, sourceRef, startCollections, startReceiver } from "../plugins/collections/payment-links/collections-helpers.ts";
import { intakeInvoice, startStoredHarness, SUB, type StoredHarness } from "../plugins/stored-processing/stored-helpers.ts";
import { STORED } from "../support/gateway.ts";
import { until } from "../support/assertions.ts";
import { collectionsClient, gatewayClient, recorder, startFaultyProxy, testRuntime } from "./client-helpers.ts";

async function rejection<E>(p: Promise<unknown>): Promise<E> {
  try {
    await p;
  } catch (e) {
    return e as E;
  }
  throw new Error("expected the call to fail");
}

test("Stored: the intake's 202 is lost → resent with the same key, the same invoice answers; signed once, charged once; webhooks verify", async () => {
  const h: StoredHarness = await startStoredHarness({ webhooks: true });
  const proxy = await startFaultyProxy(h.server.port);
  try {
    const { records, onAttempt } = recorder();
    const { runtime } = testRuntime();
    const gw = gatewayClient(proxy.url, STORED, { onAttempt, runtime });
    proxy.loseAnswers(1);
    const accepted = await gw.stored.submit(SUB, intakeInvoice("STC001", { gatewayIds: true }) as IntakeDocument);
    assert.is(accepted.status, 202);
    assert.is(accepted.sends, 2, "resent after the lost answer");
    assert.equal(records.map((r) => [r.send, r.requestId === null, r.next]), [[1, true, "retry"], [2, false, "return"]]);
    assert.is(records[0]!.idempotencyKey, records[1]!.idempotencyKey);
    const { invoiceId } = accepted.data;
    const list = await gw.stored.list({ subBusinessId: SUB });
    assert.equal(list.data.data.map((i) => i.invoiceId), [invoiceId], "one invoice, not two");

    const signed = await h.waitFor(invoiceId, (inv) => inv.status === "signed");
    assert.is(signed.attempts >= 1, true);
    const one = await gw.stored.get(invoiceId);
    assert.is(one.data.status, "signed");
    assert.ok(one.data.document, "the record with its document");
    const ledger = await h.ledger();
    assert.is(ledger.debits, 1, "charged once");

    const sent = await gw.stored.transmit(invoiceId);
    assert.is(sent.status, 202);
    assert.is(sent.data.status, "transmitting");
    const again = await rejection<ProblemError>(gw.stored.transmit(invoiceId));
    assert.is(again.code, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED");
    const cancel = await rejection<ProblemError>(gw.stored.cancel(invoiceId));
    assert.is(cancel.code, "GW_INVOICE_STATE_CONFLICT");
    assert.is(cancel.strategy, "AFTER_CORRECTION");

    await until(() => h.received.some((r) => r.json.type === "invoice.signed"), 5_000);
    for (const r of h.received) {
      const hook = parseInvoiceWebhook(h.webhookSecret, r.headers, r.body);
      assert.is(hook.payload.data.invoiceId, invoiceId);
      assert.is(hook.id, r.headers["webhook-id"]);
    }
    const first = h.received[0]!;
    assert.throws(() => parseInvoiceWebhook("whsec_" + Buffer.from("wrong").toString("base64"), first.headers, first.body), (e: unknown) => e instanceof WebhookVerificationError && e.reason === "bad_signature");
    assert.throws(() => parseInvoiceWebhook(h.webhookSecret, first.headers, first.body, { now: Date.now() + 3_600_000 }), (e: unknown) => (e as WebhookVerificationError).reason === "timestamp_out_of_tolerance");
  } finally {
    await proxy.close();
    await h.close();
  }
});

test("collections: typed envelopes for links, accounts, customers, deposits and credits; IN_FLOW_SUCCESS_EVENT verified and deduped by webhook-id", async () => {
  const receiver = await startReceiver();
  const h = await startCollections({ webhookUrl: receiver.url });
  const server = await h.tg.listen();
  try {
    const col = collectionsClient(server.url);
    const link = await col.paymentLinks.create({ link_name: "Choir robes", narration: "Robes", fee_bearer: "MERCHANT", source_reference: sourceRef("cl"), amount: 1500 });
    assert.is(link.status, 201);
    assert.is(link.data.statusCode, 201);
    assert.is(link.data.data.amount, 1500);
    const ref = link.data.data.reference;
    assert.is((await col.paymentLinks.findByReference(ref)).data.data.id, link.data.data.id);
    assert.is((await col.paymentLinks.findBySourceReference(link.data.data.sourceReference)).data.data.reference, ref);
    const links = await col.paymentLinks.list({ page: 1, limit: 5, search: "Choir" });
    assert.is(links.data.meta.total, 1);
    assert.is((await col.paymentLinks.toggleStatus({ link_id: ref, activate: false })).data.data.status, "inactive");
    assert.is((await col.paymentLinks.transactions(ref)).data.data.length, 0);
    assert.is((await col.paymentLinks.transactionsBySourceReference(link.data.data.sourceReference, { status: "successful" })).data.meta.total, 0);

    const invalid = await rejection<CollectionsApiError>(col.paymentLinks.create({ link_name: "", narration: "x", fee_bearer: "MERCHANT", source_reference: "" }));
    assert.ok(isCollectionsApiError(invalid));
    assert.is(invalid.status, 422);
    assert.equal(invalid.errors.map((e) => e.field).sort(), ["link_name", "source_reference"]);
    assert.is(invalid.sends, 1);
    assert.ok(invalid.requestId);

    // The business with a webhook endpoint: a deposit settles once and sends one signed event.
    const shopHooked = collectionsClient(server.url, {}, BEARER_HOOKED);
    const account = await shopHooked.virtualAccounts.create({ account_type: "multi_use", account_name: "Ada Stores", source_reference: sourceRef("va") });
    assert.is(account.data.data.accountType, "multi_use");
    const number = account.data.data.accountNumber;
    assert.is((await shopHooked.virtualAccounts.find({ reference: account.data.data.reference })).data.data.accountNumber, number);
    assert.is((await shopHooked.virtualAccounts.list({ accountType: "multi_use" })).data.meta.total, 1);
    const customer = await shopHooked.customers.create({ first_name: "Ada", last_name: "Obi", email: "ada@example.ng", phone: "+2348012345678", has_wallet: false });
    const attached = await shopHooked.customers.attachVirtualAccount(customer.data.data.id);
    assert.ok(attached.data.data.virtualAccount?.accountNumber);
    assert.is((await shopHooked.customers.get(customer.data.data.id)).data.data.has_wallet, true);
    const deposit = await shopHooked.sandbox.deposit({ account_number: number, amount: 2500, sender_name: "Bola", sender_account_number: "0123456789", sender_bank: "Test Bank" });
    assert.is(deposit.data.data.status, "settled");
    const credits = await shopHooked.balances.transactions({ limit: 10 });
    assert.equal(credits.data.data.map((c) => c.amount), [2500], "credited once");
    assert.is((await shopHooked.virtualAccounts.toggleStatus({ reference: account.data.data.reference, activate: false })).data.data.status, "inactive");

    await h.outbox.deliverDue();
    await until(() => receiver.received.some((r) => r.body.includes("IN_FLOW_SUCCESS_EVENT")), 5_000);
    const delivery = receiver.received.find((r) => r.body.includes("IN_FLOW_SUCCESS_EVENT"))!;
    const hook = parseCollectionsWebhook(HOOK_SECRET, delivery.headers, delivery.body);
    assert.is(hook.payload.event_type, "IN_FLOW_SUCCESS_EVENT");
    if (hook.payload.event_type === "IN_FLOW_SUCCESS_EVENT") assert.is(hook.payload.data.recipient.accountNumber, number);

    // docs/client.md's receiver: a repeat of the same webhook-id is acknowledged, not processed again.
    const seen = new Set<string>();
    let processed = 0;
    const receive = (headers: Record<string, string>, body: string): number => {
      let verified;
      try {
        verified = parseCollectionsWebhook(HOOK_SECRET, headers, body);
      } catch {
        return 400;
      }
      if (seen.has(verified.id)) return 200;
      seen.add(verified.id);
      processed++;
      return 200;
    };
    assert.is(receive(delivery.headers, delivery.body), 200);
    assert.is(receive(delivery.headers, delivery.body), 200);
    assert.is(processed, 1, "a redelivery is not processed twice");
    assert.is(receive({ ...delivery.headers, "webhook-signature": "v1,AAAA" }, delivery.body), 400);
    assert.throws(() => parseWebhook(HOOK_SECRET, {}, delivery.body), (e: unknown) => (e as WebhookVerificationError).reason === "missing_headers");
  } finally {
    await h.close();
    await receiver.close();
  }
});

test("collections: a 429 (quota) is waited out for Retry-After and resent; reads are typed", async () => {
  const h = await startCollections({ patch: { limits: { quotas: { default: { limit: 2, windowSeconds: 1 } } } } });
  const server = await h.tg.listen();
  try {
    const { records, onAttempt } = recorder();
    const { runtime, waits } = testRuntime(true);
    const col = collectionsClient(server.url, { onAttempt, runtime });
    let reads = 0;
    // Two per window: within a few reads one is refused (bounded, whatever the window boundaries).
    while (reads < 10 && !records.some((r) => r.status === 429)) {
      await col.paymentLinks.list();
      reads++;
    }
    const limited = records.find((r) => r.status === 429);
    assert.ok(limited, "the quota answered 429");
    assert.is(limited!.next, "retry");
    assert.ok(waits[0]! >= 1_000, `waited Retry-After: ${waits[0]}`);
    assert.is(records.filter((r) => r.ok).length, reads, "every read answered, the refused one after its wait");
  } finally {
    await h.close();
  }
});

test.run();
