/**
 * The document ledger (adapters/billing/ledger.ts), one contract-style suite run against the embedded
 * store (SQLite in memory) and the MongoDB-wire server (jongodb, or MONGODB_URI). The MongoDB run is
 * a visible skip when no server is available (a failure under CI=true, see test/support/mongo-server.ts).
 * After every test the ledger invariant is checked for every touched business:
 *   balance = opening + credits − debits(applied) + reversals, never negative, no entry left pending.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  billingEntryId,
  createDocumentLedger,
  ENTRIES_COLLECTION,
  openLedgerCollections,
  type DocumentLedger,
  type DocumentLedgerOptions,
  type EntryDoc,
} from "../../../adapters/billing/ledger.ts";
import { createMongoDocumentStore } from "../../../adapters/document-store/mongodb.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { DependencyUnavailableError, isBillingError, isDependencyUnavailableError, type BillingIdentity, type CollectionSpec, type Doc, type DocumentStore, type Filter, type Update } from "../../../adapters/ports.ts";
import { assertLedgerInvariant } from "../../support/ledger-invariant.ts";
import { isMongoSkip, startMongoServer } from "../../support/mongo-server.ts";

interface Fixture {
  store: DocumentStore;
  cleanup(): Promise<void>;
}

const OPENING = { demo: 100_000_000, other: 0, small: 5_000 };
const FEE = 5_000;

function ident(irn: string, attemptNumber = 1, sub = "sub-1"): BillingIdentity {
  return { subBusinessId: sub, domain: "passthrough.demo.localhost", irn, attemptNumber };
}

/** The invariant (test/support/ledger-invariant.ts); returns the balance. */
async function assertInvariant(store: DocumentStore, businessId: string, opts: { allowPending?: boolean } = {}): Promise<number> {
  return (await assertLedgerInvariant(store, businessId, opts)).balanceKobo;
}

