/**
 * Webhook deliveries in the console: failed first, filters by business, event and status, attempts
 * with their response codes; an admin resends a dead delivery — the Admin API route's service — and
 * a double-submitted form resends once; a viewer sees the list read-only and cannot resend.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { sendTestEvent } from "../../../core/webhook-events.ts";
import { startTestGateway } from "../../support/gateway.ts";
import { eventually, startWebhookReceiver } from "../../support/webhook-receiver.ts";
import { OPERATOR_KEY, VIEWER_KEY, VIEWER_PATCH, consoleClient, hiddenField } from "./console-helpers.ts";

test("failed first, filters, attempts with response codes; resend once from the console; a viewer is read-only", async () => {
  const rx = await startWebhookReceiver();
  const g = await startTestGateway({ patch: { ...VIEWER_PATCH, webhooks: { pollMs: 50, timeoutMs: 2000 } } });
  try {
    const biz = g.config.businesses[0]!.id;
    const by = { actor: "user:test", requestId: null };
    const hooks = g.gateway.kit.directory.webhooks;
    const outbox = g.gateway.kit.ports.webhooks!;
    const good = await hooks.create(by, biz, { url: rx.url, services: ["collections"], description: "<script>alert(1)</script>" });
    rx.status = 503;
    // A scheduled event (retried on failure), as a producer enqueues it.
    const message = { businessId: biz, eventType: "CHECKOUT_FAILED", payload: { event_type: "CHECKOUT_FAILED", data: {} }, idempotencyKey: "k1" };
    const failed = (await outbox.enqueue(message, { id: good.id, url: good.url })).webhookId;
    await eventually(async () => (await outbox.deliveries!.get(failed))!.attempts === 1, 5000, "the failed attempt");
    rx.status = 200;
    const ok = (await sendTestEvent(outbox, g.gateway.kit.directory, biz, good.id, "k2", Date.now()))!.webhookId;
    await eventually(async () => (await outbox.deliveries!.get(ok))!.status === "delivered", 5000, "the delivery");

    const admin = consoleClient(g);
    assert.is((await admin.signIn(OPERATOR_KEY)).status, 303);
    const list = await admin.html("/console/webhooks");
    assert.ok(list.indexOf(failed) > 0 && list.indexOf(failed) < list.indexOf(ok), "failed first");
    assert.match(list, /retrying \(http_503\)/);
    assert.match(list, /\(503\)/, "the response code of the attempt");
    assert.match(await admin.html(`/console/webhooks?status=delivered&businessId=${biz}`), new RegExp(ok));
    assert.not.match(await admin.html("/console/webhooks?status=delivered"), new RegExp(failed));
    assert.not.match(await admin.html("/console/webhooks?eventType=CHECKOUT_COMPLETED"), new RegExp(ok));

    const detail = await admin.html(`/console/webhooks/${ok}`);
    assert.match(detail, /webhook\.test/);
    assert.match(detail, /<td>200<\/td>/);
    const form = { _csrf: hiddenField(detail, "_csrf"), _idempotency: hiddenField(detail, "_idempotency") };
    const done = await admin.post(`/console/webhooks/${ok}/resend`, form);
    assert.is(done.status, 303);
    assert.match(await admin.html(done.headers.get("location")!), /Resent/);
    await admin.post(`/console/webhooks/${ok}/resend`, form);
    await eventually(async () => (await outbox.deliveries!.get(ok))!.attempts === 2 && (await outbox.deliveries!.get(ok))!.status === "delivered", 5000, "the resend");
    await new Promise((r) => setTimeout(r, 300));
    assert.is((await outbox.deliveries!.get(ok))!.attempts, 2, "a double submit resends once");
    assert.is(rx.received.filter((r) => r.headers["webhook-id"] === ok).length, 2);
    assert.is((await admin.get(`/console/webhooks/msg_${"0".repeat(24)}`)).status, 404);

    const viewer = consoleClient(g);
    assert.is((await viewer.signIn(VIEWER_KEY)).status, 303);
    const seen = await viewer.html("/console/webhooks");
    assert.match(seen, /read-only/);
    assert.not.match(seen, /Resend<\/button>/);
    const refused = await viewer.post(`/console/webhooks/${ok}/resend`, { _csrf: hiddenField(seen, "_csrf"), _idempotency: "abcdefgh-1234" });
    assert.is(refused.status, 403);
    assert.not.match(seen, /<script>alert/);
  } finally {
    await g.close();
    await rx.close();
  }
});

test.run();
