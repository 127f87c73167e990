/**
 * The team in process: an owner invites by e-mail (the link from the e-mail port's folder), the
 * member accepts and is asked to set up two-factor; roles are enforced by the server (a viewer's or
 * developer's team POST → 403, nothing changed); Origin and CSRF checks; another business's member
 * id → 404; hostile names escaped; invitation links work once; password reset by e-mailed link (no
 * user enumeration, expiry, single use, older sessions end); five wrong passwords → a growing wait,
 * then a lock with an e-mail notice, and nothing logged of the password.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { plugins } from "../../../plugins/index.ts";
import { DEMO_OWNER } from "../../../plugins/dashboard/demo-owner.ts";
import { createDashboardPlugin } from "../../../plugins/dashboard/plugin.ts";
import { gatewayTracker } from "../../support/gateway.ts";
import { MEMBER_PASSWORD, csrfOf, dashboardClient, decodeMail, demoOwner, inviteMember, mailbox, mailedLink } from "./dashboard-helpers.ts";

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("invitation: the member accepts from the e-mailed link, lands on two-factor set-up; the link works once", async () => {
  const tg = await start();
  const owner = await demoOwner(tg);
  const dev = await inviteMember(tg, owner, "Dev@Example.test", "developer", "Dee Veloper");
  const enrol = await dev.html("/dashboard/account/two-factor");
  assert.match(enrol, /Welcome! Your account is ready/);
  assert.match(enrol, /<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(enrol, /data-totp-secret>[A-Z2-7 ]{20,}</);
  const team = await owner.html("/dashboard/team");
  assert.match(team, /dev@example.test<\/td><td>developer<\/td>/);
  // The link was spent.
  const again = await dashboardClient(tg).get(mailedLink(tg, "dev@example.test", "invitations"));
  assert.is(again.status, 404);
  assert.match(await again.text(), /not valid/);
  // Inviting again replaces the earlier link.
  const csrf = await csrfOf(owner, "/dashboard/team");
  await owner.post("/dashboard/team/invitations", { _csrf: csrf, email: "twice@example.test", role: "viewer" });
  const first = mailedLink(tg, "twice@example.test", "invitations");
  await owner.post("/dashboard/team/invitations", { _csrf: csrf, email: "twice@example.test", role: "viewer" });
  const second = mailedLink(tg, "twice@example.test", "invitations");
  assert.is.not(first, second);
  assert.is((await dashboardClient(tg).get(first)).status, 404);
  assert.is((await dashboardClient(tg).get(second)).status, 200);
});

test("roles: a viewer's and a developer's team POST → 403 and nothing changes; Origin and CSRF are checked; another business's member → 404", async () => {
  const tg = await start();
  const owner = await demoOwner(tg);
  const viewer = await inviteMember(tg, owner, "viewer@example.test", "viewer");
  const dev = await inviteMember(tg, owner, "dev@example.test", "developer");
  for (const c of [viewer, dev]) {
    const res = await c.post("/dashboard/team/invitations", { _csrf: await csrfOf(c, "/dashboard/team"), email: "x@example.test", role: "owner" });
    assert.is(res.status, 403);
    assert.match(await res.text(), /this needs owner or above/);
  }
  const keysPage = await viewer.html("/dashboard/keys");
  assert.not.match(keysPage, /Create a key/, "no create form for a viewer");
  const create = await viewer.post("/dashboard/keys", { _csrf: await csrfOf(viewer, "/dashboard/keys"), _idempotency: "viewer-create-0001", scheme: "gateway", totp: "000000" });
  assert.is(create.status, 403);
  assert.not.match(await owner.html("/dashboard/team"), /x@example.test/, "nobody was invited");
  const csrf = await csrfOf(owner, "/dashboard/team");
  assert.is((await owner.post("/dashboard/team/invitations", { _csrf: csrf, email: "y@example.test", role: "viewer" }, { origin: "http://evil.example" })).status, 403);
  assert.is((await owner.post("/dashboard/team/invitations", { _csrf: csrf, email: "y@example.test", role: "viewer" }, { origin: null })).status, 403);
  assert.is((await owner.post("/dashboard/team/invitations", { _csrf: "forged", email: "y@example.test", role: "viewer" })).status, 403);
  assert.not.match(await owner.html("/dashboard/team"), /y@example.test/);
  // A member of another business (signed in on the collections host) is not found from the demo owner's pages.
  const otherOwner = await tg.gateway.kit.ports.documentStore.collection("dashboard_users").insert({ _id: "usr_other_owner", businessId: "other", email: "o@other.test", name: "O", role: "owner", status: "active", password: null, totp: null, totpPending: null, recoveryCodes: {}, lockedUntil: null, sessionsValidAfter: 0, invitedBy: null, createdAt: "", updatedAt: "" });
  assert.ok(otherOwner);
  const res = await owner.post("/dashboard/team/usr_other_owner/role", { _csrf: csrf, role: "viewer" });
  assert.is(res.status, 404);
  assert.match(await res.text(), /belongs to another business/);
});

test("hostile names and e-mails come out escaped", async () => {
  const tg = await start();
  const owner = await demoOwner(tg);
  await inviteMember(tg, owner, "hostile@example.test", "viewer", `<script>alert(1)</script>"'`);
  const team = await owner.html("/dashboard/team");
  assert.not.match(team, /<script>alert/);
  assert.match(team, /&lt;script&gt;alert\(1\)&lt;\/script&gt;&quot;&#39;/);
});

test("password reset: same answer for unknown addresses, a link that works once and expires, older sessions end", async () => {
  let offset = 0;
  const tg = await start({ plugins: [...plugins.filter((p) => p.name !== "dashboard"), createDashboardPlugin({ now: () => Date.now() + offset })] });
  const owner = await demoOwner(tg);
  const dev = await inviteMember(tg, owner, "reset@example.test", "developer");
  const anon = dashboardClient(tg);
  const unknown = await (await anon.post("/dashboard/password-reset", { email: "nobody@example.test" })).text();
  const known = await (await anon.post("/dashboard/password-reset", { email: "reset@example.test" })).text();
  const words = (s: string) => /If that address has an account[^<]*/.exec(s)?.[0];
  assert.ok(words(known));
  assert.is(words(unknown), words(known), "no enumeration");
  assert.ok(!mailbox(tg).some((m) => m.includes("nobody@example.test")));
  const link = mailedLink(tg, "reset@example.test", "password-reset");
  // An expired link: an hour and a bit later.
  offset = 61 * 60_000;
  assert.is((await anon.get(link)).status, 404);
  offset = 0;
  await anon.post("/dashboard/password-reset", { email: "reset@example.test" });
  const fresh = mailedLink(tg, "reset@example.test", "password-reset");
  assert.is.not(fresh, link);
  assert.is((await anon.post(fresh, { password: "short", password2: "short" })).status, 400);
  offset = 1000; // the reset happens after the member's session was issued
  const done = await anon.post(fresh, { password: "a-new-password-01", password2: "a-new-password-01" });
  assert.is(done.status, 303);
  assert.is(done.headers.get("location"), "/dashboard/sign-in");
  assert.match(await anon.html("/dashboard/sign-in"), /Your password is changed/);
  assert.is((await anon.post(fresh, { password: "another-password-1", password2: "another-password-1" })).status, 404, "used once");
  assert.is((await dev.get("/dashboard")).status, 303, "the session from before the reset ended");
  const again = dashboardClient(tg);
  assert.is((await again.signIn("reset@example.test", MEMBER_PASSWORD)).status, 401);
  assert.is((await again.signIn("reset@example.test", "a-new-password-01")).status, 303);
});

