/**
 * API keys in process: the list shows the business's keys only (hint, created, last used, allowlist,
 * status), never a key's value after its one showing; create needs a fresh TOTP code (none or a
 * wrong one → refused and nothing created; a spent code is not accepted twice); the new key works
 * at once and is audited as dashboard:<userId>; roll (old key until its deadline), allowlist edit,
 * revoke; another business's or an operator key id in a URL → 404 and nothing changes; a member
 * without two-factor is told to set it up.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DIRECTORY_COLLECTIONS, type AuditDoc, type CredentialDoc } from "../../../core/directory-store.ts";
import { DEMO_OWNER } from "../../../plugins/dashboard/demo-owner.ts";
import { TOTP_COOKIE } from "../../../plugins/dashboard/env.ts";
import { plugins } from "../../../plugins/index.ts";
import { DEMO_KEY, PASSTHROUGH, gatewayTracker, type TestGateway } from "../../support/gateway.ts";
import { probePlugin } from "../../support/probe-plugin.ts";
import { csrfOf, demoOwner, hiddenField, inviteMember, totpCode, type DashboardClient } from "./dashboard-helpers.ts";

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

const credentials = (tg: TestGateway) => tg.gateway.kit.ports.documentStore.collection<CredentialDoc>(DIRECTORY_COLLECTIONS.credentials);
const audit = (tg: TestGateway) => tg.gateway.kit.ports.documentStore.collection<AuditDoc>(DIRECTORY_COLLECTIONS.audit);
/** The next time step's code (the current one was spent signing in). */
const nextCode = () => totpCode(DEMO_OWNER.totpSecret, Date.now() + 30_000);

async function createForm(c: DashboardClient): Promise<Record<string, string>> {
  const page = await c.html("/dashboard/keys");
  return { _csrf: hiddenField(page, "_csrf"), _idempotency: hiddenField(page, "_idempotency"), scheme: "gateway", ipWhitelisted: "" };
}

test("create: no code or a wrong code → refused, nothing created; a valid code → the key once, working, audited as the user", async () => {
  const tg = await start();
  const owner = await demoOwner(tg);
  owner.cookies.delete(TOTP_COOKIE); // the sign-in's code no longer counts as fresh
  const before = (await credentials(tg).find({ businessId: "demo" })).items.length;
  for (const totp of ["", "123456", "abc"]) {
    const res = await owner.post("/dashboard/keys", { ...(await createForm(owner)), totp });
    assert.is(res.status, 303, `totp "${totp}"`);
    const page = await owner.html("/dashboard/keys");
    assert.match(page, /Not done: (enter the current code|that code is wrong)/);
  }
  assert.is((await credentials(tg).find({ businessId: "demo" })).items.length, before, "nothing created");
  const res = await owner.post("/dashboard/keys", { ...(await createForm(owner)), ipWhitelisted: "10.0.0.0/8, 127.0.0.1", totp: nextCode() });
  assert.is(res.status, 200);
  assert.is(res.headers.get("cache-control"), "no-store");
  const page = await res.text();
  const plain = /id="plain-key" readonly value="([^"]+)"/.exec(page)?.[1];
  assert.match(plain!, /^gw_test_/);
  const principal = await tg.gateway.kit.directory.authenticate("apiKey", plain!);
  assert.is(principal?.businessId, "demo");
  assert.equal(principal?.ipWhitelisted, ["10.0.0.0/8", "127.0.0.1"]);
  const entry = (await audit(tg).find({ action: "key.create" })).items.find((a) => a.target.id === principal!.credentialId);
  assert.is(entry?.actor, "dashboard:usr_demo_owner");
  // The list shows it by id and hint, never the value.
  const list = await owner.html("/dashboard/keys");
  assert.ok(list.includes(principal!.credentialId));
  assert.not.ok(list.includes(plain!));
  assert.match(list, /gw_test_…/);
  assert.not.ok(JSON.stringify(tg.logs).includes(plain!), "never logged");
  // The same code again (a replay from another form) is refused: a code is spent once.
  owner.cookies.delete(TOTP_COOKIE);
  const again = await owner.post("/dashboard/keys", { ...(await createForm(owner)), totp: nextCode() });
  assert.is(again.status, 303);
  assert.match(await owner.html("/dashboard/keys"), /already used/);
});

