/**
 * POST /api/v1/virtual-account (spec §2.4–§2.5, §8; DECISIONS.md "Virtual accounts"): the 201
 * resource with every field, every create rule with its 422 field list (never echoing values), 409
 * on a reused source_reference, NUBAN-shaped unique account numbers (a clash draws again), stable
 * UUIDs for businessId and walletId, the route declarations — and one real-HTTP round trip.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createSqliteDocumentStore } from "../../../../adapters/document-store/sqlite/store.ts";
import { createVirtualAccountService } from "../../../../plugins/collections/virtual-accounts/account-service.ts";
import {
  businessUuid,
  isNuban,
  newAccountNumber,
  nubanCheckDigit,
  uuidV5,
  walletUuid,
} from "../../../../plugins/collections/virtual-accounts/identifiers.ts";
import { httpCall } from "../../../support/raw-http.ts";
import { BEARER_OTHER, BEARER_LIVE, sourceRef, startCollections } from "../payment-links/collections-helpers.ts";
import { HOUR, TIME, UUID, body, createAccount, fmt, type AccountData } from "./va-helpers.ts";

const h = await startCollections();
// A whole second, so `expires_at` (second precision) can sit exactly 24 hours ahead.
h.clock.set(Math.floor(Date.now() / 1000) * 1000);

const create = (b: unknown, key?: string) => h.api("/api/v1/virtual-account", { body: b, key });
const errorsOf = async (res: Response) => (await body(res)).errors ?? [];
const fieldsOf = async (res: Response) => (await errorsOf(res)).map((e) => e.field);

test("single_use → 201 envelope with every field of §2.5", async () => {
  const expiresAt = fmt(h.clock.now() + 2 * HOUR);
  const res = await create({
    account_type: "single_use",
    account_name: "Order 1042 — Ada",
    source_reference: "order-1042",
    amount: 1000,
    expires_at: expiresAt,
  });
  assert.is(res.status, 201);
  assert.is(res.headers.get("content-type"), "application/json");
  const env = await body<AccountData>(res);
  assert.is(env.statusCode, 201);
  assert.match(env.requestId, UUID);
  assert.is(res.headers.get("x-request-id"), env.requestId);
  assert.match(env.requestTimestamp, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{3})?$/);
  const d = env.data;
  assert.match(d.id, UUID);
  assert.match(d.reference, /^VA-[A-Z2-9]{16}$/);
  assert.match(d.accountNumber, /^\d{10}$/);
  assert.ok(isNuban(d.accountNumber), "NUBAN check digit");
  assert.equal(
    { ...d, id: "", reference: "", accountNumber: "" },
    {
      id: "",
      businessId: businessUuid("demo"),
      businessState: "TEST",
      amount: { value: 1000, currency: "NGN", formatted: "NGN 1,000.00" },
      reference: "",
      walletId: walletUuid("demo"),
      sourceReference: "order-1042",
      accountNumber: "",
      accountName: "Order 1042 — Ada",
      providerName: "Gatehouse Sandbox Bank",
      accountType: "single_use",
      status: "active",
      currency: "NGN",
      expiresAt,
      createdAt: fmt(h.clock.now()),
      customerId: null,
    },
  );
  assert.match(d.businessId, UUID);
  assert.match(d.walletId, UUID);
  assert.match(d.createdAt, TIME);
});

test("multi_use without amount: amount.value and formatted are null, expiresAt null", async () => {
  const d = await createAccount(h, { account_type: "multi_use", account_name: "Tuition" });
  assert.equal(d.amount, { value: null, currency: "NGN", formatted: null });
  assert.is(d.expiresAt, null);
  assert.is(d.accountType, "multi_use");
  assert.is(d.status, "active");
  const nulls = await createAccount(h, { amount: null, expires_at: null });
  assert.is(nulls.amount.value, null, "null amount and null expires_at are the same as omitted for multi_use");
});

test("amount: two decimals, thousands separators, the smallest positive amount", async () => {
  assert.equal((await createAccount(h, { amount: 1234567.5 })).amount, { value: 1234567.5, currency: "NGN", formatted: "NGN 1,234,567.50" });
  assert.equal((await createAccount(h, { amount: 0.01 })).amount, { value: 0.01, currency: "NGN", formatted: "NGN 0.01" });
  assert.equal((await createAccount(h, { amount: 100000000 })).amount.formatted, "NGN 100,000,000.00");
});

test("422 lists every failing field at once, in request order, never echoing a value", async () => {
  const res = await create({
    account_type: "SECRET-TYPE-VALUE",
    account_name: "ab",
    source_reference: "x".repeat(251),
    amount: -7.777,
    expires_at: "SECRET-EXPIRY-VALUE",
  });
  assert.is(res.status, 422);
  const text = await res.text();
  const env = JSON.parse(text) as { statusCode: number; message: string; errors: Array<{ field: string; message: string }>; data?: unknown };
  assert.is(env.statusCode, 422);
  assert.is(env.data, undefined);
  assert.equal(
    env.errors.map((e) => e.field),
    ["account_type", "account_name", "source_reference", "amount", "expires_at"],
  );
  assert.not.ok(text.includes("SECRET-TYPE-VALUE"));
  assert.not.ok(text.includes("SECRET-EXPIRY-VALUE"));
  assert.not.ok(text.includes("xxxxxxxxxx"));
  assert.not.ok(text.includes("7.777"));
});

test("422: required fields", async () => {
  const res = await create({});
  assert.is(res.status, 422);
  assert.equal(await errorsOf(res), [
    { field: "account_type", message: "is required" },
    { field: "account_name", message: "is required" },
    { field: "source_reference", message: "is required" },
  ]);
  const notObject = await create([1, 2]);
  assert.is(notObject.status, 422);
  assert.equal(await fieldsOf(notObject), ["body"]);
});

test("account_name and source_reference: 3 to 250 characters (trimmed)", async () => {
  for (const field of ["account_name", "source_reference"]) {
    for (const bad of ["ab", "  ab  ", "", "x".repeat(251), 42]) {
      const res = await create({ account_type: "multi_use", account_name: "Valid name", source_reference: sourceRef(), [field]: bad });
      assert.is(res.status, 422, `${field}=${JSON.stringify(bad)}`);
      assert.equal(await fieldsOf(res), [field]);
    }
    const three = await createAccount(h, { [field]: field === "source_reference" ? `a${sourceRef().slice(-2)}` : "abc" });
    assert.is(three.status, "active");
    const max = "y".repeat(249) + String(Math.floor(Math.random() * 10));
    const long = await createAccount(h, { [field]: max });
    assert.is((long as unknown as Record<string, string>)[field === "account_name" ? "accountName" : "sourceReference"], max);
  }
  const bad = await create({ account_type: "multi_use", account_name: "Line\nbreak", source_reference: sourceRef() });
  assert.equal(await fieldsOf(bad), ["account_name"]);
});

test("expires_at: required for single_use, forbidden for multi_use", async () => {
  const single = await create({ account_type: "single_use", account_name: "Order", source_reference: sourceRef() });
  assert.is(single.status, 422);
  assert.equal(await errorsOf(single), [{ field: "expires_at", message: "is required for single_use accounts" }]);
  const singleNull = await create({ account_type: "single_use", account_name: "Order", source_reference: sourceRef(), expires_at: null });
  assert.equal(await fieldsOf(singleNull), ["expires_at"]);
  const multi = await create({ account_type: "multi_use", account_name: "Order", source_reference: sourceRef(), expires_at: fmt(h.clock.now() + HOUR) });
  assert.is(multi.status, 422);
  assert.equal(await errorsOf(multi), [{ field: "expires_at", message: "must be omitted for multi_use accounts (they never expire)" }]);
});

test("expires_at: format YYYY-MM-DD HH:MM:SS (UTC), a real time", async () => {
  const base = { account_type: "single_use", account_name: "Order", source_reference: "fmt-check" };
  const soon = new Date(h.clock.now() + HOUR).toISOString();
  for (const bad of [soon, soon.slice(0, 19), soon.slice(0, 16).replace("T", " "), soon.slice(0, 10), "2030-02-30 10:00:00", "2030-01-01 24:00:00", "tomorrow", 1735689600, true]) {
    const res = await create({ ...base, expires_at: bad });
    assert.is(res.status, 422, JSON.stringify(bad));
    assert.equal(await fieldsOf(res), ["expires_at"], JSON.stringify(bad));
  }
});

test("expires_at: in the future and within 24 hours (boundaries)", async () => {
  const now = h.clock.now();
  const at = async (ms: number) => create({ account_type: "single_use", account_name: "Order", source_reference: sourceRef(), expires_at: fmt(ms) });
  const past = await at(now - 1000);
  assert.equal(await errorsOf(past), [{ field: "expires_at", message: "must be in the future" }]);
  const exactlyNow = await at(now);
  assert.equal(await errorsOf(exactlyNow), [{ field: "expires_at", message: "must be in the future" }]);
  const tooLate = await at(now + 24 * HOUR + 1000);
  assert.equal(await errorsOf(tooLate), [{ field: "expires_at", message: "must be within 24 hours from now" }]);
  assert.is((await at(now + 1000)).status, 201, "one second ahead");
  const edge = await at(now + 24 * HOUR);
  assert.is(edge.status, 201, "exactly 24 hours ahead");
  assert.is((await body<AccountData>(edge)).data.expiresAt, fmt(now + 24 * HOUR));
});

test("amount: optional, > 0, at most two decimals, at most NGN 100,000,000, a number", async () => {
  for (const bad of [0, -5, 1.234, "1000", 100_000_000.01, [1], {}]) {
    const res = await create({ account_type: "multi_use", account_name: "Amounts", source_reference: sourceRef(), amount: bad });
    assert.is(res.status, 422, JSON.stringify(bad));
    assert.equal(await fieldsOf(res), ["amount"], JSON.stringify(bad));
  }
});

test("409 on a reused source_reference in the business; another business may use it", async () => {
  const ref = sourceRef("dup");
  await createAccount(h, { source_reference: ref });
  const again = await create({ account_type: "multi_use", account_name: "Second", source_reference: ref });
  assert.is(again.status, 409);
  const env = await body(again);
  assert.is(env.statusCode, 409);
  assert.equal(env.errors, [{ field: "source_reference", message: "is already used by another virtual account of this business" }]);
  const other = await createAccount(h, { source_reference: ref }, BEARER_OTHER);
  assert.is(other.sourceReference, ref);
  assert.is(other.businessId, businessUuid("other"));
  // Concurrent creates with one source_reference: exactly one wins.
  const racing = sourceRef("race");
  const statuses = await Promise.all(
    Array.from({ length: 10 }, () => create({ account_type: "multi_use", account_name: "Race", source_reference: racing }).then((r) => r.status)),
  );
  assert.equal(statuses.sort(), [201, ...Array(9).fill(409)]);
});

test("account numbers are unique and NUBAN-shaped; a clash draws another number", async () => {
  const numbers = new Set<string>();
  for (let i = 0; i < 50; i++) numbers.add((await createAccount(h)).accountNumber);
  assert.is(numbers.size, 50);
  for (let i = 0; i < 1000; i++) assert.ok(isNuban(newAccountNumber()));
  // NUBAN check digit: the CBN example, serial 000001457 at bank code 011 → account 0000014579.
  assert.is(nubanCheckDigit("011", "000001457"), 9);

  const store = await createSqliteDocumentStore({ file: ":memory:" });
  const queue = ["9990000001", "9990000001", "9990000001", "9990000002"];
  const service = createVirtualAccountService({ store, clock: Date.now, newAccountNumber: () => queue.shift()! });
  const input = { accountType: "multi_use" as const, accountName: "Clash", amountKobo: null, expiresAtMs: null };
  const a = await service.create("demo", { ...input, sourceReference: "clash-1" });
  const b = await service.create("demo", { ...input, sourceReference: "clash-2" });
  assert.is(a.accountNumber, "9990000001");
  assert.is(b.accountNumber, "9990000002", "two clashes, then a free number");
  assert.is(queue.length, 0);
  await store.close();
});

test("businessId and walletId: name-based UUIDs (v5), stable, one per business", () => {
  // RFC 4122 / Python uuid.uuid5(NAMESPACE_DNS, "www.example.com").
  assert.is(uuidV5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com"), "2ed6657d-e927-568b-95e1-2665a8aea6a2");
  assert.is(businessUuid("demo"), businessUuid("demo"));
  assert.is.not(businessUuid("demo"), businessUuid("other"));
  assert.is.not(walletUuid("demo"), walletUuid("other"));
  assert.is.not(walletUuid("demo"), businessUuid("demo"));
  assert.match(businessUuid("demo"), /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test("LIVE businesses create accounts too (businessState LIVE)", async () => {
  const live = await createAccount(h, {}, BEARER_LIVE);
  assert.is(live.businessState, "LIVE");
  assert.is(live.businessId, businessUuid("live-shop"));
});

test("auth and malformed bodies: 401 without a key, 400 on broken JSON, envelope errors", async () => {
  const noKey = await h.api("/api/v1/virtual-account", { body: {}, key: null });
  assert.is(noKey.status, 401);
  assert.is((await body(noKey)).statusCode, 401);
  const broken = await h.api("/api/v1/virtual-account", { body: "{not json", headers: { "content-type": "application/json" } });
  assert.is(broken.status, 400);
});

test("the routes are declared (route table and OpenAPI with the list's query parameters)", async () => {
  const ids = h.tg.gateway.routes.routes().map((r) => r.id);
  for (const id of [
    "POST /api/v1/virtual-account",
    "GET /api/v1/virtual-account",
    "GET /api/v1/virtual-account/find",
    "POST /api/v1/virtual-account/toggle-status",
    "POST /api/v1/customers",
    "GET /api/v1/customers/:id",
    "POST /api/v1/customers/:id/virtual-account",
    "POST /api/v1/sandbox/virtual-account/deposit",
  ])
    assert.ok(ids.includes(id), id);
  const doc = (await (await h.tg.call("/openapi.json", { host: "localhost" })).json()) as {
    paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>;
  };
  const names = doc.paths["/api/v1/virtual-account"]!.get!.parameters!.filter((p) => p.in === "query").map((p) => p.name);
  assert.equal(names, ["reference", "accountNumber", "accountType", "status", "currency", "search", "startDate", "endDate", "sort", "limit", "page"]);
});

test("real HTTP: create, find, list, toggle and deposit over a socket", async () => {
  const server = await h.tg.listen();
  const headers = { authorization: "Bearer sk_test_demo_0001", "content-type": "application/json", accept: "application/json" };
  const ref = sourceRef("wire");
  const created = await httpCall(server.url, "/api/v1/virtual-account", {
    method: "POST",
    host: "localhost",
    headers,
    body: JSON.stringify({ account_type: "single_use", account_name: "Over the wire", source_reference: ref, amount: 2500, expires_at: fmt(h.clock.now() + HOUR) }),
  });
  assert.is(created.status, 201);
  const account = (created.json() as { data: AccountData }).data;
  const found = await httpCall(server.url, `/api/v1/virtual-account/find?sourceReference=${encodeURIComponent(ref)}`, { host: "localhost", headers });
  assert.is(found.status, 200);
  assert.is((found.json() as { data: AccountData }).data.reference, account.reference);
  const listed = await httpCall(server.url, `/api/v1/virtual-account?accountNumber=${account.accountNumber}&status=active`, { host: "localhost", headers });
  assert.is(listed.status, 200);
  assert.equal((listed.json() as { data: AccountData[] }).data.map((a) => a.id), [account.id]);
  const paid = await httpCall(server.url, "/api/v1/sandbox/virtual-account/deposit", {
    method: "POST",
    host: "localhost",
    headers,
    body: JSON.stringify({ account_number: account.accountNumber, amount: 2500, sender_name: "Wire Payer", sender_account_number: "0987654321", sender_bank: "Wire Bank" }),
  });
  assert.is(paid.status, 201);
  assert.is((paid.json() as { data: { status: string } }).data.status, "settled");
  const after = await httpCall(server.url, `/api/v1/virtual-account/find?reference=${account.reference}`, { host: "localhost", headers });
  assert.is((after.json() as { data: AccountData }).data.status, "expired");
  const toggled = await httpCall(server.url, "/api/v1/virtual-account/toggle-status", {
    method: "POST",
    host: "localhost",
    headers,
    body: JSON.stringify({ reference: account.reference, activate: true }),
  });
  assert.is(toggled.status, 409, "an expired account cannot change status");
});

test("logs never carry API keys", () => {
  assert.not.ok(JSON.stringify(h.tg.logs).includes("sk_test_demo_0001"));
});

test.after(async () => {
  await h.close();
});
test.run();
