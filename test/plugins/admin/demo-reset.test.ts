/**
 * The demo's reset, POST /admin/demo/reset (`npx gatehouse demo reset`): after an operator revoked a
 * demo key, made a key, switched a domain's mode, changed a fee and turned autoTransmit on, the
 * directory is the demo config's again — and the demo key, the mode and the fee work at once. Only a
 * demo config mounts the route.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { PluginKit } from "../../../core/plugin.ts";
import { demoResetRoutes } from "../../../plugins/admin/demo-reset.ts";
import { ALLOWLISTED_KEY, PASSTHROUGH, STORED } from "../../support/gateway.ts";
import { problem, startAdminHarness, type AdminHarness } from "./admin-helpers.ts";

let h: AdminHarness;
test.before(async () => {
  h = await startAdminHarness();
});
test.after(async () => {
  await h.close();
});

test("the reset undoes an operator's changes to keys, modes, fees and autoTransmit, and is audited", async () => {
  assert.is((await h.admin("POST", "/admin/keys/demo-allowlisted/revoke", {}, "reset-revoke-0001")).status, 200);
  assert.is((await h.admin("POST", "/admin/keys", { scheme: "gateway", businessId: "demo", id: "demo-extra" }, "reset-key-0001")).status, 201);
  assert.is((await h.admin("POST", `/admin/domains/${PASSTHROUGH}/mode-change`, { mode: "stored" }, "reset-mode-0001")).status, 200);
  assert.is((await h.admin("POST", `/admin/domains/${PASSTHROUGH}/approval`, {}, "reset-approve-0001")).status, 200);
  assert.is((await h.admin("PATCH", `/admin/domains/${STORED}`, { signFee: 60, autoTransmit: true }, "reset-fee-0001")).status, 200);
  problem(await h.customer("/sub-businesses", ALLOWLISTED_KEY, PASSTHROUGH), 401, "GW_API_KEY_INVALID");

  const reset = await h.admin("POST", "/admin/demo/reset", {}, "reset-0001");
  assert.is(reset.status, 200, reset.text);
  assert.ok(reset.body.updated >= 3 && reset.body.removed >= 1, reset.text);

  const domains = Object.fromEntries((await h.admin("GET", "/admin/domains")).body.data.map((d: any) => [d.host, d]));
  assert.equal([domains[PASSTHROUGH].mode, domains[PASSTHROUGH].approval], ["passthrough", "approved"]);
  assert.equal([domains[STORED].signFee, domains[STORED].autoTransmit], [50, false]);
  const keys = (await h.admin("GET", "/admin/keys?businessId=demo")).body.data.map((k: any) => `${k.id}:${k.status}`);
  assert.ok(keys.includes("demo-allowlisted:active"), keys.join(" "));
  assert.not.ok(keys.some((k: string) => k.startsWith("demo-extra")), keys.join(" "));
  // The allowlisted key is valid again (its allowlist still refuses this client: 403, not 401).
  problem(await h.customer("/sub-businesses", ALLOWLISTED_KEY, PASSTHROUGH), 403, "GW_AUTH_TENANT_FORBIDDEN");
  const audit = (await h.admin("GET", "/admin/audit?limit=100")).body.data.map((a: any) => a.actor);
  assert.ok(audit.includes("config-sync"), audit.join(" "));

  const again = await h.admin("POST", "/admin/demo/reset", {}, "reset-0002");
  assert.equal(again.body, { created: 0, updated: 0, removed: 0 }, "a second reset changes nothing");
});

test("the reset needs the operator key, and only a demo config mounts it", async () => {
  problem(await h.customer("/admin/demo/reset", "gw_demo_key_0001", "localhost", { method: "POST", body: {} }), 401, "GW_ADMIN_AUTHENTICATION_FAILED");
  assert.is(demoResetRoutes({ config: { demo: false } } as PluginKit).length, 0);
});

test.run();
