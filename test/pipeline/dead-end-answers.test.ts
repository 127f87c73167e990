/**
 * Answers that tell the caller where to go: a title that fits the cause when one code has several
 * (a content conflict on a never-used key, "already in that mode"), the domain's mode named on a
 * mode conflict, the operator header named on the admin 401, and the hosts that serve a route asked
 * on the wrong kind of host. Over real HTTP against the full plugin set.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ALREADY_REPRESENTED } from "../../plugins/onboarding/failures.ts";
import { ADMIN_KEY, DEMO_KEY, MULTI, OTHER, OTHER_KEY, PASSTHROUGH, STORED, credentials, expectProblem, startOnboardingHarness } from "../plugins/onboarding/onboarding-helpers.ts";

const h = await startOnboardingHarness();
test.after(() => h.close());

test("onboarding a regulator business another business represents, under a never-used key: the title says so, not 'Key used before'", async () => {
  const body = { ...credentials(MULTI.email, MULTI.password), tin: MULTI.retail.tin };
  assert.is((await h.post("/sub-businesses", body, "titles-demo-0001")).status, 201);
  const res = await h.post("/sub-businesses", body, "titles-other-0001", { apiKey: OTHER_KEY, host: OTHER });
  const p = await expectProblem(res, 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  assert.is(p.title, ALREADY_REPRESENTED);
  assert.not.match(p.title, /Key used before/);
});

test("a mode change to the mode the domain is in: 'Domain already in that mode', the mode named", async () => {
  const res = await h.admin(`/admin/domains/${PASSTHROUGH}/mode-change`, { mode: "passthrough" }, "titles-mode-0001");
  const p = await expectProblem(res, 409, "GW_DOMAIN_APPROVAL_STATE_CHANGED");
  assert.is(p.title, "Domain already in that mode");
  assert.match(p.detail, /Pass-through mode already/);
  const approve = await expectProblem(await h.admin(`/admin/domains/${PASSTHROUGH}/approval`, {}, "titles-approve-0001"), 409, "GW_DOMAIN_APPROVAL_STATE_CHANGED");
  assert.is(approve.title, "Nothing awaits approval");
});

test("a Stored-only route on a Pass-through domain (and the reverse) names the domain's mode", async () => {
  const stored = await h.get("/invoices", { host: PASSTHROUGH });
  const p1 = await expectProblem(stored, 409, "GW_OPERATION_MODE_CONFLICT");
  assert.match(p1.detail, /domain is in Pass-through mode/);
  assert.match(p1.detail, /Stored-mode endpoint/);
  const pt = await h.post("/api/v1/invoice/validate", {}, null, { host: STORED });
  const p2 = await expectProblem(pt, 409, "GW_OPERATION_MODE_CONFLICT");
  assert.match(p2.detail, /domain is in Stored mode/);
  assert.match(p2.detail, /Pass-through-mode endpoint/);
});

test("the admin 401 names the header it wants (missing and wrong key alike)", async () => {
  for (const adminKey of [null, "admin_wrong_key_9999"]) {
    const res = await h.admin(`/admin/domains/${PASSTHROUGH}/mode-change`, { mode: "stored" }, "titles-401-0001", { adminKey });
    const p = await expectProblem(res, 401, "GW_ADMIN_AUTHENTICATION_FAILED");
    assert.match(p.detail, /x-admin-api-key/);
  }
  assert.ok(ADMIN_KEY.length > 0);
});

test("an invoice route on a collections host says which hosts serve it; a collections route on a gateway domain too", async () => {
  const res = await h.tg.call("/api/v1/invoice/sign", { method: "POST", host: "localhost", headers: { "x-api-key": DEMO_KEY }, body: {} });
  assert.is(res.status, 404);
  const body = (await res.json()) as { message: string };
  assert.match(body.message, /invoice-gateway endpoint/);
  assert.match(body.message, /approved gateway domain/);
  const col = await expectProblem(await h.tg.call("/api/v1/payment-link", { host: PASSTHROUGH }), 404, "GW_ROUTE_NOT_FOUND");
  assert.match(col.detail, /collections endpoint/);
  assert.match(col.detail, /localhost/);
  const none = await expectProblem(await h.tg.call("/no/such/thing", { host: PASSTHROUGH }), 404, "GW_ROUTE_NOT_FOUND");
  assert.is(none.detail, "No such endpoint on this host.");
});

test.run();
