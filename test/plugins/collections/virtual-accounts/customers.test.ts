/**
 * Customers and dedicated virtual accounts (spec §1; DECISIONS.md "Customers"): has_wallet true
 * creates a multi_use account named after the customer, false creates none; GET; attach to a
 * customer that has none (409 if it has one, atomic under concurrency); scoping; 422 lists.
 */
import type { CustomerView } from "../../../../plugins/collections/virtual-accounts/customers.ts";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { BEARER_OTHER, startCollections } from "../payment-links/collections-helpers.ts";
import { TIME, UUID, body, deposit, list, type AccountData } from "./va-helpers.ts";

const h = await startCollections();

type CustomerData = CustomerView;

const createCustomer = async (fields: Record<string, unknown>, key?: string) => {
  const res = await h.api("/api/v1/customers", {
    body: { first_name: "Ada", last_name: "Okafor", email: "ada@example.com", phone: "+2348031234567", ...fields },
    key,
  });
  return { status: res.status, env: await body<CustomerData>(res) };
};

test("has_wallet true → 201 with a dedicated multi_use account named after the customer", async () => {
  const before = (await list(h)).meta!.total;
  const { status, env } = await createCustomer({ first_name: "Chidi", last_name: "Eze", has_wallet: true });
  assert.is(status, 201);
  assert.is(env.statusCode, 201);
  const c = env.data;
  assert.match(c.id, UUID);
  assert.is(c.firstName, "Chidi");
  assert.is(c.lastName, "Eze");
  assert.is(c.email, "ada@example.com");
  assert.is(c.phone, "+2348031234567");
  assert.is(c.has_wallet, true);
  assert.match(c.createdAt, TIME);
  const a = c.virtualAccount!;
  assert.is(a.accountType, "multi_use");
  assert.is(a.accountName, "Chidi Eze");
  assert.is(a.status, "active");
  assert.is(a.expiresAt, null);
  assert.is(a.amount.value, null);
  assert.is(a.customerId, c.id);
  assert.match(a.sourceReference, /^DVA-[A-Z2-9]{16}$/);
  assert.match(a.accountNumber, /^\d{10}$/);
  // It is an ordinary virtual account too: listed and found.
  assert.is((await list(h)).meta!.total, before + 1);
  const found = await h.api(`/api/v1/virtual-account/find?sourceReference=${a.sourceReference}`);
  assert.equal((await body<AccountData>(found)).data, a);
  // Reusable: two deposits both settle.
  assert.is((await deposit(h, a.accountNumber, 1500)).data.status, "settled");
  assert.is((await deposit(h, a.accountNumber, 700)).data.status, "settled");
});

test("has_wallet false or omitted → no account", async () => {
  const before = (await list(h)).meta!.total;
  const off = await createCustomer({ has_wallet: false });
  assert.is(off.status, 201);
  assert.is(off.env.data.has_wallet, false);
  assert.is(off.env.data.virtualAccount, null);
  const omitted = await createCustomer({});
  assert.is(omitted.env.data.has_wallet, false);
  assert.is((await list(h)).meta!.total, before, "no account created");
});

test("GET /api/v1/customers/:id: the customer and its account; 404 elsewhere", async () => {
  const { env } = await createCustomer({ first_name: "Ngozi", last_name: "Ade", has_wallet: true });
  const res = await h.api(`/api/v1/customers/${env.data.id}`);
  assert.is(res.status, 200);
  assert.equal((await body<CustomerData>(res)).data, env.data);
  assert.is((await h.api(`/api/v1/customers/${env.data.id}`, { key: BEARER_OTHER })).status, 404, "another business's customer");
  assert.is((await h.api("/api/v1/customers/00000000-0000-4000-8000-000000000000")).status, 404);
  assert.is((await h.api("/api/v1/customers/not-a-uuid")).status, 404);
});

test("attach: a customer without an account gets one (201); a second attach is 409", async () => {
  const { env } = await createCustomer({ first_name: "Tunde", last_name: "Bello" });
  const attached = await h.api(`/api/v1/customers/${env.data.id}/virtual-account`, { method: "POST" });
  assert.is(attached.status, 201);
  const c = (await body<CustomerData>(attached)).data;
  assert.is(c.has_wallet, true);
  assert.is(c.virtualAccount!.accountName, "Tunde Bello");
  assert.is(c.virtualAccount!.accountType, "multi_use");
  assert.equal((await body<CustomerData>(await h.api(`/api/v1/customers/${c.id}`))).data.virtualAccount, c.virtualAccount);
  const again = await h.api(`/api/v1/customers/${c.id}/virtual-account`, { method: "POST" });
  assert.is(again.status, 409);
  assert.equal((await body(again)).errors, [{ field: "customer", message: "already has a dedicated virtual account" }]);
  const withWallet = await createCustomer({ has_wallet: true });
  assert.is((await h.api(`/api/v1/customers/${withWallet.env.data.id}/virtual-account`, { method: "POST" })).status, 409);
  assert.is((await h.api(`/api/v1/customers/${c.id}/virtual-account`, { method: "POST", key: BEARER_OTHER })).status, 404);
  assert.is((await h.api("/api/v1/customers/00000000-0000-4000-8000-000000000000/virtual-account", { method: "POST" })).status, 404);
});

test("attach is atomic: 20 concurrent attaches → one account, one 201, nineteen 409", async () => {
  const { env } = await createCustomer({ first_name: "Race", last_name: "Condition" });
  const results = await Promise.all(
    Array.from({ length: 20 }, () => h.api(`/api/v1/customers/${env.data.id}/virtual-account`, { method: "POST" }).then((r) => r.status)),
  );
  assert.equal(results.sort(), [201, ...Array(19).fill(409)]);
  const stored = await h.store.collection("collections_virtual_accounts").count({ customerId: env.data.id });
  assert.is(stored, 1);
  const named = await list(h, `?search=${encodeURIComponent("Race Condition")}`);
  assert.is(named.meta!.total, 1);
});

test("422 lists every failing field, never echoing values", async () => {
  const res = await h.api("/api/v1/customers", {
    body: { first_name: "", last_name: "x".repeat(101), email: "SECRET-NOT-AN-EMAIL", phone: "SECRET-PHONE", has_wallet: "yes" },
  });
  assert.is(res.status, 422);
  const text = await res.text();
  const env = JSON.parse(text) as { errors: Array<{ field: string }> };
  assert.equal(env.errors.map((e) => e.field), ["first_name", "last_name", "email", "phone", "has_wallet"]);
  assert.not.ok(text.includes("SECRET"));
  const missing = await h.api("/api/v1/customers", { body: {} });
  assert.equal((await body(missing)).errors!.map((e) => e.field), ["first_name", "last_name", "email", "phone"]);
  const arr = await h.api("/api/v1/customers", { body: [] });
  assert.equal((await body(arr)).errors, [{ field: "body", message: "must be a JSON object" }]);
  for (const phone of ["08031234567", "+2348031234567", "1234567"]) assert.is((await createCustomer({ phone })).status, 201, phone);
  for (const phone of ["123456", "+234 803 123 4567", "0803-123-4567", "1234567890123456"]) assert.is((await createCustomer({ phone })).status, 422, phone);
});

test("logs never carry customer e-mail addresses or phone numbers", () => {
  const text = JSON.stringify(h.tg.logs);
  assert.not.ok(text.includes("ada@example.com"));
  assert.not.ok(text.includes("2348031234567"));
});

test.after(async () => {
  await h.close();
});
test.run();
