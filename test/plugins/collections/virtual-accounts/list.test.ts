/**
 * GET /api/v1/virtual-account (spec §4 list parameters, §3.2 derived status), find, and
 * toggle-status: every filter, sort, page/limit and meta; the status filter selects on the DERIVED
 * status in the store (pages and totals exact, never a filtered page); derived status rules
 * (expiry wins over inactive; a consumed single_use is expired); find's exactly-one rule; toggle.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileFilter } from "../../../../adapters/document-store/filter.ts";
import type { Doc } from "../../../../adapters/ports.ts";
import { deriveStatus, NEVER, statusFilter } from "../../../../plugins/collections/virtual-accounts/account.ts";
import { ACCOUNT_STATUSES } from "../../../../plugins/collections/virtual-accounts/schemas.ts";
import { BEARER_OTHER, sourceRef, startCollections, type CollectionsHarness } from "../payment-links/collections-helpers.ts";
import { HOUR, body, createAccount, deposit, fmt, list, type AccountData } from "./va-helpers.ts";

const DAY = 24 * HOUR;
/** 2030-03-10 12:00:00 UTC. */
const T0 = Date.UTC(2030, 2, 10, 12, 0, 0);

async function fresh(): Promise<CollectionsHarness> {
  const h = await startCollections();
  h.clock.set(T0);
  return h;
}

const toggle = (h: CollectionsHarness, reference: string, activate: boolean, key?: string) =>
  h.api("/api/v1/virtual-account/toggle-status", { body: { reference, activate }, key });

test("defaults: newest first, limit 1000, page 1, meta", async () => {
  const h = await fresh();
  try {
    const made: AccountData[] = [];
    for (let i = 0; i < 5; i++) {
      made.push(await createAccount(h, { account_name: `Account ${i}` }));
      h.clock.advance(1000);
    }
    const r = await list(h);
    assert.is(r.status, 200);
    assert.is(r.statusCode, 200);
    assert.equal(r.data.map((a) => a.id), made.map((a) => a.id).reverse());
    assert.equal(r.meta, { current_page: 1, from: 1, last_page: 1, per_page: 1000, to: 5, total: 5 });
    const asc = await list(h, "?sort=ASC");
    assert.equal(asc.data.map((a) => a.id), made.map((a) => a.id));
    assert.equal((await list(h, "?sort=asc")).data.map((a) => a.id), made.map((a) => a.id), "sort is case-insensitive");
    assert.equal((await list(h, "?sort=DESC")).data.map((a) => a.id), made.map((a) => a.id).reverse());
  } finally {
    await h.close();
  }
});

test("page and limit: slices, meta, pages past the end, 422 on bad values", async () => {
  const h = await fresh();
  try {
    const made: AccountData[] = [];
    for (let i = 0; i < 7; i++) {
      made.push(await createAccount(h));
      h.clock.advance(1000);
    }
    const newest = made.map((a) => a.id).reverse();
    const p2 = await list(h, "?limit=3&page=2");
    assert.equal(p2.data.map((a) => a.id), newest.slice(3, 6));
    assert.equal(p2.meta, { current_page: 2, from: 4, last_page: 3, per_page: 3, to: 6, total: 7 });
    const p3 = await list(h, "?limit=3&page=3");
    assert.equal(p3.data.map((a) => a.id), newest.slice(6));
    assert.equal(p3.meta, { current_page: 3, from: 7, last_page: 3, per_page: 3, to: 7, total: 7 });
    const past = await list(h, "?limit=3&page=9");
    assert.equal(past.data, []);
    assert.equal(past.meta, { current_page: 9, from: 0, last_page: 3, per_page: 3, to: 0, total: 7 });
    assert.is((await list(h, "?limit=1000")).data.length, 7);
    for (const q of ["?limit=0", "?limit=1001", "?limit=abc", "?page=0", "?page=-1", "?page=1.5", "?sort=UP", "?status=open", "?accountType=both", "?accountNumber=123", "?currency=NAIRA", "?startDate=yesterday", "?endDate=2030-13-01"]) {
      const r = await list(h, q);
      assert.is(r.status, 422, q);
      const field = q.slice(1, q.indexOf("="));
      assert.equal(r.errors!.map((e) => e.field), [field], q);
    }
    const many = await list(h, "?limit=0&page=0&status=nope");
    assert.equal(many.errors!.map((e) => e.field).sort(), ["limit", "page", "status"], "every failing query field");
  } finally {
    await h.close();
  }
});

