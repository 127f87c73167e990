/**
 * `/health/dependencies` (spec §4.2, issue 14 item 2): every dependency the snapshot names — domain
 * registry, tenant authorization, management and administrator services, regulator TEST and LIVE
 * (circuit, last observation, contract version), coordination store, alert channel (last delivery,
 * dead letters), processor heartbeat, circuits, in-flight capacity, recovery counts; `unknown` when
 * nothing trustworthy was observed (and `unknown` is not healthy); served from the cache, never a
 * dependency call per request.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createMemoryCoordination } from "../../../adapters/coordination/memory.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { createPolicyRegistry } from "../../../adapters/policies.ts";
import type { AlertChannel, CoordinationStore, DocumentStore } from "../../../adapters/ports.ts";
import { DIRECTORY_COLLECTIONS } from "../../../core/directory-store.ts";
import { OBSERVATION_FRESH_MS } from "../../../plugins/health/plugin.ts";
import { startReceiver } from "../../adapters/alerts/alert-helpers.ts";
import { ADMIN_KEY, PASSTHROUGH, expectProblem, startSigningHarness } from "../signing/signing-helpers.ts";
import { CREDENTIALS, startDemoSimulator } from "../../adapters/regulator/simulator/simulator-helpers.ts";
import { DEMO_KEY, startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { manualClock } from "../../support/manual-clock.ts";
import { withStoreFaults } from "../../support/store-faults.ts";

const snapshot = async (g: TestGateway): Promise<Record<string, any>> => {
  const res = await g.call("/health/dependencies", { host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY } });
  assert.is(res.status, 200);
  return res.json();
};

/** Polls the snapshot (refreshed in the background) until `check` holds; bounded. */
async function until(g: TestGateway, what: string, check: (s: Record<string, any>) => boolean): Promise<Record<string, any>> {
  let s: Record<string, any> = {};
  for (let i = 0; i < 200; i++) {
    s = await snapshot(g);
    if (check(s)) return s;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.unreachable(`${what}; last snapshot: ${JSON.stringify(s)}`);
  return s;
}

test("every item of the snapshot: services, regulator TEST and LIVE with contract version, stores, alert channel, processor heartbeat, circuits, capacity, recovery", async () => {
  const h = await startSigningHarness({ patch: { dependencies: { healthRefreshMs: 50 } } });
  try {
    // The harness onboarded through the gateway: the regulator TEST state and the directory answered.
    const s = await until(h.tg, "a refreshed snapshot", (x) => x.generatedAt !== null && x.recovery !== null);
    const d = s.dependencies;
    assert.equal(Object.keys(d).sort(), [
      "administratorService",
      "alertChannel",
      "coordination",
      "documentStore",
      "domainRegistry",
      "managementService",
      "regulator:LIVE",
      "regulator:TEST",
      "tenantAuthorization",
    ]);
    assert.is(d.documentStore.status, "healthy");
    assert.is(d.documentStore.circuit, "closed");
    assert.is(d.coordination.status, "healthy");
    assert.is(d.domainRegistry.status, "healthy");
    assert.is(d.domainRegistry.basis, "requests", "the customer requests' own evidence");
    assert.is(d.tenantAuthorization.status, "healthy");
    assert.is(d.administratorService.status, "healthy", "this very request was authorized by an operator key");

    const test = d["regulator:TEST"];
    assert.is(test.status, "healthy");
    assert.is(test.configured, true);
    assert.is(test.circuit, "closed");
    assert.is(test.contractVersion, "v1");
    assert.is(test.interfaceVersion, "1.1.6");
    assert.is(test.lastObservation.outcome, "success");
    assert.equal(test.stagedPairs, { inUse: "current", nextStaged: false });
    const live = d["regulator:LIVE"];
    assert.is(live.status, "unknown", "LIVE was never called: nothing trustworthy observed");
    assert.is(live.lastObservation, null);
    assert.is(live.contractVersion, "v1");
    assert.ok(s.unknown.includes("regulator:LIVE"));
    assert.is(s.status, "unknown", "unknown is not healthy: the whole snapshot is not healthy either");

    assert.is(d.alertChannel.status, "healthy");
    assert.equal(d.alertChannel.channels, ["log"]);
    assert.is(d.alertChannel.deadLetters, 0);
    assert.ok(s.processorHeartbeat, "the Stored processor's heartbeat and backlog");
    assert.ok("backlog" in s.processorHeartbeat);
    assert.ok(s.recovery.totals, "recovery counts");
    assert.ok("lastRun" in s.recovery && "open" in s.recovery);
    assert.equal(s.capacity, { inFlight: 0, total: h.tg.config.limits.capacity.total, perDomain: h.tg.config.limits.capacity.perDomain });
    assert.ok(s.circuits.some((c: { dependency: string }) => c.dependency === "regulator:TEST"));

    // A failed regulator call: TEST is unhealthy at once, with the failure class (never a body).
    h.sim.faults.set("resources", { kind: "status", status: 503, times: 1 });
    await expectProblem(await h.call("GET", "/api/v1/invoice/resources/currencies"), 502, "GW_UPSTREAM_UNAVAILABLE");
    const failed = (await snapshot(h.tg)).dependencies["regulator:TEST"];
    assert.is(failed.status, "unhealthy");
    assert.equal(failed.lastObservation.outcome, "failure");
    assert.is(failed.lastObservation.failureClass, "server_error");
  } finally {
    await h.close();
  }
});

test("unknown is not healthy: an observation older than 5 minutes is no longer trusted; a fresh one decides again", async () => {
  const sim = await startDemoSimulator();
  // The circuits' clock: every observation is stamped with it.
  const clock = manualClock(Date.now() - OBSERVATION_FRESH_MS - 60_000);
  const g = await startTestGateway({
    policies: createPolicyRegistry({ clock }),
    patch: { regulator: { apiKey: CREDENTIALS.apiKey, apiSecret: CREDENTIALS.apiSecret, timeoutMs: 1_500 } },
    regulatorBaseUrls: { TEST: sim.url, LIVE: sim.url },
  });
  try {
    const resources = () => g.call("/api/v1/invoice/resources/currencies", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } });
    assert.is((await snapshot(g)).dependencies["regulator:TEST"].status, "unknown", "no observation yet");
    assert.is((await resources()).status, 200);
    const stale = (await snapshot(g)).dependencies["regulator:TEST"];
    assert.is(stale.lastObservation.outcome, "success");
    assert.is(stale.status, "unknown", "a success 6 minutes old proves nothing now");
    clock.advance(OBSERVATION_FRESH_MS + 60_000);
    assert.is((await resources()).status, 200);
    assert.is((await snapshot(g)).dependencies["regulator:TEST"].status, "healthy", "a fresh success");
  } finally {
    await g.close();
    await sim.close();
  }
});

