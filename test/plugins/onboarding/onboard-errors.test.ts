/**
 * Every onboarding refusal of spec §7.6, produced through HTTP against the regulator simulator with
 * the test fixtures (selection and metadata cases) and its faults (authentication and verification
 * outages). A refusal never stores anything and releases the idempotency key.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { COLLECTIONS } from "../../../plugins/onboarding/store.ts";
import { credentials, expectJson, expectProblem, startOnboardingHarness } from "./onboarding-helpers.ts";

const h = await startOnboardingHarness({ fixtures: "test" });
let n = 0;
const onboard = (body: unknown) => h.post("/sub-businesses", body, `onboard-error-${String(++n).padStart(4, "0")}`);

const CASES: Array<[string, unknown, number, string]> = [
  ["several active businesses, no TIN", credentials("multi@test.ng", "test-password-multi"), 409, "GW_REG_BUSINESS_SELECTION_AMBIGUOUS"],
  ["a TIN shared by two active businesses", { ...credentials("dup-tin@test.ng", "test-password-dup"), tin: "30000003-0001" }, 409, "GW_REG_BUSINESS_SELECTION_AMBIGUOUS"],
  ["a TIN no business has", { ...credentials("multi@test.ng", "test-password-multi"), tin: "20000002-0009" }, 404, "GW_REG_BUSINESS_TIN_NOT_FOUND"],
  ["a single business whose TIN differs", { ...credentials("solo@test.ng", "test-password-solo"), tin: "20000002-0001" }, 404, "GW_REG_BUSINESS_TIN_NOT_FOUND"],
  ["the TIN of an inactive business", { ...credentials("multi@test.ng", "test-password-multi"), tin: "20000002-0003" }, 422, "GW_REG_BUSINESS_INACTIVE"],
  ["an inactive entity", credentials("inactive@test.ng", "test-password-inactive"), 422, "GW_REG_ENTITY_INACTIVE"],
  ["no active business", credentials("noactive@test.ng", "test-password-noactive"), 422, "GW_REG_ACTIVE_BUSINESS_NOT_FOUND"],
  ["no active business, even with a TIN", { ...credentials("noactive@test.ng", "test-password-noactive"), tin: "40000004-0001" }, 422, "GW_REG_ACTIVE_BUSINESS_NOT_FOUND"],
  ["no irn_template key", credentials("missing-template@test.ng", "test-password-missing"), 422, "GW_REG_IRN_TEMPLATE_MISSING"],
  ["irn_template null", credentials("null-template@test.ng", "test-password-null"), 422, "GW_REG_IRN_TEMPLATE_MISSING"],
  ["entity details over the limits", credentials("long-metadata@test.ng", "test-password-long"), 502, "GW_REG_ENTITY_METADATA_UNSUPPORTED"],
  ["malformed business metadata", credentials("bad-metadata@test.ng", "test-password-bad"), 502, "GW_REG_BUSINESS_METADATA_INVALID"],
  ["an entity the regulator does not have", credentials("ghost@test.ng", "test-password-ghost"), 404, "GW_REG_ENTITY_NOT_FOUND"],
  ["a wrong password", credentials("solo@test.ng", "not-the-password"), 422, "GW_REG_LOGIN_INVALID"],
  ["an unknown e-mail", credentials("nobody@test.ng", "whatever-1"), 400, "GW_REG_CREDENTIALS_REJECTED"],
  ["the service not linked as access point provider", credentials("unlinked@test.ng", "test-password-unlinked"), 403, "GW_REG_APPLICATION_NOT_LINKED"],
];

for (const [name, body, status, code] of CASES) {
  test(`${name} → ${status} ${code}`, async () => {
    const problem = await expectProblem(await onboard(body), status, code);
    const text = JSON.stringify(problem);
    for (const secret of ["test-password", "not-the-password", "whatever-1", "@test.ng"]) assert.not.ok(text.includes(secret), `problem leaks ${secret}`);
  });
}

test("regulator authentication outage (5xx) → 502 GW_REG_AUTH_UNAVAILABLE, same key retry succeeds", async () => {
  h.sim.faults.set("authenticate", { kind: "status", status: 503, times: 1 });
  const body = credentials("solo@test.ng", "test-password-solo");
  const problem = await expectProblem(await h.post("/sub-businesses", body, "onboard-outage-0001"), 502, "GW_REG_AUTH_UNAVAILABLE");
  assert.is(problem.retry.strategy, "SAME_IDEMPOTENCY_KEY");
  assert.is(problem.retry.sameIdempotencyKey, true);
  // The key was released: the retry with the same key and content onboards.
  const sb = await expectJson(await h.post("/sub-businesses", body, "onboard-outage-0001"), 201);
  assert.is(sb.gatewaySubBusinessId, "b1000000-0000-4000-8000-000000000101");
});

test("entity read outage → 502 GW_REG_AUTH_UNAVAILABLE", async () => {
  h.sim.faults.set("entity", { kind: "reset", times: 1 });
  await expectProblem(await onboard({ ...credentials("multi@test.ng", "test-password-multi"), tin: "20000002-0001" }), 502, "GW_REG_AUTH_UNAVAILABLE");
});

test("an unusable authentication answer → 502 GW_REG_AUTH_RESPONSE_INVALID", async () => {
  h.sim.faults.set("authenticate", { kind: "renamed", times: 1 });
  const problem = await expectProblem(await onboard(credentials("solo@test.ng", "test-password-solo")), 502, "GW_REG_AUTH_RESPONSE_INVALID");
  assert.is(problem.retry.strategy, "SAME_IDEMPOTENCY_KEY");
  h.sim.faults.set("authenticate", { kind: "malformed", times: 1 });
  await expectProblem(await onboard(credentials("solo@test.ng", "test-password-solo")), 502, "GW_REG_AUTH_RESPONSE_INVALID");
});

test("the regulator refuses the deployment's own credentials → 503 GW_REG_VERIFICATION_UNAVAILABLE (never a customer 401)", async () => {
  h.sim.faults.set("authenticate", { kind: "reject_credentials", times: 1 });
  const problem = await expectProblem(await onboard(credentials("solo@test.ng", "test-password-solo")), 503, "GW_REG_VERIFICATION_UNAVAILABLE");
  assert.is(problem.retry.strategy, "BACKOFF");
});

test("regulator throttling → 429 GW_RATE_LIMIT_EXCEEDED with Retry-After", async () => {
  h.sim.faults.set("authenticate", { kind: "rate_limit", retryAfter: 7, times: 1 });
  const res = await onboard(credentials("solo@test.ng", "test-password-solo"));
  assert.is(res.headers.get("retry-after"), "7");
  await expectProblem(res, 429, "GW_RATE_LIMIT_EXCEEDED");
});

test("refusals store nothing: one represented business, no claim left behind", async () => {
  const subs = await h.store.collection(COLLECTIONS.subBusinesses).find({});
  assert.is(subs.items.length, 1);
  const records = await h.store.collection(COLLECTIONS.idempotency).find({});
  assert.equal(records.items.map((r) => r.status), ["completed"]);
});

test("a malformed sibling business does not block the sound one: onboarding and reverification of the sound business succeed", async () => {
  const body = credentials("sibling-malformed@test.ng", "test-password-sibling");
  const sb = await expectJson(await h.post("/sub-businesses", body, "onboard-sibling-0001"), 201);
  assert.is(sb.gatewaySubBusinessId, "b1000000-0000-4000-8000-000000001301");
  assert.is(sb.regulatorIdentity.tin, "10000013-0001");
  const again = await expectJson(await h.post(`/sub-businesses/${sb.gatewaySubBusinessId}/identity-reverification`, body, "reverify-sibling-0001"), 200);
  assert.is(again.status, "unchanged");
});

test.after(() => h.close());
test.run();
