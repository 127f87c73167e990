/**
 * Webhook endpoints at run time, over real HTTP with a real receiver: signatures during and after a
 * rotation's overlap (both verify with the merchant client's verifyWebhook), a signed test event,
 * resend through the Admin API (a double submit resends once, audited), the delivery log's filters
 * and failed-first order, auto-disable after failing for the configured time (notice e-mail), and
 * another business's delivery answering as unknown.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { verifyWebhook } from "../../../client/webhooks.ts";
import type { WebhookDelivery } from "../../../adapters/ports.ts";
import { openDirectoryStore } from "../../../core/directory-store.ts";
import { resendDelivery } from "../../../core/webhook-deliveries.ts";
import { sendTestEvent } from "../../../core/webhook-events.ts";
import { ADMIN_KEY, DEMO_RAW, gatewayTracker, type TestGateway } from "../../support/gateway.ts";
import { eventually, startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

const { start, track, closeAll } = gatewayTracker();
test.after.each(closeAll);

const OPERATOR = { actor: "user:test", requestId: null };

async function setup(webhooks: Record<string, unknown> = {}): Promise<{ tg: TestGateway; base: string; rx: WebhookReceiver; mailDir: string }> {
  const rx = track(await startWebhookReceiver());
  const businesses = structuredClone(DEMO_RAW.businesses) as Array<Record<string, unknown>>;
  businesses[0]!.contactEmail = "ops@demo.example";
  const tg = await start({ patch: { businesses, webhooks: { pollMs: 50, timeoutMs: 2000, ...webhooks } } });
  const server = await tg.listen();
  return { tg, base: server.url, rx, mailDir: (tg.config.email as { dir: string }).dir };
}

function demoId(tg: TestGateway): string {
  return tg.config.businesses[0]!.id;
}

async function testEvent(tg: TestGateway, endpointId: string, key: string): Promise<string> {
  const r = await sendTestEvent(tg.gateway.kit.ports.webhooks!, tg.gateway.kit.directory, demoId(tg), endpointId, key, Date.now());
  return r!.webhookId;
}

/** A scheduled event (retried on failure, unlike a test event) to one endpoint, as a producer enqueues it. */
async function scheduledEvent(tg: TestGateway, endpointId: string, url: string, key: string): Promise<string> {
  const message = { businessId: demoId(tg), eventType: "CHECKOUT_COMPLETED", payload: { event_type: "CHECKOUT_COMPLETED", data: { key } }, idempotencyKey: key };
  return (await tg.gateway.kit.ports.webhooks!.enqueue(message, { id: endpointId, url })).webhookId;
}

function admin(base: string, path: string, init: { method?: string; key?: string } = {}): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: init.method ?? "GET",
    headers: { "x-admin-api-key": ADMIN_KEY, ...(init.key ? { "x-idempotency-key": init.key, "content-type": "application/json" } : {}) },
    ...(init.method === "POST" ? { body: "{}" } : {}),
  });
}

test("rotation: both signatures during the overlap, each verifying with verifyWebhook; only the new one after it", async () => {
  const { tg, rx } = await setup({ rotationOverlapMs: 1500 });
  const hooks = tg.gateway.kit.directory.webhooks;
  const ep = await hooks.create(OPERATOR, demoId(tg), { url: rx.url, services: ["collections"], description: "receiver" });
  const s1 = (await hooks.revealSecret(OPERATOR, demoId(tg), ep.id))!.secret;
  assert.match(s1, /^whsec_/);

  await testEvent(tg, ep.id, "before-rotation");
  await eventually(() => rx.received.length === 1, 5000, "the test event");
  const first = rx.received[0]!;
  assert.is(JSON.parse(first.body).type, "webhook.test");
  assert.ok(verifyWebhook(s1, first.headers as Record<string, string>, first.body), "the test event arrives signed");
  assert.is(String(first.headers["webhook-signature"]).split(" ").length, 1);

  const rotated = await hooks.rotate(OPERATOR, demoId(tg), ep.id);
  assert.is(rotated!.secrets.length, 2, "old and new secret during the overlap");
  const s2 = (await hooks.revealSecret(OPERATOR, demoId(tg), ep.id))!.secret;
  assert.is.not(s2, s1);
  await testEvent(tg, ep.id, "during-overlap");
  await eventually(() => rx.received.length === 2, 5000, "the second test event");
  const during = rx.received[1]!;
  assert.is(String(during.headers["webhook-signature"]).split(" ").length, 2, "two space-separated signatures");
  assert.ok(verifyWebhook(s1, during.headers as Record<string, string>, during.body), "verifies with the old secret");
  assert.ok(verifyWebhook(s2, during.headers as Record<string, string>, during.body), "verifies with the new secret");

  await new Promise((r) => setTimeout(r, 1600));
  await testEvent(tg, ep.id, "after-overlap");
  await eventually(() => rx.received.length === 3, 5000, "the third test event");
  const after = rx.received[2]!;
  assert.is(String(after.headers["webhook-signature"]).split(" ").length, 1, "one signature after the overlap");
  assert.ok(verifyWebhook(s2, after.headers as Record<string, string>, after.body));
  assert.not.ok(verifyWebhook(s1, after.headers as Record<string, string>, after.body), "the old secret no longer verifies");
  assert.is((await hooks.get(demoId(tg), ep.id))!.secrets.length, 1);
  assert.not.ok(JSON.stringify(await hooks.list(demoId(tg))).includes(s2), "views never hold a secret");
  const raw = await tg.gateway.kit.ports.documentStore.collection("webhook_outbox").find({});
  assert.ok(raw.items.every((d) => d.secret === null), "messages to a directory endpoint store no secret");
});

