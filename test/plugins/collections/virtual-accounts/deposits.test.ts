/**
 * Sandbox deposits (DECISIONS.md "Deposits (sandbox)", spec §3.2, §6; ARCHITECTURE.md §7 invariant
 * 4): settlement credits the wallet once per transfer session and sends one signed
 * IN_FLOW_SUCCESS_EVENT to a real receiver; a single_use account expires after its first payment;
 * expired, used, inactive and fixed-amount-mismatch deposits are refunded (no credit, no event);
 * 50 concurrent deposits into one single_use account → exactly one settles; LIVE → 404; the worker
 * finishes deposits a crash left half-done, once.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createSqliteDocumentStore } from "../../../../adapters/document-store/sqlite/store.ts";
import type { Collection } from "../../../../adapters/ports.ts";
import { IN_FLOW_SUCCESS_EVENT, type Deposit } from "../../../../plugins/collections/virtual-accounts/deposit.ts";
import { createVirtualAccountService } from "../../../../plugins/collections/virtual-accounts/account-service.ts";
import type { WalletEntry } from "../../../../plugins/collections/wallet/wallet.ts";
import {
  BEARER_HOOKED,
  BEARER_LIVE,
  BEARER_OTHER,
  eventually,
  startCollections,
  startReceiver,
} from "../payment-links/collections-helpers.ts";
import {
  HOUR,
  TIME,
  body,
  createAccount,
  deposit,
  depositBody,
  depositServiceOf,
  depositStoreFailureScenario,
  fmt,
  type AccountData,
  type DepositData,
} from "./va-helpers.ts";

const receiver = await startReceiver();
const h = await startCollections({ webhookUrl: receiver.url });
const K = BEARER_HOOKED;
/** Kobo of every deposit this file settled for business "hooked". */
let settledKobo = 0;
const settled = (d: DepositData) => {
  if (d.status === "settled") settledKobo += Math.round(d.amount * 100);
  return d;
};

const credits = (): Collection<WalletEntry> => h.store.collection<WalletEntry>("collections_wallet_entries");
const creditsOf = async (sessionId: string) => (await credits().find({ sourceId: sessionId })).items;
const inflowHooks = async (sessionId?: string) =>
  (await h.webhooks("hooked")).filter((w) => w.eventType === IN_FLOW_SUCCESS_EVENT && (!sessionId || w.idempotencyKey.endsWith(sessionId)));
const delivered = async (sessionId: string) => {
  await h.outbox.deliverDue();
  await eventually(() => receiver.received.some((r) => r.body.includes(sessionId)), 3_000, "the webhook delivery");
  return receiver.received.filter((r) => r.body.includes(sessionId));
};
const statusOf = async (a: AccountData, key = K) =>
  (await body<AccountData>(await h.api(`/api/v1/virtual-account/find?reference=${a.reference}`, { key }))).data.status;

