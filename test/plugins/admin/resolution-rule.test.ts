/**
 * One rule for every operator resolution route (docs/operations.md "Recovery jobs"): each needs
 * x-idempotency-key, an unknown id is 404 GW_OPERATION_NOT_FOUND. (The same decision again answering
 * 200 is tested with real held, unknown and frozen operations in the recovery and processor suites.)
 */
import { randomUUID } from "node:crypto";
import { test } from "uvu";
import { ADMIN_KEY, expectProblem, startOnboardingHarness } from "../onboarding/onboarding-helpers.ts";

const h = await startOnboardingHarness();
test.after(() => h.close());

const ROUTES = [
  { path: `/admin/sign-attempts/${randomUUID()}/resolution`, outcome: "signed" },
  { path: `/admin/transmissions/${randomUUID()}/resolution`, outcome: "transmitted" },
  { path: `/admin/invoices/${randomUUID()}/resolution`, outcome: "signed" },
];

const post = (path: string, outcome: string, key: string | null) =>
  h.tg.call(path, {
    method: "POST",
    host: "localhost",
    headers: { "x-admin-api-key": ADMIN_KEY, ...(key === null ? {} : { "x-idempotency-key": key }) },
    body: { outcome },
  });

test("every resolution route needs x-idempotency-key", async () => {
  for (const r of ROUTES) await expectProblem(await post(r.path, r.outcome, null), 400, "GW_IDEMPOTENCY_KEY_REQUIRED");
});

test("every resolution route answers an unknown id with 404 GW_OPERATION_NOT_FOUND", async () => {
  let n = 0;
  for (const r of ROUTES) await expectProblem(await post(r.path, r.outcome, `resolution-rule-${++n}-0001`), 404, "GW_OPERATION_NOT_FOUND");
});

test.run();
