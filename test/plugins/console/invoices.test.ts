/**
 * The console's Stored invoices in process: the invoice page (status timeline, attempts, last error
 * in words, the regulator's answers; never the body; hostile strings escaped; a store outage named),
 * the search box finding an invoice by its ID, IRN and operation ID, and a frozen Stored invoice
 * resolved from the console through the Stored plugin's service (the Admin API's: same record, same
 * `invoice.resolve` audit entry; a double submit has one effect; a viewer's POST changes nothing).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { AuditDoc } from "../../../core/directory-store.ts";
import { openStoredInvoices, type InvoiceDoc } from "../../../plugins/invoice/stored-invoices.ts";
import { ADMIN_KEY, STORED, startSigningHarness } from "../signing/signing-helpers.ts";
import { OPERATOR_KEY, VIEWER_KEY, VIEWER_PATCH, consoleClient, hiddenField } from "./console-helpers.ts";

let outage = false;
const h = await startSigningHarness({
  patch: { console: VIEWER_PATCH.console, recovery: { enabled: false }, stored: { processor: { enabled: false } } },
  storeFault: (collection) => (outage && collection !== "directory_credentials" ? "before" : null),
});
test.after(() => h.close());
const invoices = () => openStoredInvoices(h.store);
const audit = () => h.store.collection<AuditDoc>("directory_audit");
const HOSTILE = `<script>alert("x")</script>`;

function stored(id: string, over: Partial<InvoiceDoc> = {}): InvoiceDoc {
  const t = (s: number) => new Date(Date.parse("2026-11-28T10:00:00.000Z") + s * 1000).toISOString();
  return {
    _id: id, businessId: "demo", state: "TEST", domain: "stored.demo.localhost", subBusinessId: `sub ${HOSTILE}`, direction: "outbound", irn: `IRN-${id}-20240611`,
    status: "rejected",
    statusHistory: [{ status: "pending", at: t(0) }, { status: "validated", at: t(2) }, { status: "signing", at: t(3) }, { status: "rejected", at: t(5) }],
    attempts: 4, budgetLeft: 2, budget: 3, lastError: { code: "GW_SIGN_REJECTED", at: t(5), regulatorMessage: `TIN unknown ${HOSTILE}` }, operationId: `op-${id}`,
    createdAt: t(0), updatedAt: t(5), createdAtMs: Date.parse(t(0)), document: { note: "INVOICE-BODY-SECRET" }, feeKobo: 5000, rev: 5, dueAt: null, step: "done",
    signAttempt: 2, outages: 0, billDoubt: false, settle: false, reverseFor: null, events: [],
    ...over,
  };
}

const admin = consoleClient(h.tg);
const viewer = consoleClient(h.tg);

test("invoice page: status timeline with durations, attempts, last error in words, regulator answers; hostile strings escaped; never the body", async () => {
  await invoices().insert(stored("inv-rejected-1"));
  for (const [c, key] of [[admin, OPERATOR_KEY], [viewer, VIEWER_KEY]] as const) assert.is((await c.signIn(key)).status, 303);
  for (const c of [admin, viewer]) {
    const page = await c.html("/console/invoices/inv-rejected-1");
    for (const s of ["<h1>Invoice IRN-inv-rejected-1-20240611</h1>", "Status timeline", "2.0 s", "Regulator answers", "The regulator refused the signing (Regulator rejected signing).", "Last error", "GW_SIGN_REJECTED", "2 of 3", "op-inv-rejected-1"])
      assert.ok(page.includes(s), s);
    assert.not.ok(page.includes(HOSTILE), "hostile strings come out escaped");
    assert.ok(page.includes("TIN unknown &lt;script&gt;"));
    assert.not.ok(page.includes("INVOICE-BODY-SECRET"), "never the invoice body");
  }
  const missing = await admin.get("/console/invoices/no-such-invoice");
  assert.is(missing.status, 404);
});

test("search: a Stored invoice by its invoice ID, IRN and operation ID, each linking to its page", async () => {
  for (const q of ["inv-rejected-1", "IRN-inv-rejected-1-20240611", "op-inv-rejected-1"]) {
    const page = await admin.html(`/console/search?q=${encodeURIComponent(q)}`);
    assert.match(page, /1 found for/, q);
    assert.ok(page.includes('href="/console/invoices/inv-rejected-1"'), q);
  }
  assert.match(await admin.html("/console/search?q=IRN-unknown"), /Nothing found/);
});

test("overview: signs per minute and the Stored backlog are drawn as SVG charts with text summaries", async () => {
  const overview = await admin.html("/console");
  for (const s of ["<h3>Signs</h3>", "Signs per minute (fees given back in red)", "<h3>Stored backlog</h3>", "Stored backlog: "]) assert.ok(overview.includes(s), s);
  assert.is(overview.match(/<svg class="chart"/g)?.length, 3);
});

test("store outage: the invoice page answers 503 naming the document store", async () => {
  outage = true;
  try {
    const res = await admin.get("/console/invoices/inv-rejected-1");
    assert.is(res.status, 503);
    assert.match(await res.text(), /The document store is unavailable/);
  } finally {
    outage = false;
  }
});

/** A Stored invoice frozen while signing (the regulator's answer lost). */
function frozenSign(id: string): InvoiceDoc {
  return stored(id, {
    status: "frozen",
    statusHistory: [{ status: "pending", at: "2026-11-28T10:00:00.000Z" }, { status: "validated", at: "2026-11-28T10:00:01.000Z" }, { status: "signing", at: "2026-11-28T10:00:02.000Z" }, { status: "frozen", at: "2026-11-28T10:00:03.000Z" }],
    lastError: { code: "GW_SIGN_OUTCOME_UNCONFIRMED", at: "2026-11-28T10:00:03.000Z" },
  });
}

