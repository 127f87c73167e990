/**
 * The directory's store really goes away (the MongoDB-compatible server is killed under a gateway
 * serving real HTTP): no request is answered from an earlier authorization. A customer key →
 * 503 GW_TENANT_AUTHORIZATION_UNAVAILABLE while the domain record is still fresh in the cache; an
 * operator key → 503 GW_AUTH_CONTEXT_UNAVAILABLE; once the cached domain record is stale →
 * 503 GW_DOMAIN_REGISTRY_UNAVAILABLE; never a pass, never a 401 or 404.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { health } from "../../plugins/health/plugin.ts";
import { ADMIN_KEY, DEMO_KEY, PASSTHROUGH, startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";
import { probeHits, probePlugin } from "../support/probe-plugin.ts";
import { httpCall } from "../support/raw-http.ts";
import { isMongoSkip, startMongoServer, type MongoServerHandle } from "../support/mongo-server.ts";
import { reportRedisSkip } from "../support/redis-server.ts";

const mongo = await startMongoServer();
if (isMongoSkip(mongo)) reportRedisSkip("directory outage e2e (MongoDB-compatible server missing)", mongo.skip);
else if (!mongo.owned) reportRedisSkip("directory outage e2e", "MONGODB_URI points at a server this test cannot stop");
else run(mongo);

function run(server: MongoServerHandle): void {
  /** The directory's clock: real time plus an offset the test moves (no 60 s sleeps). */
  let offsetMs = 0;
  let tg: TestGateway;
  let url = "";

  test.before(async () => {
    const config = testConfig({
      storage: { driver: "mongodb", uri: server.uri, dbName: server.dbName() },
      dependencies: { storeTimeoutMs: 500 },
      directory: { domainCacheTtlMs: 60_000 },
    });
    tg = await startTestGateway({ config, plugins: [health, probePlugin], now: () => Date.now() + offsetMs });
    url = (await tg.listen()).url;
  });
  test.after(async () => {
    await tg.close();
    await server.stop();
  });

  const echo = () => httpCall(url, "/probe/counted", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } });
  const admin = () => httpCall(url, "/probe/admin", { host: PASSTHROUGH, headers: { "x-admin-api-key": ADMIN_KEY } });
  const code = (r: { json(): unknown }) => (r.json() as { code: string }).code;

  test("with the store up: the customer and the operator are authorized", async () => {
    assert.is((await echo()).status, 200);
    assert.is((await admin()).status, 200);
  });

  test("store killed, domain record still cached: 503 GW_TENANT_AUTHORIZATION_UNAVAILABLE / GW_AUTH_CONTEXT_UNAVAILABLE, nothing runs", async () => {
    await server.stop();
    probeHits.reset();
    for (let i = 0; i < 3; i++) {
      const res = await echo();
      assert.is(res.status, 503, res.text);
      assert.is(code(res), "GW_TENANT_AUTHORIZATION_UNAVAILABLE");
      assert.ok(!res.text.includes("mongodb://"), "no connection string in the answer");
    }
    const op = await admin();
    assert.is(op.status, 503);
    assert.is(code(op), "GW_AUTH_CONTEXT_UNAVAILABLE");
    assert.is(probeHits.count, 0, "no handler ran on an earlier authorization");
  });

  test("once the cached domain record is stale: 503 GW_DOMAIN_REGISTRY_UNAVAILABLE, for known and unknown hosts alike", async () => {
    offsetMs = 61_000;
    const res = await echo();
    assert.is(res.status, 503);
    assert.is(code(res), "GW_DOMAIN_REGISTRY_UNAVAILABLE");
    const unknown = await httpCall(url, "/probe/counted", { host: "unknown.example.ng", headers: { "x-api-key": DEMO_KEY } });
    assert.is(code(unknown), "GW_DOMAIN_REGISTRY_UNAVAILABLE", "not 404: the registry cannot say");
    const live = await httpCall(url, "/health/live", { host: PASSTHROUGH });
    assert.is(live.status, 200, "liveness is not proof of any dependency");
    assert.is(probeHits.count, 0);
  });
}

test.run();
