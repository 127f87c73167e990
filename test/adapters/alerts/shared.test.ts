/**
 * Thresholds shared across processes (the scale-out profile): two engines — two processes — on one
 * real Redis count one dependency's failures together, and exactly one of them notifies the incident
 * and exactly one its recovery. And when the coordination store cannot answer, each engine still
 * decides on its own counters (a Redis outage must itself be alerted).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createMemoryCoordination } from "../../../adapters/coordination/memory.ts";
import { createRedisCoordination } from "../../../adapters/coordination/redis.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { isRedisSkip, reportRedisSkip, startRedisServer } from "../../support/redis-server.ts";
import { engineHarness, fail, succeed } from "./alert-helpers.ts";

const tick = () => new Promise((r) => setImmediate(r));

test("the coordination store is down: 5 local failures still fire, and 5 successes still recover", async () => {
  const down = createMemoryCoordination();
  await down.close(); // every call now fails
  const h = await engineHarness({ coordination: down });
  fail(h.engine, 5, "coordination", "takePermit");
  await h.engine.flush();
  assert.is(h.alerts().length, 1);
  assert.is(h.alerts()[0]!.dependency, "coordination");
  succeed(h.engine, 5, "coordination", "takePermit");
  await h.engine.flush();
  assert.equal(
    h.alerts().map((a) => a.kind),
    ["sustained_failure", "recovered"],
  );
  h.engine.raise({ signal: "quota_unenforceable", dependency: "coordination" });
  await tick();
  assert.is(h.alerts().length, 3, "an immediate signal goes out without the shared cooldown");
  await h.close();
});

const server = await startRedisServer();
if (isRedisSkip(server)) {
  test.run();
  reportRedisSkip("shared alert thresholds", server.skip);
} else {
  const keyPrefix = `gh:alerts-test:${process.pid}:${Date.now().toString(36)}:`;
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  const open = async () => {
    const coordination = await createRedisCoordination({ url: server.url, keyPrefix });
    const { manualClock } = await import("../../support/manual-clock.ts");
    return engineHarness({ coordination, store, clock: manualClock(Date.now()) });
  };

  test("two processes: 3 + 3 failures are 6 consecutive shared failures → exactly one notification; 3 + 3 successes → exactly one recovery", async () => {
    const a = await open();
    const b = await open();
    fail(a.engine, 3, "regulator:LIVE", "transmit");
    fail(b.engine, 3, "regulator:LIVE", "transmit");
    await a.engine.flush();
    assert.is(a.alerts().length + b.alerts().length, 0, "3 failures seen so far by the store: below the threshold");
    await b.engine.flush();
    await a.engine.flush();
    const fired = [...a.alerts(), ...b.alerts()];
    assert.is(fired.length, 1, "one notification for the deployment");
    assert.is(fired[0]!.signal, "dependency_sustained_failure");
    // Both processes keep failing within the cooldown: no second notification.
    fail(a.engine, 5, "regulator:LIVE", "transmit");
    fail(b.engine, 5, "regulator:LIVE", "transmit");
    await a.engine.flush();
    await b.engine.flush();
    assert.is(a.alerts().length + b.alerts().length, 1);
    succeed(a.engine, 3, "regulator:LIVE", "transmit");
    succeed(b.engine, 3, "regulator:LIVE", "transmit");
    await a.engine.flush();
    await b.engine.flush();
    await a.engine.flush();
    const recovered = [...a.alerts(), ...b.alerts()].filter((x) => x.kind === "recovered");
    assert.is(recovered.length, 1, "one recovery notification for the deployment");
    await a.close();
    await b.close();
    await a.coordination.close();
    await b.coordination.close();
  });

  test("two processes raise the same immediate signal: one notification (shared cooldown)", async () => {
    const a = await open();
    const b = await open();
    a.engine.raise({ signal: "routing_loop" });
    // Until the first process has notified (its cooldown is then in Redis), then the second raises.
    for (const end = Date.now() + 5_000; a.alerts().length === 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
    assert.is(a.alerts().length, 1, "the first raise notifies");
    b.engine.raise({ signal: "routing_loop" });
    await new Promise((r) => setTimeout(r, 300));
    assert.is(a.alerts().length + b.alerts().length, 1);
    await a.close();
    await b.close();
    await a.coordination.close();
    await b.coordination.close();
  });

  test.after(() => server.stop());
  test.run();
}