test("multi_use deposit → settled: one credit, one signed IN_FLOW_SUCCESS_EVENT, listed in balances", async () => {
  const a = await createAccount(h, { account_type: "multi_use", account_name: "Ada's Store" }, K);
  const res = await h.api("/api/v1/sandbox/virtual-account/deposit", {
    key: K,
    body: depositBody(a.accountNumber, 2500.75, { sender_name: "Bola Ade", sender_account_number: "0011223344", sender_bank: "Sample Bank" }),
  });
  assert.is(res.status, 201);
  const env = await body<DepositData>(res);
  assert.is(env.message, "Deposit settled into the collection wallet.");
  const d = settled(env.data);
  assert.match(d.sessionId, /^999999\d{24}$/);
  assert.match(d.reference, /^VAT-[A-Z2-9]{16}$/);
  assert.equal(
    { ...d, sessionId: "", reference: "", receivedAt: "", settledAt: "" },
    {
      sessionId: "",
      reference: "",
      status: "settled",
      reason: null,
      message: "Settled into the collection wallet.",
      amount: 2500.75,
      currency: "NGN",
      recipient: { accountName: "Ada's Store", accountNumber: a.accountNumber },
      sender: { accountName: "Bola Ade", accountNumber: "0011223344", bankName: "Sample Bank" },
      virtualAccount: { reference: a.reference, sourceReference: a.sourceReference, accountType: "multi_use" },
      refund: null,
      receivedAt: "",
      settledAt: "",
    },
  );
  assert.match(d.settledAt as string, TIME);

  assert.equal((await creditsOf(d.sessionId)).map((c) => [c.amountKobo, c.sourceType, c.reference]), [[250075, "virtual_account_deposit", d.reference]]);
  const hooks = await inflowHooks(d.sessionId);
  assert.is(hooks.length, 1);
  assert.is(hooks[0]!.idempotencyKey, `${IN_FLOW_SUCCESS_EVENT}:${d.sessionId}`);

  const got = await delivered(d.sessionId);
  assert.is(got.length, 1);
  assert.ok(got[0]!.valid, "signature verifies with the business secret");
  assert.is(got[0]!.headers["webhook-id"], hooks[0]!.webhookId);
  const event = JSON.parse(got[0]!.body) as { event_type: string; data: Record<string, unknown> };
  assert.equal(event, {
    event_type: "IN_FLOW_SUCCESS_EVENT",
    data: {
      recipient: { accountName: "Ada's Store", accountNumber: a.accountNumber },
      amount: 2500.75,
      currency: "NGN",
      reference: d.reference,
      sessionId: d.sessionId,
      sender: { accountName: "Bola Ade", accountNumber: "0011223344", bankName: "Sample Bank" },
      settledAt: d.settledAt,
      virtualAccount: { reference: a.reference, sourceReference: a.sourceReference, accountType: "multi_use" },
    },
  });

  const tx = await body<Array<Record<string, unknown>>>(await h.api("/api/v1/balances/transactions", { key: K }));
  const row = tx.data.find((t) => t.sourceId === d.sessionId)!;
  assert.equal(
    { amount: row.amount, sourceType: row.sourceType, reference: row.reference, id: row.id },
    { amount: 2500.75, sourceType: "virtual_account_deposit", reference: d.reference, id: `credit:virtual_account_deposit:${d.sessionId}` },
  );
  assert.is(await statusOf(a), "active", "a multi_use account stays active");
  const second = settled((await deposit(h, a.accountNumber, 10, K)).data);
  assert.is(second.status, "settled");
  assert.is.not(second.sessionId, d.sessionId, "one session per transfer");
});

test("single_use: the first payment settles and expires the account; the next is refunded (account_used)", async () => {
  const a = await createAccount(h, { account_type: "single_use", amount: 5000, expires_at: fmt(h.clock.now() + HOUR) }, K);
  const first = settled((await deposit(h, a.accountNumber, 5000, K)).data);
  assert.is(first.status, "settled");
  assert.is(await statusOf(a), "expired");
  const second = await deposit(h, a.accountNumber, 5000, K);
  assert.is(second.status, 201);
  assert.is(second.data.status, "refunded");
  assert.is(second.data.reason, "account_used");
  assert.is(second.data.message, "The single-use virtual account has already received its payment.");
  assert.equal(await creditsOf(second.data.sessionId), []);
  assert.equal(await inflowHooks(second.data.sessionId), []);
  assert.is((await inflowHooks(first.sessionId)).length, 1);
});