function ledgerSuite(name: string, make: () => Promise<Fixture>, skip?: string): void {
  const test = suite(`billing ledger: ${name}`);
  let fx: Fixture;
  let made: DocumentLedger[] = [];
  const make2 = (extra: Partial<DocumentLedgerOptions> = {}): DocumentLedger => {
    const ledger = createDocumentLedger({ store: fx.store, openingBalances: { ...OPENING }, ...extra });
    made.push(ledger);
    return ledger;
  };
  // A new debit is answered before its entry is finished (docs/billing.md): before reading the
  // documents themselves, the tests let every ledger's batchers finish.
  const settled = async () => {
    await Promise.all(made.map((l) => l.settled()));
  };

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
    made = [];
  });
  test.after.each(async () => {
    try {
      await settled();
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
    // Hand-made crash states: a pending entry recorded in the wallet's batch, and a wallet of the
    // earlier mark-per-entry format with a mark for a pending entry. Both are finished, never charged again.
    const ledger = make2();
    await ledger.credit("demo", 1, "init"); // creates the wallet document
    const { entries, wallets } = openLedgerCollections(fx.store);
    const now = new Date().toISOString();
    const pending = (irn: string): EntryDoc => ({
      _id: billingEntryId("debit", "demo", ident(irn)),
      businessId: "demo",
      type: "debit",
      amountKobo: FEE,
      state: "pending",
      round: 1,
      applied: false,
      fingerprint: "fp",
      billingIdentity: ident(irn),
      createdAt: now,
      updatedAt: now,
    });
    const hand = pending("HAND");
    await entries.insert(hand);
    assert.ok(
      await wallets.updateOne(
        { _id: "demo" },
        { $inc: { balanceKobo: -FEE, version: 1 }, $set: { batch: { id: "crashed-batch", moves: [{ e: hand._id, t: 1, o: "applied" }] } } },
      ),
    );
    await ledger.confirm("demo", ident("HAND"));
    assert.is((await entries.get(hand._id))!.state, "confirmed");
    assert.is((await wallets.get("demo"))!.batch, null, "the recorded batch is cleared once finished");
    assert.is((await ledger.wallet("demo")).balanceKobo, OPENING.demo + 1 - FEE);

    const legacy = pending("LEGACY");
    await entries.insert(legacy);
    await wallets.updateOne(
      { _id: "demo" },
      { $inc: { balanceKobo: -FEE, version: 1 }, $set: { horizon: 0, [`marks.${legacy._id.replace(":", "_")}_1`]: { e: legacy._id, t: 1, at: 1, o: "applied" } } },
    );
    assert.equal(await ledger.debit("demo", ident("LEGACY"), FEE, "fp"), { kind: "replay", entryId: legacy._id, state: "debited" });
    await ledger.debit("demo", ident("AFTER-LEGACY"), FEE, "fp");
    const w = (await wallets.get("demo"))!;
    assert.is(w.marks, undefined, "the next batch drops the earlier format's marks");
    assert.is(w.horizon, undefined);
    assert.is(w.balanceKobo, OPENING.demo + 1 - 3 * FEE);
  });

  test(CASE_NAMES[12]!, async () => {
    // The wallet is a bounded summary: its document does not grow with the history.
    const ledger = make2({ maxBatch: 8 });
    const { wallets } = openLedgerCollections(fx.store);
    const size = async () => JSON.stringify(await wallets.get("demo")).length;
    await ledger.debit("demo", ident("B-0"), FEE, "fp");
    await settled();
    const small = await size();
    for (let round = 0; round < 5; round++) {
      await Promise.all(Array.from({ length: 40 }, (_, i) => ledger.debit("demo", ident(`B-${round}-${i}`), FEE, "fp")));
    }
    await settled();
    const w = (await wallets.get("demo"))!;
    assert.is(w.batch, null, "no batch record is left behind");
    assert.is(await size(), small + String(w.version).length - 1, "same document, only the counters changed");
    assert.is(w.balanceKobo, OPENING.demo - 201 * FEE);
    // Replays of old entries stay replays.
    for (let i = 0; i < 40; i++) assert.is((await ledger.debit("demo", ident(`B-0-${i}`), FEE, "fp")).kind, "replay");
  });

  test(CASE_NAMES[14]!, async () => {
    // Group commit: concurrent debits of one business are applied together, never retried against each other.
    const ledger = make2();
    await ledger.debit("demo", ident("WARM"), FEE, "fp");
    const { wallets } = openLedgerCollections(fx.store);
    const v0 = (await wallets.get("demo"))!.version;
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => ledger.debit("demo", ident(`G-${i}`), FEE, `fp-${i}`)));
    assert.ok(results.every((r) => r.kind === "debited"));
    const balances = results.map((r) => (r.kind === "debited" ? r.balanceKobo : -1)).sort((a, b) => b - a);
    assert.equal(
      balances,
      Array.from({ length: 200 }, (_, i) => OPENING.demo - (i + 2) * FEE),
      "each debit reports the balance right after itself: one consistent order",
    );
    const writes = (await wallets.get("demo"))!.version - v0;
    assert.ok(writes < 200, `200 debits took ${writes} wallet writes`);
  });

  test(CASE_NAMES[15]!, async () => {
    // A crash at every step of debit, credit and reversal, in a batch of concurrent movements, then
    // recovery by another ledger (another process): each movement applied exactly once.
    const steps = ["afterInsert", "afterApply", "afterFinish"] as const;
    const healthy = make2();
    let expected = OPENING.demo;
    for (const step of steps) {
      const crash = () => Promise.reject(new Error(`simulated crash ${step}`));
      const crashing = make2({ hooks: { [step]: crash } });
      // Debits: ten concurrent ones, one batch, all crash at the step.
      const irns = Array.from({ length: 10 }, (_, i) => `${step}-D${i}`);
      const outcomes = await Promise.allSettled(irns.map((irn) => crashing.debit("demo", ident(irn), FEE, "fp")));
      if (step === "afterFinish") {
        // New debits are answered once the wallet write committed, before this crash point.
        assert.ok(outcomes.every((o) => o.status === "fulfilled" && o.value.kind === "debited"), `${step}: every debit was answered before the crash`);
        await settled();
      } else assert.ok(outcomes.every((o) => o.status === "rejected"), `${step}: every debit of the crashed batch fails`);
      const replays = await Promise.all(irns.flatMap((irn) => [healthy.debit("demo", ident(irn), FEE, "fp"), healthy.debit("demo", ident(irn), FEE, "fp")]));
      const charged = replays.filter((r) => r.kind === "debited").length;
      assert.is(charged, step === "afterInsert" ? 10 : 0, `${step}: the recovering calls charge only what the crash left uncharged`);
      expected -= 10 * FEE;
      assert.is((await healthy.wallet("demo")).balanceKobo, expected, `${step}: ten debits, once each`);
      await assertInvariant(fx.store, "demo");
      // A credit.
      await crashing.credit("demo", 7_00, `credit-${step}`).then(
        () => assert.unreachable(),
        () => {},
      );
      assert.is((await healthy.credit("demo", 7_00, `credit-${step}`)).created, false);
      expected += 7_00;
      assert.is((await healthy.wallet("demo")).balanceKobo, expected, `${step}: the credit once`);
      // A reversal (its debit made by the healthy ledger).
      await healthy.debit("demo", ident(`${step}-R`), FEE, "fp");
      await crashing.reverse("demo", ident(`${step}-R`), "rejected").then(
        () => assert.unreachable(),
        () => {},
      );
      await healthy.reverse("demo", ident(`${step}-R`), "rejected");
      assert.is((await healthy.wallet("demo")).balanceKobo, expected, `${step}: debit and reversal cancel out`);
      await assertInvariant(fx.store, "demo");
    }
  });

  test(CASE_NAMES[16]!, async () => {
    // Two ledgers (two processes), one crashing at random steps, replays racing: every identity once.
    let seed = 42;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const flaky = () => (random() < 0.15 ? Promise.reject(new Error("simulated crash")) : undefined);
    const crashing = make2({ hooks: { afterInsert: flaky, afterApply: flaky, afterFinish: flaky } });
    const healthy = make2();
    const irns = Array.from({ length: 60 }, (_, i) => `R-${i}`);
    await Promise.allSettled(irns.flatMap((irn, i) => [crashing.debit("demo", ident(irn), FEE, "fp"), (i % 3 ? crashing : healthy).debit("demo", ident(irn), FEE, "fp")]));
    await Promise.all(irns.map((irn) => healthy.debit("demo", ident(irn), FEE, "fp")));
    assert.is((await healthy.wallet("demo", 1000)).balanceKobo, OPENING.demo - 60 * FEE);
    const { entries } = openLedgerCollections(fx.store);
    for (const irn of irns) assert.is((await entries.get(billingEntryId("debit", "demo", ident(irn))))!.state, "debited", irn);
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
    const closed = await createSqliteDocumentStore({ file: ":memory:" });
    const dead = createDocumentLedger({ store: closed, openingBalances: OPENING });
    await closed.close();
    try {
      await dead.debit("demo", ident("X"), FEE, "fp");
      assert.unreachable();
    } catch (e) {
      assert.ok(isDependencyUnavailableError(e) && e.dependency === "billing", String(e));
    }
  });

  test(CASE_NAMES[17]!, async () => {
    // The entry's finish fails without reaching the store (e.g. a refused call); the wallet write
    // before it applied the debit. The batch record must stay, so the replay finishes the entry
    // with the recorded outcome instead of deciding (and charging) it a second time.
    const id = billingEntryId("debit", "demo", ident("FINISH-FAILS"));
    let refuse = true;
    const store = withEntryUpdates(fx.store, (filter, update, updateOne) => {
      if (refuse && filter._id === id && filter.state === "pending") {
        refuse = false;
        return Promise.reject(new DependencyUnavailableError("documentStore", "circuit open", "circuit_open"));
      }
      return updateOne(filter, update);
    });
    const flaky = createDocumentLedger({ store, openingBalances: { ...OPENING } });
    // A new debit is answered once the wallet write committed: charged, whatever its finish does.
    const answered = await flaky.debit("demo", ident("FINISH-FAILS"), FEE, "fp");
    assert.is(answered.kind, "debited");
    await flaky.settled();
    assert.is(refuse, false, "the finish was refused");
    const { entries, wallets } = openLedgerCollections(fx.store);
    assert.is((await entries.get(id))!.state, "pending");
    const wallet = (await wallets.get("demo"))!;
    assert.is(wallet.balanceKobo, OPENING.demo - FEE, "the wallet write applied the debit");
    assert.equal(wallet.batch?.moves.map((m) => m.e), [id], "the batch record stays until its entry is finished");
    const r = await make2().debit("demo", ident("FINISH-FAILS"), FEE, "fp");
    assert.equal(r, { kind: "replay", entryId: id, state: "debited" });
    assert.is(await assertInvariant(fx.store, "demo"), OPENING.demo - FEE, "charged once");
  });

  test(CASE_NAMES[18]!, async () => {
    // Whether each debit's caller had its answer when the batcher finished its entry.
    const answered = new Set<string>();
    const atFinish: Record<string, boolean> = {};
    const ledger = make2({ hooks: { afterFinish: (id) => void (atFinish[id] = answered.has(id)) } });
    // The balance covers one of the two; which one is the store's order of the inserts.
    const ids = ["EARLY-1", "EARLY-2"].map((irn) => billingEntryId("debit", "small", ident(irn)));
    const outcomes = await Promise.allSettled(
      ["EARLY-1", "EARLY-2"].map((irn, i) =>
        ledger.debit("small", ident(irn), 4_000, "fp").finally(() => answered.add(ids[i]!)),
      ),
    );
    const paid = ids[outcomes.findIndex((o) => o.status === "fulfilled")]!;
    const refused = ids.find((id) => id !== paid)!;
    const declined = outcomes.find((o) => o.status === "rejected");
    assert.ok(outcomes.some((o) => o.status === "fulfilled" && o.value.kind === "debited"), "one debit applied");
    assert.ok(declined?.status === "rejected" && isBillingError(declined.reason) && declined.reason.reason === "wallet_declined", "the other declined");
    assert.equal(atFinish, { [paid]: true, [refused]: false }, "the applied debit was answered before its finish, the decline after");
    const { entries } = openLedgerCollections(fx.store);
    assert.is((await entries.get(refused))!.state, "declined", "a decline is answered once its entry says so (a retry reopens it)");
    await settled();
    assert.is((await entries.get(paid))!.state, "debited");
  });

  test(CASE_NAMES[19]!, async () => {
    // A process answers a new debit at its wallet write, then dies before the entry's finish
    // reaches the store (its finishes never settle). Another process confirms it; the same again
    // with a reversal.
    const dyingLedger = (): DocumentLedger => {
      const store = withEntryUpdates(fx.store, (filter, update, updateOne) => (filter.state === "pending" ? new Promise<boolean>(() => {}) : updateOne(filter, update)));
      return createDocumentLedger({ store, openingBalances: { ...OPENING } });
    };
    const { entries } = openLedgerCollections(fx.store);
    const other = make2();
    for (const [irn, settle, end] of [
      ["LOST-1", () => other.confirm("demo", ident("LOST-1")), "confirmed"],
      ["LOST-2", () => other.reverse("demo", ident("LOST-2"), "regulator_rejected"), "reversed"],
    ] as const) {
      const id = billingEntryId("debit", "demo", ident(irn));
      assert.is((await dyingLedger().debit("demo", ident(irn), FEE, "fp")).kind, "debited", irn);
      assert.is((await entries.get(id))!.state, "pending", `${irn}: the finish never reached the store`);
      await settle();
      assert.is((await entries.get(id))!.state, end, irn);
    }
    assert.is((await other.wallet("demo")).balanceKobo, OPENING.demo - FEE, "one fee kept, one given back, none charged twice");
  });

  test.run();
}