test("resend through the Admin API: a double submit makes exactly one more attempt, audited; the log lists attempts", async () => {
  const { tg, base, rx } = await setup();
  const hooks = tg.gateway.kit.directory.webhooks;
  const ep = await hooks.create(OPERATOR, demoId(tg), { url: rx.url, services: ["invoice", "collections"] });
  const id = await testEvent(tg, ep.id, "resend-me");
  await eventually(() => rx.received.length === 1, 5000, "the delivery");
  await eventually(async () => (await (await admin(base, `/admin/webhooks/deliveries/${id}`)).json()).status === "delivered", 3000, "delivered");

  const [a, b] = await Promise.all([
    admin(base, `/admin/webhooks/deliveries/${id}/resend`, { method: "POST", key: "resend-key-0001" }),
    admin(base, `/admin/webhooks/deliveries/${id}/resend`, { method: "POST", key: "resend-key-0001" }),
  ]);
  assert.is(a.status, 200);
  assert.is(b.status, 200);
  const resent = [(await a.json()).resent, (await b.json()).resent];
  assert.is(resent.filter(Boolean).length, 1, "one of the two submits resent");
  await eventually(() => rx.received.length === 2, 5000, "the resent delivery");
  await new Promise((r) => setTimeout(r, 300));
  assert.is(rx.received.length, 2, "exactly one more attempt");
  assert.is(rx.received[1]!.headers["webhook-id"], id, "the same webhook-id");

  const one = (await (await admin(base, `/admin/webhooks/deliveries/${id}`)).json()) as WebhookDelivery;
  assert.is(one.status, "delivered");
  assert.is(one.attemptLog.length, 2);
  assert.ok(one.attemptLog.every((x) => x.statusCode === 200 && x.durationMs >= 0));
  assert.is(one.attemptLog[1]!.manual, true);
  const audit = await openDirectoryStore(tg.gateway.kit.ports.documentStore).audit.find({ action: "webhook_delivery.resend" });
  assert.is(audit.items.length, 1, "audited once");
  assert.match(String(audit.items[0]!.actor), /^operator:/);

  const unknown = await admin(base, `/admin/webhooks/deliveries/msg_${"0".repeat(24)}/resend`, { method: "POST", key: "resend-key-0002" });
  assert.is(unknown.status, 404);
  assert.is((await admin(base, "/admin/webhooks/deliveries/nope")).status, 400);
});

