/**
 * The onboarding invariants on the MongoDB document store (jongodb, or MONGODB_URI): the same plugin
 * code, where uniqueness and compare-and-set come from the database — one regulator call for
 * concurrent duplicates, one representation per regulator identity, one pending review, one rotation
 * per proof, cursor pagination, and a migration refused by the identity index.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createMongoDocumentStore } from "../../../adapters/document-store/mongodb.ts";
import { isMongoSkip, startMongoServer } from "../../support/mongo-server.ts";
import {
  ALL_TAXPAYER_SECRETS,
  MULTI,
  OTHER,
  OTHER_KEY,
  TAXPAYER,
  credentials,
  demoEntity,
  entityAnswer,
  expectJson,
  expectProblem,
  sleep,
  startOnboardingHarness,
} from "./onboarding-helpers.ts";

const server = await startMongoServer();
if (isMongoSkip(server)) {
  test.skip(`MongoDB onboarding paths (${server.skip})`, () => {});
  test.run();
} else {
  const h = await startOnboardingHarness({
    documentStore: () => createMongoDocumentStore({ uri: server.uri, dbName: server.dbName() }),
  });
  const TAX = TAXPAYER.businessId as string;

  test("concurrent duplicates of one onboarding: one regulator call, 201 + 200 with one body", async () => {
    h.sim.faults.set("authenticate", { kind: "latency", ms: 300, times: 1 });
    const calls = h.sim.state.calls("authenticate");
    const [a, b] = await Promise.all([
      h.post("/sub-businesses", credentials(TAXPAYER.email, TAXPAYER.password), "mongo-onboard-0001"),
      sleep(40).then(() => h.post("/sub-businesses", credentials(TAXPAYER.email, TAXPAYER.password), "mongo-onboard-0001")),
    ]);
    assert.equal([a.status, b.status].sort(), [200, 201]);
    assert.equal(await a.json(), await b.json());
    assert.is(h.sim.state.calls("authenticate"), calls + 1);
  });

  test("one representation per regulator identity: concurrent onboardings from two businesses → one wins", async () => {
    const body = { ...credentials(MULTI.email, MULTI.password), tin: MULTI.retail.tin };
    const [a, b] = await Promise.all([
      h.post("/sub-businesses", body, "mongo-race-demo-01"),
      h.post("/sub-businesses", body, "mongo-race-other-01", { apiKey: OTHER_KEY, host: OTHER }),
    ]);
    assert.equal([a.status, b.status].sort(), [201, 409]);
    const loser = a.status === 409 ? a : b;
    await expectProblem(loser, 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
    await expectJson(await h.post("/sub-businesses", { ...credentials(MULTI.email, MULTI.password), tin: MULTI.logistics.tin }, "mongo-onboard-0003"), 201);
  });

  test("cursor pagination", async () => {
    const all = await expectJson(await h.get("/sub-businesses"), 200);
    const demoCount = all.data.length;
    assert.ok(demoCount >= 2);
    const p1 = await expectJson(await h.get("/sub-businesses?limit=1"), 200);
    const p2 = await expectJson(await h.get(`/sub-businesses?limit=1&cursor=${p1.nextCursor}`), 200);
    assert.is.not(p1.data[0].gatewaySubBusinessId, p2.data[0].gatewaySubBusinessId);
    assert.equal(
      [p1.data[0].gatewaySubBusinessId, p2.data[0].gatewaySubBusinessId],
      all.data.slice(0, 2).map((s: { gatewaySubBusinessId: string }) => s.gatewaySubBusinessId),
    );
  });

  test("concurrent reverifications of one drift: one pending review; approve → version 2", async () => {
    h.sim.faults.set("entity", demoEntity({ name: "Mongo Renamed Ltd" }));
    const results = await Promise.all(
      [1, 2, 3].map((i) => h.post(`/sub-businesses/${TAX}/identity-reverification`, credentials(TAXPAYER.email, TAXPAYER.password), `mongo-rv-000${i}`)),
    );
    const bodies = await Promise.all(results.map((r) => expectJson(r, 200)));
    assert.is(new Set(bodies.map((b) => b.reviewId)).size, 1);
    assert.equal(bodies.map((b) => b.status).sort(), ["review_created", "review_pending", "review_pending"]);
    const res = await expectJson(
      await h.admin(`/admin/sub-businesses/${TAX}/identity-reviews/${bodies[0].reviewId}/decision`, { decision: "approve" }, "mongo-decide-01"),
      200,
    );
    assert.is(res.subBusiness.identityVersion, 2);
    h.sim.faults.clear();
  });

  test("a migration onto an already represented regulator business is refused by the unique index", async () => {
    // Whoever won the retail race, both multi businesses are represented; demo's own multi business
    // is reported by the regulator under the id of the other one.
    const mine = (await expectJson(await h.get("/sub-businesses"), 200)).data.some(
      (s: { gatewaySubBusinessId: string }) => s.gatewaySubBusinessId === MULTI.retail.id,
    )
      ? MULTI.retail
      : MULTI.logistics;
    const taken = mine === MULTI.retail ? MULTI.logistics : MULTI.retail;
    h.sim.faults.set(
      "entity",
      entityAnswer({
        id: MULTI.entityId,
        reference: MULTI.entityReference,
        businesses: [{ id: taken.id, name: mine.name, tin: mine.tin, serviceId: mine.serviceId }],
      }),
    );
    const r = await expectJson(
      await h.post(`/sub-businesses/${mine.id}/identity-reverification`, credentials(MULTI.email, MULTI.password), "mongo-rv-0010"),
      200,
    );
    assert.equal(r.changedFields, ["regulatorBusinessId"]);
    await expectProblem(
      await h.admin(`/admin/sub-businesses/${mine.id}/identity-migrations`, { reviewId: r.reviewId }, "mongo-migrate-01"),
      409,
      "GW_IDEMPOTENCY_CONTENT_CONFLICT",
    );
    const v = await expectJson(await h.get(`/sub-businesses/${mine.id}/identity-versions`), 200);
    assert.is(v.pendingReviewId, r.reviewId);
    assert.is((await expectJson(await h.get(`/sub-businesses/${mine.id}`), 200)).externalBusinessId, mine.id);
    h.sim.faults.clear();
  });

  test("two rotations on one proof: exactly one applies", async () => {
    const results = await Promise.all(
      [1, 2, 3].map((n) =>
        h.post(`/sub-businesses/${TAX}/reg-crypto-material`, { publicKey: `pk-${n}`, certificate: `c-${n}`, expectedCryptoVersion: 0 }, `mongo-rot-000${n}`),
      ),
    );
    assert.equal(results.map((r) => r.status).sort(), [200, 409, 409]);
    assert.is((await expectJson(await h.get(`/sub-businesses/${TAX}`), 200)).cryptoVersion, 1);
  });

  test("nothing secret in the MongoDB documents or the logs", async () => {
    const store = await h.dumpStore();
    const logs = JSON.stringify(h.tg.logs);
    assert.ok(store.includes(TAX));
    for (const s of ALL_TAXPAYER_SECRETS) {
      assert.not.ok(store.includes(s), `store contains ${s}`);
      assert.not.ok(logs.includes(s), `logs contain ${s}`);
    }
  });

  test.after(async () => {
    await h.close();
    await server.stop();
  });
  test.run();
}
