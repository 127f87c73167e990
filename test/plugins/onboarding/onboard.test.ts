/**
 * POST /sub-businesses against the demo regulator simulator: the happy path over real HTTP, TIN
 * selection, idempotent replays (no regulator call), content conflicts, the regulator-identity claim
 * (spec §7.2 exception 2), concurrent duplicates, stale in-progress records and the route contract.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { idempotencyId, type IdempotencyDoc } from "../../../core/idempotency.ts";
import { deriveIdempotencySecret, COLLECTIONS } from "../../../plugins/onboarding/store.ts";
import { onboardingFingerprint } from "../../../plugins/onboarding/service.ts";
import {
  DEMO_KEY,
  MULTI,
  OTHER,
  OTHER_KEY,
  PASSTHROUGH,
  STORED,
  TAXPAYER,
  credentials,
  expectJson,
  expectProblem,
  httpRequest,
  sleep,
  startOnboardingHarness,
} from "./onboarding-helpers.ts";

const h = await startOnboardingHarness();
const calls = () => ({ auth: h.sim.state.calls("authenticate"), entity: h.sim.state.calls("entity") });

test("onboarding over real HTTP: 201 with the represented business; the replay answers 200 without calling the regulator", async () => {
  const server = await h.tg.listen();
  const before = calls();
  const headers = { host: `${PASSTHROUGH}:${server.port}`, "x-api-key": DEMO_KEY, "x-idempotency-key": "onboard-demo-0001" };
  const res = await httpRequest(server.port, "POST", "/sub-businesses", headers, credentials(TAXPAYER.email, TAXPAYER.password));
  assert.is(res.status, 201, res.body);
  assert.is(res.headers["content-type"], "application/json");
  assert.ok(typeof res.headers["x-request-id"] === "string");
  const sb = JSON.parse(res.body);
  assert.equal(sb, {
    gatewaySubBusinessId: TAXPAYER.businessId,
    externalBusinessId: TAXPAYER.businessId,
    regulatorIdentity: {
      entityId: TAXPAYER.entityId,
      entityReference: TAXPAYER.entityReference,
      regulatorBusinessId: TAXPAYER.businessId,
      businessName: TAXPAYER.businessName,
      tin: TAXPAYER.tin,
      irnTemplate: TAXPAYER.irnTemplate,
      active: true,
    },
    reference: TAXPAYER.entityReference,
    registeredName: TAXPAYER.businessName,
    tin: TAXPAYER.tin,
    irnTemplate: TAXPAYER.irnTemplate,
    cryptoVersion: 0,
    cryptoFingerprint: null,
    identityVersion: 1,
    state: "TEST",
    createdAt: sb.createdAt,
    updatedAt: sb.createdAt,
  });
  assert.match(sb.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(calls(), { auth: before.auth + 1, entity: before.entity + 1 });

  // Replay with the same key and content: 200, same body, no regulator call.
  const replay = await httpRequest(server.port, "POST", "/sub-businesses", headers, credentials(TAXPAYER.email, TAXPAYER.password));
  assert.is(replay.status, 200);
  assert.equal(JSON.parse(replay.body), sb);
  // A completed replay may omit the credentials.
  const bare = await httpRequest(server.port, "POST", "/sub-businesses", headers, {});
  assert.is(bare.status, 200);
  assert.equal(JSON.parse(bare.body), sb);
  assert.equal(calls(), { auth: before.auth + 1, entity: before.entity + 1 }, "replays never reach the regulator");

  // The stored snapshot reads back the same.
  const read = await httpRequest(server.port, "GET", `/sub-businesses/${sb.gatewaySubBusinessId}`, { host: PASSTHROUGH, "x-api-key": DEMO_KEY });
  assert.is(read.status, 200);
  assert.equal(JSON.parse(read.body), sb);
});

test("several active businesses: no TIN → GW_REG_BUSINESS_SELECTION_AMBIGUOUS; the TIN selects one", async () => {
  const ambiguous = await h.post("/sub-businesses", credentials(MULTI.email, MULTI.password), "onboard-multi-0001");
  await expectProblem(ambiguous, 409, "GW_REG_BUSINESS_SELECTION_AMBIGUOUS");
  // The failure released the key: the corrected request needs a new key (different content), and the
  // same key with the same content may be retried.
  const res = await h.post("/sub-businesses", { ...credentials(MULTI.email, MULTI.password), tin: MULTI.logistics.tin }, "onboard-multi-0002");
  const sb = await expectJson(res, 201);
  assert.is(sb.gatewaySubBusinessId, MULTI.logistics.id);
  assert.is(sb.registeredName, MULTI.logistics.name);
  assert.is(sb.tin, MULTI.logistics.tin);
  assert.is(sb.regulatorIdentity.entityId, MULTI.entityId);
  const unknownTin = await h.post("/sub-businesses", { ...credentials(MULTI.email, MULTI.password), tin: "99999999-0009" }, "onboard-multi-0003");
  await expectProblem(unknownTin, 404, "GW_REG_BUSINESS_TIN_NOT_FOUND");
});

test("same key, different content → 409 GW_IDEMPOTENCY_CONTENT_CONFLICT (TIN, e-mail, QR material)", async () => {
  const key = "onboard-multi-0002";
  const base = { ...credentials(MULTI.email, MULTI.password), tin: MULTI.logistics.tin };
  await expectProblem(await h.post("/sub-businesses", { ...base, tin: MULTI.retail.tin }, key), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  await expectProblem(
    await h.post("/sub-businesses", { ...credentials(TAXPAYER.email, MULTI.password), tin: MULTI.logistics.tin }, key),
    409,
    "GW_IDEMPOTENCY_CONTENT_CONFLICT",
  );
  await expectProblem(
    await h.post("/sub-businesses", { ...base, cryptoMaterial: { publicKey: "pk", certificate: "cert" } }, key),
    409,
    "GW_IDEMPOTENCY_CONTENT_CONFLICT",
  );
  // The password is not part of the content: a replay with another password is still the same onboarding.
  const replay = await h.post("/sub-businesses", { ...credentials(MULTI.email, "another-password"), tin: MULTI.logistics.tin }, key);
  assert.is((await expectJson(replay, 200)).gatewaySubBusinessId, MULTI.logistics.id);
  // The same key on another top-level business is another key (scope = business + route + key).
  const other = await h.post("/sub-businesses", { ...credentials(MULTI.email, MULTI.password), tin: MULTI.logistics.tin }, key, {
    apiKey: OTHER_KEY,
    host: OTHER,
  });
  await expectProblem(other, 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT"); // the identity is claimed (below)
});

test("a regulator identity is represented once: a new key or another business → GW_IDEMPOTENCY_CONTENT_CONFLICT", async () => {
  const before = calls();
  const again = await h.post("/sub-businesses", credentials(TAXPAYER.email, TAXPAYER.password), "onboard-demo-0002");
  const problem = await expectProblem(again, 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  assert.is(problem.retry.strategy, "DO_NOT_RETRY");
  const other = await h.post("/sub-businesses", credentials(TAXPAYER.email, TAXPAYER.password), "onboard-other-0001", {
    apiKey: OTHER_KEY,
    host: OTHER,
  });
  await expectProblem(other, 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  assert.is(calls().auth, before.auth + 2, "each was verified at the regulator, then refused by the identity index");
  const list = await expectJson(await h.get("/sub-businesses", { apiKey: OTHER_KEY, host: OTHER }), 200);
  assert.equal(list, { data: [], nextCursor: null });
});

test("concurrent duplicates with one key: one regulator call, both answer the same represented business", async () => {
  h.sim.faults.set("authenticate", { kind: "latency", ms: 600, times: 1 });
  const before = calls();
  const body = { ...credentials(MULTI.email, MULTI.password), tin: MULTI.retail.tin };
  const [a, b] = await Promise.all([
    h.post("/sub-businesses", body, "onboard-concurrent-01"),
    sleep(50).then(() => h.post("/sub-businesses", body, "onboard-concurrent-01")),
  ]);
  const statuses = [a.status, b.status].sort();
  assert.equal(statuses, [200, 201]);
  const [ja, jb] = [await a.json(), await b.json()];
  assert.equal(ja, jb);
  assert.is(ja.gatewaySubBusinessId, MULTI.retail.id);
  assert.equal(calls(), { auth: before.auth + 1, entity: before.entity + 1 });
  h.sim.faults.clear();
});

test("a concurrent duplicate with different content is refused at once", async () => {
  h.sim.faults.set("authenticate", { kind: "latency", ms: 800, times: 1 });
  let firstDone = false;
  const first = h.post("/sub-businesses", credentials("inactive@demo.ng", "demo-password-3"), "onboard-concurrent-02");
  void first.then(() => (firstDone = true));
  await sleep(80);
  const second = await h.post("/sub-businesses", { ...credentials("inactive@demo.ng", "demo-password-3"), tin: "33333333-0001" }, "onboard-concurrent-02");
  await expectProblem(second, 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  assert.not.ok(firstDone, "refused without waiting for the first request");
  await expectProblem(await first, 422, "GW_REG_ENTITY_INACTIVE");
  h.sim.faults.clear();
});

test("an in-progress record whose holder died → 409 GW_ONBOARDING_NOT_RESUMABLE, no regulator call", async () => {
  const secret = deriveIdempotencySecret(h.tg.config.regulator.apiSecret);
  const key = "onboard-dead-owner-01";
  const body = credentials("notemplate@demo.ng", "demo-password-4");
  const fp = onboardingFingerprint(secret, body);
  const startedAtMs = Date.now() - 6 * 60_000;
  await h.store.collection<IdempotencyDoc>(COLLECTIONS.idempotency).insert({
    _id: idempotencyId(secret, "demo", "POST /sub-businesses", key),
    scope: "demo",
    route: "POST /sub-businesses",
    fingerprint: { email: fp.email ?? null, tin: fp.tin ?? null, crypto: null },
    status: "in_progress",
    owner: "dead-request",
    startedAt: new Date(startedAtMs).toISOString(),
    startedAtMs,
    completedAt: null,
    response: null,
    expiresAtMs: startedAtMs + 86_400_000,
  });
  const before = calls();
  const problem = await expectProblem(await h.post("/sub-businesses", body, key), 409, "GW_ONBOARDING_NOT_RESUMABLE");
  assert.is(problem.retry.strategy, "DO_NOT_RETRY");
  await expectProblem(await h.post("/sub-businesses", body, key), 409, "GW_ONBOARDING_NOT_RESUMABLE");
  assert.equal(calls(), before);
});

test("a stale record whose onboarding did land is recovered: 200 with the represented business", async () => {
  const secret = deriveIdempotencySecret(h.tg.config.regulator.apiSecret);
  // The first onboarding completed (key onboard-demo-0001); pretend its completion write was lost.
  const id = idempotencyId(secret, "demo", "POST /sub-businesses", "onboard-demo-0001");
  const coll = h.store.collection<IdempotencyDoc>(COLLECTIONS.idempotency);
  await coll.findOneAndUpdate({ _id: id }, { $set: { status: "in_progress", response: null, startedAtMs: Date.now() - 10 * 60_000 } });
  const before = calls();
  const res = await h.post("/sub-businesses", credentials(TAXPAYER.email, TAXPAYER.password), "onboard-demo-0001");
  const sb = await expectJson(res, 200);
  assert.is(sb.gatewaySubBusinessId, TAXPAYER.businessId);
  assert.equal(calls(), before);
  assert.is((await coll.get(id))!.status, "completed");
});

test("missing credentials → 400 GW_REG_CREDENTIALS_REQUIRED (same key), before any regulator call or claim", async () => {
  const before = calls();
  for (const body of [{}, { regulatorCredentials: {} }, { regulatorCredentials: { email: TAXPAYER.email } }, { regulatorCredentials: { email: "", password: "x" } }]) {
    const problem = await expectProblem(await h.post("/sub-businesses", body, "onboard-nocreds-01"), 400, "GW_REG_CREDENTIALS_REQUIRED");
    assert.is(problem.retry.strategy, "AFTER_CORRECTION");
    assert.is(problem.retry.sameIdempotencyKey, true);
    assert.not.ok(JSON.stringify(problem).includes(TAXPAYER.email));
  }
  assert.equal(calls(), before);
  // The same key then works with every field.
  const ok = await h.post("/sub-businesses", credentials("inactive@demo.ng", "demo-password-3"), "onboard-nocreds-01");
  await expectProblem(ok, 422, "GW_REG_ENTITY_INACTIVE");
});

test("the route contract: key rules, strict body, server-managed fields, quota class, OpenAPI, any mode", async () => {
  await expectProblem(await h.post("/sub-businesses", credentials(TAXPAYER.email, TAXPAYER.password), null), 400, "GW_IDEMPOTENCY_KEY_REQUIRED");
  await expectProblem(await h.post("/sub-businesses", credentials(TAXPAYER.email, TAXPAYER.password), "short"), 400, "GW_IDEMPOTENCY_KEY_INVALID");
  // A header sent empty is a key of the wrong format, not a missing one.
  const empty = await expectProblem(await h.post("/sub-businesses", credentials(TAXPAYER.email, TAXPAYER.password), ""), 400, "GW_IDEMPOTENCY_KEY_INVALID");
  assert.is(empty.title, "Key format wrong");
  const bad = await expectProblem(
    await h.post("/sub-businesses", { regulatorCredentials: { email: 5, password: "x", otp: "1" }, tin: "", extra: true }, "onboard-bad-body-1"),
    400,
    "GW_REQUEST_VALIDATION_FAILED",
  );
  assert.equal(bad.errors.map((e: { pointer: string }) => e.pointer).sort(), ["/extra", "/regulatorCredentials/email", "/regulatorCredentials/otp", "/tin"]);
  await expectProblem(
    await h.post("/sub-businesses", { ...credentials(TAXPAYER.email, TAXPAYER.password), state: "LIVE" }, "onboard-bad-body-2"),
    400,
    "GW_REQUEST_SERVER_FIELD_SUPPLIED",
  );
  await expectProblem(await h.post("/sub-businesses", {}, "onboard-bad-key-01", { apiKey: "gw_wrong_key_000" }), 401, "GW_API_KEY_INVALID");
  const routes = h.tg.gateway.routes.routes().filter((r) => r.plugin === "onboarding");
  assert.is(routes.length, 9, "6 public routes, 3 operator routes (review list, decision, migration)");
  assert.ok(routes.every((r) => r.quota === "management"));
  assert.ok(routes.filter((r) => r.decl.method === "POST").every((r) => r.decl.idempotent === true));
  const doc = (await (await h.tg.call("/openapi.json", { host: "localhost" })).json()) as { paths: Record<string, Record<string, unknown>> };
  assert.ok(doc.paths["/sub-businesses"]?.post && doc.paths["/sub-businesses"]?.get);
  assert.ok(doc.paths["/admin/sub-businesses/{gatewaySubBusinessId}/identity-migrations"]?.post);
  // Available in Stored mode too (onboarding is mode-independent).
  // The Stored demo domain is its own business's (one approved domain per business): it represents another taxpayer.
  const stored = await h.post("/sub-businesses", credentials("example-template@demo.ng", "demo-password-6"), "onboard-stored-0001", { host: STORED });
  assert.is(stored.status, 201, await stored.clone().text());
});

test.after(() => h.close());
test.run();