test("roll (the old key until its deadline), allowlist, revoke — within five minutes of a code, no new code needed", async () => {
  const tg = await start();
  const owner = await demoOwner(tg);
  const created = await (await owner.post("/dashboard/keys", { ...(await createForm(owner)) })).text();
  const keyId = /Go to the key<\/a>/.test(created) ? /href="\/dashboard\/keys\/([^"]+)">Go to the key/.exec(created)![1]! : "";
  assert.ok(keyId, "created with the sign-in's fresh code");
  const keyPage = await owner.html(`/dashboard/keys/${keyId}`);
  const csrf = hiddenField(keyPage, "_csrf");
  const idem = () => `idem-${Math.random().toString(36).slice(2, 12)}`;
  const acl = await owner.post(`/dashboard/keys/${keyId}/allowlist`, { _csrf: csrf, _idempotency: idem(), ipWhitelisted: "192.0.2.1" });
  assert.is(acl.status, 303);
  assert.match(await owner.html(`/dashboard/keys/${keyId}`), /192\.0\.2\.1/);
  const rolled = await owner.post(`/dashboard/keys/${keyId}/roll`, { _csrf: csrf, _idempotency: idem(), graceHours: "2" });
  assert.is(rolled.status, 200);
  const rolledPage = await rolled.text();
  assert.match(rolledPage, /keeps working until/);
  const old = await credentials(tg).findOne({ credentialId: keyId });
  assert.ok(old!.expiresAt! > Date.now() + 1.9 * 3_600_000 && old!.expiresAt! < Date.now() + 2.1 * 3_600_000);
  const newId = old!.rolledTo!;
  const revoke = await owner.post(`/dashboard/keys/${newId}/revoke`, { _csrf: csrf, _idempotency: idem(), confirm: "yes" });
  assert.is(revoke.status, 303);
  assert.is((await credentials(tg).findOne({ credentialId: newId }))!.revoked, true);
  const actions = (await audit(tg).find({ actor: "dashboard:usr_demo_owner" })).items.map((a) => a.action).sort();
  assert.equal(actions, ["key.create", "key.revoke", "key.roll", "key.update"]);
});

test("another business's key, an operator key, an unknown key → 404 on every key URL, nothing changes", async () => {
  const tg = await start();
  const owner = await demoOwner(tg);
  const csrf = await csrfOf(owner, "/dashboard/keys");
  for (const id of ["other-primary", "other-collections", "demo-stored-primary", "demo-operator", "no-such-key"]) {
    assert.is((await owner.get(`/dashboard/keys/${id}`)).status, 404, id);
    for (const action of ["roll", "revoke", "allowlist"]) {
      const res = await owner.post(`/dashboard/keys/${id}/${action}`, { _csrf: csrf, _idempotency: "idem-foreign-0001", graceHours: "0", confirm: "yes", ipWhitelisted: "" });
      assert.is(res.status, 404, `${action} ${id}`);
    }
  }
  const other = await credentials(tg).findOne({ credentialId: "other-primary" });
  assert.is(other!.revoked, false);
  assert.is(other!.rolledTo, null);
  const list = await owner.html("/dashboard/keys");
  assert.not.ok(list.includes("other-primary"));
  assert.not.ok(list.includes("demo-operator"));
  assert.ok(list.includes("demo-primary"));
});

test("a developer without two-factor is told to set it up; nothing is created", async () => {
  const tg = await start();
  const owner = await demoOwner(tg);
  const dev = await inviteMember(tg, owner, "dev@example.test", "developer");
  const before = (await credentials(tg).find({ businessId: "demo" })).items.length;
  const res = await dev.post("/dashboard/keys", { ...(await createForm(dev)), totp: "123456" });
  assert.is(res.status, 303);
  assert.match(await dev.html("/dashboard/keys"), /set up two-factor authentication first/);
  assert.is((await credentials(tg).find({ businessId: "demo" })).items.length, before);
});

test("last used: from the request log's recent entries; a key with no recent request says so", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin] });
  const before = Date.now();
  assert.is((await tg.call("/probe/echo", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } })).status, 200);
  await tg.gateway.requestLog!.flush();
  const owner = await demoOwner(tg);
  const list = await owner.html("/dashboard/keys");
  const row = (id: string) => new RegExp(`>${id}</a>[\\s\\S]*?</tr>`).exec(list)?.[0] ?? "";
  // Columns: id, scheme, hint, created, last used, …
  const at = /<\/code><\/td>\s*<td>[^<]*<\/td><td>(\d{4}-[^<]+)<\/td>/.exec(row("demo-primary"));
  assert.ok(at && Date.parse(at[1]!) >= before - 1000, row("demo-primary"));
  assert.match(row("demo-allowlisted"), /not in the last 250 requests/);
  assert.match(await owner.html("/dashboard/keys/demo-primary"), /<dt>Last used<\/dt><dd>\d{4}-/);
});

test.run();