test("fixed amount mismatch → refunded (amount_mismatch), no credit, no event; the account stays usable", async () => {
  const a = await createAccount(h, { account_type: "single_use", amount: 1000, expires_at: fmt(h.clock.now() + HOUR) }, K);
  for (const amount of [999.99, 1000.01, 2000]) {
    const res = await h.api("/api/v1/sandbox/virtual-account/deposit", { key: K, body: depositBody(a.accountNumber, amount) });
    const env = await body<DepositData>(res);
    assert.is(env.message, "Deposit refunded to the sender.");
    const d = env.data;
    assert.is(d.status, "refunded", String(amount));
    assert.is(d.reason, "amount_mismatch");
    assert.is(d.refund!.amount, amount);
    assert.is(d.refund!.reason, "amount_mismatch");
    assert.match((d.refund as unknown as { refundedAt: string }).refundedAt, TIME);
    assert.match(d.refund!.refundReference, /^VAR-[A-Z2-9]{16}$/);
    assert.is(d.settledAt, null);
    assert.equal(await creditsOf(d.sessionId), []);
    assert.equal(await inflowHooks(d.sessionId), []);
  }
  assert.is(await statusOf(a), "active", "a refunded deposit does not use the account");
  assert.is(settled((await deposit(h, a.accountNumber, 1000, K)).data).status, "settled");
  const multi = await createAccount(h, { account_type: "multi_use", amount: 300 }, K);
  assert.is((await deposit(h, multi.accountNumber, 301, K)).data.reason, "amount_mismatch");
  assert.is(settled((await deposit(h, multi.accountNumber, 300, K)).data).status, "settled");
});

test("inactive account → refunded (account_inactive); reactivated → settles", async () => {
  const a = await createAccount(h, { account_type: "multi_use" }, K);
  await h.api("/api/v1/virtual-account/toggle-status", { key: K, body: { reference: a.reference, activate: false } });
  const d = (await deposit(h, a.accountNumber, 100, K)).data;
  assert.is(d.status, "refunded");
  assert.is(d.reason, "account_inactive");
  assert.equal(await creditsOf(d.sessionId), []);
  await h.api("/api/v1/virtual-account/toggle-status", { key: K, body: { reference: a.reference, activate: true } });
  assert.is(settled((await deposit(h, a.accountNumber, 100, K)).data).status, "settled");
});

test("404: LIVE businesses, unknown account numbers, another business's account; 422 lists fields", async () => {
  const a = await createAccount(h, {}, K);
  const live = await h.api("/api/v1/sandbox/virtual-account/deposit", { key: BEARER_LIVE, body: depositBody(a.accountNumber, 100) });
  assert.is(live.status, 404);
  const liveAccount = await createAccount(h, {}, BEARER_LIVE);
  assert.is((await h.api("/api/v1/sandbox/virtual-account/deposit", { key: BEARER_LIVE, body: depositBody(liveAccount.accountNumber, 100) })).status, 404);
  const unknown = await h.api("/api/v1/sandbox/virtual-account/deposit", { key: K, body: depositBody("0000000000", 100) });
  assert.is(unknown.status, 404);
  assert.equal((await body(unknown)).errors, [{ field: "account_number", message: "is not a virtual account of this business" }]);
  const foreign = await h.api("/api/v1/sandbox/virtual-account/deposit", { key: BEARER_OTHER, body: depositBody(a.accountNumber, 100) });
  assert.is(foreign.status, 404, "another business cannot pay into (or probe) this account through its key");
  const bad = await h.api("/api/v1/sandbox/virtual-account/deposit", {
    key: K,
    body: { account_number: "12345", amount: 0, sender_name: "", sender_account_number: "abcdefghij", sender_bank: 7 },
  });
  assert.is(bad.status, 422);
  assert.equal((await body(bad)).errors!.map((e) => e.field), ["account_number", "amount", "sender_name", "sender_account_number", "sender_bank"]);
  const missing = await h.api("/api/v1/sandbox/virtual-account/deposit", { key: K, body: {} });
  assert.is((await body(missing)).errors!.length, 5);
  for (const amount of [-1, 1.001, "100", 100_000_000.01]) {
    const r = await h.api("/api/v1/sandbox/virtual-account/deposit", { key: K, body: depositBody(a.accountNumber, amount as number) });
    assert.is(r.status, 422, String(amount));
  }
});

