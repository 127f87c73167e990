/**
 * Stage 7, auth: x-api-key on gateway routes (key of the hostname's business), Authorization:
 * Bearer on collections routes (collections envelope), x-admin-api-key on operator routes; tenant
 * authorization is fresh on every request and never falls back to an earlier answer; no response
 * ever repeats a key.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import type { Gateway } from "../../core/create-gateway.ts";
import { DIRECTORY_COLLECTIONS, type CredentialDoc } from "../../core/directory-store.ts";
import { expectProblem } from "../support/assertions.ts";
import {
  ADMIN_KEY,
  ALLOWLISTED_KEY,
  BEARER_DEMO,
  BEARER_OTHER,
  DEMO_KEY,
  DEMO_RAW,
  OTHER,
  OTHER_KEY,
  PASSTHROUGH,
  STORED,
  gatewayTracker,
  testConfig,
} from "../support/gateway.ts";
import { probeHits, probePlugin } from "../support/probe-plugin.ts";
import { credentialDoc } from "../support/directory.ts";
import { withStoreFaults } from "../support/store-faults.ts";

/** A collections-envelope error: returns its message. */
async function expectEnvelope(res: Response, status: number): Promise<string> {
  assert.is(res.status, status);
  assert.is(res.headers.get("content-type"), "application/json");
  const body = (await res.json()) as Record<string, any>;
  assert.is(body.statusCode, status);
  assert.ok(Array.isArray(body.errors));
  assert.type(body.message, "string");
  assert.is(res.headers.get("x-request-id"), body.requestId);
  return body.message as string;
}

const ALL_KEYS = [DEMO_KEY, ALLOWLISTED_KEY, OTHER_KEY, ADMIN_KEY, BEARER_DEMO, BEARER_OTHER, "gw_unknown_key_9999", "sk_test_unknown_9999", "admin_wrong_key_9999"];

/** Response text never contains any key (presented or configured). */
async function assertNoKeys(res: Response): Promise<void> {
  const text = await res.clone().text();
  for (const k of ALL_KEYS) assert.not.ok(text.includes(k), `response body repeats a key (${k.slice(0, 6)}…)`);
}

/**
 * A gateway composed as in production on the embedded store, whose credential reads (the first
 * check reads the record, later ones count it unchanged) can be made to fail at run time (`state.down`), with the raw store at hand to change records as another process would.
 */
/** `fastPath: false`: the store answers the key check only asynchronously (as MongoDB does). */
async function gatewayWithStore(options: { fastPath?: boolean } = {}) {
  const state = { down: false };
  const raw = await createSqliteDocumentStore({ file: ":memory:" });
  const store = withStoreFaults(
    raw,
    (collection, method) => (state.down && collection === DIRECTORY_COLLECTIONS.credentials && (method === "get" || method === "count") ? "before" : null),
    options,
  );
  const tg = await start({ plugins: [probePlugin], ports: { documentStore: store } });
  const credentials = raw.collection<CredentialDoc>(DIRECTORY_COLLECTIONS.credentials);
  /** Changes a credential record directly in the store (no notification: keys are never cached). */
  const setCredential = (credentialId: string, set: Partial<CredentialDoc>) =>
    credentials.findOneAndUpdate({ credentialId }, { $set: set, $inc: { rev: 1 } });
  return { gateway: tg.gateway, state, credentials, setCredential, logs: tg.logs };
}

function call(gateway: Gateway, path: string, host: string, headers: Record<string, string>): Promise<Response> {
  return gateway.fetch(new Request(`http://${host}${path}`, { headers: { host, ...headers } }));
}

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("x-api-key missing (or empty) gives 401 GW_AUTH_API_KEY_REQUIRED and the handler never runs", async () => {
  const tg = await start({ plugins: [probePlugin] });
  probeHits.reset();
  for (const headers of [{}, { "x-api-key": "" }, { authorization: `Bearer ${DEMO_KEY}` }] as Array<Record<string, string>>) {
    const res = await tg.call("/probe/counted", { headers });
    await assertNoKeys(res);
    await expectProblem(res, 401, "GW_AUTH_API_KEY_REQUIRED", "AFTER_CORRECTION");
  }
  assert.is(probeHits.count, 0);
  await tg.close();
});

test("an unknown key gives 401 GW_API_KEY_INVALID (AFTER_CORRECTION), without repeating the key", async () => {
  const tg = await start({ plugins: [probePlugin] });
  probeHits.reset();
  for (const key of ["gw_unknown_key_9999", DEMO_KEY.toUpperCase(), DEMO_KEY + "x", DEMO_KEY.slice(0, -1)]) {
    const res = await tg.call("/probe/counted", { headers: { "x-api-key": key } });
    assert.not.ok((await res.clone().text()).includes(key), "key not echoed");
    const body = await expectProblem(res, 401, "GW_API_KEY_INVALID", "AFTER_CORRECTION");
    assert.is(body.action.code, "ROTATE_API_KEY");
  }
  assert.is(probeHits.count, 0);
  await tg.close();
});

