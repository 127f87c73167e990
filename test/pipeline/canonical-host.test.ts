/**
 * Stage 1, canonical host: Host canonicalisation, domain resolution (approved / not provisioned /
 * registry unavailable), any-host paths, and the trusted-edge proof with the client address it
 * supplies (direct mode: the socket's).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import type { Gateway } from "../../core/create-gateway.ts";
import { DIRECTORY_COLLECTIONS } from "../../core/directory-store.ts";
import { plugins } from "../../plugins/index.ts";
import { expectProblem } from "../support/assertions.ts";
import {
  ADMIN_KEY,
  DEMO_KEY,
  DEMO_RAW,
  PASSTHROUGH,
  STORED,
  STORED_BUSINESS,
  STORED_KEY,
  TRUSTED_EDGE as EDGE,
  gatewayTracker,
  rawRequest,
  testConfig,
} from "../support/gateway.ts";
import { probeHits, probePlugin } from "../support/probe-plugin.ts";
import { withStoreFaults } from "../support/store-faults.ts";

const EDGE_OK = { "x-edge-secret": EDGE.secret };

/**
 * A gateway, composed as in production on the embedded store, whose domain-record reads fail while
 * `state.down` (a registry outage), and whose directory clock can be moved (`state.offsetMs`).
 */
async function gatewayWithRegistry(patch: Record<string, unknown> = {}) {
  const state = { down: false, offsetMs: 0 };
  const raw = await createSqliteDocumentStore({ file: ":memory:" });
  const store = withStoreFaults(raw, (collection, method) =>
    state.down && collection === DIRECTORY_COLLECTIONS.domains && method === "get" ? "before" : null,
  );
  const tg = await start({ patch, plugins: [...plugins, probePlugin], ports: { documentStore: store }, now: () => Date.now() + state.offsetMs });
  return { gateway: tg.gateway, logs: tg.logs, state };
}

function call(gateway: Gateway, path: string, host: string, headers: Record<string, string> = {}): Promise<Response> {
  return gateway.fetch(new Request(`http://${host}${path}`, { headers: { host, ...headers } }));
}

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("Host case, port and trailing dots are canonicalised before the domain is resolved", async () => {
  const tg = await start({ plugins: [probePlugin] });
  for (const host of ["PassThrough.Demo.Localhost.:3000", "PASSTHROUGH.DEMO.LOCALHOST", "passthrough.demo.localhost..", "passthrough.demo.localhost:8443"]) {
    const res = await tg.call("/probe/echo", { host, headers: { "x-api-key": DEMO_KEY } });
    assert.is(res.status, 200, host);
    const body = await res.json();
    assert.is(body.host, PASSTHROUGH, host);
    assert.is(body.businessId, "demo");
    assert.is(body.mode, "passthrough");
  }
  const stored = await (await tg.call("/probe/echo", { host: "Stored.Demo.LocalHost.", headers: { "x-api-key": DEMO_KEY } })).json();
  assert.is(stored.host, STORED);
  assert.is(stored.mode, "stored");
  // The completion log records the canonical host, never the raw header.
  const done = tg.logs.filter((l) => l.event === "gateway_request_completed");
  assert.ok(done.length >= 5);
  assert.ok(done.every((l) => l.host === PASSTHROUGH || l.host === STORED));
  await tg.close();
});

test("the raw Host header on the wire is canonicalised too (real HTTP)", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const server = await tg.listen();
  const res = await rawRequest({
    port: server.port,
    head: ["GET /probe/echo HTTP/1.1", "Host: PassThrough.Demo.Localhost.:3000", `x-api-key: ${DEMO_KEY}`, "Connection: close"],
  });
  assert.is(res.status, 200);
  assert.is(JSON.parse(res.body).host, PASSTHROUGH);
  await tg.close();
});

test("an unknown host gets 404 GW_DOMAIN_NOT_PROVISIONED before any authentication", async () => {
  const tg = await start({ plugins: [probePlugin] });
  probeHits.reset();
  for (const host of ["unknown.example.ng", "passthrough.demo.localhost.evil.example", "x.passthrough.demo.localhost", "demo.localhost"]) {
    const res = await tg.call("/probe/counted", { host, headers: { "x-api-key": DEMO_KEY } });
    const body = await expectProblem(res, 404, "GW_DOMAIN_NOT_PROVISIONED", "AFTER_CORRECTION");
    assert.is(body.path, "/probe/counted");
  }
  // Without a key it is still the host that is refused, not the missing key.
  await expectProblem(await tg.call("/probe/echo", { host: "unknown.example.ng" }), 404, "GW_DOMAIN_NOT_PROVISIONED", "AFTER_CORRECTION");
  assert.is(probeHits.count, 0, "the handler never ran");
  await tg.close();
});

