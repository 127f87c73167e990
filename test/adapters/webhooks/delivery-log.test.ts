/**
 * The outbox's delivery log on both document stores (SQLite in memory, and MongoDB through jongodb or
 * MONGODB_URI): messages to a directory endpoint are signed at attempt time with every live secret,
 * keep a bounded attempt log, list failed first with each filter and cursor paging, resend once per
 * key (also under two concurrent calls), park dead when their endpoint is disabled, and a manual
 * message (a test event) is one attempt, made even to a disabled endpoint.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { verifyWebhook } from "../../../client/webhooks.ts";
import { createMongoDocumentStore } from "../../../adapters/document-store/mongodb.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import type { DocumentStore, WebhookEndpointState } from "../../../adapters/ports.ts";
import { createWebhookOutbox } from "../../../adapters/webhooks/outbox.ts";
import { isMongoSkip, startMongoServer } from "../../support/mongo-server.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

const OLD = "whsec_T0xET0xET0xET0xET0xET0xET0xET0xE";
const NEW = "whsec_TkVXTkVXTkVXTkVXTkVXTkVXTkVXTkVX";

const mongo = await startMongoServer();
const stores: Array<[string, () => Promise<DocumentStore>]> = [["sqlite", () => createSqliteDocumentStore({ file: ":memory:" })]];
if (!isMongoSkip(mongo)) stores.push(["mongodb", () => createMongoDocumentStore({ uri: mongo.uri, dbName: mongo.dbName() })]);
else process.stdout.write(`SKIPPED delivery log on MongoDB: ${mongo.skip}\n`);

async function harness(makeStore: () => Promise<DocumentStore>) {
  const rx = await startWebhookReceiver();
  const store = await makeStore();
  const endpoint: WebhookEndpointState = { url: rx.url, enabled: true, secrets: [NEW, OLD] };
  const outcomes: boolean[] = [];
  const outbox = createWebhookOutbox({
    store,
    schedule: [1, 1, 1, 1],
    jitter: 0,
    timeoutMs: 2000,
    maxAttemptsKept: 3,
    endpoints: { resolve: async (id) => (id === "ep_1" ? endpoint : null), attempted: async (_id, ok) => void outcomes.push(ok) },
  });
  const message = (key: string, eventType = "CHECKOUT_COMPLETED", manual = false) => ({ businessId: "biz", eventType, payload: { key }, idempotencyKey: key, manual });
  const drain = async () => {
    for (let i = 0; i < 20 && (await outbox.deliverDue()) > 0; i++) await new Promise((r) => setTimeout(r, 5));
  };
  return {
    rx,
    endpoint,
    outcomes,
    outbox,
    message,
    drain,
    close: async () => {
      await outbox.worker.stop();
      await store.close();
      await rx.close();
    },
  };
}

for (const [name, makeStore] of stores) {
  test(`${name}: signed at attempt time with every live secret; attempt log bounded; failed first, filters, paging`, async () => {
    const h = await harness(makeStore);
    try {
      const a = (await h.outbox.enqueue(h.message("a"), { id: "ep_1", url: h.endpoint.url })).webhookId;
      await h.drain();
      const got = h.rx.received[0]!;
      assert.is(String(got.headers["webhook-signature"]).split(" ").length, 2);
      assert.ok(verifyWebhook(NEW, got.headers as Record<string, string>, got.body) && verifyWebhook(OLD, got.headers as Record<string, string>, got.body));
      const raw = await h.outbox.get(a);
      assert.is(raw!.status, "delivered");
      assert.is(raw!.endpointId, "ep_1");

      h.rx.status = 500;
      const b = (await h.outbox.enqueue(h.message("b", "CHECKOUT_FAILED"), { id: "ep_1", url: h.endpoint.url })).webhookId;
      await h.drain();
      const dead = (await h.outbox.deliveries.get(b))!;
      assert.is(dead.status, "dead");
      assert.is(dead.attempts, 5);
      assert.is(dead.attemptLog.length, 3, "bounded to maxAttemptsKept");
      assert.ok(dead.attemptLog.every((x) => x.statusCode === 500 && x.error === "http_500"));
      assert.equal(h.outcomes, [true, false, false, false, false, false]);

      const page1 = await h.outbox.deliveries.list({ businessId: "biz", failedFirst: true, limit: 1 });
      assert.equal(page1.items.map((d) => d.webhookId), [b], "failed first");
      const page2 = await h.outbox.deliveries.list({ businessId: "biz", failedFirst: true, limit: 1, cursor: page1.nextCursor });
      assert.equal(page2.items.map((d) => d.webhookId), [a]);
      assert.equal((await h.outbox.deliveries.list({ status: "delivered" })).items.map((d) => d.webhookId), [a]);
      assert.equal((await h.outbox.deliveries.list({ eventType: "CHECKOUT_FAILED" })).items.map((d) => d.webhookId), [b]);
      assert.is((await h.outbox.deliveries.list({ endpointId: "ep_1" })).items.length, 2);
      assert.is((await h.outbox.deliveries.list({ businessId: "other" })).items.length, 0);
      assert.is(await h.outbox.deliveries.get(b, "other"), null);
    } finally {
      await h.close();
    }
  });

  test(`${name}: resend once per key (also concurrently); disabled endpoints park; a manual message is one attempt`, async () => {
    const h = await harness(makeStore);
    try {
      const a = (await h.outbox.enqueue(h.message("a"), { id: "ep_1", url: h.endpoint.url })).webhookId;
      await h.drain();
      const both = await Promise.all([h.outbox.deliveries.resend(a, "key-1"), h.outbox.deliveries.resend(a, "key-1")]);
      assert.equal(both.map((r) => r!.resent).sort(), [false, true]);
      await h.drain();
      assert.is(h.rx.received.length, 2, "one more attempt");
      const after = (await h.outbox.deliveries.get(a))!;
      assert.is(after.attemptLog.at(-1)!.manual, true);
      assert.is((await h.outbox.deliveries.resend(a, "key-1"))!.reason, "already_resent");
      assert.is(await h.outbox.deliveries.resend(a, "key-2", "other"), null, "another business's message");

      h.endpoint.enabled = false;
      const parked = (await h.outbox.enqueue(h.message("p"), { id: "ep_1", url: h.endpoint.url })).webhookId;
      await h.drain();
      assert.is((await h.outbox.deliveries.get(parked))!.lastError, "endpoint_disabled");
      assert.is(h.rx.received.length, 2, "nothing sent to a disabled endpoint");
      h.rx.status = 503;
      const probe = (await h.outbox.enqueue(h.message("t", "webhook.test", true), { id: "ep_1", url: h.endpoint.url })).webhookId;
      await h.drain();
      const tested = (await h.outbox.deliveries.get(probe))!;
      assert.is(h.rx.received.length, 3, "a test event reaches a disabled endpoint");
      assert.is(tested.status, "dead");
      assert.is(tested.attempts, 1, "not retried");
      const gone = (await h.outbox.enqueue(h.message("g"), { id: "ep_gone", url: h.endpoint.url })).webhookId;
      await h.drain();
      assert.is((await h.outbox.deliveries.get(gone))!.lastError, "endpoint_removed");
    } finally {
      await h.close();
    }
  });
}

test.after(async () => {
  if (!isMongoSkip(mongo)) await mongo.stop();
});

test.run();
