/**
 * The console during a Redis outage (the coordination store of the SQLite + Redis and MongoDB + Redis
 * deployments): a signed-in operator's overview still draws and names the coordination store as the
 * dependency that is down, and a sign-in (its attempt limit lives in Redis) answers a 503 page that
 * says so, never a 500 or a stack trace. Needs a Redis this suite can kill (one it spawns).
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createRedisCoordination } from "../../../adapters/coordination/redis.ts";
import { startTestGateway } from "../../support/gateway.ts";
import { isRedisSkip, reportRedisSkip, startRedisServer } from "../../support/redis-server.ts";
import { OPERATOR_KEY, VIEWER_PATCH, consoleClient } from "./console-helpers.ts";

const server = await startRedisServer();
if (isRedisSkip(server)) {
  reportRedisSkip("console redis outage", server.skip);
} else {
  const test = suite("console: Redis outage");
  if (!server.owned) {
    process.stdout.write("SKIPPED console redis outage: REDIS_URL points at an external server this suite cannot kill\n");
    test("skipping is allowed only outside CI, with a reason", () => assert.is.not(process.env.CI, "true"));
  }
  test.after(() => server.stop());

  (server.owned ? test : test.skip)("the overview names the coordination store; a sign-in answers a 503 page saying so, no stack", async () => {
    const coordination = await createRedisCoordination({ url: server.url, keyPrefix: `gh:test:console:${process.pid}:` });
    const g = await startTestGateway({ patch: VIEWER_PATCH, ports: { coordination } });
    try {
      const admin = consoleClient(g);
      assert.is((await admin.signIn(OPERATOR_KEY)).status, 303, "signed in while Redis is up");
      await server.kill();

      const overview = await admin.get("/console");
      const page = await overview.text();
      assert.is(overview.status, 200, "the overview still draws");
      assert.match(page, /coordination store \(Redis\)/i, "it names the dependency that is down");
      assert.not.match(page, /\bat .+\.ts:\d+/, "no stack trace");

      const late = consoleClient(g);
      const refused = await late.signIn(OPERATOR_KEY);
      const text = await refused.text();
      assert.is(refused.status, 503, "a sign-in cannot check its attempt limit");
      assert.match(text, /coordination store \(Redis\)/i);
      assert.not.ok(text.includes(OPERATOR_KEY), "never the key");
      assert.not.match(text, /\bat .+\.ts:\d+/, "no stack trace");
      assert.not.ok(late.cookies.has("gh_console"), "no session was issued");
    } finally {
      await g.close();
      await coordination.close();
    }
  });

  test.run();
}
