/**
 * The fault-injecting ledger (adapters/billing/faults.ts) over the document ledger: each fault of
 * spec §3.2 and what it leaves behind in the wallet.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createFaultInjectingLedger } from "../../../adapters/billing/faults.ts";
import { createDocumentLedger } from "../../../adapters/billing/ledger.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { isBillingError, isDependencyUnavailableError, type BillingIdentity, type DocumentStore } from "../../../adapters/ports.ts";

const OPENING = 1_000_000;
const FEE = 5_000;
const ID: BillingIdentity = { subBusinessId: "sub-1", domain: "passthrough.demo.localhost", irn: "INV-1", attemptNumber: 1 };

let store: DocumentStore;
test.before.each(async () => {
  store = await createSqliteDocumentStore({ file: ":memory:" });
});
test.after.each(async () => {
  await store.close();
});

function make() {
  return createFaultInjectingLedger(createDocumentLedger({ store, openingBalances: { demo: OPENING } }));
}

async function expectUnavailable(p: Promise<unknown>): Promise<void> {
  try {
    await p;
    assert.unreachable("DependencyUnavailableError expected");
  } catch (e) {
    assert.ok(isDependencyUnavailableError(e) && e.dependency === "billing", String(e));
    assert.not.ok(isBillingError(e));
  }
}

test("debit unavailable: nothing charged; the retry debits once", async () => {
  const l = make();
  l.faults.debit = "unavailable";
  await expectUnavailable(l.debit("demo", ID, FEE, "fp"));
  assert.is((await l.wallet("demo")).balanceKobo, OPENING);
  assert.is((await l.wallet("demo")).entries.length, 0);
  l.clear();
  assert.is((await l.debit("demo", ID, FEE, "fp")).kind, "debited");
  assert.is((await l.wallet("demo")).balanceKobo, OPENING - FEE);
  assert.is(l.injected.debit, 1);
});

test("debit unavailable_after_commit: the fee was charged, the answer lost; the retry is a replay", async () => {
  const l = make();
  l.faults.debit = "unavailable_after_commit";
  await expectUnavailable(l.debit("demo", ID, FEE, "fp"));
  assert.is((await l.wallet("demo")).balanceKobo, OPENING - FEE, "charged although the caller saw an outage");
  l.clear();
  assert.equal(await l.debit("demo", ID, FEE, "fp"), { kind: "replay", entryId: (await l.wallet("demo")).entries[0]!.id, state: "debited" });
  assert.is((await l.wallet("demo")).balanceKobo, OPENING - FEE, "never a second debit");
  // A different fingerprint for the same identity is still a conflict.
  try {
    await l.debit("demo", ID, FEE, "other");
    assert.unreachable();
  } catch (e) {
    assert.ok(isBillingError(e) && e.reason === "attempt_conflict");
  }
});

test("reverse unavailable: not reversed (unconfirmed); a later reverse reverses once", async () => {
  const l = make();
  await l.debit("demo", ID, FEE, "fp");
  l.faults.reverse = "unavailable";
  await expectUnavailable(l.reverse("demo", ID, "rejected"));
  assert.is((await l.wallet("demo")).balanceKobo, OPENING - FEE);
  l.clear();
  await l.reverse("demo", ID, "rejected");
  await l.reverse("demo", ID, "rejected");
  assert.is((await l.wallet("demo")).balanceKobo, OPENING);
});

test("confirm unavailable: the debit stays debited; a later confirm settles it", async () => {
  const l = make();
  await l.debit("demo", ID, FEE, "fp");
  l.faults.confirm = "unavailable";
  await expectUnavailable(l.confirm("demo", ID));
  assert.equal(await l.debit("demo", ID, FEE, "fp"), { kind: "replay", entryId: (await l.wallet("demo")).entries[0]!.id, state: "debited" });
  l.clear();
  await l.confirm("demo", ID);
  assert.is(((await l.debit("demo", ID, FEE, "fp")) as { state: string }).state, "confirmed");
});

test("once: the first injected fault clears every fault; credit and wallet pass through", async () => {
  const l = make();
  l.faults = { debit: "unavailable", confirm: "unavailable", once: true };
  await l.credit("demo", 100, "ref");
  assert.is((await l.wallet("demo")).balanceKobo, OPENING + 100);
  await expectUnavailable(l.debit("demo", ID, FEE, "fp"));
  assert.equal(l.faults, {});
  assert.is((await l.debit("demo", ID, FEE, "fp")).kind, "debited");
  await l.confirm("demo", ID);
  assert.equal(l.injected, { debit: 1, reverse: 0, confirm: 0 });
});

test("business outcomes pass through unchanged (declined is not an outage)", async () => {
  const l = make();
  try {
    await l.debit("demo", ID, OPENING + 1, "fp");
    assert.unreachable();
  } catch (e) {
    assert.ok(isBillingError(e) && e.reason === "wallet_declined");
  }
});

test.run();
