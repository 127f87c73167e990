/**
 * The console behind a reverse proxy that strips a prefix: served on `console.basePath`, every
 * link, form action, redirect and cookie names `console.publicPath`; `console.hosts` limits the
 * hosts that serve it; `console.enabled: false` serves nothing; an expired session goes back to
 * sign-in and returns to the page asked for. Businesses (read-only) with a hostile business name:
 * escaped everywhere, keys shown by id and hint, never the key. A session issued by one gateway
 * process is accepted by another built from the same config (signed cookies, no process memory).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { plugins } from "../../../plugins/index.ts";
import { isAllowedFrom } from "../../../plugins/console/auth.ts";
import { createConsolePlugin } from "../../../plugins/console/plugin.ts";
import { DEMO_KEY, DEMO_RAW, gatewayTracker } from "../../support/gateway.ts";
import { consoleClient } from "./console-helpers.ts";
import { OPERATOR_KEY } from "./console-helpers.ts";

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("publicPath /ops/console: links, form actions, redirects and the cookie path follow it; routes stay on basePath", async () => {
  const tg = await start({ patch: { console: { basePath: "/console", publicPath: "/ops/console" } } });
  const call = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) => tg.call(path, { host: "localhost", ...init });
  const signIn = await call("/console/sign-in");
  const form = await signIn.text();
  assert.match(form, /<form method="post" action="\/ops\/console\/sign-in"/);
  assert.match(form, /href="\/ops\/console\/assets\/ui.css"/);
  const res = await call("/console/sign-in", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://localhost" },
    body: new URLSearchParams({ key: OPERATOR_KEY, next: "/ops/console/frozen" }).toString(),
  });
  assert.is(res.status, 303);
  assert.is(res.headers.get("location"), "/ops/console/frozen");
  const cookie = res.headers.getSetCookie()[0]!;
  assert.match(cookie, /Path=\/ops\/console;/);
  const page = await (await call("/console/frozen", { headers: { cookie: cookie.split(";")[0]! } })).text();
  assert.match(page, /href="\/ops\/console\/alerts"/);
  assert.match(page, /action="\/ops\/console\/sign-out"/);
  assert.not.match(page, /href="\/console/, "no link bypasses the proxy prefix");
  const out = await call("/console");
  assert.is(out.headers.get("location"), "/ops/console/sign-in?next=%2Fops%2Fconsole");
});

test("console.hosts limits where it answers; enabled: false serves nothing", async () => {
  const tg = await start({ patch: { console: { hosts: ["ops.demo.localhost"] } } });
  assert.is((await tg.call("/console/sign-in", { host: "localhost" })).status, 404);
  assert.is((await tg.call("/console/sign-in", { host: "ops.demo.localhost" })).status, 200);
  const off = await start({ patch: { console: { enabled: false } } });
  assert.is((await off.call("/console/sign-in", { host: "localhost" })).status, 404);
});

test("an expired session: a screen redirects to sign-in with the page to return to; an action goes to sign-in and changes nothing", async () => {
  let now = Date.now();
  const tg = await start({
    patch: { console: { sessionTtlMs: 60_000 } },
    plugins: [...plugins.filter((p) => p.name !== "console"), createConsolePlugin({ now: () => now })],
  });
  const res = await tg.call("/console/sign-in", {
    method: "POST",
    host: "localhost",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://localhost" },
    body: new URLSearchParams({ key: OPERATOR_KEY, next: "/console" }).toString(),
  });
  const cookie = res.headers.getSetCookie()[0]!.split(";")[0]!;
  assert.is((await tg.call("/console/alerts?status=replayed", { host: "localhost", headers: { cookie } })).status, 200);
  now += 60_001;
  const later = await tg.call("/console/alerts?status=replayed", { host: "localhost", headers: { cookie } });
  assert.is(later.status, 303);
  assert.is(later.headers.get("location"), "/console/sign-in?next=%2Fconsole%2Falerts%3Fstatus%3Dreplayed");
  const action = await tg.call("/console/alerts/00000000-0000-4000-8000-000000000000/replay", {
    method: "POST",
    host: "localhost",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded", origin: "http://localhost" },
    body: "_csrf=x",
  });
  assert.is(action.status, 303);
  assert.match(action.headers.get("location")!, /^\/console\/sign-in/);
});

test("businesses: list and detail (domains with mode and approval, keys by id and hint); a hostile name comes out escaped", async () => {
  const hostile = `Ada <script>alert("x")</script> & Co`;
  const businesses = structuredClone(DEMO_RAW.businesses) as Array<{ id: string; name: string }>;
  businesses.find((b) => b.id === "demo")!.name = hostile;
  const tg = await start({ patch: { businesses } });
  const c = consoleClient(tg);
  assert.is((await c.signIn(OPERATOR_KEY)).status, 303);
  const list = await c.html("/console/businesses");
  assert.match(list, /href="\/console\/businesses\/demo"/);
  const detail = await c.html("/console/businesses/demo");
  for (const page of [list, detail]) {
    assert.not.ok(page.includes("<script>"), "escaped");
    assert.ok(page.includes("Ada &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co"));
  }
  assert.match(detail, /passthrough\.demo\.localhost/);
  assert.not.match(detail, /stored\.demo\.localhost/, "the Stored demo host is another business's (one domain per business)");
  assert.match(await c.html("/console/businesses/demo-stored"), /stored\.demo\.localhost/);
  assert.not.ok(detail.includes(DEMO_KEY), "never a key");
  assert.is((await c.get("/console/businesses/no-such")).status, 404);
});

test("a session works on every process of the deployment: signed by one gateway, accepted by another with the same config; not by one with another secret", async () => {
  const a = await start();
  const b = await start();
  const other = await start({ patch: { regulator: { apiSecret: "another_deployment_secret" } } });
  const res = await a.call("/console/sign-in", {
    method: "POST",
    host: "localhost",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://localhost" },
    body: new URLSearchParams({ key: OPERATOR_KEY, next: "/console" }).toString(),
  });
  const cookie = res.headers.getSetCookie()[0]!.split(";")[0]!;
  const onB = await b.call("/console/frozen", { host: "localhost", headers: { cookie } });
  assert.is(onB.status, 200);
  assert.match(await onB.text(), /demo-operator \(admin\)/);
  assert.is((await other.call("/console/frozen", { host: "localhost", headers: { cookie } })).status, 303, "another deployment's secret: back to sign-in");
});

test("a credential's IP allowlist applies to sign-in: refused (403, logged) from another or an unknown address", async () => {
  assert.ok(isAllowedFrom([], null));
  assert.ok(isAllowedFrom(["10.9.9.9"], "10.9.9.9"));
  assert.ok(isAllowedFrom(["10.0.0.0/8"], "10.1.2.3"));
  assert.not.ok(isAllowedFrom(["10.0.0.0/8"], "192.168.1.1"));
  assert.not.ok(isAllowedFrom(["10.9.9.9"], null));
  const key = "viewer_allowlisted_0001";
  const tg = await start({ patch: { console: { viewers: [{ id: "far-viewer", key, demoOnly: true, ipWhitelisted: ["10.9.9.9"] }] } } });
  const res = await tg.call("/console/sign-in", {
    method: "POST",
    host: "localhost",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://localhost" },
    body: new URLSearchParams({ key }).toString(),
  });
  assert.is(res.status, 403);
  assert.is(res.headers.getSetCookie().length, 0, "no session");
  assert.ok(tg.logs.some((l) => l.event === "console_sign_in_failed" && l.reason === "ip_not_allowed" && l.credentialId === "far-viewer"));
  assert.not.ok(JSON.stringify(tg.logs).includes(key));
});

test.run();
