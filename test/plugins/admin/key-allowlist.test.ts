/**
 * Admin API, a key's IP allowlist (PATCH /admin/keys/{keyId}, real HTTP): the new list applies from
 * the next request on, a replay changes nothing, the audit log has one `key.update` entry with the
 * lists before and after, a revoked key is refused (400, as a roll of one), bad input is a validation error.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DIRECTORY_COLLECTIONS, type AuditDoc } from "../../../core/directory-store.ts";
import { PASSTHROUGH } from "../../support/gateway.ts";
import { problem, startAdminHarness, type AdminHarness } from "./admin-helpers.ts";

let h: AdminHarness;
test.before(async () => {
  h = await startAdminHarness();
});
test.after(async () => {
  await h.close();
});

test("PATCH replaces the allowlist: refused from elsewhere, then allowed from here, then any address; one audit entry per change", async () => {
  const created = await h.admin("POST", "/admin/keys", { scheme: "gateway", businessId: "demo", id: "demo-acl", ipWhitelisted: ["10.9.9.9"] }, "acl-create-0001");
  assert.is(created.status, 201, created.text);
  const key = created.body.plainKey as string;
  assert.is((await h.customer("/probe/echo", key, PASSTHROUGH)).status, 403, "the test client (127.0.0.1) is not on the list");
  const res = await h.admin("PATCH", "/admin/keys/demo-acl", { ipWhitelisted: ["127.0.0.1", "10.0.0.0/8"] }, "acl-update-0001");
  assert.is(res.status, 200, res.text);
  assert.equal(res.body.key.ipWhitelisted, ["127.0.0.1", "10.0.0.0/8"]);
  assert.is((await h.customer("/probe/echo", key, PASSTHROUGH)).status, 200);
  const replay = await h.admin("PATCH", "/admin/keys/demo-acl", { ipWhitelisted: ["127.0.0.1", "10.0.0.0/8"] }, "acl-update-0001");
  assert.is(replay.status, 200);
  assert.is((await h.admin("PATCH", "/admin/keys/demo-acl", { ipWhitelisted: [] }, "acl-update-0002")).status, 200);
  assert.is((await h.customer("/probe/echo", key, PASSTHROUGH)).status, 200);
  const entries = (await h.all<AuditDoc>(DIRECTORY_COLLECTIONS.audit)).filter((a) => a.action === "key.update" && a.target.id === "demo-acl");
  assert.is(entries.length, 2, "one entry per change, none for the replay");
  assert.equal(entries.map((e) => e.actor), ["operator:demo-operator", "operator:demo-operator"]);
  assert.ok(!JSON.stringify(entries).includes(key), "never the key");
});

test("a revoked key's allowlist is refused; bad entries and unknown fields are validation errors; unknown key 404", async () => {
  await h.admin("POST", "/admin/keys", { scheme: "gateway", businessId: "demo", id: "demo-acl-2" }, "acl-create-0002");
  problem(await h.admin("PATCH", "/admin/keys/demo-acl-2", { ipWhitelisted: "10.0.0.1" }, "acl-bad-0001"), 400, "GW_REQUEST_VALIDATION_FAILED");
  problem(await h.admin("PATCH", "/admin/keys/demo-acl-2", { ipWhitelisted: [], other: 1 }, "acl-bad-0002"), 400, "GW_REQUEST_VALIDATION_FAILED");
  assert.is((await h.admin("PATCH", "/admin/keys/no-such-key", { ipWhitelisted: [] }, "acl-bad-0003")).status, 404);
  assert.is((await h.admin("POST", "/admin/keys/demo-acl-2/revoke", {}, "acl-revoke-0001")).status, 200);
  const refused = problem(await h.admin("PATCH", "/admin/keys/demo-acl-2", { ipWhitelisted: ["10.0.0.1"] }, "acl-bad-0004"), 400, "GW_REQUEST_VALIDATION_FAILED");
  assert.match(JSON.stringify(refused), /revoked or expired/);
});

test.run();