test("health paths answer on every host, including an unknown one", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin] });
  for (const host of ["unknown.example.ng", PASSTHROUGH, "localhost", "Unknown.Example.NG.:80"]) {
    for (const path of ["/health", "/health/live"]) {
      const res = await tg.call(path, { host });
      assert.is(res.status, 200, `${path} on ${host}`);
      assert.equal(await res.json(), { status: "ok" });
    }
  }
  await tg.close();
});

test("a domain with approved: false is not provisioned, even with its owner's valid key", async () => {
  const raw = structuredClone(DEMO_RAW) as any;
  raw.businesses.push({
    id: "demo-pending",
    name: "Demo Pending Ltd",
    state: "TEST",
    gateway: {
      apiKeys: [{ id: "demo-pending-primary", key: "gw_demo_key_pending", demoOnly: true }],
      domains: [{ host: "pending.demo.localhost", mode: "passthrough", approved: false }],
      wallet: { openingBalance: "0.00" },
    },
  });
  raw.businesses.find((b: { id: string }) => b.id === STORED_BUSINESS).gateway.domains[0].approved = false; // stored.demo.localhost
  const tg = await start({ plugins: [probePlugin], patch: { businesses: raw.businesses } });
  for (const [host, key] of [["pending.demo.localhost", "gw_demo_key_pending"], [STORED, STORED_KEY]]) {
    await expectProblem(
      await tg.call("/probe/echo", { host, headers: { "x-api-key": key! } }),
      404,
      "GW_DOMAIN_NOT_PROVISIONED",
      "AFTER_CORRECTION",
    );
  }
  // An approved domain still works.
  assert.is((await tg.call("/probe/echo", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } })).status, 200);
  await tg.close();
});

test("a domain registry that cannot answer gives 503 GW_DOMAIN_REGISTRY_UNAVAILABLE, never a pass or a 404", async () => {
  const { gateway, logs, state } = await gatewayWithRegistry();
  state.down = true; // nothing is cached yet: the first request must read the store
  probeHits.reset();
  const res = await call(gateway, "/probe/counted", PASSTHROUGH, { "x-api-key": DEMO_KEY });
  const body = await expectProblem(res, 503, "GW_DOMAIN_REGISTRY_UNAVAILABLE", "BACKOFF");
  assert.is(body.retry.sameIdempotencyKey, true);
  assert.not.match(JSON.stringify(body), /injected store failure/, "the cause is not leaked");
  assert.is(probeHits.count, 0, "the handler never ran");
  const done = logs.find((l) => l.event === "gateway_request_completed" && l.requestId === body.requestId);
  assert.is(done?.code, "GW_DOMAIN_REGISTRY_UNAVAILABLE");
  assert.ok(logs.some((l) => l.event === "gateway_domain_registry_unavailable" && l.requestId === body.requestId), "the cause is logged");
  // An unknown host is not "not provisioned" while the registry cannot say so.
  await expectProblem(await call(gateway, "/probe/echo", "unknown.example.ng", { "x-api-key": DEMO_KEY }), 503, "GW_DOMAIN_REGISTRY_UNAVAILABLE", "BACKOFF");
  // A collections host answers in the collections envelope (its clients read nothing else; found by the topology test).
  const col = await call(gateway, "/api/v1/payment-link", "collections.demo.localhost", { authorization: "Bearer sk_test_demo_0001" });
  assert.is(col.status, 503);
  assert.match(col.headers.get("content-type") ?? "", /^application\/json/);
  const envelope = (await col.json()) as { statusCode: number; requestId: string; message: string };
  assert.is(envelope.statusCode, 503);
  assert.is(envelope.requestId, col.headers.get("x-request-id"));
  state.down = false;
  assert.is((await call(gateway, "/probe/counted", PASSTHROUGH, { "x-api-key": DEMO_KEY })).status, 200, "served again once the store answers");
  await gateway.close();
});

test("the domain record is cached for directory.domainCacheTtlMs: fresh, an outage does not stop requests; stale, 503 and never the old record", async () => {
  const { gateway, state } = await gatewayWithRegistry({ directory: { domainCacheTtlMs: 5_000 } });
  assert.is((await call(gateway, "/probe/echo", PASSTHROUGH, { "x-api-key": DEMO_KEY })).status, 200, "loads and caches the record");
  state.down = true;
  assert.is((await call(gateway, "/probe/echo", PASSTHROUGH, { "x-api-key": DEMO_KEY })).status, 200, "fresh cached configuration");
  state.offsetMs = 5_001;
  await expectProblem(await call(gateway, "/probe/echo", PASSTHROUGH, { "x-api-key": DEMO_KEY }), 503, "GW_DOMAIN_REGISTRY_UNAVAILABLE", "BACKOFF");
  state.down = false;
  assert.is((await call(gateway, "/probe/echo", PASSTHROUGH, { "x-api-key": DEMO_KEY })).status, 200);
  await gateway.close();
});

