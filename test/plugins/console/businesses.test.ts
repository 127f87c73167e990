/**
 * Changes on the console's Businesses screen go through the admin plugin's directory service (the
 * Admin API's): a key created (shown once, then only its id), a double submit answered once, a
 * revoke that needs its confirmation, a domain's mode change through drain and approval, each with
 * the Admin API's audit entry; a viewer's POST is refused with nothing changed.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { OPERATOR_KEY, VIEWER_KEY, VIEWER_PATCH, consoleClient, hiddenField, type ConsoleClient } from "./console-helpers.ts";

const BUSINESS = "/console/businesses/other";
const HOST = "other.demo.localhost";

async function formOf(c: ConsoleClient, action: string): Promise<Record<string, string>> {
  const page = await c.html(BUSINESS);
  const at = page.indexOf(`action="${action}"`);
  assert.ok(at >= 0, `a form posting to ${action}`);
  const part = page.slice(at);
  return { _csrf: hiddenField(part, "_csrf"), _idempotency: hiddenField(part, "_idempotency") };
}

async function auditActions(g: TestGateway, targetId: string): Promise<Array<{ action: string; actor: string }>> {
  const res = await g.call(`/admin/audit?targetId=${encodeURIComponent(targetId)}`, { host: "localhost", headers: { "x-admin-api-key": OPERATOR_KEY } });
  // The config's seed entries (actor "config") are not operator changes.
  return ((await res.json()) as { data: Array<{ action: string; actor: string }> }).data.filter((a) => a.actor !== "config");
}

test("keys: created and shown once, a double submit has one effect, revoke needs confirming; same audit as the Admin API", async () => {
  const g = await startTestGateway({ patch: VIEWER_PATCH });
  try {
    const admin = consoleClient(g);
    assert.is((await admin.signIn(OPERATOR_KEY)).status, 303);
    const form = { ...(await formOf(admin, `${BUSINESS}/keys`)), scheme: "gateway", id: "other-console", ipWhitelisted: "10.1.2.3, 10.0.0.0/8" };
    const created = await admin.post(`${BUSINESS}/keys`, form);
    assert.is(created.status, 200);
    assert.is(created.headers.get("cache-control"), "no-store");
    const shown = await created.text();
    const plain = /id="plain-key" readonly value="([^"]+)"/.exec(shown)?.[1];
    assert.ok(plain && plain.length > 16, "the key is on the answer page");
    assert.not.ok(g.logs.some((l) => JSON.stringify(l).includes(plain!)), "never logged");
    // The same form again: one key, and the key is not shown again.
    const again = await admin.post(`${BUSINESS}/keys`, form);
    assert.is(again.status, 303);
    const after = await admin.html(again.headers.get("location")!);
    assert.match(after, /Already done/);
    assert.not.ok(after.includes(plain!));
    assert.match(after, /10\.1\.2\.3, 10\.0\.0\.0\/8/);
    assert.equal((await auditActions(g, "other-console")).map((a) => [a.action, a.actor]), [["key.create", "operator:demo-operator"]]);

    const revokeAt = `${BUSINESS}/keys/other-console/revoke`;
    const unconfirmed = await admin.post(revokeAt, await formOf(admin, revokeAt));
    assert.match(await admin.html(unconfirmed.headers.get("location")!), /tick the confirmation box/);
    assert.is((await auditActions(g, "other-console")).length, 1, "nothing changed");
    const revoked = await admin.post(revokeAt, { ...(await formOf(admin, revokeAt)), confirm: "yes" });
    assert.match(await admin.html(revoked.headers.get("location")!), /\(key\.revoke\)/);
    assert.match(await admin.html(BUSINESS), /other-console<\/td>.*?revoked/s);
    assert.equal((await auditActions(g, "other-console")).map((a) => a.action).sort(), ["key.create", "key.revoke"]);
  } finally {
    await g.close();
  }
});

test("a key's IP allowlist is replaced in place through the directory service (key.update), once per form; a viewer's is refused", async () => {
  const g = await startTestGateway({ patch: VIEWER_PATCH });
  try {
    const admin = consoleClient(g);
    assert.is((await admin.signIn(OPERATOR_KEY)).status, 303);
    const created = await admin.post(`${BUSINESS}/keys`, { ...(await formOf(admin, `${BUSINESS}/keys`)), scheme: "gateway", id: "other-allow", ipWhitelisted: "10.1.2.3" });
    assert.is(created.status, 200);
    const at = `${BUSINESS}/keys/other-allow/allowlist`;
    const viewer = consoleClient(g);
    assert.is((await viewer.signIn(VIEWER_KEY)).status, 303);
    const refused = await viewer.post(at, { _csrf: hiddenField(await viewer.html(BUSINESS), "_csrf"), _idempotency: "viewer-allow-0001", ipWhitelisted: "0.0.0.0/0" });
    assert.is(refused.status, 403);
    const form = { ...(await formOf(admin, at)), ipWhitelisted: "192.0.2.0/24, 198.51.100.7" };
    const saved = await admin.post(at, form);
    assert.match(await admin.html(saved.headers.get("location")!), /\(key\.update\)/);
    assert.match(await admin.html(BUSINESS), /other-allow<\/td>.*?192\.0\.2\.0\/24, 198\.51\.100\.7/s);
    const again = await admin.post(at, form);
    assert.match(await admin.html(again.headers.get("location")!), /Already done/);
    const bad = await admin.post(at, { ...(await formOf(admin, at)), ipWhitelisted: "not-an-address" });
    assert.match(await admin.html(bad.headers.get("location")!), /Not changed/);
    assert.equal((await auditActions(g, "other-allow")).map((a) => `${a.action} ${a.actor}`).sort(), ["key.create operator:demo-operator", "key.update operator:demo-operator"]);
  } finally {
    await g.close();
  }
});

test("a domain's mode changes through drain and approval; a viewer's POST is refused with nothing changed", async () => {
  const g = await startTestGateway({ patch: VIEWER_PATCH });
  try {
    const admin = consoleClient(g);
    await admin.signIn(OPERATOR_KEY);
    const modeAt = `${BUSINESS}/domains/${HOST}/mode-change`;
    const modeForm = await formOf(admin, modeAt);

    const viewer = consoleClient(g);
    await viewer.signIn(VIEWER_KEY);
    const seen = await viewer.html(BUSINESS);
    assert.not.match(seen, /Create key|Change to stored/);
    const refused = await viewer.post(modeAt, { _csrf: hiddenField(seen, "_csrf"), _idempotency: modeForm._idempotency!, mode: "stored", confirm: "yes" });
    assert.is(refused.status, 403);
    const refusedKey = await viewer.post(`${BUSINESS}/keys`, { _csrf: hiddenField(seen, "_csrf"), _idempotency: "viewer-try-0001", scheme: "gateway", id: "viewer-made" });
    assert.is(refusedKey.status, 403);
    assert.equal(await auditActions(g, HOST), []);
    assert.equal(await auditActions(g, "viewer-made"), []);

    const drained = await admin.post(modeAt, { ...modeForm, mode: "stored", confirm: "yes" });
    assert.match(await admin.html(drained.headers.get("location")!), /\(domain\.mode_change\)/);
    assert.match(await admin.html(BUSINESS), /stored \(draining since/);
    const approveAt = `${BUSINESS}/domains/${HOST}/approval`;
    const approved = await admin.post(approveAt, { ...(await formOf(admin, approveAt)), confirm: "yes" });
    assert.match(await admin.html(approved.headers.get("location")!), /\(domain\.approve\)/);
    const page = await admin.html(BUSINESS);
    assert.match(page, new RegExp(`${HOST.replaceAll(".", "\\.")}</td><td>stored</td>`));
    assert.match(page, /Change to passthrough/);
    assert.equal((await auditActions(g, HOST)).map((a) => a.action).sort(), ["domain.approve", "domain.mode_change"]);
    assert.match(await admin.html("/console/audit"), /domain\.approve/);
  } finally {
    await g.close();
  }
});

test("a change the service refuses comes back as a message, nothing changed", async () => {
  const g = await startTestGateway();
  try {
    const admin = consoleClient(g);
    await admin.signIn(OPERATOR_KEY);
    const bad = await admin.post(`${BUSINESS}/keys`, { ...(await formOf(admin, `${BUSINESS}/keys`)), scheme: "nonsense" });
    assert.is(bad.status, 303);
    assert.match(await admin.html(bad.headers.get("location")!), /Not changed: .*scheme/);
    const approveNothing = await admin.post(`${BUSINESS}/domains/${HOST}/approval`, { ...(await formOf(admin, `${BUSINESS}/keys`)), confirm: "yes" });
    assert.match(await admin.html(approveNothing.headers.get("location")!), /Not changed: .*nothing awaits approval/i);
    assert.equal(await auditActions(g, HOST), []);
  } finally {
    await g.close();
  }
});

test("a wallet credit with a reason goes through the wallet service once; a viewer's is refused", async () => {
  const g = await startTestGateway({ patch: VIEWER_PATCH });
  try {
    const balance = async () => ((await (await g.call("/admin/wallets/other", { host: "localhost", headers: { "x-admin-api-key": OPERATOR_KEY } })).json()) as { balance: number }).balance;
    const before = await balance();
    const admin = consoleClient(g);
    await admin.signIn(OPERATOR_KEY);
    const at = `${BUSINESS}/wallet/credits`;
    const form = { ...(await formOf(admin, at)), amount: "250.50", reason: "month-end goodwill <script>", confirm: "yes" };

    const viewer = consoleClient(g);
    await viewer.signIn(VIEWER_KEY);
    const seen = await viewer.html(BUSINESS);
    assert.match(seen, /Balance \(NGN\)/);
    assert.not.match(seen, /Credit wallet/);
    assert.is((await viewer.post(at, { ...form, _csrf: hiddenField(seen, "_csrf") })).status, 403);
    assert.is(await balance(), before, "nothing credited");

    const done = await admin.post(at, form);
    assert.match(await admin.html(done.headers.get("location")!), /Credited NGN 250.5/);
    const again = await admin.post(at, form);
    assert.match(await admin.html(again.headers.get("location")!), /Already credited/);
    assert.is(await balance(), before + 250.5, "credited once");
    assert.ok(g.logs.some((l) => l.event === "console_action" && l.action === "wallet.credit" && l.reason === "month-end goodwill <script>"), "the reason is logged");
    assert.match(await admin.html(BUSINESS), /console:/);
  } finally {
    await g.close();
  }
});

test.run();