type _UpdateOne = (filter: Filter, update: Update) => Promise<boolean>;

/** `store`, with every `updateOne` on the ledger's entries going through `through` (a fault injected). */
function withEntryUpdates(store: DocumentStore, through: (filter: Filter, update: Update, updateOne: _UpdateOne) => Promise<boolean>): DocumentStore {
  return {
    ...store,
    collection<T extends Doc>(name: string, spec?: CollectionSpec) {
      const c = store.collection<T>(name, spec);
      if (name !== ENTRIES_COLLECTION) return c;
      return { ...c, updateOne: (filter, update) => through(filter, update, (f, u) => c.updateOne(f, u)) } as typeof c;
    },
  };
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
  "recovery of hand-made crash states: a batch recorded in the wallet, a wallet of the earlier mark format",
  "the wallet is a bounded summary: same size after 200 debits, no batch record left",
  "input checks are programming errors; a store outage is DependencyUnavailableError(billing)",
  "group commit: 200 concurrent debits of one business, fewer wallet writes, one consistent order of balances",
  "a crash at every step (insert, wallet write, entry finish) of a batch of debits, a credit, a reversal → recovered once each",
  "two ledgers, one crashing at random steps, racing replays → every identity debited once",
  "an entry finish that fails after the wallet write keeps the batch record: the replay finishes it, charged once",
  "a new debit is answered once its wallet write committed, before its entry is finished; a decline once its entry says so",
  "answered debits whose finishes never reach the store (the process died): another ledger confirms one and reverses the other, charged once",
];

// --- Runs ---

const server = await startMongoServer();

ledgerSuite("sqlite-memory", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
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
