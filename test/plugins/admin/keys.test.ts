/**
 * Admin API, keys (real HTTP): create (the plain key answered once, a replay gives the same key id
 * and never a second key), roll (the old key valid until the given time), revoke (refused by the
 * next request), list/read without hashes or plain keys, the audit log without secrets, bad input,
 * and store failures that leave nothing half-applied.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DIRECTORY_COLLECTIONS, type AuditDoc, type CredentialDoc } from "../../../core/directory-store.ts";
import { ADMIN_KEY, DEMO_KEY, PASSTHROUGH, STORED, OTHER } from "../../support/gateway.ts";
import { problem, startAdminHarness, type AdminHarness } from "./admin-helpers.ts";

let h: AdminHarness;
test.before(async () => {
  h = await startAdminHarness();
});
test.after(async () => {
  await h.close();
});
test.before.each(() => h.fault(null));

/** Every secret a test created: nothing may ever show them again. */
const plainKeys: string[] = [];

const works = async (key: string, host = PASSTHROUGH) => (await h.customer("/probe/echo", key, host)).status;

test("create a gateway key: 201 with the plain key once; it works at once on the business's domains", async () => {
  const res = await h.admin("POST", "/admin/keys", { scheme: "gateway", businessId: "demo", id: "demo-ci", ipWhitelisted: [] }, "create-key-0001");
  assert.is(res.status, 201, res.text);
  assert.is(res.headers["cache-control"], "no-store");
  const { key, plainKey } = res.body;
  plainKeys.push(plainKey);
  assert.match(plainKey, /^gw_test_[A-Za-z0-9_-]{32}$/);
  assert.is(key.id, "demo-ci");
  assert.is(key.scheme, "gateway");
  assert.is(key.businessId, "demo");
  assert.is(key.status, "active");
  assert.is(key.hint, `gw_test_…${plainKey.slice(-4)}`);
  assert.not.ok("plainKeyNote" in res.body);
  assert.is(await works(plainKey), 200);
  problem(await h.customer("/probe/echo", plainKey, STORED), 403, "GW_AUTH_TENANT_FORBIDDEN"); // demo-stored's domain
  problem(await h.customer("/probe/echo", plainKey, OTHER), 403, "GW_AUTH_TENANT_FORBIDDEN");
});