test("filters: reference, accountNumber, accountType, currency", async () => {
  const h = await fresh();
  try {
    const a = await createAccount(h, { account_type: "multi_use" });
    const b = await createAccount(h, { account_type: "single_use" });
    const c = await createAccount(h, { account_type: "single_use" });
    assert.equal((await list(h, `?reference=${b.reference}`)).data.map((x) => x.id), [b.id]);
    assert.equal((await list(h, `?accountNumber=${c.accountNumber}`)).data.map((x) => x.id), [c.id]);
    const singles = await list(h, "?accountType=single_use&sort=ASC");
    assert.equal(singles.data.map((x) => x.id).sort(), [b.id, c.id].sort());
    assert.is(singles.meta!.total, 2);
    assert.equal((await list(h, "?accountType=multi_use")).data.map((x) => x.id), [a.id]);
    assert.is((await list(h, "?currency=NGN")).meta!.total, 3);
    assert.is((await list(h, "?currency=ngn")).meta!.total, 3);
    assert.is((await list(h, "?currency=USD")).meta!.total, 0);
    assert.equal((await list(h, `?reference=${b.reference}&accountType=multi_use`)).data, [], "filters combine with AND");
    assert.equal((await list(h, "?reference=VA-NOPE")).data, []);
  } finally {
    await h.close();
  }
});

test("search: partial, case-insensitive, over reference, account number and account name", async () => {
  const h = await fresh();
  try {
    const ada = await createAccount(h, { account_name: "Ada Lovelace Tuition" });
    const bob = await createAccount(h, { account_name: "Bob's Bakery (Ikeja)" });
    const ids = async (q: string) => (await list(h, `?search=${encodeURIComponent(q)}&sort=ASC`)).data.map((x) => x.id);
    assert.equal(await ids("lovelace"), [ada.id]);
    assert.equal(await ids("BAKERY (IK"), [bob.id], "regex characters are literal");
    assert.equal(await ids(bob.reference.slice(3, 12).toLowerCase()), [bob.id]);
    assert.equal(await ids(ada.accountNumber.slice(2, 8)), [ada.id]);
    assert.equal(await ids("zzz-none"), []);
    assert.equal((await ids("   ")).sort(), [ada.id, bob.id].sort(), "a blank search is no search");
    const combined = await list(h, `?search=ada&reference=${bob.reference}`);
    assert.equal(combined.data, []);
  } finally {
    await h.close();
  }
});

test("startDate / endDate: whole UTC days inclusive, or YYYY-MM-DD HH:MM:SS; 422 when reversed", async () => {
  const h = await fresh();
  try {
    const at = async (ms: number) => {
      h.clock.set(ms);
      return createAccount(h);
    };
    const d9late = await at(Date.UTC(2030, 2, 9, 23, 59, 59, 999));
    const d10first = await at(Date.UTC(2030, 2, 10, 0, 0, 0));
    const d10noon = await at(Date.UTC(2030, 2, 10, 12, 0, 0, 500));
    const d10last = await at(Date.UTC(2030, 2, 10, 23, 59, 59, 999));
    const d11 = await at(Date.UTC(2030, 2, 11, 0, 0, 0));
    const ids = async (q: string) => (await list(h, `${q}&sort=ASC`)).data.map((x) => x.id);
    assert.equal(await ids("?startDate=2030-03-10&endDate=2030-03-10"), [d10first.id, d10noon.id, d10last.id]);
    assert.equal(await ids("?startDate=2030-03-10"), [d10first.id, d10noon.id, d10last.id, d11.id]);
    assert.equal(await ids("?endDate=2030-03-09"), [d9late.id]);
    assert.equal(await ids(`?startDate=${encodeURIComponent("2030-03-10 12:00:00")}&endDate=${encodeURIComponent("2030-03-10 12:00:00")}`), [d10noon.id], "the whole second shown in createdAt");
    assert.equal(await ids(`?startDate=${encodeURIComponent("2030-03-10 00:00:01")}&endDate=2030-03-11`), [d10noon.id, d10last.id, d11.id]);
    const reversed = await list(h, "?startDate=2030-03-11&endDate=2030-03-10");
    assert.is(reversed.status, 422);
    assert.equal(reversed.errors, [{ field: "endDate", message: "must not be before startDate" }]);
    for (const bad of ["2030-03-10T12:00:00Z", "10/03/2030", "2030-03-32", "2030-03-10 12:00"]) {
      const r = await list(h, `?startDate=${encodeURIComponent(bad)}`);
      assert.is(r.status, 422, bad);
    }
  } finally {
    await h.close();
  }
});