test("the services behind the directory: a failing credential read makes tenant authorization unhealthy with its public code; the domain registry stays healthy", async () => {
  let failCredentials = false;
  const store = withStoreFaults(await createSqliteDocumentStore({ file: ":memory:" }), (collection) =>
    failCredentials && collection === DIRECTORY_COLLECTIONS.credentials ? "before" : null,
  );
  const g = await startTestGateway({ ports: { documentStore: store } });
  try {
    const before = (await snapshot(g)).dependencies;
    assert.is(before.tenantAuthorization.basis, "documentStore_ping", "no customer request yet: the store's ping stands in");
    assert.is((await g.call("/sub-businesses", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } })).status, 200);
    assert.is((await snapshot(g)).dependencies.tenantAuthorization.basis, "requests");
    failCredentials = true;
    await expectProblem(await g.call("/sub-businesses", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } }), 503, "GW_TENANT_AUTHORIZATION_UNAVAILABLE");
    failCredentials = false;
    const s = await snapshot(g);
    assert.is(s.dependencies.tenantAuthorization.status, "unhealthy");
    assert.is(s.dependencies.tenantAuthorization.lastFailureCode, "GW_TENANT_AUTHORIZATION_UNAVAILABLE");
    assert.is(s.dependencies.domainRegistry.status, "healthy", "the domain was resolved");
    assert.ok(s.unhealthy.includes("tenantAuthorization"));
    assert.is(s.status, "unhealthy");
  } finally {
    await g.close();
  }
});

