/**
 * The key, team, link and webhook routes with an identifier in their path (the data screens' routes
 * are walked by foreign-ids.test.ts), walked by the demo owner with a second business's identifiers (its keys, a member, an invitation and a reset link issued for it, an
 * unknown webhook endpoint and delivery): every answer is a 404 that names nothing (the webhooks
 * section may answer a form with a redirect back and a message instead), and nothing of the other
 * business changes. New routes are walked too: the list comes from the route table.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DIRECTORY_COLLECTIONS, type CredentialDoc } from "../../../core/directory-store.ts";
import { newLinkToken } from "../../../plugins/dashboard/passwords.ts";
import { LINKS_COLLECTION, USERS_COLLECTION } from "../../../plugins/dashboard/users.ts";
import { gatewayTracker } from "../../support/gateway.ts";
import { csrfOf, demoOwner } from "./dashboard-helpers.ts";

const { start, closeAll } = gatewayTracker();

/** The routes this walk covers (new ones under these prefixes are walked without editing it). */
const OURS = /^\/dashboard\/(keys|team|invitations|password-reset|webhooks)\//;
test.after.each(closeAll);

test("a second business's identifiers in every dashboard URL → 404, nothing changes", async () => {
  const tg = await start();
  const store = tg.gateway.kit.ports.documentStore;
  const now = new Date().toISOString();
  await store.collection(USERS_COLLECTION).insert({
    _id: "usr_other_member", businessId: "other", email: "member@other.test", name: "Other", role: "owner", status: "invited",
    password: null, totp: null, totpPending: null, recoveryCodes: {}, lockedUntil: null, sessionsValidAfter: 0, invitedBy: null, createdAt: now, updatedAt: now,
  });
  const invitation = newLinkToken();
  const reset = newLinkToken();
  const links = store.collection(LINKS_COLLECTION);
  await links.insert({ _id: invitation.hash, kind: "invitation", userId: "usr_other_member", businessId: "other", expiresAt: Date.now() + 3_600_000, usedAt: null });
  await links.insert({ _id: reset.hash, kind: "reset", userId: "usr_other_member", businessId: "other", expiresAt: Date.now() + 3_600_000, usedAt: null });
  const foreign: Record<string, string[]> = {
    keyId: ["other-primary", "other-collections", "demo-stored-primary", "demo-operator"],
    userId: ["usr_other_member"],
    token: [invitation.token, reset.token],
    endpointId: ["whe_other_unknown"],
    webhookId: ["msg_other_unknown"],
  };
  const owner = await demoOwner(tg);
  const csrf = await csrfOf(owner, "/dashboard/keys");
  const form = { _csrf: csrf, _idempotency: "foreign-walk-0001", confirm: "yes", graceHours: "0", ipWhitelisted: "", role: "viewer", name: "X", password: "a-long-password-1", password2: "a-long-password-1", enabled: "false", url: "https://example.test/hook" };
  const walked: string[] = [];
  for (const r of tg.gateway.routes.routes()) {
    const path = r.decl.path;
    if (!path.startsWith("/dashboard") || !path.includes(":") || !OURS.test(path)) continue;
    const param = /:([A-Za-z]+)/.exec(path)![1]!;
    assert.ok(foreign[param], `a second business's value for :${param} (add one to this test)`);
    for (const id of foreign[param]!) {
      const url = path.replace(`:${param}`, encodeURIComponent(id));
      const res = r.decl.method === "GET" ? await owner.get(url) : await owner.post(url, form);
      let body = await res.text();
      // The webhooks section answers a form for an unknown endpoint with a redirect back and a message (its own choice).
      const lenient = param === "endpointId" || param === "webhookId";
      if (lenient && res.status === 303) body = await owner.html(res.headers.get("location")!);
      else assert.is(res.status, 404, `${r.decl.method} ${url}`);
      assert.not.ok(body.includes("Other Trading Co") || body.includes("member@other.test"), `${r.decl.method} ${url} names nothing`);
      walked.push(`${r.decl.method} ${path}`);
    }
  }
  assert.ok(walked.length >= 10, walked.join("\n"));
  const other = await store.collection<CredentialDoc>(DIRECTORY_COLLECTIONS.credentials).findOne({ credentialId: "other-primary" });
  assert.is(other!.revoked, false);
  assert.is(other!.rolledTo, null);
  const member = await store.collection(USERS_COLLECTION).get("usr_other_member");
  assert.is(member!.status, "invited");
  assert.is(member!.role, "owner");
  assert.is((await links.get(invitation.hash))!.usedAt, null);
});

test.run();
