/**
 * The document ledger (adapters/billing/ledger.ts), one contract-style suite run against the embedded
 * store (unstorage memory) and the MongoDB-wire server (jongodb, or MONGODB_URI). The MongoDB run is
 * a visible skip when no server is available (a failure under CI=true, see test/support/mongo-server.ts).
 * After every test the ledger invariant is checked for every touched business:
 *   balance = opening + credits − debits(applied) + reversals, never negative, no entry left pending.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  billingEntryId,
  createDocumentLedger,
  openLedgerCollections,
  type DocumentLedgerOptions,
  type EntryDoc,
} from "../../adapters/billing/ledger.ts";
import { createMongoDocumentStore } from "../../adapters/document-store/mongodb.ts";
import { createUnstorageDocumentStore } from "../../adapters/document-store/unstorage.ts";
import { isBillingError, isDependencyUnavailableError, type BillingIdentity, type DocumentStore } from "../../adapters/ports.ts";
import { isMongoSkip, startMongoServer } from "../support/mongo-server.ts";

interface Fixture {
  store: DocumentStore;
  cleanup(): Promise<void>;
}

const OPENING = { demo: 100_000_000, other: 0, small: 5_000 };
const FEE = 5_000;

function ident(irn: string, attemptNumber = 1, sub = "sub-1"): BillingIdentity {
  return { subBusinessId: sub, domain: "passthrough.demo.localhost", irn, attemptNumber };
}

/** Checks the ledger invariant for `businessId` straight from the stored documents. */
async function assertInvariant(store: DocumentStore, businessId: string, opts: { allowPending?: boolean } = {}): Promise<number> {
  const { wallets, entries } = openLedgerCollections(store);
  const w = await wallets.get(businessId);
  const all: EntryDoc[] = [];
  let cursor: string | null = null;
  do {
    const page = await entries.find({ businessId }, { limit: 1000, cursor });
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  if (!w) {
    assert.is(all.filter((e) => e.applied).length, 0, `${businessId}: applied entries without a wallet`);
    return 0;
  }
  let sum = w.openingKobo;
  for (const e of all) {
    if (!opts.allowPending) assert.is.not(e.state, "pending", `${businessId}: entry ${e._id} left pending`);
    if (e.type === "debit" && ["debited", "confirmed", "reversing", "reversed"].includes(e.state)) {
      assert.ok(e.applied, `debit ${e._id} applied flag`);
      sum -= e.amountKobo;
    } else if ((e.type === "credit" || e.type === "reversal") && e.state === "applied") {
      sum += e.amountKobo;
    } else {
      assert.not.ok(e.applied, `entry ${e._id} (${e.type}/${e.state}) must not count`);
    }
  }
  assert.is(w.balanceKobo, sum, `${businessId}: balance ${w.balanceKobo} ≠ opening + entries ${sum}`);
  assert.ok(w.balanceKobo >= 0, `${businessId}: negative balance`);
  return w.balanceKobo;
}

function ledgerSuite(name: string, make: () => Promise<Fixture>, skip?: string): void {
  const test = suite(`billing ledger: ${name}`);
  let fx: Fixture;
  const make2 = (extra: Partial<DocumentLedgerOptions> = {}) =>
    createDocumentLedger({ store: fx.store, openingBalances: { ...OPENING }, ...extra });

  if (skip !== undefined) {
    test("skipping is allowed only outside CI, with a reason", () => {
      console.log(`[billing ledger: ${name}] SKIPPED: ${skip}`);
      assert.is.not(process.env.CI, "true");
    });
    for (const c of CASE_NAMES) test.skip(c, () => {});
    test.run();
    return;
  }

  test.before.each(async () => {
    fx = await make();
  });
  test.after.each(async () => {
    try {
      for (const b of Object.keys(OPENING)) await assertInvariant(fx.store, b);
    } finally {
      await fx.cleanup();
    }
  });

  test(CASE_NAMES[0]!, async () => {
    const ledger = make2();
    const r = await ledger.debit("demo", ident("INV-1"), FEE, "fp1");
    assert.equal(r, { kind: "debited", entryId: billingEntryId("debit", "demo", ident("INV-1")), balanceKobo: OPENING.demo - FEE });
    const w = await ledger.wallet("demo");
    assert.is(w.balanceKobo, OPENING.demo - FEE);
    assert.is(w.currency, "NGN");
    assert.is(w.entries.length, 1);
    assert.equal(w.entries[0]!.billingIdentity, ident("INV-1"));
    assert.is(w.entries[0]!.type, "debit");
    assert.is(w.entries[0]!.amountKobo, FEE);
  });

  test(CASE_NAMES[1]!, async () => {
    const ledger = make2();
    await ledger.debit("demo", ident("INV-1"), FEE, "fp1");
    const again = await ledger.debit("demo", ident("INV-1"), FEE, "fp1");
    assert.equal(again, { kind: "replay", entryId: billingEntryId("debit", "demo", ident("INV-1")), state: "debited" });
    await ledger.confirm("demo", ident("INV-1"));
    assert.equal(await ledger.debit("demo", ident("INV-1"), FEE, "fp1"), { kind: "replay", entryId: billingEntryId("debit", "demo", ident("INV-1")), state: "confirmed" });
    // A new attempt number is a new identity.
    assert.is((await ledger.debit("demo", ident("INV-1", 2), FEE, "fp2")).kind, "debited");
    assert.is((await ledger.wallet("demo")).balanceKobo, OPENING.demo - 2 * FEE);
  });

  test(CASE_NAMES[2]!, async () => {
    const ledger = make2();
    await ledger.debit("demo", ident("INV-1"), FEE, "fp1");
    try {
      await ledger.debit("demo", ident("INV-1"), FEE, "other-content");
      assert.unreachable("conflict expected");
    } catch (e) {
      assert.ok(isBillingError(e) && e.reason === "attempt_conflict", String(e));
    }
    // The same identity under another business is another identity.
    const r = await ledger.debit("small", ident("INV-1"), FEE, "other-content");
    assert.is(r.kind, "debited");
    assert.is((await ledger.wallet("demo")).balanceKobo, OPENING.demo - FEE);
  });

  test(CASE_NAMES[3]!, async () => {
    const ledger = make2();
    for (let i = 0; i < 2; i++) {
      try {
        await ledger.debit("other", ident("INV-1"), FEE, "fp1");
        assert.unreachable("declined expected");
      } catch (e) {
        assert.ok(isBillingError(e) && e.reason === "wallet_declined", String(e));
      }
    }
    assert.is((await ledger.wallet("other")).balanceKobo, 0);
    assert.is((await ledger.wallet("other")).entries.length, 0, "a declined debit is not listed");
    // After a top-up the same identity proceeds (a new round of the same entry), once.
    await ledger.credit("other", FEE, "topup-1");
    const r = await ledger.debit("other", ident("INV-1"), FEE, "fp1");
    assert.is(r.kind, "debited");
    assert.is((await ledger.debit("other", ident("INV-1"), FEE, "fp1")).kind, "replay");
    assert.is((await ledger.wallet("other")).balanceKobo, 0);
    // Conflict is checked before the decline.
    try {
      await ledger.debit("other", ident("INV-2"), FEE, "fp1");
      assert.unreachable("declined expected");
    } catch (e) {
      assert.ok(isBillingError(e) && e.reason === "wallet_declined");
    }
    try {
      await ledger.debit("other", ident("INV-2"), FEE, "fp-other");
      assert.unreachable("conflict expected");
    } catch (e) {
      assert.ok(isBillingError(e) && e.reason === "attempt_conflict");
    }
  });

  test(CASE_NAMES[4]!, async () => {
    const ledger = make2();
    await ledger.debit("demo", ident("INV-1"), FEE, "fp1");
    const a = await ledger.reverse("demo", ident("INV-1"), "regulator rejected");
    const b = await ledger.reverse("demo", ident("INV-1"), "regulator rejected");
    assert.is(a.entryId, billingEntryId("reversal", "demo", ident("INV-1")));
    assert.is(b.entryId, a.entryId);
    const w = await ledger.wallet("demo");
    assert.is(w.balanceKobo, OPENING.demo);
    assert.equal(w.entries.map((e) => e.type).sort(), ["debit", "reversal"]);
    assert.equal(await ledger.debit("demo", ident("INV-1"), FEE, "fp1"), { kind: "replay", entryId: billingEntryId("debit", "demo", ident("INV-1")), state: "reversed" });
    // Concurrent reversals of another debit: one reversal.
    await ledger.debit("demo", ident("INV-2"), FEE, "fp2");
    const ids = await Promise.all(Array.from({ length: 10 }, () => ledger.reverse("demo", ident("INV-2"), "rejected")));
    assert.is(new Set(ids.map((x) => x.entryId)).size, 1);
    assert.is((await ledger.wallet("demo")).balanceKobo, OPENING.demo);
    // Reversing an unknown identity or a confirmed debit is a programming error.
    let unknown = false;
    try {
      await ledger.reverse("demo", ident("NOPE"), "x");
    } catch {
      unknown = true;
    }
    assert.ok(unknown, "reversal of an unknown identity must be refused");
    await ledger.debit("demo", ident("INV-3"), FEE, "fp3");
    await ledger.confirm("demo", ident("INV-3"));
    let refused = false;
    try {
      await ledger.reverse("demo", ident("INV-3"), "late");
    } catch (e) {
      refused = !isBillingError(e) && !isDependencyUnavailableError(e);
    }
    assert.ok(refused, "reversal of a confirmed debit must be refused");
    // Confirming a reversed debit is refused too.
    let refused2 = false;
    try {
      await ledger.confirm("demo", ident("INV-1"));
    } catch {
      refused2 = true;
    }
    assert.ok(refused2);
  });

  test(CASE_NAMES[5]!, async () => {
    const ledger = make2();
    await ledger.debit("demo", ident("INV-1"), FEE, "fp1");
    await ledger.confirm("demo", ident("INV-1"));
    await ledger.confirm("demo", ident("INV-1"));
    await Promise.all(Array.from({ length: 5 }, () => ledger.confirm("demo", ident("INV-1"))));
    const { entries } = openLedgerCollections(fx.store);
    assert.is((await entries.get(billingEntryId("debit", "demo", ident("INV-1"))))!.state, "confirmed");
    assert.is((await ledger.wallet("demo")).balanceKobo, OPENING.demo - FEE);
  });

  test(CASE_NAMES[6]!, async () => {
    const ledger = make2();
    const a = await ledger.credit("other", 1_000_00, "ref-1");
    const b = await ledger.credit("other", 1_000_00, "ref-1");
    assert.is(a.created, true);
    assert.is(b.created, false);
    assert.is(a.entryId, b.entryId);
    const many = await Promise.all(Array.from({ length: 10 }, () => ledger.credit("other", 50_00, "ref-2")));
    assert.is(many.filter((x) => x.created).length, 1);
    assert.is((await ledger.wallet("other")).balanceKobo, 1_050_00);
    try {
      await ledger.credit("other", 2_000_00, "ref-1");
      assert.unreachable("a reference reused with another amount is a conflict");
    } catch (e) {
      assert.ok(isBillingError(e) && e.reason === "attempt_conflict");
    }
    const w = await ledger.wallet("other");
    assert.equal(w.entries.map((e) => e.reference).sort(), ["ref-1", "ref-2"]);
  });

  test(CASE_NAMES[7]!, async () => {
    let t = Date.parse("2030-01-01T00:00:00.000Z");
    const ledger = make2({ clock: () => t });
    assert.is((await ledger.wallet("demo")).balanceKobo, OPENING.demo, "opening balance before first use");
    assert.is((await ledger.wallet("other")).balanceKobo, 0);
    assert.is((await ledger.wallet("unknown-biz")).balanceKobo, 0);
    await ledger.debit("demo", ident("A"), FEE, "a");
    t += 1000;
    await ledger.credit("demo", 10_00, "c1");
    t += 1000;
    await ledger.debit("demo", ident("B"), FEE, "b");
    t += 1000;
    await ledger.reverse("demo", ident("B"), "rejected");
    const w = await ledger.wallet("demo");
    assert.is(w.balanceKobo, OPENING.demo - FEE + 10_00);
    assert.equal(w.entries.map((e) => e.type), ["reversal", "debit", "credit", "debit"], "newest first");
    assert.is((await ledger.wallet("demo", 2)).entries.length, 2);
  });

  test(CASE_NAMES[8]!, async () => {
    const ledger = make2();
    const results = await Promise.all(Array.from({ length: 20 }, () => ledger.debit("demo", ident("SAME"), FEE, "fp")));
    assert.is(results.filter((r) => r.kind === "debited").length, 1, "exactly one call debits");
    assert.is(results.filter((r) => r.kind === "replay").length, 19);
    assert.is((await ledger.wallet("demo")).balanceKobo, OPENING.demo - FEE);
    // Two ledgers (two processes) on the same store.
    const other = make2();
    const mixed = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? ledger : other).debit("demo", ident("SAME-2"), FEE, "fp")),
    );
    assert.is(mixed.filter((r) => r.kind === "debited").length, 1);
    assert.is((await ledger.wallet("demo")).balanceKobo, OPENING.demo - 2 * FEE);
  });

  test(CASE_NAMES[9]!, async () => {
    const a = make2();
    const b = make2();
    await a.credit("other", 10 * FEE, "fund-10");
    const settled = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).debit("other", ident(`INV-${i}`), FEE, `fp-${i}`)),
    );
    const debited = settled.filter((s) => s.status === "fulfilled" && s.value.kind === "debited").length;
    const declined = settled.filter((s) => s.status === "rejected" && isBillingError(s.reason) && s.reason.reason === "wallet_declined").length;
    const other = settled.filter((s) => s.status === "rejected" && !(isBillingError(s.reason) && s.reason.reason === "wallet_declined"));
    assert.equal(other.map((s) => String((s as PromiseRejectedResult).reason)), []);
    assert.is(debited, 10);
    assert.is(declined, 40);
    assert.is((await a.wallet("other")).balanceKobo, 0);
  });

  test(CASE_NAMES[10]!, async () => {
    // Crash after the wallet CAS, before the entry is marked: the next replay finishes it, no double charge.
    const crashing = make2({ hooks: { afterApply: () => Promise.reject(new Error("simulated crash")) } });
    await crashing.debit("demo", ident("CRASH-1"), FEE, "fp").then(
      () => assert.unreachable("crash expected"),
      (e: Error) => assert.is(e.message, "simulated crash"),
    );
    const { entries, wallets } = openLedgerCollections(fx.store);
    const id = billingEntryId("debit", "demo", ident("CRASH-1"));
    assert.is((await entries.get(id))!.state, "pending");
    assert.is((await wallets.get("demo"))!.balanceKobo, OPENING.demo - FEE, "the wallet was debited");
    await assertInvariant(fx.store, "demo", { allowPending: true }).then(
      () => assert.unreachable("a pending-but-applied entry breaks the sum until recovered"),
      () => {},
    );
    const healthy = make2();
    const r = await healthy.debit("demo", ident("CRASH-1"), FEE, "fp");
    assert.equal(r, { kind: "replay", entryId: id, state: "debited" });
    assert.is((await entries.get(id))!.state, "debited");
    assert.is((await healthy.wallet("demo")).balanceKobo, OPENING.demo - FEE);

    // Crash after insert, before the wallet CAS: nothing charged; the replay charges once.
    const crashEarly = make2({ hooks: { afterInsert: () => Promise.reject(new Error("simulated crash")) } });
    await crashEarly.debit("demo", ident("CRASH-2"), FEE, "fp").catch(() => {});
    assert.is((await wallets.get("demo"))!.balanceKobo, OPENING.demo - FEE, "nothing charged yet");
    const r2 = await Promise.all(Array.from({ length: 5 }, () => healthy.debit("demo", ident("CRASH-2"), FEE, "fp")));
    assert.is(r2.filter((x) => x.kind === "debited").length, 1, "the call that applies the charge reports it");
    assert.is((await healthy.wallet("demo")).balanceKobo, OPENING.demo - 2 * FEE);

    // Crash in the middle of a credit (applied, not marked): wallet() repairs the listing; a replay is not created.
    const crashCredit = make2({ hooks: { afterApply: () => Promise.reject(new Error("simulated crash")) } });
    await crashCredit.credit("other", 7_00, "ref-crash").catch(() => {});
    const w = await healthy.wallet("other");
    assert.is(w.balanceKobo, 7_00);
    assert.is(w.entries.length, 1, "wallet() finishes a decided pending entry");
    assert.equal(await healthy.credit("other", 7_00, "ref-crash"), { entryId: w.entries[0]!.id, created: false });

    // Crash in the middle of a reversal: the retried reverse finishes it once.
    await healthy.debit("demo", ident("CRASH-3"), FEE, "fp");
    const crashRev = make2({ hooks: { afterApply: () => Promise.reject(new Error("simulated crash")) } });
    await crashRev.reverse("demo", ident("CRASH-3"), "rejected").catch(() => {});
    assert.is((await entries.get(id.replace(/^debit:.*/, billingEntryId("debit", "demo", ident("CRASH-3")))))!.state, "reversing");
    await healthy.reverse("demo", ident("CRASH-3"), "rejected");
    assert.is((await healthy.wallet("demo")).balanceKobo, OPENING.demo - 2 * FEE);
  });

  test(CASE_NAMES[11]!, async () => {
    // Hand-made crash state: a pending entry and the wallet mark, written directly.
    const ledger = make2();
    await ledger.wallet("demo");
    await ledger.credit("demo", 1, "init"); // creates the wallet document
    const { entries, wallets } = openLedgerCollections(fx.store);
    const id = billingEntryId("debit", "demo", ident("HAND"));
    const now = Date.now();
    await entries.insert({
      _id: id,
      businessId: "demo",
      type: "debit",
      amountKobo: FEE,
      state: "pending",
      round: 1,
      roundAt: now,
      applied: false,
      fingerprint: "fp",
      billingIdentity: ident("HAND"),
      createdAt: new Date(now).toISOString(),
      updatedAt: new Date(now).toISOString(),
    });
    const key = `${id.replace(":", "_")}_1`;
    await wallets.findOneAndUpdate({ _id: "demo" }, { $inc: { balanceKobo: -FEE, version: 1 }, $set: { [`marks.${key}`]: { e: id, t: 1, at: now, o: "applied" } } });
    await ledger.confirm("demo", ident("HAND"));
    assert.is((await entries.get(id))!.state, "confirmed");
    assert.is((await ledger.wallet("demo")).balanceKobo, OPENING.demo + 1 - FEE);
  });

  test(CASE_NAMES[12]!, async () => {
    // Marks stay bounded: pruning removes finalized marks and raises the horizon; stale rounds are retired.
    let t = Date.parse("2030-01-01T00:00:00.000Z");
    const ledger = make2({ clock: () => t, maxMarks: 5, markRetentionMs: 1000 });
    for (let i = 0; i < 12; i++) {
      await ledger.debit("demo", ident(`P-${i}`), FEE, "fp");
      t += 600;
    }
    const { wallets, entries } = openLedgerCollections(fx.store);
    const w = (await wallets.get("demo"))!;
    assert.ok(Object.keys(w.marks).length <= 7, `marks bounded, got ${Object.keys(w.marks).length}`);
    assert.ok(w.horizon > 0, "horizon raised");
    // Replays of pruned entries stay replays.
    for (let i = 0; i < 12; i++) assert.is((await ledger.debit("demo", ident(`P-${i}`), FEE, "fp")).kind, "replay");
    // A stale pending round (inserted long ago, never applied) is retired and decided in a new round, once.
    const id = billingEntryId("debit", "demo", ident("STALE"));
    await entries.insert({
      _id: id,
      businessId: "demo",
      type: "debit",
      amountKobo: FEE,
      state: "pending",
      round: 1,
      roundAt: w.horizon - 1,
      applied: false,
      fingerprint: "fp",
      billingIdentity: ident("STALE"),
      createdAt: new Date(t).toISOString(),
      updatedAt: new Date(t).toISOString(),
    });
    const r = await ledger.debit("demo", ident("STALE"), FEE, "fp");
    assert.is(r.kind, "debited");
    assert.is((await entries.get(id))!.round, 2);
    assert.is((await ledger.wallet("demo")).balanceKobo, OPENING.demo - 13 * FEE);
  });

  test(CASE_NAMES[13]!, async () => {
    const ledger = make2();
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      let threw = false;
      try {
        await ledger.debit("demo", ident("X"), bad, "fp");
      } catch (e) {
        threw = e instanceof RangeError;
      }
      assert.ok(threw, `amount ${bad}`);
    }
    let threw = false;
    try {
      await ledger.debit("demo", { ...ident("X"), attemptNumber: 0 }, FEE, "fp");
    } catch (e) {
      threw = e instanceof TypeError;
    }
    assert.ok(threw);
    // A closed store is a billing outage, never a business outcome.
    const closed = await createUnstorageDocumentStore({ driver: "memory" });
    const dead = createDocumentLedger({ store: closed, openingBalances: OPENING });
    await closed.close();
    try {
      await dead.debit("demo", ident("X"), FEE, "fp");
      assert.unreachable();
    } catch (e) {
      assert.ok(isDependencyUnavailableError(e) && e.dependency === "billing", String(e));
    }
  });

  test.run();
}

