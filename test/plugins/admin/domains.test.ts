/**
 * Admin API, businesses and domains (real HTTP): reads without secrets; the sign fee and
 * autoTransmit; the mode change with drain and reapproval (DECISIONS.md "Stored mode — Mode change"):
 * draining → the domain's invoice routes answer 503 GW_TENANT_MODE_UNAVAILABLE with Retry-After,
 * approval → the new mode, modeVersion + 1; state conflicts; store failures; the management quota;
 * every route in /openapi.json.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DIRECTORY_COLLECTIONS, type DomainDoc } from "../../../core/directory-store.ts";
import { DEMO_KEY, DEMO_RAW, PASSTHROUGH, STORED, STORED_BUSINESS } from "../../support/gateway.ts";
import { problem, startAdminHarness, type AdminHarness } from "./admin-helpers.ts";

const WEBHOOK_SECRET = "whsec_c2VjcmV0LXNpZ25pbmcta2V5LTAx";

let h: AdminHarness;
test.before(async () => {
  const raw = structuredClone(DEMO_RAW) as any;
  raw.businesses[0].collections.webhook = { url: "https://hooks.demo.example.ng/gatehouse", secret: WEBHOOK_SECRET };
  h = await startAdminHarness({ patch: { businesses: raw.businesses } });
});
test.after(async () => {
  await h.close();
});
test.before.each(() => h.fault(null));

const sign = () =>
  h.customer("/probe/sign", DEMO_KEY, PASSTHROUGH, { method: "POST", body: { invoice: 1 }, headers: { "x-idempotency-key": "probe-sign-0001", "x-sub-business-id": "sub-1" } });

test("businesses: list and read, with their domains; the webhook secret is never answered", async () => {
  const list = await h.admin("GET", "/admin/businesses");
  assert.is(list.status, 200);
  assert.equal(list.body.data.map((b: { id: string }) => b.id), ["demo", STORED_BUSINESS, "other"]);
  assert.is(list.body.nextCursor, null);
  const demo = await h.admin("GET", "/admin/businesses/demo");
  assert.equal(demo.body, {
    id: "demo",
    name: "Demo Ventures Ltd",
    state: "TEST",
    invoiceGateway: true,
    collections: { feeBearerDefault: "MERCHANT", webhookUrl: "https://hooks.demo.example.ng/gatehouse" },
    domains: [PASSTHROUGH],
  });
  assert.not.ok(list.text.includes(WEBHOOK_SECRET) || demo.text.includes(WEBHOOK_SECRET));
  problem(await h.admin("GET", "/admin/businesses/nobody"), 404, "GW_OPERATION_NOT_FOUND");
  problem(await h.admin("GET", "/admin/businesses/NOT_AN_ID"), 400, "GW_REQUEST_PATH_PARAMETER_INVALID");
  const audit = JSON.stringify((await h.admin("GET", "/admin/audit?limit=100")).body);
  assert.not.ok(audit.includes(WEBHOOK_SECRET), "nor audited");
});

test("domains: list (with filters) and read", async () => {
  const all = await h.admin("GET", "/admin/domains");
  assert.equal(all.body.data.map((d: { host: string }) => d.host), ["other.demo.localhost", PASSTHROUGH, STORED]);
  const demo = await h.admin("GET", "/admin/domains?businessId=demo");
  assert.equal(demo.body.data.map((d: { host: string }) => d.host), [PASSTHROUGH], "one domain per business");
  const page = await h.admin("GET", "/admin/domains?limit=2");
  assert.is(page.body.data.length, 2);
  const next = await h.admin("GET", `/admin/domains?limit=2&cursor=${page.body.nextCursor}`);
  assert.equal(next.body.data.map((d: { host: string }) => d.host), [STORED]);
  assert.is(next.body.nextCursor, null);
  const one = await h.admin("GET", `/admin/domains/${STORED}`);
  assert.equal(
    { ...one.body, updatedAt: null },
    { host: STORED, businessId: STORED_BUSINESS, mode: "stored", modeVersion: 1, approval: "approved", pendingMode: null, drainingSince: null, signFee: 50, autoTransmit: false, updatedAt: null },
  );
  problem(await h.admin("GET", "/admin/domains/unknown.example.ng"), 404, "GW_DOMAIN_NOT_PROVISIONED");
  problem(await h.admin("GET", "/admin/domains/Not_A_Host"), 400, "GW_REQUEST_PATH_PARAMETER_INVALID");
});

test("one approved domain per business: approving a second domain of a business is 409; the pending domain stays unserved", async () => {
  const second = "second.demo.localhost";
  const at = new Date().toISOString();
  const domains = h.raw.collection<DomainDoc>(DIRECTORY_COLLECTIONS.domains);
  await domains.insert({ _id: second, businessId: "demo", mode: "stored", approval: "pending_approval", signFeeKobo: 5_000, autoTransmit: false, modeVersion: 1, pendingMode: null, drainingSince: null, seed: null, rev: 1, createdAt: at, updatedAt: at });
  try {
    const refused = problem(await h.admin("POST", `/admin/domains/${second}/approval`, {}, "approve-second-0001"), 409, "GW_DOMAIN_APPROVAL_STATE_CHANGED");
    assert.ok(refused.detail.includes(PASSTHROUGH), refused.detail);
    assert.is((await domains.get(second))?.approval, "pending_approval");
    assert.is((await h.customer("/probe/stored-only", DEMO_KEY, second)).status, 404, "not served");
  } finally {
    await domains.delete(second);
  }
});

test("sign fee and autoTransmit: set, idempotent, audited; invalid bodies are 400 with violations", async () => {
  const res = await h.admin("PATCH", `/admin/domains/${STORED}`, { signFee: 62.5, autoTransmit: true }, "fee-0001");
  assert.is(res.status, 200, res.text);
  assert.is(res.body.signFee, 62.5);
  assert.is(res.body.autoTransmit, true);
  assert.is(res.body.modeVersion, 1, "a fee is not a mode change");
  assert.equal((await h.admin("PATCH", `/admin/domains/${STORED}`, { signFee: 62.5, autoTransmit: true }, "fee-0001")).body, res.body);
  const stored = (await h.all<DomainDoc>(DIRECTORY_COLLECTIONS.domains)).find((d) => d._id === STORED)!;
  assert.is(stored.signFeeKobo, 6_250);
  const audit = await h.admin("GET", `/admin/audit?targetId=${STORED}&action=domain.update`);
  assert.equal(audit.body.data[0].changes, { signFee: { from: 50, to: 62.5 }, autoTransmit: { from: false, to: true } });
  for (const body of [{}, { signFee: 1.005 }, { signFee: -1 }, { signFee: "50.00" }, { autoTransmit: "yes" }, { mode: "stored" }]) {
    problem(await h.admin("PATCH", `/admin/domains/${STORED}`, body, `fee-bad-${JSON.stringify(body).length}-${Object.keys(body).join("")}`), 400, "GW_REQUEST_VALIDATION_FAILED");
  }
  problem(await h.admin("PATCH", "/admin/domains/unknown.example.ng", { signFee: 1 }, "fee-0002"), 404, "GW_DOMAIN_NOT_PROVISIONED");
});

test("mode change: draining → the invoice routes answer 503 GW_TENANT_MODE_UNAVAILABLE with Retry-After; others keep working", async () => {
  assert.is((await sign()).status, 200, "Pass-through sign route before the change");
  const res = await h.admin("POST", `/admin/domains/${PASSTHROUGH}/mode-change`, { mode: "stored" }, "mode-0001");
  assert.is(res.status, 200, res.text);
  assert.is(res.body.approval, "draining");
  assert.is(res.body.mode, "passthrough");
  assert.is(res.body.pendingMode, "stored");
  assert.is(res.body.modeVersion, 1);
  assert.is(res.body.retryAfterSeconds, 30);
  assert.type(res.body.drainingSince, "string");
  const p = problem(await sign(), 503, "GW_TENANT_MODE_UNAVAILABLE");
  assert.is(p.retry.strategy, "BACKOFF");
  assert.is(p.retry.sameIdempotencyKey, true);
  const draining = await sign();
  assert.is(draining.headers["retry-after"], "30");
  problem(await h.customer("/probe/stored-only", DEMO_KEY, PASSTHROUGH), 503, "GW_TENANT_MODE_UNAVAILABLE");
  assert.is((await h.customer("/probe/echo", DEMO_KEY, PASSTHROUGH)).status, 200, "a route of every mode is not an invoice request");
  assert.is((await h.customer("/probe/stored-only", DEMO_KEY, STORED)).status, 200, "the other domains are untouched");
  // The same change again is the same state; another key agrees.
  assert.is((await h.admin("POST", `/admin/domains/${PASSTHROUGH}/mode-change`, { mode: "stored" }, "mode-0002")).body.approval, "draining");
});

test("approval in the new mode: modeVersion + 1, the new mode's routes answer, the old mode's conflict", async () => {
  const res = await h.admin("POST", `/admin/domains/${PASSTHROUGH}/approval`, {}, "approve-0001");
  assert.is(res.status, 200, res.text);
  assert.equal([res.body.approval, res.body.mode, res.body.pendingMode, res.body.modeVersion], ["approved", "stored", null, 2]);
  assert.is((await h.customer("/probe/stored-only", DEMO_KEY, PASSTHROUGH)).status, 200);
  problem(await sign(), 409, "GW_OPERATION_MODE_CONFLICT");
  assert.equal((await h.admin("POST", `/admin/domains/${PASSTHROUGH}/approval`, {}, "approve-0001")).body, res.body, "a replay");
  problem(await h.admin("POST", `/admin/domains/${PASSTHROUGH}/approval`, {}, "approve-0002"), 409, "GW_DOMAIN_APPROVAL_STATE_CHANGED");
  problem(await h.admin("POST", `/admin/domains/${PASSTHROUGH}/mode-change`, { mode: "stored" }, "mode-0003"), 409, "GW_DOMAIN_APPROVAL_STATE_CHANGED");
  const audit = await h.admin("GET", `/admin/audit?targetId=${PASSTHROUGH}`);
  const approve = audit.body.data.find((a: { action: string }) => a.action === "domain.approve");
  assert.equal(approve.changes, { approval: { from: "draining", to: "approved" }, mode: { from: "passthrough", to: "stored" }, pendingMode: { from: "stored", to: null }, modeVersion: { from: 1, to: 2 } });
  assert.is(approve.actor, "operator:demo-operator");
});

test("a drain can be called off: a mode change back to the current mode, modeVersion unchanged", async () => {
  await h.admin("POST", `/admin/domains/${PASSTHROUGH}/mode-change`, { mode: "passthrough" }, "mode-0004");
  problem(await h.customer("/probe/stored-only", DEMO_KEY, PASSTHROUGH), 503, "GW_TENANT_MODE_UNAVAILABLE");
  const off = await h.admin("POST", `/admin/domains/${PASSTHROUGH}/mode-change`, { mode: "stored" }, "mode-0005");
  assert.equal([off.body.approval, off.body.mode, off.body.modeVersion], ["approved", "stored", 2]);
  assert.is((await h.customer("/probe/stored-only", DEMO_KEY, PASSTHROUGH)).status, 200);
  // Back to Pass-through for the tests below.
  await h.admin("POST", `/admin/domains/${PASSTHROUGH}/mode-change`, { mode: "passthrough" }, "mode-0006");
  assert.is((await h.admin("POST", `/admin/domains/${PASSTHROUGH}/approval`, {}, "approve-0003")).body.modeVersion, 3);
  assert.is((await sign()).status, 200);
});

test("store down during a mode change: 503 GW_MANAGEMENT_SERVICE_UNAVAILABLE, the domain unchanged; the same request again applies it once", async () => {
  h.fault((c, m) => (c === DIRECTORY_COLLECTIONS.domains && m === "findOneAndUpdate" ? "before" : null));
  problem(await h.admin("POST", `/admin/domains/${STORED}/mode-change`, { mode: "passthrough" }, "mode-down-0001"), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  assert.is((await h.admin("GET", `/admin/domains/${STORED}`)).body.approval, "approved");
  assert.is((await h.customer("/probe/stored-only", DEMO_KEY, STORED)).status, 200, "still serving");
  // Applied, then the audit write failed: the retry finds its own change and completes only the audit.
  h.fault((c, m) => (c === DIRECTORY_COLLECTIONS.audit && m === "insert" ? "before" : null));
  problem(await h.admin("POST", `/admin/domains/${STORED}/mode-change`, { mode: "passthrough" }, "mode-down-0001"), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  h.fault(null);
  const done = await h.admin("POST", `/admin/domains/${STORED}/mode-change`, { mode: "passthrough" }, "mode-down-0001");
  assert.is(done.status, 200, done.text);
  assert.is(done.body.approval, "draining");
  const audit = await h.admin("GET", `/admin/audit?targetId=${STORED}&action=domain.mode_change`);
  assert.is(audit.body.data.length, 1, "one audit record");
  // A read the store cannot serve.
  h.fault((c, m) => (c === DIRECTORY_COLLECTIONS.domains && m === "find" ? "before" : null));
  const read = problem(await h.admin("GET", "/admin/domains"), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  assert.is(read.retry.strategy, "BACKOFF");
});

test("every Admin API route is in /openapi.json, with x-admin-api-key", async () => {
  const res = await h.customer("/openapi.json", "", "localhost");
  const paths = Object.keys(res.body.paths);
  for (const p of [
    "/admin/businesses",
    "/admin/businesses/{businessId}",
    "/admin/domains",
    "/admin/domains/{host}",
    "/admin/domains/{host}/mode-change",
    "/admin/domains/{host}/approval",
    "/admin/keys",
    "/admin/keys/{keyId}",
    "/admin/keys/{keyId}/roll",
    "/admin/keys/{keyId}/revoke",
    "/admin/audit",
    "/admin/invoices/frozen",
    "/admin/identity-reviews",
    "/admin/wallets/{businessId}",
  ])
    assert.ok(paths.includes(p), `${p} in ${paths.filter((x) => x.startsWith("/admin")).join(", ")}`);
  assert.ok(res.body.paths["/admin/domains/{host}"].patch, "PATCH documented");
});

test("the management quota applies per operator credential", async () => {
  const limited = await startAdminHarness({ patch: { limits: { quotas: { management: { limit: 3, windowSeconds: 60 } } } } });
  try {
    for (let i = 0; i < 3; i++) assert.is((await limited.admin("GET", "/admin/domains")).status, 200);
    const p = problem(await limited.admin("GET", "/admin/keys"), 429, "GW_RATE_LIMIT_EXCEEDED");
    assert.ok(p.retry.afterSeconds >= 1);
  } finally {
    await limited.close();
  }
});

test.run();