test("50 concurrent deposits into one single_use account → exactly one settles, one credit, one signed event", async () => {
  const a = await createAccount(h, { account_type: "single_use", amount: 7500, expires_at: fmt(h.clock.now() + HOUR) }, K);
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      h.api("/api/v1/sandbox/virtual-account/deposit", {
        key: K,
        body: depositBody(a.accountNumber, 7500, { sender_name: `Payer ${i}` }),
      }).then(async (r) => ({ status: r.status, data: (await body<DepositData>(r)).data })),
    ),
  );
  assert.ok(results.every((r) => r.status === 201));
  const won = results.filter((r) => r.data.status === "settled");
  const lost = results.filter((r) => r.data.status === "refunded");
  assert.is(won.length, 1, "exactly one settles");
  assert.is(lost.length, 49);
  assert.ok(lost.every((r) => r.data.reason === "account_used"));
  settled(won[0]!.data);
  const sessionIds = results.map((r) => r.data.sessionId);
  assert.is(new Set(sessionIds).size, 50, "one session per transfer");
  const allCredits = (await credits().find({ sourceId: { $in: sessionIds } })).items;
  assert.equal(allCredits.map((c) => [c.sourceId, c.amountKobo]), [[won[0]!.data.sessionId, 750_000]]);
  const events = (await inflowHooks()).filter((w) => sessionIds.some((s) => w.idempotencyKey.endsWith(s)));
  assert.is(events.length, 1);
  const got = await delivered(won[0]!.data.sessionId);
  assert.is(got.length, 1);
  assert.ok(got[0]!.valid);
  await h.outbox.deliverDue();
  const toReceiver = receiver.received.filter((r) => sessionIds.some((s) => r.body.includes(s)));
  assert.is(toReceiver.length, 1, "one delivery for the 50 transfers");
  assert.is(await statusOf(a), "expired");
  const stored = await h.store.collection<Deposit>("collections_va_deposits").find({ virtualAccountId: a.id });
  assert.equal(
    stored.items.map((d) => d.status).sort(),
    ["settled", ...Array(49).fill("refunded")].sort(),
    "every transfer is recorded with its outcome",
  );
});

test("the wallet of the business holds exactly the settled deposits", async () => {
  const all = (await credits().find({ businessId: "hooked" }, { limit: 1000 })).items;
  const sum = all.reduce((s, c) => s + c.amountKobo, 0);
  assert.is(sum, settledKobo);
  const deposits = (await h.store.collection<Deposit>("collections_va_deposits").find({ businessId: "hooked", status: "settled" }, { limit: 1000 })).items;
  assert.is(deposits.reduce((s, d) => s + d.amountKobo, 0), settledKobo);
  assert.is(all.length, deposits.length, "one credit per settled deposit");
  const deliveredInflows = receiver.received.filter((r) => r.body.includes(IN_FLOW_SUCCESS_EVENT));
  await h.outbox.deliverDue();
  assert.ok(deliveredInflows.every((r) => r.valid));
});

test("expired by time → refunded (account_expired); no endpoint → the event is stored as no_endpoint", async () => {
  const other = await startCollections();
  try {
    const now = other.clock.now();
    const a = await createAccount(other, { account_type: "single_use", expires_at: fmt(now + HOUR) });
    other.clock.set(Math.floor(now / 1000) * 1000 + HOUR);
    const d = (await deposit(other, a.accountNumber, 100)).data;
    assert.is(d.status, "refunded");
    assert.is(d.reason, "account_expired");
    assert.is(d.message, "The virtual account has expired.");
    const multi = await createAccount(other, { account_type: "multi_use" });
    const ok = (await deposit(other, multi.accountNumber, 100)).data;
    assert.is(ok.status, "settled");
    const hooks = (await other.webhooks("demo")).filter((w) => w.eventType === IN_FLOW_SUCCESS_EVENT);
    assert.equal(hooks.map((w) => [w.status, w.idempotencyKey]), [["no_endpoint", `${IN_FLOW_SUCCESS_EVENT}:${ok.sessionId}`]]);
  } finally {
    await other.close();
  }
});