test("a create replayed with the same idempotency key answers the same key id, no plain key, and makes no second key", async () => {
  const body = { scheme: "gateway", businessId: "demo", ipWhitelisted: ["10.0.0.0/8"] };
  const first = await h.admin("POST", "/admin/keys", body, "create-key-0002");
  assert.is(first.status, 201);
  plainKeys.push(first.body.plainKey);
  const replay = await h.admin("POST", "/admin/keys", body, "create-key-0002");
  assert.is(replay.status, 200);
  assert.is(replay.body.key.id, first.body.key.id);
  assert.is(replay.body.plainKey, null);
  assert.match(replay.body.plainKeyNote, /shown once/);
  const stored = (await h.all<CredentialDoc>(DIRECTORY_COLLECTIONS.credentials)).filter((c) => c.businessId === "demo" && c.ipWhitelisted.includes("10.0.0.0/8"));
  assert.is(stored.length, 1, "one key, not two");
  // The same idempotency key with other content is refused.
  problem(await h.admin("POST", "/admin/keys", { ...body, ipWhitelisted: [] }, "create-key-0002"), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
});

test("collections and operator keys: each works only in its own header", async () => {
  const col = await h.admin("POST", "/admin/keys", { scheme: "collections", businessId: "other" }, "create-key-0003");
  assert.is(col.status, 201, col.text);
  plainKeys.push(col.body.plainKey);
  assert.match(col.body.plainKey, /^sk_test_/);
  const ok = await h.customer("/api/v1/probe", "", "localhost", { headers: { authorization: `Bearer ${col.body.plainKey}` } });
  assert.is(ok.status, 200);
  assert.is(ok.body.data.businessId, "other");
  const op = await h.admin("POST", "/admin/keys", { scheme: "operator", id: "ops-second" }, "create-key-0004");
  assert.is(op.status, 201, op.text);
  plainKeys.push(op.body.plainKey);
  assert.is(op.body.key.businessId, null);
  const asOperator = await h.admin("GET", "/admin/keys/ops-second", undefined, undefined, { "x-admin-api-key": op.body.plainKey });
  assert.is(asOperator.status, 200);
  problem(await h.customer("/probe/echo", op.body.plainKey, PASSTHROUGH), 401, "GW_API_KEY_INVALID");
});

test("bad input: 400 with violations; unknown business → 404; a taken id → 400; operator keys have no business", async () => {
  const missing = problem(await h.admin("POST", "/admin/keys", { businessId: "demo", colour: "red" }, "bad-key-0001"), 400, "GW_REQUEST_VALIDATION_FAILED");
  const pointers = missing.errors.map((e: { pointer: string }) => e.pointer).sort();
  assert.equal(pointers, ["/colour", "/scheme"]);
  problem(await h.admin("POST", "/admin/keys", { scheme: "gateway" }, "bad-key-0002"), 400, "GW_REQUEST_VALIDATION_FAILED");
  problem(await h.admin("POST", "/admin/keys", { scheme: "operator", businessId: "demo" }, "bad-key-0003"), 400, "GW_REQUEST_VALIDATION_FAILED");
  problem(await h.admin("POST", "/admin/keys", { scheme: "gateway", businessId: "nobody" }, "bad-key-0004"), 404, "GW_OPERATION_NOT_FOUND");
  problem(await h.admin("POST", "/admin/keys", { scheme: "gateway", businessId: "demo", id: "demo-primary" }, "bad-key-0005"), 400, "GW_REQUEST_VALIDATION_FAILED");
  problem(await h.admin("POST", "/admin/keys", { scheme: "gateway", businessId: "demo", expiresAt: "2001-01-01T00:00:00Z" }, "bad-key-0006"), 400, "GW_REQUEST_VALIDATION_FAILED");
  problem(await h.admin("POST", "/admin/keys", { scheme: "gateway", businessId: "demo" }), 400, "GW_IDEMPOTENCY_KEY_REQUIRED");
  problem(await h.admin("GET", "/admin/keys/no-such-key"), 404, "GW_OPERATION_NOT_FOUND");
  problem(await h.admin("POST", "/admin/keys/no-such-key/revoke", {}, "bad-key-0007"), 404, "GW_OPERATION_NOT_FOUND");
  problem(await h.admin("GET", "/admin/keys?status=lost"), 400, "GW_REQUEST_VALIDATION_FAILED");
  // A rejected request released its idempotency key: corrected content may use it.
  const fixed = await h.admin("POST", "/admin/keys", { scheme: "gateway", businessId: "demo", id: "demo-fixed" }, "bad-key-0005");
  assert.is(fixed.status, 201, fixed.text);
  plainKeys.push(fixed.body.plainKey);
});

test("roll: a new key at once, the old key valid until oldKeyExpiresAt, then refused", async () => {
  const created = await h.admin("POST", "/admin/keys", { scheme: "gateway", businessId: "demo", id: "demo-rolling" }, "roll-setup-0001");
  const oldKey = created.body.plainKey;
  plainKeys.push(oldKey);
  const until = new Date(Date.now() + 60 * 60_000).toISOString();
  const rolled = await h.admin("POST", "/admin/keys/demo-rolling/roll", { oldKeyExpiresAt: until }, "roll-key-0001");
  assert.is(rolled.status, 201, rolled.text);
  const newKey = rolled.body.plainKey;
  plainKeys.push(newKey);
  assert.is.not(newKey, oldKey);
  assert.is(rolled.body.key.rolledFrom, "demo-rolling");
  assert.is(rolled.body.previous.id, "demo-rolling");
  assert.is(rolled.body.previous.rolledTo, rolled.body.key.id);
  assert.is(Date.parse(rolled.body.previous.expiresAt), Date.parse(until));
  assert.is(await works(newKey), 200, "the new key works");
  assert.is(await works(oldKey), 200, "the old key works until its deadline");
  // A replay changes nothing and shows no key.
  const replay = await h.admin("POST", "/admin/keys/demo-rolling/roll", { oldKeyExpiresAt: until }, "roll-key-0001");
  assert.is(replay.status, 200);
  assert.is(replay.body.key.id, rolled.body.key.id);
  assert.is(replay.body.plainKey, null);
  // Rolled already: roll the new one instead.
  problem(await h.admin("POST", "/admin/keys/demo-rolling/roll", { oldKeyExpiresAt: until }, "roll-key-0002"), 400, "GW_REQUEST_VALIDATION_FAILED");
  // The new key rolled with a deadline in the past: the old one stops at once.
  const again = await h.admin("POST", `/admin/keys/${rolled.body.key.id}/roll`, { oldKeyExpiresAt: new Date(Date.now() - 1000).toISOString() }, "roll-key-0003");
  assert.is(again.status, 201, again.text);
  plainKeys.push(again.body.plainKey);
  problem(await h.customer("/probe/echo", newKey, PASSTHROUGH), 401, "GW_API_KEY_INVALID");
  assert.is(again.body.previous.status, "expired");
  assert.is(await works(again.body.plainKey), 200);
});

test("revoke: the key is refused by the very next request; a replay answers the same; a revoked key cannot be rolled", async () => {
  const created = await h.admin("POST", "/admin/keys", { scheme: "gateway", businessId: "demo", id: "demo-leaked" }, "revoke-setup-0001");
  plainKeys.push(created.body.plainKey);
  assert.is(await works(created.body.plainKey), 200);
  const revoked = await h.admin("POST", "/admin/keys/demo-leaked/revoke", {}, "revoke-key-0001");
  assert.is(revoked.status, 200, revoked.text);
  assert.is(revoked.body.key.status, "revoked");
  problem(await h.customer("/probe/echo", created.body.plainKey, PASSTHROUGH), 401, "GW_API_KEY_INVALID");
  assert.equal((await h.admin("POST", "/admin/keys/demo-leaked/revoke", {}, "revoke-key-0001")).body, revoked.body);
  problem(await h.admin("POST", "/admin/keys/demo-leaked/roll", { oldKeyExpiresAt: new Date().toISOString() }, "revoke-key-0002"), 400, "GW_REQUEST_VALIDATION_FAILED");
  const list = await h.admin("GET", "/admin/keys?businessId=demo&status=revoked");
  assert.equal(list.body.data.map((k: { id: string }) => k.id), ["demo-leaked"]);
});

test("list and read: ids, hints and states, never a hash or a key; pages with nextCursor", async () => {
  const first = await h.admin("GET", "/admin/keys?limit=2");
  assert.is(first.status, 200);
  assert.is(first.body.data.length, 2);
  assert.type(first.body.nextCursor, "string");
  const seen = [...first.body.data];
  for (let cursor = first.body.nextCursor; cursor; ) {
    const page = await h.admin("GET", `/admin/keys?limit=2&cursor=${cursor}`);
    seen.push(...page.body.data);
    cursor = page.body.nextCursor;
  }
  const ids = seen.map((k) => k.id);
  assert.is(new Set(ids).size, ids.length, "no key twice across pages");
  for (const id of ["demo-primary", "demo-allowlisted", "other-primary", "demo-operator", "demo-collections", "demo-ci"]) assert.ok(ids.includes(id), id);
  const all = JSON.stringify(seen);
  assert.not.match(all, /sha256:/);
  for (const k of [...plainKeys, DEMO_KEY, ADMIN_KEY]) assert.not.ok(all.includes(k), "no plain key in a read");
  const one = await h.admin("GET", "/admin/keys/demo-primary");
  assert.is(one.body.source, "config");
  assert.is(one.body.hint, "…0001");
  const ops = await h.admin("GET", "/admin/keys?scheme=operator");
  assert.ok(ops.body.data.every((k: { scheme: string }) => k.scheme === "operator"));
});

test("the audit log: who, what and when of every change, newest first; no plain key in any audit record or log line", async () => {
  const res = await h.admin("GET", "/admin/audit?limit=100");
  assert.is(res.status, 200);
  const actions = res.body.data.map((a: { action: string }) => a.action);
  for (const a of ["key.create", "key.roll", "key.revoke", "seed.create"]) assert.ok(actions.includes(a), a);
  const revoke = res.body.data.find((a: { action: string }) => a.action === "key.revoke");
  assert.is(revoke.actor, "operator:demo-operator");
  assert.is(revoke.target.id, "demo-leaked");
  assert.type(revoke.requestId, "string");
  assert.ok(Date.parse(res.body.data[0].at) >= Date.parse(res.body.data[res.body.data.length - 1].at), "newest first");
  const byTarget = await h.admin("GET", "/admin/audit?targetId=demo-rolling");
  assert.ok(byTarget.body.data.length >= 2 && byTarget.body.data.every((a: { target: { id: string } }) => a.target.id === "demo-rolling"));
  const audit = JSON.stringify(await h.all<AuditDoc>(DIRECTORY_COLLECTIONS.audit));
  const logs = JSON.stringify(h.logs);
  assert.ok(plainKeys.length >= 8);
  for (const k of [...plainKeys, DEMO_KEY, ADMIN_KEY]) {
    assert.not.ok(audit.includes(k), "no plain key in an audit record");
    assert.not.ok(logs.includes(k), "no plain key in a log line");
  }
  assert.not.match(audit, /sha256:/, "not even a hash");
  const stored = JSON.stringify(await h.all(DIRECTORY_COLLECTIONS.credentials)) + JSON.stringify(await h.all(DIRECTORY_COLLECTIONS.operations));
  for (const k of plainKeys) assert.not.ok(stored.includes(k), "no plain key in the store");
});

test("store down during a key create: 503 GW_MANAGEMENT_SERVICE_UNAVAILABLE, nothing created; the same request again creates it", async () => {
  h.fault((c, m) => (c === DIRECTORY_COLLECTIONS.credentials && m === "insert" ? "before" : null));
  const body = { scheme: "gateway", businessId: "demo", id: "demo-outage" };
  const p = problem(await h.admin("POST", "/admin/keys", body, "outage-key-0001"), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  assert.is(p.retry.sameIdempotencyKey, true);
  assert.is((await h.all<CredentialDoc>(DIRECTORY_COLLECTIONS.credentials)).filter((c) => c.credentialId === "demo-outage").length, 0);
  h.fault(null);
  const ok = await h.admin("POST", "/admin/keys", body, "outage-key-0001");
  assert.is(ok.status, 201, ok.text);
  plainKeys.push(ok.body.plainKey);
  assert.is(await works(ok.body.plainKey), 200);
});

test("written but the answer lost: the retry answers a new plain key (the unseen one is replaced); an audit that failed after a change is completed by the retry, once", async () => {
  h.fault((c, m) => (c === DIRECTORY_COLLECTIONS.credentials && m === "insert" ? "after" : null));
  const body = { scheme: "gateway", businessId: "demo", id: "demo-lost-answer" };
  problem(await h.admin("POST", "/admin/keys", body, "lost-key-0001"), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  const written = (await h.all<CredentialDoc>(DIRECTORY_COLLECTIONS.credentials)).filter((c) => c.credentialId === "demo-lost-answer");
  assert.is(written.length, 1, "it did land");
  h.fault(null);
  const ok = await h.admin("POST", "/admin/keys", body, "lost-key-0001");
  assert.is(ok.status, 201, ok.text);
  plainKeys.push(ok.body.plainKey);
  const now = (await h.all<CredentialDoc>(DIRECTORY_COLLECTIONS.credentials)).filter((c) => c.credentialId === "demo-lost-answer");
  assert.is(now.length, 1, "still one key");
  assert.is.not(now[0]!._id, written[0]!._id, "the key nobody saw was replaced");
  assert.is(await works(ok.body.plainKey), 200);
  // The audit failed after the revocation landed: the retry completes it, once.
  h.fault((c, m) => (c === DIRECTORY_COLLECTIONS.audit && m === "insert" ? "before" : null));
  problem(await h.admin("POST", "/admin/keys/demo-lost-answer/revoke", {}, "lost-key-0002"), 503, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  h.fault(null);
  problem(await h.customer("/probe/echo", ok.body.plainKey, PASSTHROUGH), 401, "GW_API_KEY_INVALID");
  const audit = await h.admin("GET", "/admin/audit?targetId=demo-lost-answer");
  assert.is(audit.body.data.filter((a: { action: string }) => a.action === "key.revoke").length, 0, "not audited yet");
  assert.is((await h.admin("POST", "/admin/keys/demo-lost-answer/revoke", {}, "lost-key-0002")).status, 200);
  const after = await h.admin("GET", "/admin/audit?targetId=demo-lost-answer");
  assert.is(after.body.data.filter((a: { action: string }) => a.action === "key.create").length, 1);
  const revokes = after.body.data.filter((a: { action: string }) => a.action === "key.revoke");
  assert.is(revokes.length, 1, "the retry completed the audit record of the change that had landed, once");
  assert.equal(revokes[0].changes, { revoked: { from: false, to: true } });
  assert.is((await h.admin("POST", "/admin/keys/demo-lost-answer/revoke", {}, "lost-key-0002")).status, 200, "a replay");
  assert.is((await h.admin("GET", "/admin/audit?targetId=demo-lost-answer&action=key.revoke")).body.data.length, 1);
});

test.run();