test("a key of another business than the hostname's gives 403 GW_AUTH_TENANT_FORBIDDEN", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const cases: Array<[string, string]> = [
    [PASSTHROUGH, OTHER_KEY],
    [STORED, OTHER_KEY],
    [OTHER, DEMO_KEY],
  ];
  for (const [host, key] of cases) {
    const res = await tg.call("/probe/echo", { host, headers: { "x-api-key": key } });
    await assertNoKeys(res);
    await expectProblem(res, 403, "GW_AUTH_TENANT_FORBIDDEN", "AFTER_CORRECTION");
  }
  // Each key works on its own business's hosts.
  const own = await tg.call("/probe/echo", { host: OTHER, headers: { "x-api-key": OTHER_KEY } });
  assert.is(own.status, 200);
  const body = await own.json();
  assert.is(body.businessId, "other");
  assert.is(body.credentialId, "other-primary");
  await tg.close();
});

test("a revoked key is refused like an unknown one (gateway 401 GW_API_KEY_INVALID, collections 401)", async () => {
  const raw = structuredClone(DEMO_RAW) as any;
  raw.businesses[0].gateway.apiKeys.push({ id: "demo-revoked", key: "gw_demo_key_revoked", demoOnly: true, revoked: true });
  raw.businesses[0].collections.apiKeys.push({ id: "demo-collections-revoked", key: "sk_test_demo_revoked", demoOnly: true, revoked: true });
  const tg = await start({ plugins: [probePlugin], patch: { businesses: raw.businesses } });
  const res = await tg.call("/probe/echo", { headers: { "x-api-key": "gw_demo_key_revoked" } });
  assert.not.ok((await res.clone().text()).includes("gw_demo_key_revoked"));
  await expectProblem(res, 401, "GW_API_KEY_INVALID", "AFTER_CORRECTION");
  const unknownMsg = await expectEnvelope(await tg.call("/api/v1/probe", { host: "localhost", headers: { authorization: "Bearer sk_test_unknown_9999" } }), 401);
  const col = await tg.call("/api/v1/probe", { host: "localhost", headers: { authorization: "Bearer sk_test_demo_revoked" } });
  assert.not.ok((await col.clone().text()).includes("sk_test_demo_revoked"));
  assert.is(await expectEnvelope(col, 401), unknownMsg, "revoked reads as 'invalid or revoked', like unknown");
  // The business's other keys are unaffected.
  assert.is((await tg.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY } })).status, 200);
  await tg.close();
});

test("operator routes: a missing, wrong or non-operator x-admin-api-key gives 401 GW_ADMIN_AUTHENTICATION_FAILED (DO_NOT_RETRY)", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const cases: Array<Record<string, string>> = [
    {},
    { "x-admin-api-key": "" },
    { "x-admin-api-key": "admin_wrong_key_9999" },
    { "x-admin-api-key": DEMO_KEY }, // a gateway key is not an operator key
    { "x-admin-api-key": BEARER_DEMO }, // nor is a collections key
    { "x-api-key": ADMIN_KEY }, // the operator key in the customer header does not count
    { authorization: `Bearer ${ADMIN_KEY}` },
  ];
  for (const headers of cases) {
    const res = await tg.call("/probe/admin", { headers });
    await assertNoKeys(res);
    await expectProblem(res, 401, "GW_ADMIN_AUTHENTICATION_FAILED", "DO_NOT_RETRY");
  }
  const ok = await tg.call("/probe/admin", { headers: { "x-admin-api-key": ADMIN_KEY } });
  assert.is(ok.status, 200);
  assert.is((await ok.json()).credentialId, "demo-operator");
  // …and the operator key is not a customer key.
  await expectProblem(await tg.call("/probe/echo", { headers: { "x-api-key": ADMIN_KEY } }), 401, "GW_API_KEY_INVALID", "AFTER_CORRECTION");
  await tg.close();
});