const resolutionEntries = async (operationId: string) => (await audit().find({ "target.id": operationId, action: "invoice.resolve" }, { limit: 10 })).items;

test("resolve a frozen Stored invoice: viewer 403 and nothing changes; no CSRF 403; the operator's decision goes through the Stored service with its audit entry; a double submit has one effect", async () => {
  await invoices().insert(frozenSign("inv-frozen-1"));
  const at = "/console/frozen/stored-invoice/inv-frozen-1";
  const viewerPage = await viewer.html(at);
  assert.match(viewerPage, /Your role is viewer/);
  const page = await admin.html(at);
  assert.match(page, /value="signed"/);
  assert.not.match(page, /value="transmitted"/, "a frozen sign offers the sign outcomes only");
  assert.ok(page.includes('href="/console/invoices/inv-frozen-1"'));
  const form = { _csrf: hiddenField(page, "_csrf"), _idempotency: hiddenField(page, "_idempotency"), outcome: "signed", reason: `checked ${HOSTILE}`, confirm: "yes" };
  const refused = await viewer.post(`${at}/resolution`, { ...form, _csrf: hiddenField(viewerPage, "_csrf") });
  assert.is(refused.status, 403);
  const noCsrf = await admin.post(`${at}/resolution`, { ...form, _csrf: "" });
  assert.is(noCsrf.status, 403);
  assert.is((await invoices().get("inv-frozen-1"))?.status, "frozen", "nothing changed");

  const first = await admin.post(`${at}/resolution`, form);
  assert.is(first.status, 303);
  assert.match(await admin.html(at), /Resolved as signed/);
  const again = await admin.post(`${at}/resolution`, form);
  assert.is(again.status, 303);
  assert.match(await admin.html(at), /no longer frozen/);
  const doc = await invoices().get("inv-frozen-1");
  assert.equal([doc?.status, doc?.resolution?.outcome, doc?.resolution?.by], ["signed", "signed", "operator:demo-operator"]);
  const entries = await resolutionEntries("op-inv-frozen-1");
  assert.is(entries.length, 1, "one audit entry");
  assert.equal([entries[0]!.actor, entries[0]!.changes], ["operator:demo-operator", { invoiceId: "inv-frozen-1", outcome: "signed" }]);
  assert.ok(h.tg.logs.some((l) => l.event === "console_action" && l.action === "stored-invoice.resolve" && l.result === "ok"));
});

test("resolve a frozen Stored invoice: an outcome that does not fit how it froze comes back as a message; the Admin API route writes the same audit entry", async () => {
  await invoices().insert(frozenSign("6f1c2a8e-0000-4000-8000-000000000002"));
  const at = "/console/frozen/stored-invoice/6f1c2a8e-0000-4000-8000-000000000002";
  const page = await admin.html(at);
  const form = { _csrf: hiddenField(page, "_csrf"), _idempotency: hiddenField(page, "_idempotency"), outcome: "transmitted", reason: "checked", confirm: "yes" };
  assert.is((await admin.post(`${at}/resolution`, form)).status, 303);
  assert.match(await admin.html(at), /Not resolved: This invoice froze during signing/);
  assert.is((await invoices().get("6f1c2a8e-0000-4000-8000-000000000002"))?.status, "frozen");
  const api = await h.tg.call("/admin/invoices/6f1c2a8e-0000-4000-8000-000000000002/resolution", { method: "POST", host: STORED, headers: { "x-admin-api-key": ADMIN_KEY, "x-idempotency-key": "resolve-6f1c2a8e-0000-4000-8000-000000000002" }, body: { outcome: "not_signed" } });
  assert.is(api.status, 200, await api.clone().text());
  const entries = await resolutionEntries("op-6f1c2a8e-0000-4000-8000-000000000002");
  assert.is(entries.length, 1);
  assert.equal([entries[0]!.actor, entries[0]!.changes], ["operator:demo-operator", { invoiceId: "6f1c2a8e-0000-4000-8000-000000000002", outcome: "not_signed" }]);
});

test("audit log: filtered by actor and by time range (UTC); a bad time is refused with a message", async () => {
  const byOperator = await admin.html("/console/audit?actor=operator%3Ademo-operator");
  assert.ok(byOperator.includes("invoice.resolve"));
  assert.match(await admin.html("/console/audit?actor=recovery"), /No entries/);
  const today = new Date().toISOString().slice(0, 10);
  assert.ok((await admin.html(`/console/audit?action=invoice.resolve&from=${today}`)).includes("invoice.resolve"));
  assert.match(await admin.html("/console/audit?action=invoice.resolve&from=2099-01-01T00%3A00"), /No entries/);
  assert.match(await admin.html("/console/audit?to=2020-01-01"), /No entries/);
  const bad = await admin.html(`/console/audit?from=${encodeURIComponent(HOSTILE)}`);
  assert.match(bad, /That filter or page link is not valid/);
  assert.not.ok(bad.includes(HOSTILE), "escaped");
});

test.run();
