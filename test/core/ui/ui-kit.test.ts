/**
 * The UI kit (core/ui/): hostile strings (business names, references, regulator messages) come out
 * escaped wherever a template puts them; trusted fragments compose without double escaping; links
 * follow the base path; signed session cookies reject tampering and expiry; the CSRF token is bound
 * to its session; the Origin check refuses other origins and requests without one.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { barChart, createPagePaths, createSessionCookies, html, isSameOrigin, joinHtml, layout, postForm, raw, textField } from "../../../core/ui/index.ts";

const t = suite("ui kit");

const HOSTILE = [`<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `' onmouseover='x`, "`${x}`", `Ada & Co <b>`];

t("every interpolation is escaped: content, attributes, arrays, forms, layout", () => {
  for (const s of HOSTILE) {
    const out = html`<p title="${s}">${s}</p><ul>${[s, s].map((x) => html`<li>${x}</li>`)}</ul>`.value;
    assert.not.ok(out.includes("<script>"), out);
    assert.not.ok(out.includes("<img"), out);
    assert.not.ok(/title="[^"]*"[^>]*onerror/.test(out), out);
    assert.not.ok(out.includes("' onmouseover"), out);
    const form = postForm({ action: "/c/x", csrf: s, submit: s, fields: textField({ name: "q", label: s, value: s }) }).value;
    assert.not.ok(form.includes("<script>") || form.includes("<img") || form.includes("' onmouseover"), form);
    const page = layout({ app: s, paths: createPagePaths("/console"), title: s, flash: { kind: "error", text: s }, body: html`<p>${s}</p>` }).value;
    assert.not.ok(page.includes("<script>") || page.includes("<img"), page);
  }
  assert.is(html`${"<b>"}`.value, "&lt;b&gt;");
  assert.is(html`${`a"b'c`}`.value, "a&quot;b&#39;c");
});

t("nested fragments and raw() are not escaped twice; null/false render nothing", () => {
  const inner = html`<b>${"x<y"}</b>`;
  assert.is(html`<p>${inner}${raw("<i>ok</i>")}${null}${false}${undefined}${0}</p>`.value, "<p><b>x&lt;y</b><i>ok</i>0</p>");
  assert.is(joinHtml(["<a>", html`<br>`], raw(", ")).value, "&lt;a&gt;, <br>");
});

t("base paths: links follow the public base, routes the mount; query values are encoded", () => {
  const p = createPagePaths("/console", "/ops/console/");
  assert.is(p.href("/frozen", { q: "a&b=<c>", empty: "" }), "/ops/console/frozen?q=a%26b%3D%3Cc%3E");
  assert.is(p.route("/frozen"), "/console/frozen");
  assert.is(p.href(""), "/ops/console");
  assert.is(createPagePaths("/").href(""), "/");
});

t("session cookies: signed, HttpOnly, SameSite=Strict, Secure on HTTPS; tampering and expiry refused", () => {
  let now = 1_000_000;
  const c = createSessionCookies({ secret: Buffer.alloc(32, 7), cookieName: "gh_s", path: "/ops/console", ttlMs: 60_000, now: () => now });
  const { session, setCookie } = c.issue({ sub: "op-1", role: "viewer" }, true);
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /SameSite=Strict/);
  assert.match(setCookie, /; Secure/);
  assert.match(setCookie, /Path=\/ops\/console/);
  assert.not.match(c.issue({ sub: "x", role: "admin" }, false).setCookie, /Secure/);
  const value = setCookie.split(";")[0]!.split("=").slice(1).join("=");
  const read = c.read(`other=1; gh_s=${value}`);
  assert.equal(read, session);
  // Upgrade the role in the payload: the signature no longer matches.
  const [payload, sig] = value.split(".");
  const forged = Buffer.from(Buffer.from(payload!, "base64url").toString().replace("viewer", "admin")).toString("base64url");
  assert.is(c.read(`gh_s=${forged}.${sig}`), null);
  assert.is(c.read("gh_s=garbage"), null);
  // CSRF token bound to the session.
  assert.ok(c.checkCsrf(session, c.csrfToken(session)));
  const other = c.issue({ sub: "op-1", role: "viewer" }, true).session;
  assert.not.ok(c.checkCsrf(session, c.csrfToken(other)));
  assert.not.ok(c.checkCsrf(session, undefined));
  now += 60_001;
  assert.is(c.read(`gh_s=${value}`), null);
});

t("same origin: Origin must name the Host (or an allowed origin); none at all is refused", () => {
  const h = (o: Record<string, string>) => new Headers(o);
  assert.ok(isSameOrigin(h({ host: "ops.example:8080", origin: "http://ops.example:8080" })));
  assert.not.ok(isSameOrigin(h({ host: "ops.example", origin: "https://evil.example" })));
  assert.not.ok(isSameOrigin(h({ host: "ops.example", origin: "null" })));
  assert.not.ok(isSameOrigin(h({ host: "ops.example" })));
  assert.ok(isSameOrigin(h({ host: "ops.example", referer: "https://ops.example/console/frozen" })));
  assert.ok(isSameOrigin(h({ host: "internal:3000", origin: "https://ops.example" }), ["https://ops.example"]));
});

t("bar chart: an SVG image with a text summary; labels escaped", () => {
  const svg = barChart({ title: "Requests <per minute>", values: [1, 5, 0], overlay: [0, 2, 0], startLabel: "-60 min", endLabel: "now" }).value;
  assert.match(svg, /^<svg class="chart" role="img"/);
  assert.match(svg, /7 errors|2 errors/);
  assert.not.ok(svg.includes("<per"));
  assert.is((svg.match(/<rect/g) ?? []).length, 3, "empty bars draw nothing");
});

t.run();