test("collections Bearer: missing or malformed header and unknown key are 401 envelopes with different messages", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const col = (headers: Record<string, string>) => tg.call("/api/v1/probe", { host: "localhost", headers });
  const missing = await expectEnvelope(await col({}), 401);
  for (const authorization of ["Basic x", `Basic ${Buffer.from(`${BEARER_DEMO}:`).toString("base64")}`, "Bearer", "Bearer ", BEARER_DEMO, `Token ${BEARER_DEMO}`]) {
    const res = await col({ authorization });
    await assertNoKeys(res);
    assert.is(await expectEnvelope(res, 401), missing, `malformed: ${authorization.slice(0, 8)}`);
  }
  const unknown = await col({ authorization: "Bearer sk_test_unknown_9999" });
  await assertNoKeys(unknown);
  const unknownMsg = await expectEnvelope(unknown, 401);
  assert.is.not(unknownMsg, missing, "the message says which problem it is");
  // Keys of the other schemes are unknown to Bearer.
  for (const key of [DEMO_KEY, ADMIN_KEY]) {
    const res = await col({ authorization: `Bearer ${key}` });
    await assertNoKeys(res);
    assert.is(await expectEnvelope(res, 401), unknownMsg);
  }
  // x-api-key is not how collections authenticate.
  assert.is(await expectEnvelope(await col({ "x-api-key": BEARER_DEMO }), 401), missing);
  await tg.close();
});

test("collections Bearer: a valid key scopes the request to its business", async () => {
  const tg = await start({ plugins: [probePlugin] });
  for (const [authorization, business] of [
    [`Bearer ${BEARER_DEMO}`, "demo"],
    [`Bearer ${BEARER_OTHER}`, "other"],
    [`bearer ${BEARER_DEMO}`, "demo"],
  ] as const) {
    const res = await tg.call("/api/v1/probe", { host: "localhost", headers: { authorization } });
    assert.is(res.status, 200, authorization.slice(0, 8));
    await assertNoKeys(res);
    const body = await res.json();
    assert.is(body.data.businessId, business);
    assert.is(body.statusCode, 200);
  }
  await tg.close();
});

test("a collections Bearer key is not a gateway key: in x-api-key it is refused", async () => {
  const tg = await start({ plugins: [probePlugin] });
  for (const key of [BEARER_DEMO, BEARER_OTHER]) {
    const res = await tg.call("/probe/echo", { headers: { "x-api-key": key } });
    await assertNoKeys(res);
    await expectProblem(res, 401, "GW_API_KEY_INVALID", "AFTER_CORRECTION");
  }
  await tg.close();
});

test("keys never reach a response body or a log record", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const responses = await Promise.all([
    tg.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY } }),
    tg.call("/probe/echo", { headers: { "x-api-key": "gw_unknown_key_9999" } }),
    tg.call("/probe/echo", { headers: { "x-api-key": OTHER_KEY } }),
    tg.call("/probe/admin", { headers: { "x-admin-api-key": ADMIN_KEY } }),
    tg.call("/probe/admin", { headers: { "x-admin-api-key": "admin_wrong_key_9999" } }),
    tg.call("/api/v1/probe", { host: "localhost", headers: { authorization: `Bearer ${BEARER_DEMO}` } }),
    tg.call("/api/v1/probe", { host: "localhost", headers: { authorization: "Bearer sk_test_unknown_9999" } }),
    tg.call("/probe/boom", { headers: { "x-api-key": DEMO_KEY } }),
  ]);
  for (const res of responses) await assertNoKeys(res);
  const logText = JSON.stringify(tg.logs);
  for (const k of ALL_KEYS) assert.not.ok(logText.includes(k), `a log record contains a key (${k.slice(0, 6)}…)`);
  await tg.close();
});

for (const fastPath of [true, false]) {
  test(`a key record that cannot be read gives 503 GW_TENANT_AUTHORIZATION_UNAVAILABLE (operator key: GW_AUTH_CONTEXT_UNAVAILABLE), never an earlier answer (${fastPath ? "in-process store, answered synchronously" : "store answering asynchronously"})`, async () => {
    const { gateway, state, logs } = await gatewayWithStore({ fastPath });
    probeHits.reset();
    assert.is((await call(gateway, "/probe/counted", PASSTHROUGH, { "x-api-key": DEMO_KEY })).status, 200, "authorized while the store answers");
    state.down = true;
    for (let i = 0; i < 3; i++) {
      const res = await call(gateway, "/probe/counted", PASSTHROUGH, { "x-api-key": DEMO_KEY });
      const body = await expectProblem(res, 503, "GW_TENANT_AUTHORIZATION_UNAVAILABLE", "BACKOFF");
      assert.is(body.retry.sameIdempotencyKey, true);
      assert.not.match(JSON.stringify(body), /injected store failure/, "the cause is not leaked");
    }
    // The operator's key: authorization cannot be verified.
    const admin = await expectProblem(
      await call(gateway, "/probe/admin", PASSTHROUGH, { "x-admin-api-key": ADMIN_KEY }),
      503,
      "GW_AUTH_CONTEXT_UNAVAILABLE",
      "BACKOFF",
    );
    assert.is(admin.retry.sameIdempotencyKey, true);
    const col = await call(gateway, "/api/v1/probe", "localhost", { authorization: `Bearer ${BEARER_DEMO}` });
    assert.is(col.status, 503, "collections: 503 in the envelope");
    assert.is((await col.json()).statusCode, 503);
    assert.is(probeHits.count, 1, "no request ran while authorization was unavailable");
    const why = logs.filter((l) => l.event === "gateway_authorization_unavailable");
    assert.ok(why.length >= 5, "each refusal is logged with its cause");
    for (const k of ALL_KEYS) assert.not.ok(JSON.stringify(why).includes(k), "no key in the log");
    state.down = false;
    assert.is((await call(gateway, "/probe/counted", PASSTHROUGH, { "x-api-key": DEMO_KEY })).status, 200);
    await gateway.close();
  });
}