test("derived status: expiry (time or a completed payment) wins over inactive; toggled off is inactive", async () => {
  const h = await fresh();
  try {
    const single = await createAccount(h, { account_type: "single_use", expires_at: fmt(T0 + HOUR) });
    h.clock.advance(1000);
    const paid = await createAccount(h, { account_type: "single_use", expires_at: fmt(T0 + 2 * HOUR), amount: 500 });
    h.clock.advance(1000);
    const off = await createAccount(h, { account_type: "multi_use" });
    h.clock.advance(1000);
    const offAndExpired = await createAccount(h, { account_type: "single_use", expires_at: fmt(T0 + HOUR) });
    assert.is((await toggle(h, off.reference, false)).status, 200);
    assert.is((await toggle(h, offAndExpired.reference, false)).status, 200);
    assert.is((await deposit(h, paid.accountNumber, 500)).data.status, "settled");
    const statusOf = async (a: AccountData) =>
      (await body<AccountData>(await h.api(`/api/v1/virtual-account/find?reference=${a.reference}`))).data.status;
    assert.is(await statusOf(single), "active");
    assert.is(await statusOf(paid), "expired", "a single_use account that completed a payment");
    assert.is(await statusOf(off), "inactive");
    assert.is(await statusOf(offAndExpired), "inactive");
    h.clock.set(T0 + HOUR - 1);
    assert.is(await statusOf(single), "active", "one millisecond before expiresAt");
    h.clock.set(T0 + HOUR);
    assert.is(await statusOf(single), "expired", "at expiresAt");
    assert.is(await statusOf(offAndExpired), "expired", "expiry wins over inactive");
    assert.equal((await list(h, "?status=active")).data.map((a) => a.id), [], "an expired account never lists as active");
    assert.equal((await list(h, "?status=expired&sort=ASC")).data.map((a) => a.id), [single.id, paid.id, offAndExpired.id]);
    assert.equal((await list(h, "?status=inactive")).data.map((a) => a.id), [off.id]);
    const shown = (await list(h, "?sort=ASC")).data.map((a) => a.status);
    assert.equal(shown, ["expired", "expired", "inactive", "expired"]);
  } finally {
    await h.close();
  }
});

test("status filter selects in the store: exact pages and totals as time passes", async () => {
  const h = await fresh();
  try {
    const expect: { active: string[]; inactive: string[]; expired: string[] } = { active: [], inactive: [], expired: [] };
    const later: string[] = []; // active now, expired after 2 hours
    for (let i = 0; i < 36; i++) {
      const kind = i % 6;
      h.clock.set(T0 + i * 1000);
      if (kind === 0 || kind === 1) {
        const a = await createAccount(h, { account_type: "multi_use" });
        expect.active.push(a.id);
      } else if (kind === 2) {
        const a = await createAccount(h, { account_type: "multi_use" });
        await toggle(h, a.reference, false);
        expect.inactive.push(a.id);
      } else if (kind === 3) {
        const a = await createAccount(h, { account_type: "single_use", expires_at: fmt(T0 + 2 * HOUR) });
        expect.active.push(a.id);
        later.push(a.id);
      } else if (kind === 4) {
        const a = await createAccount(h, { account_type: "single_use", expires_at: fmt(T0 + 23 * HOUR) });
        await deposit(h, a.accountNumber, 100);
        expect.expired.push(a.id);
      } else {
        const a = await createAccount(h, { account_type: "single_use", expires_at: fmt(T0 + 23 * HOUR) });
        await toggle(h, a.reference, false);
        expect.inactive.push(a.id);
      }
    }
    const pageAll = async (status: string, limit: number) => {
      const seen: string[] = [];
      let total = -1;
      for (let page = 1; ; page++) {
        const r = await list(h, `?status=${status}&limit=${limit}&page=${page}&sort=ASC`);
        assert.is(r.status, 200);
        total = r.meta!.total;
        if (page < r.meta!.last_page) assert.is(r.data.length, limit, `page ${page} of ${status} is full`);
        assert.ok(r.data.every((a) => a.status === status), `every ${status} item shows ${status}`);
        seen.push(...r.data.map((a) => a.id));
        if (page >= r.meta!.last_page) break;
      }
      return { seen, total };
    };
    h.clock.set(T0 + HOUR);
    for (const status of ["active", "inactive", "expired"] as const) {
      const { seen, total } = await pageAll(status, 4);
      assert.equal(seen, expect[status], status);
      assert.is(total, expect[status].length);
    }
    // Two hours later the `later` single_use accounts have expired: the same query selects differently.
    h.clock.set(T0 + 2 * HOUR);
    const active = await pageAll("active", 5);
    assert.equal(active.seen, expect.active.filter((id) => !later.includes(id)));
    const expired = await pageAll("expired", 5);
    assert.equal(expired.seen.sort(), [...expect.expired, ...later].sort());
    assert.is(expired.total, expect.expired.length + later.length);
    // Combined with other filters and search.
    const singlesActive = await list(h, "?status=active&accountType=single_use");
    assert.is(singlesActive.meta!.total, 0);
  } finally {
    await h.close();
  }
});