test("the alert channel: a chat webhook that keeps failing shows its last delivery failed and the dead-letter count", async () => {
  const receiver = await startReceiver();
  receiver.plan = [500, 500];
  const g = await startTestGateway({
    patch: {
      dependencies: { healthRefreshMs: 50 },
      alerts: { webhook: { url: receiver.url, attempts: 2, backoffBaseMs: 10, backoffMaxMs: 20 } },
    },
  });
  try {
    const alerts = g.gateway.kit.ports.alerts as AlertChannel;
    alerts.raise({ signal: "routing_loop", code: "GW_ROUTING_LOOP_DETECTED" });
    await new Promise((r) => setImmediate(r));
    await alerts.drain();
    const s = await until(g, "the dead letter in the snapshot", (x) => x.dependencies.alertChannel.deadLetters === 1);
    const a = s.dependencies.alertChannel;
    assert.is(a.status, "unhealthy");
    assert.equal(a.channels, ["log", "webhook"]);
    assert.is(a.webhook.configured, true);
    assert.is(a.webhook.lastDelivery.outcome, "failed");
    assert.not.ok(JSON.stringify(s).includes("secret-token-in-path"), "the webhook URL (a secret) is never shown");

    // The operator lists the dead letter and replays it through the Admin API (the receiver accepts now).
    const operator = { "x-admin-api-key": ADMIN_KEY };
    const list = await g.call("/admin/alerts/dead-letters?status=dead", { host: "localhost", headers: operator });
    assert.is(list.status, 200);
    const [letter] = (await list.json()).data as Array<{ id: string; status: string; attempts: number; alert: { signal: string; code: string } }>;
    assert.equal([letter?.status, letter?.attempts, letter?.alert.signal, letter?.alert.code], ["dead", 2, "routing_loop", "GW_ROUTING_LOOP_DETECTED"]);
    const replay = await g.call(`/admin/alerts/dead-letters/${letter!.id}/replay`, { method: "POST", host: "localhost", headers: { ...operator, "x-idempotency-key": "replay-dead-0001" }, body: {} });
    assert.is(replay.status, 200, await replay.clone().text());
    assert.equal(((await replay.json()) as { delivered: boolean; letter: { status: string } }).letter.status, "replayed");
    assert.is(receiver.bodies.at(-1)!.alert.id, letter!.id, "the receiver got the alert itself");
    const left = await g.call("/admin/alerts/dead-letters?status=dead", { host: "localhost", headers: operator });
    assert.equal((await left.json()).data, []);
  } finally {
    await g.close();
    await receiver.close();
  }
});

test("never fans out: 25 snapshot requests make no ping and no alert-channel read", async () => {
  const counts = { storePings: 0, coordinationPings: 0, alertStatus: 0 };
  const rawStore = await createSqliteDocumentStore({ file: ":memory:" });
  const documentStore: DocumentStore = { kind: rawStore.kind, collection: (n, spec) => rawStore.collection(n, spec), ping: () => (counts.storePings++, rawStore.ping()), close: () => rawStore.close() };
  const rawCoordination = createMemoryCoordination();
  const coordination: CoordinationStore = Object.assign(Object.create(rawCoordination), { ping: () => (counts.coordinationPings++, rawCoordination.ping()) });
  const g = await startTestGateway({ ports: { documentStore, coordination }, patch: { dependencies: { healthRefreshMs: 600_000 } } });
  try {
    const alerts = g.gateway.kit.ports.alerts!;
    const status = alerts.status.bind(alerts);
    alerts.status = () => (counts.alertStatus++, status());
    await snapshot(g);
    const before = { ...counts };
    for (let i = 0; i < 25; i++) await snapshot(g);
    assert.equal(counts, before, "a snapshot request calls no dependency");
  } finally {
    await g.close();
  }
});

test.run();
