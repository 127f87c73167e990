/**
 * Identity reverification (spec §2.2, §3.1) and the operator routes: unchanged (initial / none),
 * additive drift → review, the same drift again → review_pending, another drift → conflict, operator
 * approve / reject, protected drift (TIN, business ID, entity ID) → audited migration only.
 * The regulator's identity changes through the simulator's `custom` faults on its entity and
 * authentication routes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  ADMIN_KEY,
  MULTI,
  OTHER,
  OTHER_KEY,
  PASSTHROUGH,
  TAXPAYER,
  authAnswer,
  credentials,
  demoEntity,
  entityAnswer,
  expectJson,
  expectProblem,
  startOnboardingHarness,
} from "./onboarding-helpers.ts";

const h = await startOnboardingHarness();
const ID: string = TAXPAYER.businessId;
const CREDS = credentials(TAXPAYER.email, TAXPAYER.password);
let k = 0;
const key = () => `reverify-${String(++k).padStart(4, "0")}`;
const reverify = (id: string = ID, body: unknown = CREDS, idemKey = key(), init: { apiKey?: string; host?: string } = {}) =>
  h.post(`/sub-businesses/${id}/identity-reverification`, body, idemKey, init);
const decide = (reviewId: string, decision: string, idemKey = key(), init: { adminKey?: string | null; host?: string } = {}) =>
  h.admin(`/admin/sub-businesses/${ID}/identity-reviews/${reviewId}/decision`, { decision }, idemKey, init);
const migrateReview = (reviewId: string, id: string = ID, idemKey = key()) =>
  h.admin(`/admin/sub-businesses/${id}/identity-migrations`, { reviewId }, idemKey);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NEW_NAME = "Demo Trading Nigeria Ltd";

test("setup: the demo taxpayer and both multi businesses are represented", async () => {
  await expectJson(await h.post("/sub-businesses", CREDS, "rv-setup-0001"), 201);
  for (const b of [MULTI.retail, MULTI.logistics])
    await expectJson(await h.post("/sub-businesses", { ...credentials(MULTI.email, MULTI.password), tin: b.tin }, `rv-setup-${b.tin}`), 201);
});

test("no drift at the first reverification → 200 unchanged / initial; a replay answers the same without the regulator", async () => {
  const idemKey = key();
  const res = await reverify(ID, CREDS, idemKey);
  const r = await expectJson(res, 200);
  assert.match(r.reviewId, UUID);
  assert.equal(r, {
    gatewaySubBusinessId: ID,
    reviewId: r.reviewId,
    version: 1,
    status: "unchanged",
    driftClass: "initial",
    changedFields: [],
    requiresProtectedMigration: false,
    observedIdentity: {
      entityId: TAXPAYER.entityId,
      entityReference: TAXPAYER.entityReference,
      regulatorBusinessId: ID,
      businessName: TAXPAYER.businessName,
      tin: TAXPAYER.tin,
      irnTemplate: TAXPAYER.irnTemplate,
      active: true,
    },
  });
  const calls = h.sim.state.totalCalls();
  assert.equal(await expectJson(await reverify(ID, CREDS, idemKey), 200), r);
  assert.equal(await expectJson(await reverify(ID, {}, idemKey), 200), r, "a completed replay may omit the credentials");
  assert.is(h.sim.state.totalCalls(), calls);
  await expectProblem(await reverify(MULTI.retail.id, CREDS, idemKey), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  await expectProblem(await reverify(ID, credentials(MULTI.email, MULTI.password), idemKey), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
});

test("reverification refusals: credentials, ownership, key, regulator verification", async () => {
  const calls = h.sim.state.totalCalls();
  await expectProblem(await reverify(ID, {}), 400, "GW_REG_CREDENTIALS_REQUIRED");
  await expectProblem(await reverify(ID, { regulatorCredentials: { password: "x" } }), 400, "GW_REG_CREDENTIALS_REQUIRED");
  await expectProblem(await reverify(ID, CREDS, key(), { apiKey: OTHER_KEY, host: OTHER }), 403, "GW_SUB_BUSINESS_FORBIDDEN");
  await expectProblem(await reverify("no-such-business", CREDS), 404, "GW_SUB_BUSINESS_NOT_FOUND");
  await expectProblem(await h.post(`/sub-businesses/${ID}/identity-reverification`, CREDS, null), 400, "GW_IDEMPOTENCY_KEY_REQUIRED");
  assert.is(h.sim.state.totalCalls(), calls, "refused before any regulator call");
  h.sim.faults.set("entity", { kind: "reject_credentials", times: 1 });
  await expectProblem(await reverify(), 503, "GW_REG_VERIFICATION_UNAVAILABLE");
  await expectProblem(await reverify(ID, credentials(TAXPAYER.email, "wrong-password")), 422, "GW_REG_LOGIN_INVALID");
});

let additiveReview = "";

test("additive drift (name) → review_created / additive; the same drift again → review_pending with the same reviewId", async () => {
  h.sim.faults.set("entity", demoEntity({ name: NEW_NAME }));
  const r = await expectJson(await reverify(), 200);
  assert.is(r.status, "review_created");
  assert.is(r.driftClass, "additive");
  assert.equal(r.changedFields, ["businessName"]);
  assert.is(r.requiresProtectedMigration, false);
  assert.is(r.version, 1);
  assert.is(r.observedIdentity.businessName, NEW_NAME);
  assert.match(r.reviewId, UUID);
  additiveReview = r.reviewId;
  const again = await expectJson(await reverify(), 200);
  assert.equal(again, { ...r, status: "review_pending" });
  // Nothing is applied by the public route.
  assert.is((await expectJson(await h.get(`/sub-businesses/${ID}`), 200)).registeredName, TAXPAYER.businessName);
});

test("another change while a review is pending → 409 GW_IDENTITY_REVIEW_CONFLICT", async () => {
  h.sim.faults.set("entity", demoEntity({ name: NEW_NAME, irnTemplate: "{{invoice_id(e.g:INV00XXX)}}-94ND90NR-{{YYYYMMDD(e.g:20250629)}}" }));
  const p = await expectProblem(await reverify(), 409, "GW_IDENTITY_REVIEW_CONFLICT");
  assert.is(p.retry.strategy, "AFTER_CORRECTION");
  h.sim.faults.clear("entity");
  await expectProblem(await reverify(), 409, "GW_IDENTITY_REVIEW_CONFLICT");
});

test("identity-versions lists the versions and reviews (stored data only)", async () => {
  const calls = h.sim.state.totalCalls();
  const v = await expectJson(await h.get(`/sub-businesses/${ID}/identity-versions`), 200);
  assert.is(v.gatewaySubBusinessId, ID);
  assert.is(v.currentVersion, 1);
  assert.is(v.pendingReviewId, additiveReview);
  assert.equal(v.versions.map((x: { version: number; source: string; current: boolean }) => [x.version, x.source, x.current]), [[1, "onboarding", true]]);
  assert.is(v.versions[0].identity.businessName, TAXPAYER.businessName);
  assert.is(v.reviews[0].reviewId, additiveReview);
  assert.is(v.reviews[0].status, "pending");
  assert.ok(v.reviews.some((r: { status: string }) => r.status === "unchanged"));
  assert.equal(v.migrations, []);
  assert.not.ok("decidedBy" in v.reviews[0], "operator credential ids are not shown to merchants");
  assert.is(h.sim.state.totalCalls(), calls);
});

test("operator decision: authentication, unknown review or business, body validation", async () => {
  await expectProblem(await decide(additiveReview, "approve", key(), { adminKey: null }), 401, "GW_ADMIN_AUTHENTICATION_FAILED");
  await expectProblem(await decide(additiveReview, "approve", key(), { adminKey: "admin_wrong_key_01" }), 401, "GW_ADMIN_AUTHENTICATION_FAILED");
  await expectProblem(await decide("00000000-0000-4000-8000-000000000000", "approve"), 404, "GW_IDENTITY_REVIEW_NOT_FOUND");
  await expectProblem(
    await h.admin(`/admin/sub-businesses/${MULTI.retail.id}/identity-reviews/${additiveReview}/decision`, { decision: "approve" }, key()),
    404,
    "GW_IDENTITY_REVIEW_NOT_FOUND",
  );
  await expectProblem(
    await h.admin(`/admin/sub-businesses/nobody/identity-reviews/${additiveReview}/decision`, { decision: "approve" }, key()),
    404,
    "GW_SUB_BUSINESS_NOT_FOUND",
  );
  await expectProblem(await decide(additiveReview, "maybe"), 400, "GW_REQUEST_VALIDATION_FAILED");
  await expectProblem(await decide("not-a-uuid", "approve"), 400, "GW_REQUEST_PATH_PARAMETER_INVALID");
  await expectProblem(await h.admin(`/admin/sub-businesses/${ID}/identity-reviews/${additiveReview}/decision`, { decision: "approve" }, "bad"), 400, "GW_IDEMPOTENCY_KEY_INVALID");
  // A customer API key is not an operator credential.
  const res = await h.tg.call(`/admin/sub-businesses/${ID}/identity-reviews/${additiveReview}/decision`, {
    method: "POST",
    host: PASSTHROUGH,
    headers: { "x-api-key": "gw_demo_key_0001", "x-idempotency-key": key() },
    body: { decision: "approve" },
  });
  await expectProblem(res, 401, "GW_ADMIN_AUTHENTICATION_FAILED");
});

test("approve additive → identity version 2; deciding again → 409 GW_IDENTITY_REVIEW_CONFLICT; replay → same answer", async () => {
  const idemKey = key();
  // Operator routes answer on any host (here an approved gateway domain).
  const res = await expectJson(await decide(additiveReview, "approve", idemKey, { host: PASSTHROUGH }), 200);
  assert.is(res.review.status, "approved");
  assert.is(res.review.appliedVersion, 2);
  assert.is(res.review.decidedBy, "demo-operator");
  assert.is(res.subBusiness.identityVersion, 2);
  assert.is(res.subBusiness.registeredName, NEW_NAME);
  assert.is(res.subBusiness.regulatorIdentity.businessName, NEW_NAME);
  assert.is(res.subBusiness.gatewaySubBusinessId, ID);
  assert.equal(await expectJson(await decide(additiveReview, "approve", idemKey, { host: "ops.example.net" }), 200), res);
  await expectProblem(await decide(additiveReview, "approve"), 409, "GW_IDENTITY_REVIEW_CONFLICT");
  await expectProblem(await decide(additiveReview, "reject"), 409, "GW_IDENTITY_REVIEW_CONFLICT");
  const sb = await expectJson(await h.get(`/sub-businesses/${ID}`), 200);
  assert.is(sb.registeredName, NEW_NAME);
  assert.is(sb.identityVersion, 2);
  const v = await expectJson(await h.get(`/sub-businesses/${ID}/identity-versions`), 200);
  assert.equal(v.versions.map((x: { version: number; source: string; reviewId: string | null }) => [x.version, x.source, x.reviewId]), [
    [1, "onboarding", null],
    [2, "review", additiveReview],
  ]);
  assert.is(v.pendingReviewId, null);
});

test("after an approved change, no drift → unchanged / none (version 2)", async () => {
  h.sim.faults.set("entity", demoEntity({ name: NEW_NAME }));
  const r = await expectJson(await reverify(), 200);
  assert.is(r.status, "unchanged");
  assert.is(r.driftClass, "none");
  assert.is(r.version, 2);
});

test("additive drift of the active flag, rejected by the operator: nothing changes", async () => {
  h.sim.faults.set("entity", demoEntity({ name: NEW_NAME, businessActive: false }));
  const r = await expectJson(await reverify(), 200);
  assert.is(r.status, "review_created");
  assert.equal(r.changedFields, ["active"]);
  assert.is(r.driftClass, "additive");
  assert.is(r.observedIdentity.active, false);
  const res = await expectJson(await decide(r.reviewId, "reject"), 200);
  assert.is(res.review.status, "rejected");
  assert.is(res.subBusiness.identityVersion, 2);
  assert.is(res.subBusiness.regulatorIdentity.active, true);
  // The drift is still there: a new reverification opens a new review.
  const again = await expectJson(await reverify(), 200);
  assert.is(again.status, "review_created");
  assert.is.not(again.reviewId, r.reviewId);
  await expectJson(await decide(again.reviewId, "reject"), 200);
});

test("protected drift (TIN) → requiresProtectedMigration; approve → 409 GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED; migration applies it", async () => {
  const NEW_TIN = "12345678-0099";
  h.sim.faults.set("entity", demoEntity({ name: NEW_NAME, tin: NEW_TIN }));
  const r = await expectJson(await reverify(), 200);
  assert.is(r.status, "review_created");
  assert.is(r.driftClass, "protected");
  assert.equal(r.changedFields, ["tin"]);
  assert.is(r.requiresProtectedMigration, true);
  const p = await expectProblem(await decide(r.reviewId, "approve"), 409, "GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED");
  assert.is(p.retry.strategy, "AFTER_CORRECTION");
  assert.is((await expectJson(await h.get(`/sub-businesses/${ID}`), 200)).tin, TAXPAYER.tin, "never applied by the public route");
  const m = await expectJson(await migrateReview(r.reviewId), 200);
  assert.is(m.review.status, "migrated");
  assert.is(m.subBusiness.gatewaySubBusinessId, ID);
  assert.is(m.subBusiness.externalBusinessId, ID);
  assert.is(m.subBusiness.tin, NEW_TIN);
  assert.is(m.subBusiness.identityVersion, 3);
  assert.is(m.migration.operatorCredentialId, "demo-operator");
  assert.equal(m.migration.from, { version: 2, externalBusinessId: ID, entityId: TAXPAYER.entityId, tin: TAXPAYER.tin });
  assert.equal(m.migration.to, { version: 3, externalBusinessId: ID, entityId: TAXPAYER.entityId, tin: NEW_TIN });
  assert.match(m.migration.at, /Z$/);
  await expectProblem(await migrateReview(r.reviewId), 409, "GW_IDENTITY_REVIEW_CONFLICT");
});

test("protected drift (business ID and entity ID) → audited migration: gatewaySubBusinessId stays, externalBusinessId moves", async () => {
  const NEW_BUSINESS = "7f3a9c2e-0000-4e6f-8a0b-2c3d4e5f6a99";
  const NEW_ENTITY = "0b4e6f2a-0000-4e8b-9a3f-7d2c1e0f9a99";
  h.sim.faults.set("authenticate", authAnswer(NEW_ENTITY));
  h.sim.faults.set("entity", demoEntity({ id: NEW_ENTITY, businessId: NEW_BUSINESS, name: NEW_NAME, tin: "12345678-0099" }));
  const r = await expectJson(await reverify(), 200);
  assert.equal(r.changedFields, ["entityId", "regulatorBusinessId"]);
  assert.is(r.driftClass, "protected");
  // An additive review cannot go through the migration route, and an unknown review is not found.
  await expectProblem(await migrateReview("00000000-0000-4000-8000-000000000000"), 404, "GW_IDENTITY_REVIEW_NOT_FOUND");
  const m = await expectJson(await migrateReview(r.reviewId), 200);
  assert.is(m.subBusiness.gatewaySubBusinessId, ID);
  assert.is(m.subBusiness.externalBusinessId, NEW_BUSINESS);
  assert.is(m.subBusiness.regulatorIdentity.regulatorBusinessId, NEW_BUSINESS);
  assert.is(m.subBusiness.regulatorIdentity.entityId, NEW_ENTITY);
  assert.equal(m.migration.from, { version: 3, externalBusinessId: ID, entityId: TAXPAYER.entityId, tin: "12345678-0099" });
  assert.equal(m.migration.to, { version: 4, externalBusinessId: NEW_BUSINESS, entityId: NEW_ENTITY, tin: "12345678-0099" });
  // The published id keeps working; the new identity is unchanged now.
  const sb = await expectJson(await h.get(`/sub-businesses/${ID}`), 200);
  assert.is(sb.externalBusinessId, NEW_BUSINESS);
  const again = await expectJson(await reverify(), 200);
  assert.is(again.status, "unchanged");
  assert.is(again.version, 4);
  const v = await expectJson(await h.get(`/sub-businesses/${ID}/identity-versions`), 200);
  assert.equal(v.versions.map((x: { version: number; source: string }) => [x.version, x.source]), [
    [1, "onboarding"],
    [2, "review"],
    [3, "migration"],
    [4, "migration"],
  ]);
  assert.is(v.migrations.length, 2);
  assert.not.ok("operatorCredentialId" in v.migrations[0]);
  h.sim.faults.clear();
  // The old regulator business id stays the published id of this represented business: onboarding
  // it again is refused (spec §7.2 exception 2), as is the new identity.
  await expectProblem(await h.post("/sub-businesses", CREDS, "rv-reonboard-01"), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
});

test("a migration onto a regulator business already represented → 409 GW_IDEMPOTENCY_CONTENT_CONFLICT; the review stays pending", async () => {
  // The regulator now answers the retail business under the logistics business's id (already represented).
  h.sim.faults.set(
    "entity",
    entityAnswer({
      id: MULTI.entityId,
      reference: MULTI.entityReference,
      businesses: [{ id: MULTI.logistics.id, name: MULTI.retail.name, tin: MULTI.retail.tin, serviceId: MULTI.retail.serviceId }],
    }),
  );
  const r = await expectJson(await reverify(MULTI.retail.id, credentials(MULTI.email, MULTI.password)), 200);
  assert.equal(r.changedFields, ["regulatorBusinessId"]);
  const p = await expectProblem(await migrateReview(r.reviewId, MULTI.retail.id), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  assert.is(p.retry.strategy, "DO_NOT_RETRY");
  const v = await expectJson(await h.get(`/sub-businesses/${MULTI.retail.id}/identity-versions`), 200);
  assert.is(v.pendingReviewId, r.reviewId);
  assert.is(v.currentVersion, 1);
  assert.is((await expectJson(await h.get(`/sub-businesses/${MULTI.retail.id}`), 200)).externalBusinessId, MULTI.retail.id);
  const rejected = await expectJson(
    await h.admin(`/admin/sub-businesses/${MULTI.retail.id}/identity-reviews/${r.reviewId}/decision`, { decision: "reject" }, key()),
    200,
  );
  assert.is(rejected.review.status, "rejected");
  h.sim.faults.clear();
});

test("additive review through the migration route → 409 GW_IDENTITY_REVIEW_CONFLICT", async () => {
  h.sim.faults.set(
    "entity",
    entityAnswer({
      id: MULTI.entityId,
      reference: MULTI.entityReference,
      businesses: [
        { id: MULTI.retail.id, name: "Multi Retail Renamed", tin: MULTI.retail.tin, serviceId: MULTI.retail.serviceId },
        { id: MULTI.logistics.id, name: MULTI.logistics.name, tin: MULTI.logistics.tin, serviceId: MULTI.logistics.serviceId },
      ],
    }),
  );
  const r = await expectJson(await reverify(MULTI.retail.id, credentials(MULTI.email, MULTI.password)), 200);
  assert.is(r.driftClass, "additive");
  await expectProblem(await migrateReview(r.reviewId, MULTI.retail.id), 409, "GW_IDENTITY_REVIEW_CONFLICT");
  h.sim.faults.clear();
});

test("operator review list: pending by default, by status and business, oldest first, paged; x-admin-api-key", async () => {
  const list = async (query: string, adminKey: string | null = ADMIN_KEY) =>
    h.tg.call(`/admin/identity-reviews${query}`, { host: "localhost", headers: adminKey ? { "x-admin-api-key": adminKey } : {} });
  const pending = await expectJson(await list(""), 200);
  assert.ok(pending.data.length >= 1);
  assert.ok(pending.data.every((r: { status: string; businessId: string }) => r.status === "pending" && r.businessId === "demo"));
  const decided = await expectJson(await list("?status=approved&businessId=demo"), 200);
  assert.ok(decided.data.length >= 1 && decided.data.every((r: { status: string; decidedBy: string }) => r.status === "approved" && r.decidedBy === "demo-operator"));
  const first = await expectJson(await list("?status=rejected&limit=1"), 200);
  assert.is(first.data.length, 1);
  assert.equal((await expectJson(await list("?businessId=other"), 200)).data, []);
  await expectProblem(await list("?status=lost"), 400, "GW_REQUEST_VALIDATION_FAILED");
  await expectProblem(await list("", null), 401, "GW_ADMIN_AUTHENTICATION_FAILED");
});

test("operator routes: quota class management, x-admin-api-key, any host", () => {
  const admin = h.tg.gateway.routes.routes().filter((r) => r.plugin === "onboarding" && r.decl.auth === "admin");
  assert.equal(admin.map((r) => r.id).sort(), [
    "GET /admin/identity-reviews",
    "POST /admin/sub-businesses/:gatewaySubBusinessId/identity-migrations",
    "POST /admin/sub-businesses/:gatewaySubBusinessId/identity-reviews/:reviewId/decision",
  ]);
  assert.ok(admin.every((r) => r.surface === "any" && r.quota === "management"));
  assert.ok(admin.every((r) => Boolean(r.decl.idempotent) === (r.decl.method === "POST")), "the mutations are idempotent");
  assert.ok(ADMIN_KEY);
});

test.after(() => h.close());
test.run();
