/**
 * The payment-link API (spec §2.2–§4, DECISIONS.md "Payment links"): create with every rule, the
 * 422 field lists, 409 on a reused source_reference, lookups, lists with meta/search/status,
 * toggle-status, Bearer scoping, the envelope, the customer e-mails — and one real-HTTP round trip.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { httpCall } from "../../../support/raw-http.ts";
import { BEARER_OTHER, dataOf, eventually, sourceRef, startCollections, type LinkData } from "./collections-helpers.ts";

const h = await startCollections();
const TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const REQUEST_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{3})?$/;

interface Envelope {
  requestId: string;
  requestTimestamp: string;
  message: string;
  statusCode: number;
  data?: unknown;
  meta?: Record<string, number>;
  errors?: Array<{ field: string; message: string }>;
}

test("create → 201 envelope with every field of §2.3 and DECISIONS.md", async () => {
  const res = await h.api("/api/v1/payment-link", {
    body: {
      link_name: "Spring term fees",
      narration: "School fees, spring term",
      fee_bearer: "CUSTOMER",
      source_reference: "inv-2025-0001",
      amount: 15000.5,
      customer_emails: ["parent@example.com"],
      redirect_link: "https://school.example.com/thanks",
      start_date: "2025-01-01",
      end_date: "2099-12-31T18:00:00+01:00",
    },
  });
  assert.is(res.status, 201);
  assert.is(res.headers.get("content-type"), "application/json");
  const body = (await res.json()) as Envelope;
  assert.is(body.statusCode, 201);
  assert.match(body.requestId, /^[0-9a-f-]{36}$/);
  assert.is(res.headers.get("x-request-id"), body.requestId);
  assert.match(body.requestTimestamp, REQUEST_TIME);
  assert.type(body.message, "string");
  const d = body.data as LinkData;
  assert.match(d.reference, /^PL-[A-Z2-9]{16}$/);
  assert.match(d.id, /^[0-9a-f-]{36}$/);
  assert.equal(
    { ...d, id: "", reference: "", createdAt: "" },
    {
      id: "",
      reference: "",
      sourceReference: "inv-2025-0001",
      linkName: "Spring term fees",
      linkUrl: `https://pay.example.test/pay/${d.reference}`,
      narration: "School fees, spring term",
      amount: 15000.5,
      currency: "NGN",
      feeBearer: "CUSTOMER",
      redirectLink: "https://school.example.com/thanks",
      customerEmails: ["parent@example.com"],
      startDate: "2025-01-01 00:00:00",
      endDate: "2099-12-31 17:00:00",
      status: "active",
      createdAt: "",
    },
  );
  assert.match(d.createdAt as string, TIME);
});

test("create with only the required fields: amount, window, redirect and e-mails are empty", async () => {
  const d = await h.createLink({ link_name: "Donations", narration: "Any amount", fee_bearer: "MERCHANT" });
  assert.is(d.amount, null);
  assert.is(d.redirectLink, null);
  assert.equal(d.customerEmails, []);
  assert.is(d.startDate, null);
  assert.is(d.endDate, null);
  assert.is(d.status, "active");
  const blank = await h.createLink({ link_name: "Blank redirect", redirect_link: "" });
  assert.is(blank.redirectLink, null, "a blank redirect_link means: stay on the success page");
});

test("422 lists every failing field by its name as sent, and never echoes a value", async () => {
  const res = await h.api("/api/v1/payment-link", {
    body: {
      link_name: "",
      fee_bearer: "BOTH",
      source_reference: 42,
      amount: 99.99,
      customer_emails: ["ok@example.com", "SECRET-not-an-email", 7],
      redirect_link: "javascript:alert('SECRET')",
      start_date: "2025-02-30",
      end_date: "next tuesday SECRET",
    },
  });
  assert.is(res.status, 422);
  const body = (await res.json()) as Envelope;
  assert.is(body.statusCode, 422);
  const fields = body.errors!.map((e) => e.field);
  assert.equal(fields, [
    "link_name",
    "narration",
    "fee_bearer",
    "source_reference",
    "amount",
    "customer_emails.1",
    "customer_emails.2",
    "redirect_link",
    "start_date",
    "end_date",
  ]);
  assert.is(body.errors!.find((e) => e.field === "narration")!.message, "is required");
  assert.match(body.errors!.find((e) => e.field === "amount")!.message, /at least 100/);
  assert.not.ok(JSON.stringify(body).includes("SECRET"), "no rejected value is echoed");
  assert.not.ok(JSON.stringify(body).includes("BOTH"), "no rejected value is echoed");
});

test("422: amount with more than two decimals, end_date before start_date, a non-array e-mail list", async () => {
  const res = await h.api("/api/v1/payment-link", {
    body: {
      link_name: "x",
      narration: "y",
      fee_bearer: "MERCHANT",
      source_reference: sourceRef(),
      amount: 100.123,
      customer_emails: "a@example.com",
      start_date: "2099-06-02",
      end_date: "2099-06-01T23:59:59Z",
    },
  });
  assert.is(res.status, 422);
  const errors = ((await res.json()) as Envelope).errors!;
  assert.equal(
    errors.map((e) => e.field),
    ["amount", "customer_emails", "end_date"],
  );
  assert.match(errors[2]!.message, /not be before start_date/);
  // The same day as start and end is a valid one-day window.
  const ok = await h.createLink({ link_name: "One day", start_date: "2099-06-02", end_date: "2099-06-02" });
  assert.is(ok.startDate, "2099-06-02 00:00:00");
  assert.is(ok.endDate, "2099-06-02 23:59:59");
});

test("422 naming end_date when it is already past: nothing is created and nothing is e-mailed", async () => {
  const iso = (ms: number) => new Date(ms).toISOString();
  const ref = sourceRef();
  const res = await h.api("/api/v1/payment-link", {
    body: { link_name: "Too late", narration: "n", fee_bearer: "MERCHANT", source_reference: ref, customer_emails: ["late@example.com"], end_date: iso(h.clock.now() - 60_000) },
  });
  assert.is(res.status, 422);
  const body = (await res.json()) as Envelope;
  assert.equal(body.errors, [{ field: "end_date", message: "must not be in the past" }]);
  await new Promise((r) => setTimeout(r, 200));
  assert.not.ok(h.mails().some((m) => m.includes("late@example.com")), "no e-mail");
  assert.is((await h.api(`/api/v1/payment-link/find-by-source-reference/${ref}`)).status, 404, "no link");
  // An end later today is still a usable window.
  const later = await h.createLink({ link_name: "Later today", end_date: iso(h.clock.now() + 60_000) });
  assert.ok(later.reference);
});

test("422 for an empty body and for a body that is not an object; 400 for malformed JSON", async () => {
  const empty = await h.api("/api/v1/payment-link", { method: "POST" });
  assert.is(empty.status, 422);
  assert.equal(
    ((await empty.json()) as Envelope).errors!.map((e) => e.field),
    ["body"],
  );
  const array = await h.api("/api/v1/payment-link", { body: [1, 2] });
  assert.is(array.status, 422);
  const bad = await h.api("/api/v1/payment-link", { body: '{"link_name": ', headers: { "content-type": "application/json" } });
  assert.is(bad.status, 400);
  const b = (await bad.json()) as Envelope;
  assert.is(b.statusCode, 400);
  assert.equal(b.errors, []);
});

test("all required fields missing → each one listed", async () => {
  const res = await h.api("/api/v1/payment-link", { body: {} });
  assert.is(res.status, 422);
  assert.equal(
    ((await res.json()) as Envelope).errors!.map((e) => [e.field, e.message]),
    [
      ["link_name", "is required"],
      ["narration", "is required"],
      ["fee_bearer", "is required"],
      ["source_reference", "is required"],
    ],
  );
});

test("409 on a reused source_reference in the same business; another business may use it", async () => {
  const ref = sourceRef("dup");
  await h.createLink({ link_name: "First", source_reference: ref });
  const again = await h.api("/api/v1/payment-link", {
    body: { link_name: "Second", narration: "n", fee_bearer: "MERCHANT", source_reference: ref },
  });
  assert.is(again.status, 409);
  const body = (await again.json()) as Envelope;
  assert.is(body.statusCode, 409);
  assert.equal(body.errors!.map((e) => e.field), ["source_reference"]);
  const other = await h.createLink({ link_name: "Other's", source_reference: ref }, BEARER_OTHER);
  assert.is(other.sourceReference, ref);
});

test("concurrent creates with one source_reference: exactly one 201, the rest 409", async () => {
  const ref = sourceRef("race");
  const results = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      h.api("/api/v1/payment-link", { body: { link_name: `R${i}`, narration: "n", fee_bearer: "MERCHANT", source_reference: ref } }),
    ),
  );
  const statuses = results.map((r) => r.status).sort();
  assert.equal(statuses, [201, 409, 409, 409, 409, 409, 409, 409]);
});

test("401 without a key, with a malformed header, with an unknown key", async () => {
  const none = await h.api("/api/v1/payment-link", { key: null });
  assert.is(none.status, 401);
  assert.match(((await none.json()) as Envelope).message, /Authorization/);
  const malformed = await h.api("/api/v1/payment-link", { key: null, headers: { authorization: "Basic abc" } });
  assert.is(malformed.status, 401);
  const unknown = await h.api("/api/v1/payment-link", { key: "sk_test_nobody_000" });
  assert.is(unknown.status, 401);
});

test("find by reference and by source reference; another business gets 404, never the link", async () => {
  const link = await h.createLink({ link_name: "Findable", source_reference: "find me/ünïcode" });
  const byRef = await h.api(`/api/v1/payment-link/find-by-reference/${link.reference}`);
  assert.is(byRef.status, 200);
  assert.equal(await dataOf(byRef), link);
  const bySource = await h.api(`/api/v1/payment-link/find-by-source-reference/${encodeURIComponent("find me/ünïcode")}`);
  assert.is(bySource.status, 200);
  assert.equal(await dataOf(bySource), link);

  for (const path of [
    `/api/v1/payment-link/find-by-reference/${link.reference}`,
    `/api/v1/payment-link/find-by-source-reference/${encodeURIComponent("find me/ünïcode")}`,
    `/api/v1/payment-link/find-by-reference/${link.reference}/transactions`,
    `/api/v1/payment-link/source-reference/${encodeURIComponent("find me/ünïcode")}/transactions`,
  ]) {
    const res = await h.api(path, { key: BEARER_OTHER });
    assert.is(res.status, 404, path);
    const text = await res.text();
    assert.not.ok(text.includes("Findable"), "nothing of the link leaks");
    assert.is((JSON.parse(text) as Envelope).statusCode, 404);
  }
  const toggled = await h.api("/api/v1/payment-link/toggle-status", { body: { link_id: link.reference, activate: false }, key: BEARER_OTHER });
  assert.is(toggled.status, 404);
  assert.is((await dataOf<LinkData>(await h.api(`/api/v1/payment-link/find-by-reference/${link.reference}`))).status, "active");
  const unknown = await h.api("/api/v1/payment-link/find-by-reference/PL-DOESNOTEXIST0000");
  assert.is(unknown.status, 404);
});

test("list: default page 1 / limit 15, meta like virtual-account lists, newest first", async () => {
  const fresh = await startCollections();
  try {
    const made: LinkData[] = [];
    for (let i = 0; i < 17; i++) {
      made.push(await fresh.createLink({ link_name: i % 2 === 0 ? `Even link ${i}` : `Odd link ${i}` }));
      fresh.clock.advance(1000);
    }
    const first = await fresh.api("/api/v1/payment-link");
    assert.is(first.status, 200);
    const body = (await first.json()) as Envelope;
    assert.equal(body.meta, { current_page: 1, from: 1, last_page: 2, per_page: 15, to: 15, total: 17 });
    const data = body.data as LinkData[];
    assert.is(data.length, 15);
    assert.is(data[0]!.reference, made[16]!.reference, "newest first");
    const second = (await (await fresh.api("/api/v1/payment-link?page=2")).json()) as Envelope;
    assert.equal(second.meta, { current_page: 2, from: 16, last_page: 2, per_page: 15, to: 17, total: 17 });
    assert.equal(
      (second.data as LinkData[]).map((l) => l.reference),
      [made[1]!.reference, made[0]!.reference],
    );
    const small = (await (await fresh.api("/api/v1/payment-link?limit=5&page=3")).json()) as Envelope;
    assert.equal(small.meta, { current_page: 3, from: 11, last_page: 4, per_page: 5, to: 15, total: 17 });

    // search: link name (case-insensitive substring) or reference
    const odd = (await (await fresh.api("/api/v1/payment-link?search=odd%20LINK")).json()) as Envelope;
    assert.is(odd.meta!.total, 8);
    const byRef = (await (await fresh.api(`/api/v1/payment-link?search=${made[3]!.reference.slice(3, 12)}`)).json()) as Envelope;
    assert.equal(
      (byRef.data as LinkData[]).map((l) => l.reference),
      [made[3]!.reference],
    );

    // status filter
    await fresh.api("/api/v1/payment-link/toggle-status", { body: { link_id: made[0]!.reference, activate: false } });
    await fresh.api("/api/v1/payment-link/toggle-status", { body: { link_id: made[1]!.id, activate: false } });
    const inactive = (await (await fresh.api("/api/v1/payment-link?status=inactive")).json()) as Envelope;
    assert.equal(
      (inactive.data as LinkData[]).map((l) => l.reference).sort(),
      [made[0]!.reference, made[1]!.reference].sort(),
    );
    const active = (await (await fresh.api("/api/v1/payment-link?status=active&limit=100")).json()) as Envelope;
    assert.is(active.meta!.total, 15);

    // scoping: the other business sees none of them
    const other = (await (await fresh.api("/api/v1/payment-link", { key: BEARER_OTHER })).json()) as Envelope;
    assert.equal(other.data, []);
    assert.equal(other.meta, { current_page: 1, from: 0, last_page: 1, per_page: 15, to: 0, total: 0 });
  } finally {
    await fresh.close();
  }
});

test("list query validation → 422 naming the parameter", async () => {
  for (const [query, field] of [
    ["page=0", "page"],
    ["page=abc", "page"],
    ["limit=101", "limit"],
    ["limit=-1", "limit"],
    ["status=deleted", "status"],
  ] as const) {
    const res = await h.api(`/api/v1/payment-link?${query}`);
    assert.is(res.status, 422, query);
    const body = (await res.json()) as Envelope;
    assert.equal(body.errors!.map((e) => e.field), [field], query);
  }
  const tx = await h.api(`/api/v1/payment-link/find-by-reference/PL-X/transactions?status=done`);
  assert.is(tx.status, 422);
});

test("toggle-status by reference or id → 200 with the updated link; idempotent; 422 on a bad body", async () => {
  const link = await h.createLink({ link_name: "Toggle me" });
  const off = await h.api("/api/v1/payment-link/toggle-status", { body: { link_id: link.reference, activate: false } });
  assert.is(off.status, 200);
  const offData = await dataOf<LinkData>(off);
  assert.is(offData.status, "inactive");
  assert.is(offData.reference, link.reference);
  const offAgain = await h.api("/api/v1/payment-link/toggle-status", { body: { link_id: link.id, activate: false } });
  assert.is(offAgain.status, 200);
  assert.is((await dataOf<LinkData>(offAgain)).status, "inactive");
  const on = await h.api("/api/v1/payment-link/toggle-status", { body: { link_id: link.id, activate: true } });
  assert.is((await dataOf<LinkData>(on)).status, "active");

  const bad = await h.api("/api/v1/payment-link/toggle-status", { body: { link_id: "", activate: "yes" } });
  assert.is(bad.status, 422);
  assert.equal(
    ((await bad.json()) as Envelope).errors!.map((e) => e.field),
    ["link_id", "activate"],
  );
  const missing = await h.api("/api/v1/payment-link/toggle-status", { body: { link_id: "PL-NOPE", activate: true } });
  assert.is(missing.status, 404);
});

test("customer_emails receive the link, one message per address", async () => {
  const link = await h.createLink({
    link_name: "Emailed link",
    amount: 2500,
    customer_emails: ["first@example.com", "second@example.com", "FIRST@example.com"],
  });
  assert.equal(link.customerEmails, ["first@example.com", "second@example.com"], "duplicates removed");
  await eventually(() => h.mails().filter((m) => m.includes(link.reference)).length === 2, 3_000, "two e-mails");
  const mails = h.mails().filter((m) => m.includes(link.reference));
  const to = mails.map((m) => /^To: (.*)$/m.exec(m)?.[1]?.trim()).sort();
  assert.equal(to, ["first@example.com", "second@example.com"]);
  assert.ok(mails.every((m) => m.includes(link.linkUrl) && m.includes("2,500.00")));
});

test("an e-mail failure never fails the create (it is logged)", async () => {
  const broken = await startCollections({ mailDir: "/dev/null/not-a-folder" });
  try {
    const link = await broken.createLink({ link_name: "Mail fails", customer_emails: ["x@example.com"] });
    assert.is(link.status, "active");
    await eventually(() => broken.tg.logs.some((l) => l.event === "collections_payment_link_email_failed"), 3_000, "the failure log");
    const record = broken.tg.logs.find((l) => l.event === "collections_payment_link_email_failed")!;
    assert.not.ok(JSON.stringify(record).includes("x@example.com"), "no customer address in logs");
  } finally {
    await broken.close();
  }
});

test("real HTTP: create, read and list over a socket with a Host header", async () => {
  const server = await h.tg.listen();
  const headers = { authorization: "Bearer sk_test_demo_0001", "content-type": "application/json" };
  const created = await httpCall(server.url, "/api/v1/payment-link", {
    method: "POST",
    host: "localhost",
    headers,
    body: JSON.stringify({ link_name: "Over the wire", narration: "n", fee_bearer: "MERCHANT", source_reference: sourceRef("http"), amount: 100 }),
  });
  assert.is(created.status, 201);
  const link = (created.json() as Envelope).data as LinkData;
  assert.is(link.amount, 100);
  const read = await httpCall(server.url, `/api/v1/payment-link/find-by-reference/${link.reference}`, { host: "localhost", headers });
  assert.is(read.status, 200);
  assert.is(((read.json() as Envelope).data as LinkData).linkName, "Over the wire");
  const wrongHost = await httpCall(server.url, "/api/v1/payment-link", { host: "passthrough.demo.localhost", headers });
  assert.is(wrongHost.status, 404, "collections routes answer on collections hosts only");
  const page = await httpCall(server.url, `/pay/${link.reference}`, { host: "localhost" });
  assert.is(page.status, 200);
  assert.match(page.headers["content-type"]!, /^text\/html/);
  assert.ok(page.text.includes("Over the wire"));
  const token = /name="checkout_token" value="([^"]+)"/.exec(page.text)![1]!;
  const paid = await httpCall(server.url, `/pay/${link.reference}`, {
    method: "POST",
    host: "localhost",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ checkout_token: token, email: "wire@example.com", amount: "100.00", outcome: "success" }).toString(),
  });
  assert.is(paid.status, 303);
  const success = await httpCall(server.url, paid.headers.location!, { host: "localhost" });
  assert.is(success.status, 200);
  assert.match(success.text, /Payment successful/);
});

test("the routes are in the route table and the OpenAPI document (query parameters included)", async () => {
  // The payment-link part of the collections plugin (virtual accounts and customers have their own tests).
  const ids = h.tg.gateway.routes
    .routes()
    .filter((r) => r.plugin === "collections" && /^\/(api\/v1\/(payment-link|balances)|pay)\b/.test(r.decl.path))
    .map((r) => r.id)
    .sort();
  assert.equal(ids, [
    "GET /api/v1/balances/transactions",
    "GET /api/v1/payment-link",
    "GET /api/v1/payment-link/find-by-reference/:reference",
    "GET /api/v1/payment-link/find-by-reference/:reference/transactions",
    "GET /api/v1/payment-link/find-by-source-reference/:source_reference",
    "GET /api/v1/payment-link/source-reference/:source_reference/transactions",
    "GET /pay/-/transfer.js",
    "GET /pay/:reference",
    "GET /pay/:reference/status/:sessionId",
    "GET /pay/:reference/success/:sessionId",
    "POST /api/v1/payment-link",
    "POST /api/v1/payment-link/toggle-status",
    "POST /pay/:reference",
  ]);
  const doc = (await (await h.tg.call("/openapi.json", { host: "localhost" })).json()) as {
    paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }>; security?: unknown }>>;
  };
  const list = doc.paths["/api/v1/payment-link"]!.get!;
  assert.equal(list.parameters!.filter((p) => p.in === "query").map((p) => p.name), ["page", "limit", "status", "search"]);
  assert.equal(list.security, [{ bearer: [] }]);
  assert.ok(doc.paths["/pay/{reference}"]!.post);
});

test("logs never carry API keys or customer e-mail addresses", () => {
  const text = JSON.stringify(h.tg.logs);
  assert.not.ok(text.includes("sk_test_demo_0001"));
  assert.not.ok(text.includes("parent@example.com"));
});

test.after(() => h.close());
test.run();
