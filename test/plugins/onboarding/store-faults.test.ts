/**
 * Document-store failures during onboarding mutations: a failure before any effect releases the key
 * (GW_MANAGEMENT_SERVICE_UNAVAILABLE), a failure whose effect is uncertain keeps the claim and
 * answers the operation's own code (GW_ONBOARDING_SERVICE_INVALID_RESPONSE,
 * GW_CRYPTO_MATERIAL_SERVICE_INVALID_RESPONSE, GW_IDENTITY_SERVICE_INVALID_RESPONSE); once the claim
 * is stale the same key resolves it without a second effect.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { COLLECTIONS } from "../../../plugins/onboarding/store.ts";
import { callOverHttp } from "../../support/over-http.ts";
import { MULTI, TAXPAYER, credentials, demoEntity, expectJson, expectProblem, startOnboardingHarness } from "./onboarding-helpers.ts";

interface Fault {
  collection: string;
  method: string;
  when: "before" | "after";
  match?: (args: unknown[]) => boolean;
}
let fault: Fault | null = null;
let clockOffset = 0;
const STALE_MS = 60_000;

const h = await startOnboardingHarness({
  storeFault: (collection, method, args) => {
    const f = fault;
    if (!f || f.collection !== collection || f.method !== method || (f.match && !f.match(args))) return null;
    fault = null;
    return f.when;
  },
  onboarding: { now: () => Date.now() + clockOffset, staleAfterMs: STALE_MS, inFlightWaitMs: 200 },
});
// Over a real socket: the answers are what a merchant's client reads.
await callOverHttp(h.tg);
const later = () => void (clockOffset += STALE_MS + 1_000);
const filterHas = (field: string) => (args: unknown[]) => typeof args[0] === "object" && args[0] !== null && field in (args[0] as object);

test("a read the store cannot serve → 503 GW_MANAGEMENT_SERVICE_UNAVAILABLE (BACKOFF)", async () => {
  fault = { collection: COLLECTIONS.subBusinesses, method: "find", when: "before" };
  const p = await expectProblem(await h.get("/sub-businesses"), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  assert.is(p.retry.strategy, "BACKOFF");
  await expectJson(await h.get("/sub-businesses"), 200);
});

test("onboarding: the represented business cannot be written → 503 GW_ONBOARDING_SERVICE_INVALID_RESPONSE; later → GW_ONBOARDING_NOT_RESUMABLE", async () => {
  const body = { ...credentials(MULTI.email, MULTI.password), tin: MULTI.retail.tin };
  fault = { collection: COLLECTIONS.subBusinesses, method: "insert", when: "before" };
  const p = await expectProblem(await h.post("/sub-businesses", body, "faults-onboard-01"), 503, "GW_ONBOARDING_SERVICE_INVALID_RESPONSE");
  assert.is(p.retry.sameIdempotencyKey, true);
  // Within the stale window the claim is held: a retry gets the same answer at once, with Retry-After.
  const retry = await h.post("/sub-businesses", body, "faults-onboard-01");
  assert.ok(Number(retry.headers.get("retry-after")) > 50);
  await expectProblem(retry, 503, "GW_ONBOARDING_SERVICE_INVALID_RESPONSE");
  later();
  const calls = h.sim.state.totalCalls();
  await expectProblem(await h.post("/sub-businesses", body, "faults-onboard-01"), 409, "GW_ONBOARDING_NOT_RESUMABLE");
  assert.is(h.sim.state.totalCalls(), calls);
});

test("onboarding: the write landed but its answer was lost → recovered later as 200, one represented business", async () => {
  fault = { collection: COLLECTIONS.subBusinesses, method: "insert", when: "after" };
  const body = credentials(TAXPAYER.email, TAXPAYER.password);
  await expectProblem(await h.post("/sub-businesses", body, "faults-onboard-02"), 503, "GW_ONBOARDING_SERVICE_INVALID_RESPONSE");
  later();
  const calls = h.sim.state.totalCalls();
  const sb = await expectJson(await h.post("/sub-businesses", body, "faults-onboard-02"), 200);
  assert.is(sb.gatewaySubBusinessId, TAXPAYER.businessId);
  assert.is(h.sim.state.totalCalls(), calls, "recovered from the store, not the regulator");
  const v = await expectJson(await h.get(`/sub-businesses/${TAXPAYER.businessId}/identity-versions`), 200);
  assert.equal(v.versions.map((x: { version: number }) => x.version), [1]);
});

test("rotation: the compare-and-set answer is lost → 503 GW_CRYPTO_MATERIAL_SERVICE_INVALID_RESPONSE; the same key later → no second increment", async () => {
  const m = { publicKey: "pk-1", certificate: "cert-1" };
  fault = { collection: COLLECTIONS.subBusinesses, method: "findOneAndUpdate", when: "after", match: filterHas("cryptoVersion") };
  const p = await expectProblem(
    await h.post(`/sub-businesses/${TAXPAYER.businessId}/reg-crypto-material`, m, "faults-rotate-01"),
    503,
    "GW_CRYPTO_MATERIAL_SERVICE_INVALID_RESPONSE",
  );
  assert.is(p.retry.strategy, "SAME_IDEMPOTENCY_KEY");
  assert.is((await expectJson(await h.get(`/sub-businesses/${TAXPAYER.businessId}`), 200)).cryptoVersion, 1, "it did land");
  await expectProblem(
    await h.post(`/sub-businesses/${TAXPAYER.businessId}/reg-crypto-material`, m, "faults-rotate-01"),
    503,
    "GW_CRYPTO_MATERIAL_SERVICE_INVALID_RESPONSE",
  );
  later();
  const again = await expectJson(await h.post(`/sub-businesses/${TAXPAYER.businessId}/reg-crypto-material`, m, "faults-rotate-01"), 200);
  assert.is(again.cryptoVersion, 1);
  assert.is((await expectJson(await h.get(`/sub-businesses/${TAXPAYER.businessId}`), 200)).cryptoVersion, 1);
});

test("rotation: the compare-and-set failed before writing → the same key later applies it once", async () => {
  const m = { publicKey: "pk-2", certificate: "cert-2" };
  fault = { collection: COLLECTIONS.subBusinesses, method: "findOneAndUpdate", when: "before", match: filterHas("cryptoVersion") };
  await expectProblem(
    await h.post(`/sub-businesses/${TAXPAYER.businessId}/reg-crypto-material`, m, "faults-rotate-02"),
    503,
    "GW_CRYPTO_MATERIAL_SERVICE_INVALID_RESPONSE",
  );
  assert.is((await expectJson(await h.get(`/sub-businesses/${TAXPAYER.businessId}`), 200)).cryptoVersion, 1);
  later();
  const r = await expectJson(await h.post(`/sub-businesses/${TAXPAYER.businessId}/reg-crypto-material`, m, "faults-rotate-02"), 200);
  assert.is(r.cryptoVersion, 2);
  assert.equal(await expectJson(await h.post(`/sub-businesses/${TAXPAYER.businessId}/reg-crypto-material`, m, "faults-rotate-02"), 200), r);
});

test("reverification: the review cannot be written → 503 GW_MANAGEMENT_SERVICE_UNAVAILABLE; the same key then succeeds", async () => {
  h.sim.faults.set("entity", demoEntity({ name: "Renamed Trading Ltd" }));
  fault = { collection: COLLECTIONS.reviews, method: "insert", when: "before" };
  const path = `/sub-businesses/${TAXPAYER.businessId}/identity-reverification`;
  const body = credentials(TAXPAYER.email, TAXPAYER.password);
  await expectProblem(await h.post(path, body, "faults-reverify-01"), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  const r = await expectJson(await h.post(path, body, "faults-reverify-01"), 200);
  assert.is(r.status, "review_created");
  h.sim.faults.clear();
});

test("operator approval: the identity update fails → 502 GW_IDENTITY_SERVICE_INVALID_RESPONSE; the same key later rolls it forward", async () => {
  const v = await expectJson(await h.get(`/sub-businesses/${TAXPAYER.businessId}/identity-versions`), 200);
  const reviewId = v.pendingReviewId as string;
  assert.ok(reviewId);
  const path = `/admin/sub-businesses/${TAXPAYER.businessId}/identity-reviews/${reviewId}/decision`;
  fault = { collection: COLLECTIONS.subBusinesses, method: "findOneAndUpdate", when: "before", match: filterHas("identityVersion") };
  const p = await expectProblem(await h.admin(path, { decision: "approve" }, "faults-decide-01"), 502, "GW_IDENTITY_SERVICE_INVALID_RESPONSE");
  assert.is(p.retry.strategy, "CONTACT_SUPPORT");
  assert.is((await expectJson(await h.get(`/sub-businesses/${TAXPAYER.businessId}`), 200)).identityVersion, 1);
  const retry = await h.admin(path, { decision: "approve" }, "faults-decide-01");
  assert.is(retry.headers.get("retry-after"), null, "no Retry-After on a CONTACT_SUPPORT answer");
  await expectProblem(retry, 502, "GW_IDENTITY_SERVICE_INVALID_RESPONSE");
  later();
  const res = await expectJson(await h.admin(path, { decision: "approve" }, "faults-decide-01"), 200);
  assert.is(res.review.status, "approved");
  assert.is(res.subBusiness.identityVersion, 2);
  assert.is(res.subBusiness.registeredName, "Renamed Trading Ltd");
  await expectProblem(await h.admin(path, { decision: "approve" }, "faults-decide-02"), 409, "GW_IDENTITY_REVIEW_CONFLICT");
});

test.after(() => h.close());
test.run();
