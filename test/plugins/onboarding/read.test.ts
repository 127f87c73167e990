/**
 * GET /sub-businesses (cursor pagination `{ data, nextCursor }`, limit ≤ 100, default 20) and
 * GET /sub-businesses/:gatewaySubBusinessId: stored snapshots only (no regulator call), scoped to the
 * caller's top-level business.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { MULTI, OTHER, OTHER_KEY, TAXPAYER, credentials, expectJson, expectProblem, startOnboardingHarness } from "./onboarding-helpers.ts";

const h = await startOnboardingHarness({ fixtures: "test" });
const onboarded: string[] = [];

test("setup: three represented businesses for demo, none for other", async () => {
  const bodies = [
    credentials("solo@test.ng", "test-password-solo"),
    { ...credentials("multi@test.ng", "test-password-multi"), tin: "20000002-0001" },
    { ...credentials("multi@test.ng", "test-password-multi"), tin: "20000002-0002" },
  ];
  for (const [i, body] of bodies.entries()) {
    const sb = await expectJson(await h.post("/sub-businesses", body, `read-setup-000${i}`), 201);
    onboarded.push(sb.gatewaySubBusinessId);
  }
  const other = await h.post("/sub-businesses", { ...credentials("dup-tin@test.ng", "test-password-dup") }, "read-setup-other", {
    apiKey: OTHER_KEY,
    host: OTHER,
  });
  await expectProblem(other, 409, "GW_REG_BUSINESS_SELECTION_AMBIGUOUS"); // so "other" has none
});

test("list: oldest first, cursor pagination, no regulator call", async () => {
  const calls = h.sim.state.totalCalls();
  const all = await expectJson(await h.get("/sub-businesses"), 200);
  assert.equal(Object.keys(all).sort(), ["data", "nextCursor"]);
  assert.equal(all.data.map((s: { gatewaySubBusinessId: string }) => s.gatewaySubBusinessId), onboarded);
  assert.is(all.nextCursor, null);

  const p1 = await expectJson(await h.get("/sub-businesses?limit=2"), 200);
  assert.is(p1.data.length, 2);
  assert.type(p1.nextCursor, "string");
  const p2 = await expectJson(await h.get(`/sub-businesses?limit=2&cursor=${p1.nextCursor}`), 200);
  assert.equal(p2.data.map((s: { gatewaySubBusinessId: string }) => s.gatewaySubBusinessId), [onboarded[2]]);
  assert.is(p2.nextCursor, null);
  const p3 = await expectJson(await h.get("/sub-businesses?limit=3"), 200);
  assert.is(p3.nextCursor, null, "an exactly full last page has no next cursor");
  assert.is(h.sim.state.totalCalls(), calls, "reads never reach the regulator");
});

test("list: limit must be 1 to 100; a cursor must come from nextCursor", async () => {
  for (const q of ["limit=0", "limit=101", "limit=abc", "limit=-1", "limit=1.5"]) {
    const p = await expectProblem(await h.get(`/sub-businesses?${q}`), 400, "GW_REQUEST_VALIDATION_FAILED");
    assert.equal(p.errors.map((e: { location: string; field: string }) => [e.location, e.field]), [["query", "limit"]]);
  }
  assert.is((await expectJson(await h.get("/sub-businesses?limit=100"), 200)).data.length, 3);
  for (const cursor of ["not-a-cursor", Buffer.from('{"x":1}').toString("base64url"), "!!"]) {
    const p = await expectProblem(await h.get(`/sub-businesses?cursor=${cursor}`), 400, "GW_REQUEST_VALIDATION_FAILED");
    assert.is(p.errors[0].field, "cursor");
  }
  // A bad cursor is the caller's mistake, not a store failure: the document store circuit stays closed.
  const snapshot = h.tg.gateway.kit.dependencyHealth.snapshot().find((d) => d.dependency === "documentStore");
  assert.is(snapshot?.state, "closed");
  assert.is(snapshot?.windowFailures, 0);
});

test("list is scoped to the caller's business", async () => {
  assert.equal(await expectJson(await h.get("/sub-businesses", { apiKey: OTHER_KEY, host: OTHER }), 200), { data: [], nextCursor: null });
});

test("detail: 200 stored snapshot; unknown → 404; another business's → 403", async () => {
  const calls = h.sim.state.totalCalls();
  const sb = await expectJson(await h.get(`/sub-businesses/${onboarded[0]}`), 200);
  assert.is(sb.gatewaySubBusinessId, onboarded[0]);
  assert.is(sb.tin, "10000001-0001");
  await expectProblem(await h.get(`/sub-businesses/${TAXPAYER.businessId}`), 404, "GW_SUB_BUSINESS_NOT_FOUND");
  await expectProblem(await h.get(`/sub-businesses/${MULTI.retail.id}`), 404, "GW_SUB_BUSINESS_NOT_FOUND");
  const forbidden = await expectProblem(await h.get(`/sub-businesses/${onboarded[0]}`, { apiKey: OTHER_KEY, host: OTHER }), 403, "GW_SUB_BUSINESS_FORBIDDEN");
  assert.is(forbidden.retry.strategy, "AFTER_CORRECTION");
  for (const sub of ["identity-versions"]) {
    await expectProblem(await h.get(`/sub-businesses/${onboarded[0]}/${sub}`, { apiKey: OTHER_KEY, host: OTHER }), 403, "GW_SUB_BUSINESS_FORBIDDEN");
    await expectProblem(await h.get(`/sub-businesses/unknown-id/${sub}`), 404, "GW_SUB_BUSINESS_NOT_FOUND");
  }
  assert.is(h.sim.state.totalCalls(), calls);
});

test("detail: the path id is 1 to 255 visible characters, else 400 GW_REQUEST_PATH_PARAMETER_INVALID", async () => {
  const long = "x".repeat(256);
  const p = await expectProblem(await h.get(`/sub-businesses/${long}`), 400, "GW_REQUEST_PATH_PARAMETER_INVALID");
  assert.equal(p.errors, [{ location: "path", field: "gatewaySubBusinessId", code: "LENGTH", detail: "1 to 255 characters" }]);
  await expectProblem(await h.get(`/sub-businesses/a%20b`), 400, "GW_REQUEST_PATH_PARAMETER_INVALID");
  await expectProblem(await h.get(`/sub-businesses/${"y".repeat(255)}`), 404, "GW_SUB_BUSINESS_NOT_FOUND");
  // Mutations check the id the same way, before the key is claimed.
  await expectProblem(
    await h.post(`/sub-businesses/${long}/identity-reverification`, credentials("solo@test.ng", "test-password-solo"), "read-long-id-01"),
    400,
    "GW_REQUEST_PATH_PARAMETER_INVALID",
  );
});

test.after(() => h.close());
test.run();
