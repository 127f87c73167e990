/**
 * The operator console in process (HTML fetched through the gateway's fetch, no browser): sign-in
 * (operator key → admin, console viewer key → viewer; failures rate-limited and logged without the
 * key), every screen, a frozen sign found by its request ID and resolved through the recovery
 * plugin's service (the Admin API's: same record, same audit entry; a double submit has one
 * effect), the refusals (viewer POST, missing CSRF token, foreign or missing Origin → 403 and nothing
 * changes), hostile input escaped, and a store outage named on the page (503, no stack).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { AuditDoc } from "../../../core/directory-store.ts";
import type { SignRecord } from "../../../plugins/invoice/sign-attempts.ts";
import { expectProblem, invoice, startSigningHarness } from "../signing/signing-helpers.ts";
import { OPERATOR_KEY, VIEWER_KEY, VIEWER_PATCH, consoleClient, hiddenField } from "./console-helpers.ts";

let outage = false;
const h = await startSigningHarness({
  patch: { console: { ...VIEWER_PATCH.console, signInAttempts: 5, signInWindowMs: 3_600_000 }, recovery: { enabled: false } },
  storeFault: (collection) => (outage && collection !== "directory_credentials" ? "before" : null),
});
test.after(() => h.close());
const records = () => h.store.collection<SignRecord>("signing_idempotency");
const audit = () => h.store.collection<AuditDoc>("directory_audit");

/** A Pass-through sign whose outcome is unprovable (the regulator times out): fee held. */
async function frozenSign(no: string): Promise<{ requestId: string; operationId: string }> {
  h.sim.faults.set("sign", { kind: "timeout", times: 1 });
  const res = await h.sign(invoice(no), { key: `console-${no}-key` });
  const requestId = res.headers.get("x-request-id")!;
  const body = await expectProblem(res, 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
  return { requestId, operationId: body.operationId };
}

test("signed out: every screen redirects to sign-in and back; the stylesheet is served to anyone", async () => {
  const c = consoleClient(h.tg);
  const res = await c.get("/console/frozen?businessId=demo");
  assert.is(res.status, 303);
  assert.is(res.headers.get("location"), "/console/sign-in?next=%2Fconsole%2Ffrozen%3FbusinessId%3Ddemo");
  const form = await c.html("/console/sign-in?next=%2Fconsole%2Ffrozen");
  assert.match(form, /<label for="f-key">Key<\/label>/);
  assert.match(form, /name="next" value="\/console\/frozen"/);
  const css = await c.get("/console/assets/ui.css");
  assert.is(css.status, 200);
  assert.match(css.headers.get("content-type")!, /text\/css/);
  // A next link to another site is not followed.
  const off = await c.html("/console/sign-in?next=%2F%2Fevil.example%2F");
  assert.match(off, /name="next" value="\/console"/);
});

const admin = consoleClient(h.tg);
const viewer = consoleClient(h.tg);

test("every screen renders for a signed-in operator: overview (dependencies, circuits, backlog, chart), frozen, alerts, search", async () => {
  // In process every request has the same (unknown) client address: these are sign-in attempts 1 and 2 of 5.
  for (const [c, key] of [[admin, OPERATOR_KEY], [viewer, VIEWER_KEY]] as const) assert.is((await c.signIn(key)).status, 303);
  const overview = await admin.html("/console");
  for (const s of ["<h1>Overview</h1>", "Dependencies", "documentStore", "Stored invoices", "Oldest pending", "Webhook outbox", "Alerts", '<svg class="chart" role="img"'])
    assert.ok(overview.includes(s), s);
  assert.match(await admin.html("/console/frozen"), /<h1>Frozen operations<\/h1>/);
  assert.match(await admin.html("/console/alerts"), /<h1>Alerts and dead letters<\/h1>/);
  assert.match(await admin.html("/console/search?q=nothing-here"), /Nothing found for <code>nothing-here<\/code>/);
  assert.match(await viewer.html("/console"), /demo-viewer \(viewer\)/);
});

test("a frozen sign found by its request ID, resolved with confirmation and reason through the Admin API's service; a double submit has one effect", async () => {
  const before = await h.ledgerBalanced();
  const { requestId, operationId } = await frozenSign("CN1");
  const found = await admin.html(`/console/search?q=${requestId}`);
  assert.match(found, /1 found for/);
  assert.ok(found.includes(`/console/frozen/passthrough-sign/${operationId}`), "links to the operation");
  assert.ok((await admin.html("/console/frozen")).includes(operationId), "listed as frozen");
  const detail = await admin.html(`/console/frozen/passthrough-sign/${operationId}`);
  for (const s of [requestId, "CN1-94ND90NR-20240611", "held", 'name="outcome" value="not_signed"', 'name="reason"', 'name="confirm"']) assert.ok(detail.includes(s), s);
  const form = { _csrf: hiddenField(detail, "_csrf"), _idempotency: hiddenField(detail, "_idempotency"), outcome: "not_signed", reason: "Regulator portal shows no such IRN", confirm: "yes" };
  const path = `/console/frozen/passthrough-sign/${operationId}/resolution`;
  // Without the confirmation nothing happens.
  const unconfirmed = await admin.post(path, { ...form, confirm: "" });
  assert.is(unconfirmed.status, 303);
  assert.match(await admin.html(unconfirmed.headers.get("location")!), /Not resolved: confirm that you checked/);
  assert.is((await records().findOne({ operationId }))?.money, "held");
  const done = await admin.post(path, form);
  assert.is(done.status, 303, "POST-redirect-GET");
  assert.is(done.headers.get("location"), `/console/frozen/passthrough-sign/${operationId}`);
  const after = await admin.html(done.headers.get("location")!);
  assert.match(after, /role="status">Resolved as not_signed/);
  assert.match(after, /not frozen any more/);
  const rec = await records().findOne({ operationId });
  assert.is(rec?.money, "reversed");
  assert.equal(rec?.resolution?.by, "operator:demo-operator");
  const entry = (await audit().find({ "target.id": operationId })).items.find((a) => a.action === "sign_attempt.resolve");
  assert.is(entry?.actor, "operator:demo-operator", "the Admin API's audit entry");
  // The same form again (a double submit): the service answers the recorded decision; no second reversal.
  const again = await admin.post(path, form);
  assert.match(await admin.html(again.headers.get("location")!), /Resolved as not_signed/);
  const ledger = await h.ledgerBalanced();
  assert.is(ledger.reversals, before.reversals + 1, "one reversal");
  assert.ok(h.tg.logs.some((l) => l.event === "console_action" && l.operationId === operationId && l.reason === form.reason));
});

test("audit log: the console's resolution is there (actor, action, target), filterable; bad links are a message, not an error", async () => {
  const page = await admin.html("/console/audit?action=sign_attempt.resolve");
  assert.match(page, /<h1>Audit log<\/h1>/);
  assert.match(page, /operator:demo-operator/);
  assert.match(page, /operation: /);
  const none = await admin.html("/console/audit?targetId=no-such-target");
  assert.match(none, /No entries/);
  const bad = await admin.get("/console/audit?cursor=not-a-cursor");
  assert.is(bad.status, 200);
  assert.match(await bad.text(), /not valid/);
  const hostile = await admin.html(`/console/audit?targetId=${encodeURIComponent('"><script>x</script>')}`);
  assert.not.ok(hostile.includes("<script>"));
});

test("refused with 403 and nothing changed: a viewer's resolve, a missing or foreign CSRF token, another Origin, no Origin", async () => {
  const { operationId } = await frozenSign("CN2");
  const path = `/console/frozen/passthrough-sign/${operationId}/resolution`;
  const viewerPage = await viewer.html(`/console/frozen/passthrough-sign/${operationId}`);
  assert.match(viewerPage, /Your role is viewer/);
  assert.not.match(viewerPage, /name="outcome"/, "no resolve form for a viewer");
  const adminPage = await admin.html(`/console/frozen/passthrough-sign/${operationId}`);
  const good = { _csrf: hiddenField(adminPage, "_csrf"), _idempotency: hiddenField(adminPage, "_idempotency"), outcome: "signed", reason: "checked", confirm: "yes" };
  const viewerCsrf = hiddenField(viewerPage, "_csrf");
  const attempts: Array<[string, Promise<Response>]> = [
    ["viewer with its own valid token", viewer.post(path, { ...good, _csrf: viewerCsrf })],
    ["no CSRF token", admin.post(path, { ...good, _csrf: "" })],
    ["another session's token", admin.post(path, { ...good, _csrf: viewerCsrf })],
    ["foreign Origin", admin.post(path, good, { origin: "https://evil.example" })],
    ["no Origin", admin.post(path, good, { origin: null })],
  ];
  for (const [what, pending] of attempts) {
    const res = await pending;
    assert.is(res.status, 403, what);
    assert.match(await res.text(), /<h1>Not allowed<\/h1>/, what);
  }
  const rec = await records().findOne({ operationId });
  assert.is(rec?.money, "held", "nothing changed");
  assert.is(rec?.resolution, undefined);
  const replay = await viewer.post("/console/alerts/00000000-0000-4000-8000-000000000000/replay", { _csrf: viewerCsrf });
  assert.is(replay.status, 403, "a viewer cannot replay either");
});

test("hostile input comes out escaped (search box, filters); unknown ids are a 404 page", async () => {
  const hostile = `<script>alert(1)</script>"><img src=x onerror=alert(1)>`;
  for (const path of [`/console/search?q=${encodeURIComponent(hostile)}`, `/console/frozen?businessId=${encodeURIComponent(hostile)}`]) {
    const res = await admin.get(path);
    const html = await res.text();
    assert.is(res.status, 200, path);
    assert.not.ok(html.includes("<script>") || html.includes("<img"), path);
  }
  const res = await admin.get("/console/frozen/passthrough-sign/no-such-op");
  assert.is(res.status, 404);
  assert.match(await res.text(), /No such frozen operation/);
});

test("store outage: lists answer 503 naming the document store (no stack); the overview still draws and says what is down", async () => {
  outage = true;
  try {
    const res = await admin.get("/console/frozen");
    const html = await res.text();
    assert.is(res.status, 503);
    assert.match(html, /The document store is unavailable/);
    assert.match(html, /What still works/);
    assert.not.match(html, /\bat .+\.ts:\d+/, "no stack trace");
    const overview = await admin.get("/console");
    const text = await overview.text();
    assert.is(overview.status, 200);
    assert.match(text, /The document store is unavailable|cannot be read right now/);
    assert.match(text, /<svg class="chart"/, "the in-memory chart still draws");
  } finally {
    outage = false;
  }
});

test("sign-in (last: it uses up the attempt limit): operator key → admin session cookie (HttpOnly, SameSite=Strict, expiry); wrong keys logged without the key and rate-limited", async () => {
  const c = consoleClient(h.tg);
  const wrong = "wrong_key_" + "x".repeat(20);
  const bad = await c.post("/console/sign-in", { key: wrong, next: "/console" });
  assert.is(bad.status, 401);
  assert.match(await bad.text(), /role="alert">That key is not an operator or console key/);
  const failures = h.tg.logs.filter((l) => l.event === "console_sign_in_failed");
  assert.ok(failures.length >= 1);
  assert.not.ok(JSON.stringify(h.tg.logs).includes(wrong), "the key is never logged");
  const ok = await c.signIn(OPERATOR_KEY);
  assert.is(ok.status, 303);
  assert.is(ok.headers.get("location"), "/console");
  const cookie = ok.headers.getSetCookie().find((s) => s.startsWith("gh_console="))!;
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  assert.match(cookie, /Max-Age=\d+/);
  assert.match(cookie, /Path=\/console/);
  assert.not.match(cookie, /Secure/, "plain HTTP: no Secure flag");
  assert.not.ok(JSON.stringify(h.tg.logs).includes(OPERATOR_KEY));
  // Attempts 3 and 4 above; the limit is 5 per client address and window.
  assert.is((await c.post("/console/sign-in", { key: wrong })).status, 401);
  const limited = await c.post("/console/sign-in", { key: OPERATOR_KEY });
  assert.is(limited.status, 429);
  assert.ok(Number(limited.headers.get("retry-after")) >= 1);
  assert.ok(h.tg.logs.some((l) => l.event === "console_sign_in_failed" && l.reason === "rate_limited"));
});

test.run();
