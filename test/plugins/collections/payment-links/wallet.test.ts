/** The collection wallet service (plugins/collections/wallet/wallet.ts) on the embedded document store. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createSqliteDocumentStore } from "../../../../adapters/document-store/sqlite/store.ts";
import { createCollectionWallet, creditId, walletEntryView } from "../../../../plugins/collections/wallet/wallet.ts";

const store = await createSqliteDocumentStore({ file: ":memory:" });
let now = Date.UTC(2025, 4, 6, 7, 8, 9);
const wallet = createCollectionWallet({ store, clock: () => now });

test("credit is exactly once per (sourceType, sourceId), even when raced", async () => {
  const results = await Promise.all(
    Array.from({ length: 25 }, () =>
      wallet.credit("biz-a", 98_50, { sourceType: "payment_link_checkout", sourceId: "session-1", description: "Link PL-1", reference: "PLT-1" }),
    ),
  );
  assert.is(results.filter((r) => r.created).length, 1);
  assert.ok(results.every((r) => r.entry._id === creditId("payment_link_checkout", "session-1")));
  assert.is(await wallet.balance("biz-a"), 98_50);
  // The same id under another source type is another credit.
  const deposit = await wallet.credit("biz-a", 1_000_00, { sourceType: "virtual_account_deposit", sourceId: "session-1", description: "Deposit" });
  assert.ok(deposit.created);
  assert.is(await wallet.balance("biz-a"), 1_098_50);
});

test("balance is per business and sums every credit", async () => {
  for (let i = 0; i < 1_234; i++) {
    await wallet.credit("biz-b", 100 + i, { sourceType: "payment_link_checkout", sourceId: `b-${i}`, description: "x" });
  }
  const expected = Array.from({ length: 1_234 }, (_, i) => 100 + i).reduce((a, b) => a + b, 0);
  assert.is(await wallet.balance("biz-b"), expected, "more than one store page of credits");
  assert.is(await wallet.balance("nobody"), 0);
});

test("transactions: newest first, page/limit, total; the view shows NGN numbers and UTC times", async () => {
  for (let i = 0; i < 5; i++) {
    now += 1000;
    await wallet.credit("biz-c", (i + 1) * 100_00, { sourceType: "payment_link_checkout", sourceId: `c-${i}`, description: `Credit ${i}`, reference: `PLT-${i}` });
  }
  const first = await wallet.transactions("biz-c", 1, 2);
  assert.is(first.total, 5);
  assert.equal(first.items.map((e) => e.sourceId), ["c-4", "c-3"]);
  const last = await wallet.transactions("biz-c", 3, 2);
  assert.equal(last.items.map((e) => e.sourceId), ["c-0"]);
  assert.equal(walletEntryView(first.items[0]!), {
    id: "credit:payment_link_checkout:c-4",
    type: "credit",
    amount: 500,
    currency: "NGN",
    sourceType: "payment_link_checkout",
    sourceId: "c-4",
    reference: "PLT-4",
    description: "Credit 4",
    createdAt: "2025-05-06 07:08:14",
  });
});

test("refuses negative or fractional kobo", async () => {
  for (const amount of [-1, 1.5, Number.NaN]) {
    try {
      await wallet.credit("biz-d", amount, { sourceType: "t", sourceId: `bad-${amount}`, description: "bad" });
      assert.unreachable("must refuse");
    } catch (e) {
      assert.instance(e, RangeError);
    }
  }
});

test.after(() => store.close());
test.run();
