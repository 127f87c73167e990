/**
 * An onboarding still in progress under the same idempotency key (a slow regulator) answers the
 * duplicate honestly, over real HTTP: not a content conflict, but 503 GW_MANAGEMENT_SERVICE_UNAVAILABLE
 * with Retry-After (same key); the same-key retry after it finished gets that onboarding's outcome.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { TAXPAYER, credentials, expectJson, expectProblem, startOnboardingHarness } from "./onboarding-helpers.ts";

const h = await startOnboardingHarness({ onboarding: { inFlightWaitMs: 200 } });
test.after(() => h.close());

test("same key and content while the first is still running → 503 BACKOFF with Retry-After, then its own outcome", async () => {
  h.sim.faults.set("entity", { kind: "latency", ms: 1_200, times: 1 });
  const body = credentials(TAXPAYER.email, TAXPAYER.password);
  const first = h.post("/sub-businesses", body, "in-progress-0001");
  await new Promise((r) => setTimeout(r, 100));
  const dup = await h.post("/sub-businesses", body, "in-progress-0001");
  assert.ok(dup.headers.get("retry-after"), "Retry-After");
  const p = await expectProblem(dup, 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  assert.is(p.retry.sameIdempotencyKey, true);
  const sb = await expectJson(await first, 201);
  const again = await expectJson(await h.post("/sub-businesses", body, "in-progress-0001"), 200);
  assert.is(again.gatewaySubBusinessId, sb.gatewaySubBusinessId, "the same onboarding's outcome");
});

test.run();
