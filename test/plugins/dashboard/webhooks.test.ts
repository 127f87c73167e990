/**
 * The dashboard's Webhooks section: the demo owner adds an endpoint pointing at a real receiver,
 * reveals its secret with a TOTP code, sends a test event that arrives signed (verifyWebhook), sees
 * it in the delivery log with the receiver's status, resends it once (a double submit resends once),
 * rotates the secret (both signatures during the overlap); another business's endpoint and delivery
 * are 404; a viewer's change is 403; bad input comes back as a message; hostile text is escaped.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { verifyWebhook } from "../../../client/webhooks.ts";
import { sendTestEvent } from "../../../core/webhook-events.ts";
import { DEMO_OWNER } from "../../../plugins/dashboard/demo-owner.ts";
import { createUserStore } from "../../../plugins/dashboard/users.ts";
import { gatewayTracker } from "../../support/gateway.ts";
import { eventually, startWebhookReceiver } from "../../support/webhook-receiver.ts";
import { demoOwner, hiddenField, totpCode } from "./dashboard-helpers.ts";

const { start, track, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("add an endpoint, reveal its secret (TOTP), send a test event, see it delivered, resend once, rotate", async () => {
  const rx = track(await startWebhookReceiver());
  const tg = await start({ patch: { webhooks: { pollMs: 50, timeoutMs: 2000 } } });
  const owner = await demoOwner(tg);
  const list = await owner.html("/dashboard/webhooks");
  assert.match(list, /No endpoint yet/);
  const csrf = hiddenField(list, "_csrf");

  const bad = await owner.post("/dashboard/webhooks/endpoints", { _csrf: csrf, url: "ftp://nope", description: "x" });
  assert.is(bad.status, 303);
  assert.match(await owner.html(bad.headers.get("location")!), /Not saved: url: an http\(s\) URL; services: one or more/);

  const added = await owner.post("/dashboard/webhooks/endpoints", { _csrf: csrf, url: rx.url, service_collections: "on", service_invoice: "on", description: "<img src=x onerror=alert(1)>" });
  assert.is(added.status, 303);
  const epPath = added.headers.get("location")!;
  assert.match(epPath, /^\/dashboard\/webhooks\/endpoints\/ep_[0-9a-f]{24}$/);
  const epPage = await owner.html(epPath);
  assert.match(epPage, /&lt;img src=x onerror=alert\(1\)&gt;/, "escaped");
  assert.not.match(epPage, /<img src=x/);

  // Signing in entered a code (fresh for a few minutes): forget it, so reveal asks for one.
  owner.cookies.delete("gh_dash_totp");
  const noCode = await owner.post(`${epPath}/reveal`, { _csrf: csrf });
  assert.is(noCode.status, 303, "no code: refused");
  assert.match(await owner.html(noCode.headers.get("location")!), /enter the current code/);
  // The sign-in spent the current step's code; the next step's is accepted (one step of clock drift).
  const revealed = await owner.post(`${epPath}/reveal`, { _csrf: csrf, totp: totpCode(DEMO_OWNER.totpSecret, Date.now() + 30_000) });
  assert.is(revealed.status, 200);
  assert.is(revealed.headers.get("cache-control"), "no-store");
  const secret = /id="revealed-secret">([^<]+)</.exec(await revealed.text())![1]!;
  assert.match(secret, /^whsec_/);

  const testForm = await owner.html(epPath);
  const sent = await owner.post(`${epPath}/test`, { _csrf: csrf, _idempotency: hiddenField(testForm.slice(testForm.indexOf("Send test event") - 600), "_idempotency") });
  assert.is(sent.status, 303);
  const deliveryPath = sent.headers.get("location")!;
  await eventually(() => rx.received.length === 1, 5000, "the test event");
  const got = rx.received[0]!;
  assert.ok(verifyWebhook(secret, got.headers as Record<string, string>, got.body), "arrives signed with the revealed secret");
  assert.is(JSON.parse(got.body).type, "webhook.test");
  await eventually(async () => /class="response-code">200</.test(await owner.html(deliveryPath)), 5000, "the receiver's status in the log");
  const logPage = await owner.html("/dashboard/webhooks");
  assert.match(logPage, /webhook\.test/);
  assert.match(logPage, /200 in \d+ ms/);

  const deliveryPage = await owner.html(deliveryPath);
  const resendForm = { _csrf: csrf, _idempotency: hiddenField(deliveryPage, "_idempotency") };
  const r1 = await owner.post(`${deliveryPath}/resend`, resendForm);
  assert.match(await owner.html(r1.headers.get("location")!), /Resent/);
  const r2 = await owner.post(`${deliveryPath}/resend`, resendForm);
  assert.match(await owner.html(r2.headers.get("location")!), /Already resent/);
  await eventually(() => rx.received.length === 2, 5000, "the resend");
  await new Promise((r) => setTimeout(r, 300));
  assert.is(rx.received.length, 2, "exactly one more attempt");

  const rotated = await owner.post(`${epPath}/rotate`, { _csrf: csrf });
  assert.match(await owner.html(rotated.headers.get("location")!), /Rotated\. Deliveries carry both signatures/);
  const again = await owner.html(epPath);
  await owner.post(`${epPath}/test`, { _csrf: csrf, _idempotency: hiddenField(again.slice(again.indexOf("Send test event") - 600), "_idempotency") });
  await eventually(() => rx.received.length === 3, 5000, "the event after rotation");
  const third = rx.received[2]!;
  assert.is(String(third.headers["webhook-signature"]).split(" ").length, 2);
  assert.ok(verifyWebhook(secret, third.headers as Record<string, string>, third.body), "the old secret still verifies during the overlap");

  const disabled = await owner.post(`${epPath}/enabled`, { _csrf: csrf, enabled: "false" });
  assert.match(await owner.html(disabled.headers.get("location")!), /Disabled/);
});

test("another business's endpoint and delivery are 404; a viewer reads but cannot change", async () => {
  const rx = track(await startWebhookReceiver());
  const tg = await start({ patch: { webhooks: { pollMs: 50 } } });
  const other = tg.config.businesses.find((b) => b.id !== "demo")!.id;
  const hooks = tg.gateway.kit.directory.webhooks;
  const theirs = await hooks.create({ actor: "user:x", requestId: null }, other, { url: rx.url, services: ["collections"] });
  const delivery = (await sendTestEvent(tg.gateway.kit.ports.webhooks!, tg.gateway.kit.directory, other, theirs.id, "k-other", Date.now()))!.webhookId;
  const owner = await demoOwner(tg);
  const csrf = hiddenField(await owner.html("/dashboard/webhooks"), "_csrf");
  assert.is((await owner.get(`/dashboard/webhooks/endpoints/${theirs.id}`)).status, 404);
  assert.is((await owner.get(`/dashboard/webhooks/deliveries/${delivery}`)).status, 404);
  const resend = await owner.post(`/dashboard/webhooks/deliveries/${delivery}/resend`, { _csrf: csrf, _idempotency: "abcdefgh-0001" });
  assert.match(await owner.html(resend.headers.get("location")!), /No such delivery/);
  const rotate = await owner.post(`/dashboard/webhooks/endpoints/${theirs.id}/rotate`, { _csrf: csrf });
  assert.match(await owner.html(rotate.headers.get("location")!), /No such endpoint/);
  assert.is((await hooks.get(other, theirs.id))!.secrets.length, 1, "nothing rotated");

  const mine = await hooks.create({ actor: "user:x", requestId: null }, "demo", { url: rx.url, services: ["invoice"] });
  await createUserStore(tg.gateway.kit.ports.documentStore, Date.now).update(DEMO_OWNER.id, { role: "viewer" });
  const seen = await owner.html(`/dashboard/webhooks/endpoints/${mine.id}`);
  assert.match(seen, /read-only/);
  assert.not.match(seen, /Rotate secret/);
  assert.is((await owner.post(`/dashboard/webhooks/endpoints/${mine.id}/rotate`, { _csrf: csrf })).status, 403);
  assert.is((await owner.post("/dashboard/webhooks/endpoints", { _csrf: csrf, url: rx.url, service_invoice: "on" })).status, 403);
  assert.is((await hooks.list("demo")).length, 1);
});

test("an endpoint the gateway disabled for failing shows the notice on the dashboard", async () => {
  const rx = track(await startWebhookReceiver());
  rx.status = 500;
  const tg = await start({ patch: { webhooks: { pollMs: 50, autoDisableAfterMs: 400 } } });
  const hooks = tg.gateway.kit.directory.webhooks;
  const ep = await hooks.create({ actor: "user:x", requestId: null }, "demo", { url: rx.url, services: ["collections"] });
  const send = (k: string) => sendTestEvent(tg.gateway.kit.ports.webhooks!, tg.gateway.kit.directory, "demo", ep.id, k, Date.now());
  await send("fail-1");
  await eventually(async () => (await hooks.get("demo", ep.id))!.failingSinceMs !== null, 3000, "the failing streak");
  await new Promise((r) => setTimeout(r, 450));
  await send("fail-2");
  await eventually(async () => !(await hooks.get("demo", ep.id))!.enabled, 3000, "disabled");
  const owner = await demoOwner(tg);
  const page = await owner.html(`/dashboard/webhooks/endpoints/${ep.id}`);
  assert.match(page, /role="alert">Every delivery failed since/);
  assert.match(page, /last: http_500/);
  assert.match(page, /Enable endpoint/);
  assert.match(await owner.html("/dashboard/webhooks"), /Every delivery failed since/);
});

test.run();
