/**
 * Alerts and dead letters in the console: a chat webhook that keeps failing dead-letters an alert;
 * the console lists it (severity, signal, summary, runbook section) and an admin replays it through
 * the alert channel's `replay` — the Admin API route's service — once the receiver accepts: one
 * delivery, also when the form is submitted twice. A viewer sees it read-only.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { AlertChannel } from "../../../adapters/ports.ts";
import { startReceiver } from "../../adapters/alerts/alert-helpers.ts";
import { startTestGateway } from "../../support/gateway.ts";
import { OPERATOR_KEY, VIEWER_KEY, VIEWER_PATCH, consoleClient, hiddenField } from "./console-helpers.ts";

test("a dead letter is listed with its runbook and replayed once from the console; a viewer sees it read-only", async () => {
  const receiver = await startReceiver();
  receiver.plan = [500, 500];
  const g = await startTestGateway({ patch: { ...VIEWER_PATCH, alerts: { webhook: { url: receiver.url, attempts: 2, backoffBaseMs: 10, backoffMaxMs: 20 } } } });
  try {
    const alerts = g.gateway.kit.ports.alerts as AlertChannel;
    alerts.raise({ signal: "routing_loop", code: "GW_ROUTING_LOOP_DETECTED" });
    await new Promise((r) => setImmediate(r));
    await alerts.drain();
    const [letter] = (await alerts.deadLetters({ limit: 5, status: "dead" })).items;
    assert.ok(letter, "dead-lettered");

    const viewer = consoleClient(g);
    assert.is((await viewer.signIn(VIEWER_KEY)).status, 303);
    const seen = await viewer.html("/console/alerts");
    assert.ok(seen.includes(letter!.alert.summary));
    assert.ok(seen.includes(letter!.alert.runbook), "the runbook section");
    assert.match(seen, /read-only/);
    assert.not.match(seen, /Replay<\/button>/);

    const admin = consoleClient(g);
    assert.is((await admin.signIn(OPERATOR_KEY)).status, 303);
    const page = await admin.html("/console/alerts");
    assert.match(page, /routing_loop/);
    const form = { _csrf: hiddenField(page, "_csrf"), _idempotency: hiddenField(page, "_idempotency") };
    const sent = receiver.bodies.length;
    const done = await admin.post(`/console/alerts/${letter!.id}/replay`, form);
    assert.is(done.status, 303);
    assert.match(await admin.html(done.headers.get("location")!), /role="status">Delivered/);
    assert.is(receiver.bodies.length, sent + 1);
    assert.is(receiver.bodies.at(-1)!.alert.id, letter!.id);
    // The same form again: nothing is sent twice.
    await admin.post(`/console/alerts/${letter!.id}/replay`, form);
    assert.is(receiver.bodies.length, sent + 1, "one delivery");
    assert.equal((await alerts.deadLetters({ limit: 5, status: "dead" })).items, []);
    assert.match(await admin.html("/console/alerts?status=replayed"), /replayed/);
  } finally {
    await g.close();
    await receiver.close();
  }
});

test.run();