test("the delivery log: failed first, filters by business, status, event and endpoint; another business's id is unknown", async () => {
  const { tg, base, rx } = await setup();
  const hooks = tg.gateway.kit.directory.webhooks;
  const good = await hooks.create(OPERATOR, demoId(tg), { url: rx.url, services: ["collections"] });
  const bad = await hooks.create(OPERATOR, demoId(tg), { url: "http://127.0.0.1:9/refused", services: ["collections"] });
  const okId = await testEvent(tg, good.id, "good-1");
  const failedId = await scheduledEvent(tg, bad.id, bad.url, "bad-1");
  await eventually(async () => (await tg.gateway.kit.ports.webhooks!.deliveries!.get(failedId))!.attempts === 1, 5000, "the failed attempt");
  await eventually(async () => (await tg.gateway.kit.ports.webhooks!.deliveries!.get(okId))!.status === "delivered", 5000, "the delivery");

  const list = (await (await admin(base, `/admin/webhooks/deliveries?businessId=${demoId(tg)}`)).json()) as { data: WebhookDelivery[] };
  assert.is(list.data[0]!.webhookId, failedId, "failed first");
  assert.is(list.data[0]!.failed, true);
  assert.is(list.data[0]!.attemptLog[0]!.error, "ECONNREFUSED");
  assert.is(list.data[0]!.nextAttemptAt !== null, true, "its next retry");
  assert.not.ok("body" in list.data[0]!, "lists leave the body out");
  const byEndpoint = (await (await admin(base, `/admin/webhooks/deliveries?endpointId=${good.id}`)).json()) as { data: WebhookDelivery[] };
  assert.equal(byEndpoint.data.map((d) => d.webhookId), [okId]);
  const delivered = (await (await admin(base, "/admin/webhooks/deliveries?status=delivered&eventType=webhook.test")).json()) as { data: WebhookDelivery[] };
  assert.equal(delivered.data.map((d) => d.webhookId), [okId]);
  const checkout = (await (await admin(base, "/admin/webhooks/deliveries?eventType=CHECKOUT_COMPLETED")).json()) as { data: WebhookDelivery[] };
  assert.equal(checkout.data.map((d) => d.webhookId), [failedId]);
  const endpoints = (await (await admin(base, `/admin/businesses/${demoId(tg)}/webhook-endpoints`)).json()) as { data: Array<{ id: string }> };
  assert.is(endpoints.data.length, 2);

  const other = tg.config.businesses[1]!.id;
  const log = tg.gateway.kit.ports.webhooks!.deliveries!;
  assert.is(await log.get(okId, other), null, "another business's delivery reads as unknown");
  const audit = openDirectoryStore(tg.gateway.kit.ports.documentStore).audit;
  assert.is(await resendDelivery(log, audit, OPERATOR, okId, "k-other", other, Date.now()), null, "and cannot be resent");
  assert.is(await hooks.get(other, good.id), null, "another business's endpoint is unknown");
  assert.is(await hooks.rotate(OPERATOR, other, good.id), null);
});

test("auto-disable: an endpoint failing for the configured time is disabled, with a notice e-mail and a log line", async () => {
  const { tg, rx, mailDir } = await setup({ autoDisableAfterMs: 600 });
  rx.status = 500;
  const hooks = tg.gateway.kit.directory.webhooks;
  const ep = await hooks.create(OPERATOR, demoId(tg), { url: rx.url, services: ["collections"] });
  await testEvent(tg, ep.id, "fail-1");
  await eventually(() => rx.received.length === 1, 5000, "the first failure");
  await eventually(async () => (await hooks.get(demoId(tg), ep.id))!.failingSinceMs !== null, 2000, "the failing streak");
  assert.ok((await hooks.get(demoId(tg), ep.id))!.enabled, "not yet disabled");
  await new Promise((r) => setTimeout(r, 700));
  await testEvent(tg, ep.id, "fail-2");
  await eventually(async () => !(await hooks.get(demoId(tg), ep.id))!.enabled, 5000, "the endpoint disabled");
  const view = (await hooks.get(demoId(tg), ep.id))!;
  assert.is(view.disabled!.reason, "failing");
  assert.is(view.disabled!.lastError, "http_500");
  assert.equal(hooks.targets(demoId(tg), "collections"), [], "no longer a target");
  assert.ok(tg.logs.some((l) => l.msg === "webhook_endpoint_auto_disabled" || l.event === "webhook_endpoint_auto_disabled"));
  await eventually(() => readdirSync(mailDir).some((f) => f.endsWith(".eml")), 3000, "the notice e-mail");
  const mail = readdirSync(mailDir).map((f) => readFileSync(join(mailDir, f), "utf8")).join("\n");
  assert.match(mail, /ops@demo\.example/);
  assert.match(mail, /disabled/);

  // A scheduled message to a disabled endpoint is not sent; enabling it again and resending delivers.
  const queued = await scheduledEvent(tg, ep.id, ep.url, "while-disabled");
  const log = tg.gateway.kit.ports.webhooks!.deliveries!;
  await eventually(async () => (await log.get(queued))!.lastError === "endpoint_disabled", 3000, "parked dead");
  assert.is(rx.received.length, 2);
  // A test event is still made to the disabled endpoint (a person asked for it): one attempt, not retried.
  const probe = await testEvent(tg, ep.id, "probe-while-disabled");
  await eventually(() => rx.received.length === 3, 3000, "the test event to the disabled endpoint");
  await eventually(async () => (await log.get(probe))!.status === "dead", 3000, "not retried");
  assert.is((await log.get(probe))!.attempts, 1);
  rx.status = 204;
  await hooks.update(OPERATOR, demoId(tg), ep.id, { enabled: true });
  await resendDelivery(log, openDirectoryStore(tg.gateway.kit.ports.documentStore).audit, OPERATOR, queued, "after-fix", demoId(tg), Date.now());
  await eventually(async () => (await log.get(queued))!.status === "delivered", 5000, "delivered after the fix");
});

test.run();
