/**
 * Chat delivery against a real local HTTP receiver that fails on purpose: retries with exponential
 * backoff, the 3 s per-attempt deadline (a receiver that never answers), `chat_alert_delivery_failed`
 * and the durable dead-letter stream after 5 attempts, replay; and the allowlist: secrets and
 * taxpayer data fed through every path reach no alert, no chat body and no dead letter.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { engineHarness, fail, startReceiver, succeed } from "./alert-helpers.ts";

const tick = () => new Promise((r) => setImmediate(r));
const FAST = { timeoutMs: 3_000, attempts: 5, backoffBaseMs: 20, backoffMaxMs: 200 };

test("a receiver that fails 3 times then accepts: delivered on the 4th attempt, backoff doubling between attempts", async () => {
  const r = await startReceiver();
  r.plan = [500, 503, 429];
  const h = await engineHarness({ webhook: { url: r.url, ...FAST } });
  const started = Date.now();
  h.engine.raise({ signal: "routing_loop", code: "GW_ROUTING_LOOP_DETECTED" });
  await tick();
  await h.engine.drain();
  assert.is(r.bodies.length, 4);
  assert.ok(Date.now() - started >= 20 + 40 + 80, "waited 20 + 40 + 80 ms between the attempts");
  assert.is(r.bodies[3]!.alert.signal, "routing_loop");
  assert.ok(r.bodies[3]!.text.includes("routing_loop"), "Slack-compatible text");
  const status = await h.engine.status();
  assert.is(status.webhook.lastDelivery?.outcome, "delivered");
  assert.is(status.deadLetters, 0);
  assert.not.ok(h.logs.some((l) => l.event === "chat_alert_delivery_failed"));
  await h.close();
  await r.close();
});

test("5 failed attempts → chat_alert_delivery_failed, a durable dead letter; replay delivers it once; the URL is never logged", async () => {
  const r = await startReceiver();
  r.plan = [500, 500, 502, 404, 500];
  const h = await engineHarness({ webhook: { url: r.url, ...FAST } });
  fail(h.engine, 5, "documentStore", "stored_invoices.claim");
  await h.engine.flush();
  await h.engine.drain();
  assert.is(r.bodies.length, 5, "exactly 5 attempts");
  const [failed] = h.logs.filter((l) => l.event === "chat_alert_delivery_failed");
  assert.ok(failed, "chat_alert_delivery_failed logged");
  assert.is(failed!.attempts, 5);
  assert.is(failed!.failureClass, "server_error");
  assert.is(failed!.upstreamStatus, 500);
  const page = await h.engine.deadLetters({ limit: 10 });
  assert.is(page.items.length, 1);
  const letter = page.items[0]!;
  assert.is(letter.status, "dead");
  assert.is(letter.attempts, 5);
  assert.is(letter.alert.signal, "dependency_sustained_failure");
  assert.is(letter.alert.operation, "stored_invoices.claim");
  assert.is((await h.engine.status()).deadLetters, 1);
  assert.is((await h.engine.status()).status, "unhealthy", "the last delivery failed");

  // A new engine on the same store (another process, or after a restart) sees the letter: durable.
  const other = await engineHarness({ store: h.store, webhook: { url: r.url, ...FAST } });
  r.plan = [503];
  const refused = await other.engine.replay(letter.id);
  assert.is(refused?.delivered, false);
  assert.is(refused?.letter.status, "dead");
  assert.is(refused?.letter.attempts, 6);
  const replayed = await other.engine.replay(letter.id);
  assert.is(replayed?.delivered, true);
  assert.is(replayed?.letter.status, "replayed");
  const sent = r.bodies.length;
  const again = await other.engine.replay(letter.id);
  assert.is(again?.delivered, true);
  assert.is(r.bodies.length, sent, "a replayed letter is not sent again");
  assert.is(await other.engine.replay("8a0e4c1e-7a57-4c39-9a4f-2f1b8d3c6e09"), null);
  assert.is((await other.engine.deadLetters({ limit: 10, status: "dead" })).items.length, 0);
  assert.not.ok(JSON.stringify([...h.logs, ...other.logs]).includes("secret-token-in-path"), "the webhook URL (a secret) is never logged");
  await other.close();
  await h.close();
  await r.close();
});

test("a receiver that never answers: each attempt ends at its deadline (timeout), then the dead letter", async () => {
  const r = await startReceiver();
  r.plan = ["hold", "hold"];
  const h = await engineHarness({ webhook: { url: r.url, timeoutMs: 200, attempts: 2, backoffBaseMs: 10 } });
  h.engine.raise({ signal: "circuit_opened", dependency: "regulator:TEST" });
  await tick();
  await h.engine.drain();
  const [failed] = h.logs.filter((l) => l.event === "chat_alert_delivery_failed");
  assert.is(failed?.failureClass, "timeout");
  assert.is(failed?.attempts, 2);
  assert.is((await h.engine.deadLetters({ limit: 10 })).items[0]?.lastFailure.failureClass, "timeout");
  await h.close();
  await r.close();
});

test("the defaults are spec §6's: each attempt ends at a 3 s deadline, 5 attempts", async () => {
  const { createWebhookChannel, WEBHOOK_DEFAULTS } = await import("../../../adapters/alerts/webhook.ts");
  assert.is(WEBHOOK_DEFAULTS.timeoutMs, 3_000);
  assert.is(WEBHOOK_DEFAULTS.attempts, 5);
  // A receiver that answers 200 only after 10 s: with the default deadline the attempt gives up
  // first (a timeout, not the late 200), and not before the deadline.
  const r = await startReceiver();
  r.plan = [{ delayMs: 10_000, status: 200 }];
  const ch = createWebhookChannel({ url: r.url });
  const started = Date.now();
  const res = await ch.attempt({ id: "x", kind: "immediate", signal: "routing_loop", severity: "critical", summary: "s", environment: "t", firstOccurrence: "", lastOccurrence: "", count: 1, requestIds: [], runbook: "r" });
  assert.equal(res, { ok: false, failureClass: "timeout", upstreamStatus: null });
  assert.ok(Date.now() - started >= 2_900, "it waited for the deadline");
  await r.close();
});

test("only the allowlist reaches an alert: secrets and taxpayer data fed through every path appear nowhere", async () => {
  const r = await startReceiver();
  const h = await engineHarness({ webhook: { url: r.url, ...FAST }, environment: "prod" });
  const SECRETS = [
    "sk_live_9f8e7d6c5b4a39281706",
    "gw_live_abcdefghijklmnop",
    "admin_key_secret_0001",
    "hunter2-password",
    "taxpayer@demo.ng",
    "12345678-0001",
    "INV001-94ND90NR-20240611",
    "Adebayo Okafor Ltd, 12 Marina Road",
    "whsec_c2VjcmV0c2VjcmV0",
    "idem-key-raw-0001",
    '{"invoice_line":[{"price":100}]}',
    "Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig",
  ];
  // Every field of every path gets a secret: thresholds, immediate signals (and fields outside the allowlist).
  for (const s of SECRETS) {
    h.engine.observeCall(s, s, true, { failureClass: s, requestId: s });
    h.engine.observeCall("regulator:LIVE", "sign", true, { failureClass: s, requestId: s });
    h.engine.raise({ signal: "sign_outcome_unconfirmed", dependency: s, operation: s, failureClass: s, requestId: s, operationId: s, providerId: s, code: s });
    h.engine.raise({ signal: "regulator_credentials_rejected", dependency: "regulator:LIVE", operation: "sign", requestId: s, operationId: s, code: s, ...({ password: s, body: s, tin: s, message: s } as object) });
    h.engine.raise({ signal: s as never });
  }
  h.engine.raise({ signal: "reconciliation_overdue", count: 3 });
  await h.engine.flush();
  await tick();
  await h.engine.drain();
  succeed(h.engine, 5, "regulator:LIVE", "sign");
  await h.engine.flush();
  await h.engine.drain();
  const letters = await h.engine.deadLetters({ limit: 100 });
  const everything = JSON.stringify({ logs: h.logs.filter((l) => l.event === "gateway_alert"), chat: r.bodies, letters });
  assert.ok(h.alerts().length >= 4, `alerts were produced (${h.alerts().length})`);
  assert.ok(r.bodies.length >= 4);
  for (const s of SECRETS) assert.not.ok(everything.includes(s), `leaked: ${s}`);
  const allowed = new Set(["id", "kind", "signal", "severity", "summary", "environment", "dependency", "operation", "failureClass", "firstOccurrence", "lastOccurrence", "count", "ratio", "requestIds", "operationId", "providerId", "code", "runbook"]);
  for (const a of h.alerts()) {
    for (const key of Object.keys(a)) if (!["time", "level", "event"].includes(key)) assert.ok(allowed.has(key), `field outside the allowlist: ${key}`);
  }
  for (const b of r.bodies) assert.equal(Object.keys(b).sort(), ["alert", "text"]);
  await h.close();
  await r.close();
});

test.run();
