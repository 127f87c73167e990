/**
 * The dashboard's frame: the demo owner (seeded in demo configs) signs in with password and TOTP on
 * the business's own host and on a collections host; every page shows the environment; a session is
 * valid only for its business's hosts; hosts that are neither get 404; signed-out screens go to
 * sign-in and come back; the section list mounts its routes and navigation.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DEMO_OWNER, DEMO_OWNER_PASSWORD_HASH, demoOwnerBusiness } from "../../../plugins/dashboard/demo-owner.ts";
import { verifyPassword } from "../../../plugins/dashboard/passwords.ts";
import { SECTIONS } from "../../../plugins/dashboard/sections.ts";
import { DEMO_RAW, gatewayTracker, testConfig } from "../../support/gateway.ts";
import { BUSINESS_HOST, COLLECTIONS_HOST, dashboardClient, demoOwner } from "./dashboard-helpers.ts";

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("the demo owner signs in (password, then code) on its business's host; home shows the business and TEST", async () => {
  const tg = await start();
  const c = dashboardClient(tg);
  const out = await c.get("/dashboard/account");
  assert.is(out.status, 303);
  assert.is(out.headers.get("location"), "/dashboard/sign-in?next=%2Fdashboard%2Faccount");
  assert.match(await c.html("/dashboard/sign-in"), /data-environment="TEST"/, "the business's host names its environment before sign-in too");
  const step1 = await c.post("/dashboard/sign-in", { email: DEMO_OWNER.email, password: DEMO_OWNER.password, next: "/dashboard/account" });
  assert.is(step1.status, 303);
  assert.is(step1.headers.get("location"), "/dashboard/sign-in/code");
  const owner = await demoOwner(tg);
  const home = await owner.html("/dashboard");
  assert.match(home, /<h1>Home<\/h1>/);
  assert.match(home, /Demo Ventures Ltd/);
  assert.match(home, /data-environment="TEST"/);
  for (const s of SECTIONS) if (s.nav) assert.ok(home.includes(`href="/dashboard${s.nav.path}"`), s.nav.label);
  const css = await owner.get("/dashboard/assets/ui.css");
  assert.is(css.status, 200);
});

test("a session works on a collections host for any business, never on another business's host; other hosts get 404", async () => {
  const tg = await start();
  const owner = await demoOwner(tg, COLLECTIONS_HOST);
  assert.is((await owner.get("/dashboard")).status, 200);
  // The same cookie presented on another business's approved host is not a session there.
  const cookie = [...owner.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  const other = await tg.call("/dashboard", { host: "other.demo.localhost", headers: { cookie } });
  assert.is(other.status, 303);
  const stored = await tg.call("/dashboard", { host: "stored.demo.localhost", headers: { cookie } });
  assert.is(stored.status, 303, "demo-stored is another top-level business");
  // The password is refused on the other business's host (no such user there), with the same words as a wrong password.
  const there = dashboardClient(tg, "other.demo.localhost");
  const res = await there.post("/dashboard/sign-in", { email: DEMO_OWNER.email, password: DEMO_OWNER.password });
  assert.is(res.status, 401);
  assert.match(await res.text(), /The e-mail or password is wrong/);
  const nowhere = await tg.call("/dashboard/sign-in", { host: "unknown.example" });
  assert.is(nowhere.status, 404);
  assert.ok(BUSINESS_HOST);
});
test("the demo owner's precomputed hash is the demo password's; a non-demo config seeds no owner", async () => {
  assert.ok(await verifyPassword(DEMO_OWNER.password, DEMO_OWNER_PASSWORD_HASH));
  assert.not.ok(await verifyPassword("another-password", DEMO_OWNER_PASSWORD_HASH));
  const config = testConfig();
  assert.is(demoOwnerBusiness(config), "demo", "the business that owns the demo's invoice host and has collections keys");
  assert.is(demoOwnerBusiness({ ...config, demo: false }), null);
});

test("a hostile business name is escaped on every page", async () => {
  const tg = await start({ patch: { businesses: [{ ...(DEMO_RAW.businesses as any[])[0], name: `<img src=x onerror=alert(1)>"Ventures'` }, ...(DEMO_RAW.businesses as any[]).slice(1)] } });
  const owner = await demoOwner(tg);
  for (const path of ["/dashboard", "/dashboard/keys", "/dashboard/team", "/dashboard/account"]) {
    const page = await owner.html(path);
    assert.not.match(page, /<img src=x/, path);
    assert.match(page, /&lt;img src=x onerror=alert\(1\)&gt;&quot;Ventures&#39;/, path);
  }
});

test.run();
