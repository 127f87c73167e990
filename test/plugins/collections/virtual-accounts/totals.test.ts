/**
 * The list's totals kept apart from its pages (account-counts.ts): after creations, toggles, a
 * payment and expiries, the counter's total of every filter it answers equals the store's count of
 * the same filter, at several times; a business listed for the first time is counted once; pages
 * past the middle (read from the other end) equal the pages read forward.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createSqliteDocumentStore } from "../../../../adapters/document-store/sqlite/store.ts";
import type { DocumentStore } from "../../../../adapters/ports.ts";
import { findPage } from "../../../../plugins/collections/shared/common.ts";
import { listFilter } from "../../../../plugins/collections/virtual-accounts/account.ts";
import { VIRTUAL_ACCOUNT_COUNTS_COLLECTION } from "../../../../plugins/collections/virtual-accounts/account-counts.ts";
import { createVirtualAccountService, type VirtualAccountService } from "../../../../plugins/collections/virtual-accounts/account-service.ts";
import type { ListVirtualAccountsInput } from "../../../../plugins/collections/virtual-accounts/query-schemas.ts";
import { ACCOUNT_STATUSES, ACCOUNT_TYPES } from "../../../../plugins/collections/virtual-accounts/schemas.ts";

const HOUR = 3_600_000;
const T0 = Date.UTC(2030, 2, 10, 12, 0, 0);

async function _seed(store: DocumentStore, clock: { now: number }): Promise<VirtualAccountService> {
  const service = createVirtualAccountService({ store, clock: () => clock.now });
  for (let i = 0; i < 40; i++) {
    clock.now = T0 + i * 60_000;
    const single = i % 3 !== 0;
    const a = await service.create("demo", {
      accountType: single ? "single_use" : "multi_use",
      accountName: `Account ${i}`,
      sourceReference: `ref-${i}`,
      amountKobo: null,
      expiresAtMs: single ? clock.now + (1 + (i % 5)) * HOUR : null,
    });
    if (i % 4 === 1) await service.toggle("demo", a.reference, false);
    if (i % 8 === 1) await service.toggle("demo", a.reference, true); // back on
    if (i % 8 === 5) await service.toggle("demo", a.reference, false); // twice off: no change the second time
    if (single && i % 7 === 2) await service.consume(a._id, `session-${i}`, clock.now);
  }
  await service.create("other", { accountType: "multi_use", accountName: "Other", sourceReference: "other-1", amountKobo: null, expiresAtMs: null });
  return service;
}

async function _expectTotalsMatch(service: VirtualAccountService, now: number): Promise<void> {
  const queries: Array<Omit<ListVirtualAccountsInput, "sort" | "limit" | "page">> = [{}, { currency: "NGN" }, { currency: "USD" }];
  for (const accountType of [undefined, ...ACCOUNT_TYPES]) {
    for (const status of [undefined, ...ACCOUNT_STATUSES]) queries.push({ ...(accountType ? { accountType } : {}), ...(status ? { status } : {}) });
  }
  for (const q of queries) {
    const kept = await service.counter.total("demo", q, now);
    const counted = await service.collection.count(listFilter("demo", q, now));
    assert.is(kept, counted, `total of ${JSON.stringify(q)} at +${(now - T0) / HOUR} h`);
  }
  assert.is(await service.counter.total("demo", { search: "Account" }, now), null, "a search is counted by the store");
}

test("the counter's totals equal the store's counts, as accounts are toggled, paid and expire", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  try {
    const clock = { now: T0 };
    const service = await _seed(store, clock);
    for (const at of [clock.now, T0 + 2 * HOUR, T0 + 4 * HOUR, T0 + 48 * HOUR]) await _expectTotalsMatch(service, at);
  } finally {
    await store.close();
  }
});

test("a business without a counter is counted once at its first list, then kept by the writes", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  try {
    const clock = { now: T0 };
    const service = await _seed(store, clock);
    await store.collection(VIRTUAL_ACCOUNT_COUNTS_COLLECTION).deleteMany({});
    await _expectTotalsMatch(service, clock.now);
    await service.create("demo", { accountType: "multi_use", accountName: "Later", sourceReference: "later-1", amountKobo: null, expiresAtMs: null });
    await _expectTotalsMatch(service, clock.now);
    const wrong = await service.counter.recount("demo");
    assert.is(wrong.multiUseEnabled + wrong.multiUseDisabled + wrong.singleUseEnabled + wrong.singleUseDisabled, 41);
  } finally {
    await store.close();
  }
});

test("pages past the middle, read from the other end, equal the pages read forward", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  try {
    const clock = { now: T0 };
    const service = await _seed(store, clock);
    // Equal creation times too: the `_id` tie-break must hold in both directions.
    for (let i = 0; i < 6; i++) await service.create("demo", { accountType: "multi_use", accountName: `Same ${i}`, sourceReference: `same-${i}`, amountKobo: null, expiresAtMs: null });
    const filter = listFilter("demo", {}, clock.now);
    const total = await service.collection.count(filter);
    for (const direction of [1, -1] as const) {
      const sorts = [{ field: "createdAt", direction }, [{ field: "createdAt", direction }, { field: "_id", direction }]];
      for (const [limit, sort] of [1, 3, 7, 46, 50].flatMap((l) => sorts.map((s) => [l, s] as const))) {
        for (let page = 1; (page - 1) * limit <= total + limit; page++) {
          const forward = await findPage(service.collection, filter, sort, page, limit);
          const kept = await findPage(service.collection, filter, sort, page, limit, total);
          assert.equal(kept.items.map((a) => a._id), forward.items.map((a) => a._id), `page ${page} of ${limit}, ${JSON.stringify(sort)}`);
          assert.is(kept.total, forward.total);
        }
      }
    }
  } finally {
    await store.close();
  }
});

test.run();
