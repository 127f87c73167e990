/**
 * Catalog coverage over real HTTP, store faults on the management routes (spec §7.6, §7.10): a read
 * the store cannot serve, an onboarding write that fails and, once its claim is stale, cannot be
 * resumed — read off a listening gateway's socket. test/plugins/onboarding/store-faults.test.ts
 * covers the behaviour in depth.
 */
import { test } from "uvu";
import { COLLECTIONS } from "../../plugins/onboarding/store.ts";
import { callOverHttp } from "../support/over-http.ts";
import { MULTI, credentials, expectJson, expectProblem, startOnboardingHarness } from "../plugins/onboarding/onboarding-helpers.ts";

let fault: { collection: string; method: string } | null = null;
let clockOffset = 0;
const STALE_MS = 60_000;
const h = await startOnboardingHarness({
  storeFault: (collection, method) => {
    if (!fault || fault.collection !== collection || fault.method !== method) return null;
    fault = null;
    return "before";
  },
  onboarding: { now: () => Date.now() + clockOffset, staleAfterMs: STALE_MS, inFlightWaitMs: 200 },
});
await callOverHttp(h.tg);
test.after(() => h.close());

test("over HTTP: a read the store cannot serve → 503 GW_MANAGEMENT_SERVICE_UNAVAILABLE", async () => {
  fault = { collection: COLLECTIONS.subBusinesses, method: "find" };
  await expectProblem(await h.get("/sub-businesses"), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  await expectJson(await h.get("/sub-businesses"), 200);
});

test("over HTTP: the onboarding write fails → 503 GW_ONBOARDING_SERVICE_INVALID_RESPONSE; once stale → 409 GW_ONBOARDING_NOT_RESUMABLE", async () => {
  const body = { ...credentials(MULTI.email, MULTI.password), tin: MULTI.retail.tin };
  fault = { collection: COLLECTIONS.subBusinesses, method: "insert" };
  await expectProblem(await h.post("/sub-businesses", body, "http-faults-onboard-01"), 503, "GW_ONBOARDING_SERVICE_INVALID_RESPONSE");
  clockOffset += STALE_MS + 1_000;
  await expectProblem(await h.post("/sub-businesses", body, "http-faults-onboard-01"), 409, "GW_ONBOARDING_NOT_RESUMABLE");
});

test.run();
