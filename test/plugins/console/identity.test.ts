/**
 * The console's Businesses screen, the changes that go through other plugins' services: a domain's
 * sign fee and autoTransmit (the admin plugin's `PATCH /admin/domains/{host}` service, `domain.update`
 * audit entry), the represented businesses of a business, and identity reviews decided through the
 * onboarding plugin's service (the Admin API routes'): an additive review approved (a double submit
 * has one effect), a protected one applied as a migration only; a viewer's POST changes nothing.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { TAXPAYER, credentials, demoEntity, expectJson, startOnboardingHarness } from "../onboarding/onboarding-helpers.ts";
import { OPERATOR_KEY, VIEWER_KEY, VIEWER_PATCH, consoleClient, hiddenField, type ConsoleClient } from "./console-helpers.ts";

const h = await startOnboardingHarness({ patch: VIEWER_PATCH });
test.after(() => h.close());
const BUSINESS = "/console/businesses/demo";
const SUB = TAXPAYER.businessId;
const CREDS = credentials(TAXPAYER.email, TAXPAYER.password);
let k = 0;
const reverify = () => h.post(`/sub-businesses/${SUB}/identity-reverification`, CREDS, `console-rv-${String(++k).padStart(4, "0")}`);
const admin = consoleClient(h.tg);
const viewer = consoleClient(h.tg);

/** The hidden fields of the form posting to `action`, read from the business page. */
async function formOf(c: ConsoleClient, action: string): Promise<Record<string, string>> {
  const page = await c.html(BUSINESS);
  const at = page.indexOf(`action="${action}"`);
  assert.ok(at >= 0, `a form posting to ${action}`);
  const part = page.slice(at);
  return { _csrf: hiddenField(part, "_csrf"), _idempotency: hiddenField(part, "_idempotency") };
}

async function audit(targetId: string): Promise<Array<{ action: string; actor: string; changes: Record<string, unknown> }>> {
  const res = await h.tg.call(`/admin/audit?targetId=${encodeURIComponent(targetId)}`, { host: "localhost", headers: { "x-admin-api-key": OPERATOR_KEY } });
  return ((await res.json()) as { data: Array<{ action: string; actor: string; changes: Record<string, unknown> }> }).data.filter((a) => a.actor !== "config");
}

test("setup: the demo taxpayer is represented; both sign in", async () => {
  await expectJson(await h.post("/sub-businesses", CREDS, "console-onboard-0001"), 201);
  for (const [c, key] of [[admin, OPERATOR_KEY], [viewer, VIEWER_KEY]] as const) assert.is((await c.signIn(key)).status, 303);
});

test("represented businesses on the business page", async () => {
  const page = await viewer.html(BUSINESS);
  assert.match(page, /<h2 id="s-represented-businesses">Represented businesses<\/h2>/);
  assert.ok(page.includes(SUB) && page.includes(TAXPAYER.businessName));
  assert.match(page, /No pending reviews/);
});

test("domain settings: sign fee and autoTransmit through the Admin API's service (domain.update); a bad fee comes back as a message; viewer 403", async () => {
  const host = "passthrough.demo.localhost";
  const action = `${BUSINESS}/domains/${host}/settings`;
  const viewerForm = await viewer.html(BUSINESS);
  assert.not.ok(viewerForm.includes(`action="${action}"`), "no settings form for a viewer");
  const refused = await viewer.post(action, { _csrf: hiddenField(viewerForm, "_csrf"), _idempotency: "viewer-try-0001", signFee: "1", autoTransmit: "yes" });
  assert.is(refused.status, 403);
  const bad = await admin.post(action, { ...(await formOf(admin, action)), signFee: "12.345", autoTransmit: "no" });
  assert.is(bad.status, 303);
  assert.match(await admin.html(BUSINESS), /Not changed: .*at most two decimals/);
  assert.equal(await audit(host), []);
  const form = { ...(await formOf(admin, action)), signFee: "75.50", autoTransmit: "yes" };
  assert.is((await admin.post(action, form)).status, 303);
  assert.match(await admin.html(BUSINESS), /Done: the domain&#39;s settings are saved|Done: the domain's settings are saved/);
  assert.is((await admin.post(action, form)).status, 303, "a double submit");
  const entries = await audit(host);
  assert.equal(entries.map((e) => [e.action, e.actor]), [["domain.update", "operator:demo-operator"]]);
  assert.equal(entries[0]!.changes.signFee, { from: 50, to: 75.5 });
  const domain = await (await h.tg.call(`/admin/domains/${host}`, { host: "localhost", headers: { "x-admin-api-key": OPERATOR_KEY } })).json();
  assert.equal([domain.signFee, domain.autoTransmit], [75.5, true]);
});

test("identity reviews: an additive review approved once; a protected one offers only the migration, applied and audited", async () => {
  h.sim.faults.set("entity", demoEntity({ name: "Demo Trading Nigeria Ltd" }));
  const additive = await expectJson(await reverify(), 200);
  let page = await admin.html(BUSINESS);
  assert.ok(page.includes(additive.reviewId) && page.includes("additive drift"));
  const decision = `${BUSINESS}/sub-businesses/${SUB}/identity-reviews/${additive.reviewId}/decision`;
  const viewerPage = await viewer.html(BUSINESS);
  assert.match(viewerPage, /Your role is viewer: decisions need an operator key/);
  assert.is((await viewer.post(decision, { _csrf: hiddenField(viewerPage, "_csrf"), _idempotency: "viewer-try-0002", decision: "approve", confirm: "yes" })).status, 403);
  const form = { ...(await formOf(admin, decision)), decision: "approve", confirm: "yes" };
  assert.is((await admin.post(decision, { ...form, confirm: "" })).status, 303);
  assert.match(await admin.html(BUSINESS), /Not changed: tick the confirmation box/);
  assert.is((await admin.post(decision, form)).status, 303);
  assert.match(await admin.html(BUSINESS), /Done: the review is decided/);
  assert.is((await admin.post(decision, form)).status, 303);
  assert.match(await admin.html(BUSINESS), /Already done/);
  const sub = await expectJson(await h.get(`/sub-businesses/${SUB}`), 200);
  assert.is(sub.registeredName, "Demo Trading Nigeria Ltd");

  h.sim.faults.set("entity", demoEntity({ name: "Demo Trading Nigeria Ltd", tin: "12345678-0099" }));
  const prot = await expectJson(await reverify(), 200);
  assert.is(prot.requiresProtectedMigration, true);
  page = await admin.html(BUSINESS);
  assert.ok(page.includes("protected: needs a migration"));
  const migration = `${BUSINESS}/sub-businesses/${SUB}/identity-migrations`;
  const row = page.slice(page.indexOf(`<td>${prot.reviewId}</td>`), page.indexOf("</tr>", page.indexOf(`<td>${prot.reviewId}</td>`)));
  assert.ok(row.includes("Apply migration") && !row.includes('value="approve"'), "a protected review offers the migration, not an approval");
  const mform = { ...(await formOf(admin, migration)), reviewId: prot.reviewId, confirm: "yes" };
  assert.is((await admin.post(migration, mform)).status, 303);
  assert.match(await admin.html(BUSINESS), /Done: the protected change is applied/);
  assert.is((await expectJson(await h.get(`/sub-businesses/${SUB}`), 200)).tin, "12345678-0099");
  assert.ok(h.tg.logs.some((l) => l.event === "console_action" && l.action === "identity.migration" && l.result === "ok"));
});

test.run();
