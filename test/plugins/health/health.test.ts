/** The health plugin: public liveness and readiness on every host, operator-only cached snapshot. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { CoordinationStore } from "../../../adapters/ports.ts";
import { createMemoryCoordination } from "../../../adapters/coordination/memory.ts";
import { composeGateway } from "../../../boot/compose.ts";
import { createLogger } from "../../../core/log.ts";
import { plugins } from "../../../plugins/index.ts";
import { ADMIN_KEY, DEMO_KEY, PASSTHROUGH, STORED, startTestGateway, testConfig } from "../../support/gateway.ts";

/** The real in-process coordination store, with its pings counted (and breakable). */
function countingCoordination() {
  const inner = createMemoryCoordination();
  const counter = { pings: 0, broken: false };
  const store: CoordinationStore = {
    kind: inner.kind,
    takePermit: (k, l, w) => inner.takePermit(k, l, w),
    acquireLease: (k, o, t) => inner.acquireLease(k, o, t),
    releaseLease: (k, o) => inner.releaseLease(k, o),
    adjustInFlight: (k, d, t) => inner.adjustInFlight(k, d, t),
    publish: (c, m) => inner.publish(c, m),
    subscribe: (c, h) => inner.subscribe(c, h),
    ping: async () => {
      counter.pings++;
      if (counter.broken) throw new Error("coordination down");
      return inner.ping();
    },
    close: () => inner.close(),
  };
  return { store, counter };
}

test("/health and /health/live answer { status: ok } on every host, without credentials", async () => {
  const tg = await startTestGateway({ plugins });
  for (const host of [PASSTHROUGH, STORED, "localhost", "collections.demo.localhost", "unprovisioned.example"]) {
    for (const path of ["/health", "/health/live"]) {
      const res = await tg.call(path, { host });
      assert.is(res.status, 200, `${host}${path}`);
      assert.equal(await res.json(), { status: "ok" });
      assert.ok(res.headers.get("x-request-id"));
    }
  }
  await tg.close();
});

test("/health/ready: 503 not_ready before startup completes, 200 ready after", async () => {
  const gateway = await composeGateway(testConfig(), { log: createLogger({ level: "silent" }), plugins });
  const req = () => gateway.fetch(new Request("http://localhost/health/ready"));
  const before = await req();
  assert.is(before.status, 503);
  assert.equal(await before.json(), { status: "not_ready", reasons: ["starting"] });
  await gateway.startWorkers();
  const after = await req();
  assert.is(after.status, 200);
  assert.equal(await after.json(), { status: "ready" });
  await gateway.close();
});

test("/health/ready includes the coordination-store check and caches it (no ping storm)", async () => {
  const { store, counter } = countingCoordination();
  const tg = await startTestGateway({ plugins, ports: { coordination: store } });
  const pingsAtStart = counter.pings;
  for (let i = 0; i < 20; i++) assert.is((await tg.call("/health/ready", { host: "localhost" })).status, 200);
  assert.ok(counter.pings - pingsAtStart <= 1, `20 probes caused ${counter.pings - pingsAtStart} pings`);
  counter.broken = true;
  await new Promise((r) => setTimeout(r, 1_100)); // let the 1 s readiness cache expire
  const res = await tg.call("/health/ready", { host: "localhost" });
  assert.is(res.status, 503);
  assert.equal(await res.json(), { status: "not_ready", reasons: ["coordination_store_unavailable"] });
  await tg.close();
});

test("/health/dependencies needs the operator key (gateway and collections keys are refused)", async () => {
  const tg = await startTestGateway({ plugins });
  const attempts: Record<string, string>[] = [{}, { "x-admin-api-key": "wrong" }, { "x-admin-api-key": DEMO_KEY }, { "x-api-key": ADMIN_KEY }];
  for (const headers of attempts) {
    const res = await tg.call("/health/dependencies", { host: "localhost", headers });
    assert.is(res.status, 401);
    assert.is((await res.json()).code, "GW_ADMIN_AUTHENTICATION_FAILED");
  }
  await tg.close();
});

test("/health/dependencies serves the cached snapshot: stores, circuits, in-flight; never pings per request", async () => {
  const { store, counter } = countingCoordination();
  const tg = await startTestGateway({ plugins, ports: { coordination: store } });
  const pings = counter.pings;
  let snap: Record<string, any> = {};
  for (let i = 0; i < 25; i++) {
    const res = await tg.call("/health/dependencies", { host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY } });
    assert.is(res.status, 200);
    snap = await res.json();
  }
  assert.is(counter.pings, pings, "a snapshot request must not fan out to dependencies");
  assert.ok(snap.generatedAt, "refreshed once at startup");
  assert.is(snap.stores.coordination.status, "healthy");
  assert.is(snap.stores.documentStore.status, "healthy");
  assert.is(snap.stores.documentStore.kind, "sqlite-memory");
  assert.equal(
    snap.circuits.map((c: { dependency: string }) => c.dependency),
    ["coordination", "documentStore"],
  );
  for (const c of snap.circuits) assert.is(c.state, "closed");
  // Health routes skip the capacity guard, so they neither count nor get refused when it is full.
  assert.equal(snap.inFlight, { total: 0, perDomain: {} });
  assert.is(snap.draining, false);
  await tg.close();
});

test.run();