test("five wrong passwords → a growing wait, then a lock and an e-mail; the password is never logged", async () => {
  const tg = await start({ patch: { dashboard: { freeFailures: 5, lockAfterFailures: 7, failureDelayMs: 300, signInAttempts: 100 } } });
  const c = dashboardClient(tg);
  const wrong = (n: number) => c.post("/dashboard/sign-in", { email: DEMO_OWNER.email, password: `wrong-password-${n}` });
  for (let i = 1; i <= 5; i++) assert.is((await wrong(i)).status, 401, `attempt ${i}`);
  // The fifth failure started a wait: the next attempt is refused without a check, even with the right password.
  assert.is((await c.signIn(DEMO_OWNER.email, DEMO_OWNER.password)).status, 401);
  await new Promise((r) => setTimeout(r, 350));
  assert.is((await wrong(6)).status, 401);
  await new Promise((r) => setTimeout(r, 650));
  assert.is((await wrong(7)).status, 401);
  // Locked: the right password does not help now.
  await new Promise((r) => setTimeout(r, 1300));
  assert.is((await c.signIn(DEMO_OWNER.email, DEMO_OWNER.password)).status, 401);
  const notice = mailbox(tg).map(decodeMail).find((m) => m.includes("was locked"));
  assert.ok(notice, "the owner was e-mailed");
  assert.match(notice!, /owner@demo.gatehouse.test/);
  const failures = tg.logs.filter((l) => l.event === "dashboard_sign_in_failed");
  assert.ok(failures.length >= 7);
  assert.ok(tg.logs.some((l) => l.event === "dashboard_account_locked"));
  const logged = JSON.stringify(tg.logs);
  for (const secret of ["wrong-password-1", DEMO_OWNER.password]) assert.not.ok(logged.includes(secret), "no password in the logs");
});

test.run();