test("statusFilter(s, now) selects exactly the accounts with deriveStatus = s (property)", () => {
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  for (let i = 0; i < 5000; i++) {
    const now = Math.floor(rnd() * 1000);
    const consumed = rnd() < 0.2;
    const single = rnd() < 0.6;
    const expires = Math.floor(rnd() * 1000);
    const doc: Doc = {
      _id: String(i),
      enabled: rnd() < 0.6,
      openUntil: !single ? NEVER : consumed ? 0 : expires,
    };
    const derived = deriveStatus(doc as never, now);
    for (const s of ACCOUNT_STATUSES) assert.is(compileFilter(statusFilter(s, now))(doc), s === derived, `${JSON.stringify(doc)} at ${now}`);
  }
});

test("find: exactly one of reference / sourceReference; 404 when absent or another business's", async () => {
  const h = await fresh();
  try {
    const ref = sourceRef("find");
    const a = await createAccount(h, { source_reference: ref });
    const byRef = await h.api(`/api/v1/virtual-account/find?reference=${a.reference}`);
    assert.is(byRef.status, 200);
    const env = await body<AccountData>(byRef);
    assert.is(env.statusCode, 200);
    assert.equal(env.data, a);
    const bySource = await h.api(`/api/v1/virtual-account/find?sourceReference=${encodeURIComponent(ref)}`);
    assert.equal((await body<AccountData>(bySource)).data, a);
    for (const q of ["", "?", "?reference=", "?sourceReference=&reference=", `?reference=${a.reference}&sourceReference=${ref}`]) {
      const r = await h.api(`/api/v1/virtual-account/find${q}`);
      assert.is(r.status, 422, q);
      assert.equal((await body(r)).errors!.map((e) => e.field), ["reference", "sourceReference"], q);
    }
    assert.is((await h.api("/api/v1/virtual-account/find?reference=VA-UNKNOWN")).status, 404);
    assert.is((await h.api("/api/v1/virtual-account/find?sourceReference=unknown-ref")).status, 404);
    assert.is((await h.api(`/api/v1/virtual-account/find?reference=${a.reference}`, { key: BEARER_OTHER })).status, 404, "scoped to the business");
    assert.is((await h.api(`/api/v1/virtual-account/find?sourceReference=${ref}`, { key: BEARER_OTHER })).status, 404);
    const notFound = await body(await h.api("/api/v1/virtual-account/find?reference=VA-UNKNOWN"));
    assert.is(notFound.statusCode, 404);
    assert.equal(notFound.errors, []);
  } finally {
    await h.close();
  }
});

test("lists are scoped to the business of the key", async () => {
  const h = await fresh();
  try {
    const mine = await createAccount(h);
    const theirs = await createAccount(h, {}, BEARER_OTHER);
    assert.equal((await list(h)).data.map((a) => a.id), [mine.id]);
    assert.equal((await list(h, "", BEARER_OTHER)).data.map((a) => a.id), [theirs.id]);
    assert.equal((await list(h, `?accountNumber=${theirs.accountNumber}`)).data, []);
  } finally {
    await h.close();
  }
});

test("toggle-status: deactivate, reactivate, idempotent, 404, 409 when expired, 422", async () => {
  const h = await fresh();
  try {
    const a = await createAccount(h, { account_type: "single_use", expires_at: fmt(T0 + HOUR) });
    const off = await toggle(h, a.reference, false);
    assert.is(off.status, 200);
    const offEnv = await body<AccountData>(off);
    assert.is(offEnv.message, "Virtual account deactivated.");
    assert.is(offEnv.data.status, "inactive");
    assert.is((await body<AccountData>(await toggle(h, a.reference, false))).data.status, "inactive", "setting the same state is fine");
    const on = await body<AccountData>(await toggle(h, a.reference, true));
    assert.is(on.data.status, "active");
    assert.is(on.message, "Virtual account activated.");
    assert.is((await toggle(h, "VA-UNKNOWN", false)).status, 404);
    assert.is((await toggle(h, a.reference, false, BEARER_OTHER)).status, 404, "another business's account");
    const bad = await h.api("/api/v1/virtual-account/toggle-status", { body: { activate: "no" } });
    assert.is(bad.status, 422);
    assert.equal((await body(bad)).errors!.map((e) => e.field), ["reference", "activate"]);
    h.clock.set(T0 + HOUR);
    const expired = await toggle(h, a.reference, true);
    assert.is(expired.status, 409);
    assert.equal((await body(expired)).errors, [{ field: "reference", message: "refers to an expired virtual account" }]);
    assert.is((await toggle(h, a.reference, false)).status, 409);
  } finally {
    await h.close();
  }
});

test.run();