for (const fastPath of [true, false]) {
  test(`a key revoked in the store is refused on the very next request (no cached authorization; ${fastPath ? "synchronous" : "asynchronous"} key check)`, async () => {
    const { gateway, setCredential, credentials } = await gatewayWithStore({ fastPath });
    assert.is((await call(gateway, "/probe/echo", PASSTHROUGH, { "x-api-key": DEMO_KEY })).status, 200);
    await setCredential("demo-primary", { revoked: true });
    await expectProblem(await call(gateway, "/probe/echo", PASSTHROUGH, { "x-api-key": DEMO_KEY }), 401, "GW_API_KEY_INVALID", "AFTER_CORRECTION");
    await setCredential("demo-operator", { revoked: true });
    await expectProblem(await call(gateway, "/probe/admin", PASSTHROUGH, { "x-admin-api-key": ADMIN_KEY }), 401, "GW_ADMIN_AUTHENTICATION_FAILED", "DO_NOT_RETRY");
    await setCredential("demo-primary", { revoked: false });
    assert.is((await call(gateway, "/probe/echo", PASSTHROUGH, { "x-api-key": DEMO_KEY })).status, 200, "un-revoked: accepted again");
    // Even a hand edit of the store that forgets to bump the record's rev is seen at once.
    await credentials.findOneAndUpdate({ credentialId: "demo-primary" }, { $set: { revoked: true } });
    await expectProblem(await call(gateway, "/probe/echo", PASSTHROUGH, { "x-api-key": DEMO_KEY }), 401, "GW_API_KEY_INVALID", "AFTER_CORRECTION");
    await gateway.close();
  });
}

test("a key past its expiresAt is refused like a revoked one; before it, it works", async () => {
  const { gateway, setCredential } = await gatewayWithStore();
  await setCredential("demo-primary", { expiresAt: Date.now() + 60_000 });
  assert.is((await call(gateway, "/probe/echo", PASSTHROUGH, { "x-api-key": DEMO_KEY })).status, 200, "valid until its deadline");
  await setCredential("demo-primary", { expiresAt: Date.now() - 1 });
  await expectProblem(await call(gateway, "/probe/echo", PASSTHROUGH, { "x-api-key": DEMO_KEY }), 401, "GW_API_KEY_INVALID", "AFTER_CORRECTION");
  const col = await call(gateway, "/api/v1/probe", "localhost", { authorization: `Bearer ${BEARER_DEMO}` });
  assert.is(col.status, 200, "other keys are unaffected");
  await gateway.close();
});

test("an unreadable key record gives 503 GW_TENANT_AUTHORIZATION_UNAVAILABLE (no valid result), not a pass or a 401", async () => {
  const { gateway, setCredential } = await gatewayWithStore();
  await setCredential("demo-primary", { scheme: "telepathy" as never });
  probeHits.reset();
  await expectProblem(await call(gateway, "/probe/counted", PASSTHROUGH, { "x-api-key": DEMO_KEY }), 503, "GW_TENANT_AUTHORIZATION_UNAVAILABLE", "BACKOFF");
  assert.is(probeHits.count, 0);
  await gateway.close();
});

test("a collections key whose business the directory does not know gives 503 GW_AUTH_CONTEXT_UNAVAILABLE", async () => {
  const { gateway, credentials } = await gatewayWithStore();
  const orphan = "sk_test_orphan_0001";
  await credentials.insert(credentialDoc(orphan, { credentialId: "orphan-collections", scheme: "bearer", businessId: "ghost" }));
  const res = await call(gateway, "/api/v1/probe", "localhost", { authorization: `Bearer ${orphan}` });
  assert.is(res.status, 503);
  const body = await res.json();
  assert.is(body.statusCode, 503);
  assert.not.ok(JSON.stringify(body).includes(orphan));
  await gateway.close();
});

test.run();