const CASE_NAMES = [
  "debit once: entry, balance, listing",
  "replay: same identity and fingerprint never debits twice",
  "conflict: same identity, other fingerprint → attempt_conflict",
  "declined: insufficient balance → wallet_declined, nothing listed; a retry after top-up proceeds once",
  "reverse once (idempotent, concurrent); confirmed or unknown debits are refused",
  "confirm: debited → confirmed, idempotent",
  "credit idempotent on reference (concurrent too); same reference other amount → conflict",
  "balances: opening before first use, entries newest first, limit",
  "20 concurrent debits of the same identity (two ledgers) → one debit",
  "50 concurrent debits of distinct identities, balance covers 10 → 10 debited, 40 declined, balance 0",
  "recovery after simulated crashes (debit after apply / after insert, credit, reversal) → no double charge",
  "recovery of a hand-made pending entry with its wallet mark",
  "bounded marks: pruning, horizon, stale rounds retired",
  "input checks are programming errors; a store outage is DependencyUnavailableError(billing)",
];

// --- Runs ---

const server = await startMongoServer();

ledgerSuite("unstorage-memory", async () => {
  const store = await createUnstorageDocumentStore({ driver: "memory" });
  return { store, cleanup: () => store.close() };
});

if (isMongoSkip(server)) {
  ledgerSuite("mongodb", async () => Promise.reject(new Error("skipped")), server.skip);
} else {
  ledgerSuite("mongodb", async () => {
    const dbName = server.dbName();
    const store = await createMongoDocumentStore({ uri: server.uri, dbName });
    return { store, cleanup: () => store.close() };
  });
}