test("liveness answers while the domain registry is unavailable (health is not proof of any dependency)", async () => {
  const { gateway, state } = await gatewayWithRegistry();
  state.down = true;
  for (const path of ["/health", "/health/live"]) {
    const res = await call(gateway, path, PASSTHROUGH);
    assert.is(res.status, 200, path);
    assert.equal(await res.json(), { status: "ok" });
  }
  await gateway.close();
});

test("trusted edge: a missing or wrong edge secret gives 403 GW_EDGE_VERIFICATION_FAILED", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { edge: EDGE } });
  probeHits.reset();
  const cases: Array<Record<string, string>> = [
    {},
    { "x-edge-secret": "" },
    { "x-edge-secret": "edge-secret-012345678" },
    { "x-edge-secret": "EDGE-SECRET-0123456789" },
    { "x-edge-secret": `${EDGE.secret} ` + "x" },
    { "x-gatehouse-edge-secret": EDGE.secret }, // the default header name is not the configured one
  ];
  for (const headers of cases) {
    const res = await tg.call("/probe/counted", { headers: { ...headers, "x-api-key": DEMO_KEY, "x-edge-client-ip": "10.1.2.3" } });
    const body = await expectProblem(res, 403, "GW_EDGE_VERIFICATION_FAILED", "DO_NOT_RETRY");
    assert.not.ok(JSON.stringify(body).includes(EDGE.secret), "the secret is never echoed");
  }
  assert.is(probeHits.count, 0, "the handler never ran");
  await tg.close();
});

test("trusted edge: the client address comes from the edge header; X-Forwarded-For is ignored", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { edge: EDGE } });
  const echo = async (headers: Record<string, string>) => {
    const res = await tg.call("/probe/echo", { headers: { ...EDGE_OK, "x-api-key": DEMO_KEY, ...headers } });
    assert.is(res.status, 200);
    return (await res.json()).clientAddress as string | null;
  };
  assert.is(await echo({ "x-edge-client-ip": "10.1.2.3" }), "10.1.2.3");
  assert.is(await echo({ "x-edge-client-ip": "10.1.2.3", "x-forwarded-for": "10.9.9.9" }), "10.1.2.3");
  assert.is(await echo({ "x-forwarded-for": "10.9.9.9" }), null, "no edge address: none, never X-Forwarded-For");
  assert.is(await echo({ "x-edge-client-ip": " 10.1.2.3 " }), "10.1.2.3");
  assert.is(await echo({ "x-edge-client-ip": "::ffff:10.1.2.3" }), "10.1.2.3", "IPv4-mapped IPv6 is normalised");
  assert.is(await echo({ "x-edge-client-ip": "2001:db8::1" }), "2001:db8::1");
  assert.is(await echo({ "x-edge-client-ip": "10.1.2" }), null, "malformed: no address");
  assert.is(await echo({ "x-edge-client-ip": "10.1.2.3, 10.9.9.9" }), null, "a list is not an address");
  await tg.close();
});

test("trusted edge: public health answers without edge proof; the operator snapshot needs the verified edge", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin], patch: { edge: EDGE } });
  for (const host of [PASSTHROUGH, "unknown.example.ng"]) {
    const res = await tg.call("/health", { host });
    assert.is(res.status, 200, host);
  }
  // Spec §4.2 health semantics: /health/dependencies is private: verified edge plus x-admin-api-key.
  const unproven = await tg.call("/health/dependencies", { headers: { "x-admin-api-key": ADMIN_KEY } });
  await expectProblem(unproven, 403, "GW_EDGE_VERIFICATION_FAILED", "DO_NOT_RETRY");
  const proven = await tg.call("/health/dependencies", { headers: { ...EDGE_OK, "x-admin-api-key": ADMIN_KEY } });
  assert.is(proven.status, 200);
  await tg.close();
});

test("direct mode over real HTTP: the client address is the socket's, never a header's", async () => {
  const tg = await start({ plugins: [probePlugin] });
  assert.is(tg.config.edge.mode, "direct");
  const server = await tg.listen();
  for (const extra of [[], ["X-Forwarded-For: 10.9.9.9"], ["X-Gatehouse-Client-IP: 10.9.9.9", "X-Real-IP: 10.9.9.9"]]) {
    const res = await rawRequest({
      port: server.port,
      head: ["GET /probe/echo HTTP/1.1", `Host: ${PASSTHROUGH}`, `x-api-key: ${DEMO_KEY}`, ...extra, "Connection: close"],
    });
    assert.is(res.status, 200);
    assert.is(JSON.parse(res.body).clientAddress, "127.0.0.1", extra.join(","));
  }
  await tg.close();
});

test.run();