test("the worker finishes deposits a crash left undecided or unsettled, exactly once", async () => {
  const other = await startCollections();
  try {
    const clock = other.clock.now;
    const accounts = createVirtualAccountService({ store: other.store, clock });
    const deposits = depositServiceOf(other);
    const coll = other.store.collection<Deposit>("collections_va_deposits");
    const single = await createAccount(other, { account_type: "single_use", expires_at: fmt(clock() + HOUR) });
    const multi = await createAccount(other, { account_type: "multi_use" });
    const stub = (id: string, a: AccountData, status: Deposit["status"], effectsPending: boolean): Deposit => ({
      _id: id,
      businessId: "demo",
      reference: `VAT-TEST${id.slice(-12)}`,
      virtualAccountId: a.id,
      virtualAccountReference: a.reference,
      sourceReference: a.sourceReference,
      accountNumber: a.accountNumber,
      accountName: a.accountName,
      accountType: a.accountType,
      amountKobo: 12_300,
      currency: "NGN",
      sender: { accountName: "Crash Test", accountNumber: "0000000001", bankName: "Test Bank" },
      status,
      refund: null,
      effectsPending,
      receivedAt: clock(),
      settledAt: status === "settled" ? clock() : null,
      refundedAt: null,
      updatedAt: clock(),
    });
    // 1. Crashed after winning the single_use account, before recording the decision.
    const s1 = "999999300101000000000000000001";
    await coll.insert(stub(s1, single, "received", false));
    assert.ok(await accounts.consume(single.id, s1, clock()));
    // 2. Crashed after deciding "settled", before the credit and the event.
    const s2 = "999999300101000000000000000002";
    await coll.insert(stub(s2, multi, "settled", true));
    // 3. A fresh deposit still being handled by its request: left alone.
    const s3 = "999999300101000000000000000003";

    assert.is(await deposits.redrive(), 0, "nothing is touched within the first 10 seconds");
    other.clock.advance(11_000);
    await coll.insert(stub(s3, multi, "received", false));
    const runs = await Promise.all([deposits.redrive(), deposits.redrive(), deposits.redrive()]);
    assert.ok(runs.reduce((a, b) => a + b, 0) >= 2);
    assert.is((await coll.get(s1))!.status, "settled");
    assert.is((await coll.get(s1))!.effectsPending, false);
    assert.is((await coll.get(s2))!.effectsPending, false);
    assert.is((await coll.get(s3))!.status, "received", "too recent for the worker");
    assert.is(await deposits.redrive(), 0, "a second pass has nothing to do");
    const c = other.store.collection<WalletEntry>("collections_wallet_entries");
    for (const s of [s1, s2]) {
      assert.equal((await c.find({ sourceId: s })).items.map((e) => e.amountKobo), [12_300], s);
      assert.is((await other.webhooks("demo")).filter((w) => w.idempotencyKey === `${IN_FLOW_SUCCESS_EVENT}:${s}`).length, 1, s);
    }
  } finally {
    await other.close();
  }
});

