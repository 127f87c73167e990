/**
 * Operator wallet routes (plugins/admin) through the gateway built as production builds it
 * (composeGateway builds the document ledger from config: demo NGN 1,000,000.00, other NGN 0.00).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createDocumentLedger } from "../../../adapters/billing/ledger.ts";
import { createFaultInjectingLedger } from "../../../adapters/billing/faults.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { DependencyUnavailableError, type BillingLedger } from "../../../adapters/ports.ts";
import { admin } from "../../../plugins/admin/plugin.ts";
import { ADMIN_KEY, OTHER, PASSTHROUGH, gatewayTracker } from "../../support/gateway.ts";

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

const ADMIN = { "x-admin-api-key": ADMIN_KEY };

test("admin authentication is required (401 GW_ADMIN_AUTHENTICATION_FAILED)", async () => {
  const gw = await start({ plugins: [admin] });
  const attempts: Record<string, string>[] = [{}, { "x-admin-api-key": "wrong_admin_key_0000" }, { "x-api-key": "gw_demo_key_0001" }];
  for (const headers of attempts) {
    const res = await gw.call("/admin/wallets/demo", { headers });
    assert.is(res.status, 401);
    assert.is((await res.json()).code, "GW_ADMIN_AUTHENTICATION_FAILED");
    const post = await gw.call("/admin/wallets/demo/credits", { method: "POST", headers, body: { amount: 10, reference: "r" } });
    assert.is(post.status, 401);
  }
});

test("demo starts at NGN 1,000,000.00, other at 0; any host; unknown business → 404", async () => {
  const gw = await start({ plugins: [admin] });
  const demo = await gw.call("/admin/wallets/demo", { headers: ADMIN });
  assert.is(demo.status, 200);
  assert.equal(await demo.json(), { businessId: "demo", currency: "NGN", balance: 1000000, entries: [] });
  const other = await gw.call("/admin/wallets/other", { headers: ADMIN, host: OTHER });
  assert.equal(await other.json(), { businessId: "other", currency: "NGN", balance: 0, entries: [] });
  const unknown = await gw.call("/admin/wallets/nobody", { headers: ADMIN });
  assert.is(unknown.status, 404);
  assert.is((await unknown.json()).code, "GW_OPERATION_NOT_FOUND");
  const bad = await gw.call("/admin/wallets/BAD!", { headers: ADMIN });
  assert.is(bad.status, 400);
});

test("top-up is idempotent on reference; entries listed newest first with NGN amounts", async () => {
  const gw = await start({ plugins: [admin] });
  const credit = (amount: unknown, reference: string) =>
    gw.call("/admin/wallets/other/credits", { method: "POST", headers: ADMIN, host: PASSTHROUGH, body: { amount, reference } });
  const first = await credit(50.5, "topup-1");
  assert.is(first.status, 201);
  const body = await first.json();
  assert.is(body.balance, 50.5);
  assert.equal(body.credit, { id: body.credit.id, amount: 50.5, reference: "topup-1", created: true });
  const again = await credit(50.5, "topup-1");
  assert.is(again.status, 200);
  assert.is((await again.json()).credit.created, false);
  const conflict = await credit(60, "topup-1");
  assert.is(conflict.status, 409);
  assert.is((await conflict.json()).code, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  const concurrent = await Promise.all(Array.from({ length: 8 }, () => credit(1000.25, "topup-2")));
  assert.equal(concurrent.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
  const w = await (await gw.call("/admin/wallets/other", { headers: ADMIN })).json();
  assert.is(w.balance, 1050.75);
  assert.is(w.entries.length, 2);
  for (const e of w.entries) {
    assert.is(e.type, "credit");
    assert.ok(typeof e.id === "string" && typeof e.createdAt === "string");
  }
  assert.equal(w.entries.map((e: { amount: number }) => e.amount).sort(), [1000.25, 50.5]);
  const limited = await (await gw.call("/admin/wallets/other?limit=1", { headers: ADMIN })).json();
  assert.is(limited.entries.length, 1);
});

test("invalid top-ups → 400 GW_REQUEST_VALIDATION_FAILED", async () => {
  const gw = await start({ plugins: [admin] });
  for (const body of [
    { amount: 0, reference: "r" },
    { amount: -5, reference: "r" },
    { amount: 1.234, reference: "r" },
    { amount: "10", reference: "r" },
    { amount: 10, reference: "" },
    { amount: 10, reference: "x".repeat(129) },
    { amount: 10 },
    { amount: 10, reference: "r", extra: true },
  ]) {
    const res = await gw.call("/admin/wallets/demo/credits", { method: "POST", headers: ADMIN, body });
    assert.is(res.status, 400, JSON.stringify(body));
    assert.is((await res.json()).code, "GW_REQUEST_VALIDATION_FAILED");
  }
  const w = await (await gw.call("/admin/wallets/demo", { headers: ADMIN })).json();
  assert.is(w.balance, 1000000);
});

test("debits made through the billing port appear with their identity; a ledger outage → 503 GW_BILLING_SERVICE_UNAVAILABLE", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  const ledger = createDocumentLedger({ store, openingBalances: { demo: 100_000_000 } });
  const gw = await start({ plugins: [admin], ports: { billing: ledger } });
  const identity = { subBusinessId: "sub-1", domain: PASSTHROUGH, irn: "INV-1", attemptNumber: 1 };
  await ledger.debit("demo", identity, 5_000, "fp");
  const w = await (await gw.call("/admin/wallets/demo", { headers: ADMIN })).json();
  assert.is(w.balance, 999950);
  assert.equal(w.entries[0].billingIdentity, identity);
  assert.is(w.entries[0].amount, 50);
  assert.is(w.entries[0].type, "debit");

  const down: BillingLedger = {
    ...createFaultInjectingLedger(ledger),
    wallet: () => Promise.reject(new DependencyUnavailableError("billing", "down")),
    credit: () => Promise.reject(new DependencyUnavailableError("billing", "down")),
  };
  const gw2 = await start({ plugins: [admin], ports: { billing: down } });
  const res = await gw2.call("/admin/wallets/demo", { headers: ADMIN });
  assert.is(res.status, 503);
  assert.is((await res.json()).code, "GW_BILLING_SERVICE_UNAVAILABLE");
  const post = await gw2.call("/admin/wallets/demo/credits", { method: "POST", headers: ADMIN, body: { amount: 1, reference: "r" } });
  assert.is(post.status, 503);
  await store.close();
});

test.run();