test("deposits whose decision keeps failing do not hold the worker's places: a deposit behind 100 of them is still settled", async () => {
  const other = await startCollections();
  try {
    const clock = other.clock.now;
    const real = createVirtualAccountService({ store: other.store, clock });
    // The account of the blocked deposits cannot be read, for good (its every read fails).
    const worker = depositServiceOf(other, {
      accounts: { ...real, get: async (id: string) => (id === "broken-account" ? Promise.reject(new Error("unreadable account")) : real.get(id)) },
    });
    const coll = other.store.collection<Deposit>("collections_va_deposits");
    const multi = await createAccount(other, { account_type: "multi_use" });
    const stub = (id: string, accountId: string, at: number): Deposit => ({
      _id: id,
      businessId: "demo",
      reference: `VAT-TEST${id.slice(-12)}`,
      virtualAccountId: accountId,
      virtualAccountReference: multi.reference,
      sourceReference: multi.sourceReference,
      accountNumber: multi.accountNumber,
      accountName: multi.accountName,
      accountType: "multi_use",
      amountKobo: 4_400,
      currency: "NGN",
      sender: { accountName: "Queue Test", accountNumber: "0000000002", bankName: "Test Bank" },
      status: "received",
      refund: null,
      effectsPending: false,
      receivedAt: at,
      settledAt: null,
      refundedAt: null,
      updatedAt: at,
    });
    // 100 older deposits (a full batch of the worker) whose decision fails, then one that can be decided.
    for (let i = 0; i < 100; i++) await coll.insert(stub(`99999930010100000000000${String(i).padStart(7, "0")}`, "broken-account", clock() - 60_000 + i));
    const healthy = "999999300101000000000000999999";
    await coll.insert(stub(healthy, multi.id, clock() - 30_000));

    assert.is(await worker.redrive(), 0, "the first pass takes the 100 blocked ones and decides none");
    assert.is(await worker.redrive(), 1, "the next pass reaches the deposit behind them");
    assert.is((await coll.get(healthy))!.status, "settled");
    assert.equal((await other.store.collection<WalletEntry>("collections_wallet_entries").find({ sourceId: healthy })).items.map((e) => e.amountKobo), [4_400]);
    const blocked = (await coll.find({ status: "received" }, { limit: 200 })).items;
    assert.is(blocked.length, 100, "the blocked ones are still owed a decision");
    assert.ok(blocked.every((d) => d.receivedAt < clock() - 30_000), "their receivedAt (what the decision is judged at) never moved");
    const movedAt = Math.min(...blocked.map((d) => d.updatedAt));
    other.clock.advance(11_000);
    assert.is(await worker.redrive(), 0);
    const again = (await coll.find({ status: "received" }, { limit: 200 })).items;
    assert.ok(again.every((d) => d.updatedAt > movedAt), "they are tried again after the re-drive delay (and go to the back again)");
  } finally {
    await other.close();
  }
});

test("an account that keeps changing under the decision → the deposit stays received (never a 500); the worker decides it once", async () => {
  const other = await startCollections();
  try {
    const real = createVirtualAccountService({ store: other.store, clock: other.clock.now });
    // Every compare-and-set on the account loses, as if it changed between each read and the write.
    const contended = depositServiceOf(other, { accounts: { ...real, consume: async () => null } });
    const a = await createAccount(other, { account_type: "single_use", expires_at: fmt(other.clock.now() + HOUR) });
    const sender = { accountName: "Flap Payer", accountNumber: "0123456789", bankName: "Example Bank" };
    const d = await contended.receive((await real.get(a.id))!, { accountNumber: a.accountNumber, amountKobo: 9_900, sender });
    assert.is(d.status, "received", "answered as in progress, not thrown");
    assert.is((await other.store.collection<Deposit>("collections_va_deposits").get(d._id))?.status, "received");

    const worker = depositServiceOf(other);
    other.clock.advance(11_000);
    assert.is(await worker.redrive(), 1);
    assert.is(await worker.redrive(), 0, "once");
    assert.is((await worker.get(d._id))?.status, "settled");
    assert.equal((await other.store.collection<WalletEntry>("collections_wallet_entries").find({ sourceId: d._id })).items.map((c) => c.amountKobo), [9_900]);
    assert.is((await other.webhooks("demo")).filter((w) => w.idempotencyKey === `${IN_FLOW_SUCCESS_EVENT}:${d._id}`).length, 1);
  } finally {
    await other.close();
  }
});

test("a store failure after the account was won → 503 with Retry-After (never a 500); the worker settles it once", () =>
  depositStoreFailureScenario({ store: async (clock) => createSqliteDocumentStore({ file: ":memory:", clock }) }));

test.after(async () => {
  await h.close();
  await receiver.close();
});
test.run();
