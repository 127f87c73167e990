/**
 * The Stored processor's status model over real HTTP and the simulator (issue 10 item 2): the happy
 * path, every §3.2 outcome mapped to a status, dependency outages that never consume the retry
 * budget (and finish once the dependency is back), business refusals that do, rejections with the
 * regulator's violations, frozen outcomes that are never replayed — and the ledger after each.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { InvoiceDoc } from "../../../plugins/stored-processing/store.ts";
import { STORED_COLLECTIONS } from "../../../plugins/stored-processing/store.ts";
import { call as simCall } from "../../adapters/regulator/simulator/simulator-helpers.ts";
import { DEMO_RAW } from "../../support/gateway.ts";
import {
  ADMIN_KEY,
  HIGH_QUOTAS,
  expectProblem,
  PASSTHROUGH,
  SUB,
  accepted,
  demoInvoice,
  intakeInvoice,
  irnOf,
  startStoredHarness,
  type StoredHarness,
  STORED,
  STORED_BUSINESS,
} from "./stored-helpers.ts";

const h = await startStoredHarness();
test.after(() => h.close());

const done = (inv: Record<string, any>) => ["signed", "transmitted", "rejected", "frozen", "cancelled"].includes(inv.status);
const statuses = (inv: Record<string, any>) => inv.statusHistory.map((s: { status: string }) => s.status);

async function submit(harness: StoredHarness, no: string, key: string, doc = intakeInvoice(no)): Promise<string> {
  return (await accepted(await harness.intake(doc, { key }))).invoiceId as string;
}

test("pending → validated → signing → signed: one validation, one sign, one debit (confirmed), history with times", async () => {
  const before = await h.ledger();
  const calls = { validate: h.sim.state.calls("validate"), sign: h.sim.state.calls("sign") };
  const id = await submit(h, "HAPPY1", "proc-happy-0001");
  const inv = await h.waitFor(id, done);
  assert.is(inv.status, "signed");
  assert.equal(statuses(inv), ["pending", "validated", "signing", "signed"]);
  for (const s of inv.statusHistory) assert.ok(!Number.isNaN(Date.parse(s.at)), "each status has its time");
  assert.is(inv.lastError, null);
  assert.is(inv.attempts, 1, "one processor pass");
  assert.is(inv.budgetLeft, 5);
  assert.ok(h.sim.state.isSigned(irnOf("HAPPY1")));
  assert.is(h.sim.state.calls("validate") - calls.validate, 1);
  assert.is(h.sim.state.calls("sign") - calls.sign, 1);
  const after = await h.ledger();
  assert.is(after.debits - before.debits, 1);
  assert.is(after.reversals, before.reversals);
  // "signed" is written first (settle: true); the confirmation of the debit is the pass after it.
  let raw = await h.raw(id);
  for (const until = Date.now() + 10_000; (raw?.settle !== false || raw?.dueAt !== null) && Date.now() < until; raw = await h.raw(id))
    await new Promise((r) => setTimeout(r, 20));
  assert.is(raw?.settle, false, "the debit is confirmed");
  assert.is(raw?.dueAt, null, "idle");
  assert.is(raw?.lease, undefined, "no lease left behind");
  assert.not.ok(h.sim.state.isTransmitted(irnOf("HAPPY1")), "autoTransmit is off: not transmitted");
});

test("a regulator validation failure → rejected at once with the regulator's violations; nothing billed; the IRN is free again", async () => {
  const before = await h.ledger();
  const doc = intakeInvoice("VAL1");
  delete doc.invoice_line;
  const id = await submit(h, "VAL1", "proc-val-0001", doc);
  const inv = await h.waitFor(id, done);
  assert.is(inv.status, "rejected");
  assert.equal(statuses(inv), ["pending", "rejected"]);
  assert.is(inv.lastError.code, "GW_REQUEST_VALIDATION_FAILED");
  // The real API explains a refusal in free text (no field-level violations): kept as the regulator's message.
  assert.match(inv.lastError.regulatorMessage, /invoice_line/);
  assert.not.ok("violations" in inv.lastError);
  assert.is(inv.budgetLeft, 5);
  assert.equal(await h.ledger(), before, "nothing billed");
  await accepted(await h.intake(intakeInvoice("VAL1"), { key: "proc-val-0002" }));
});

/** Waits until every invoice of the store has reached a final status. */
async function settled(harness: StoredHarness): Promise<void> {
  const invoices = harness.store.collection<{ _id: string; status: string }>(STORED_COLLECTIONS.invoices);
  for (let i = 0; i < 500; i++) {
    const open = (await invoices.find({}, { limit: 1000 })).items.filter((inv) => !["signed", "transmitted", "rejected", "frozen", "cancelled"].includes(inv.status));
    if (open.length === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("invoices did not settle");
}

test("a sign rejection → the fee reversed (confirmed), then rejected with GW_SIGN_REJECTED", async () => {
  // The IRN is signed first at the regulator (as another client would): the regulator refuses a second sign.
  const pass = await simCall(h.sim, "POST", "/api/v1/invoice/sign", { body: demoInvoice("REJ1") });
  assert.ok(pass.status < 300, pass.text);
  await settled(h); // the previous test's last invoice is billed before this one's count starts
  const before = await h.ledger();
  const id = await submit(h, "REJ1", "proc-rej-0001");
  const inv = await h.waitFor(id, done);
  assert.is(inv.status, "rejected");
  assert.equal(statuses(inv), ["pending", "validated", "signing", "rejected"]);
  assert.is(inv.lastError.code, "GW_SIGN_REJECTED");
  const after = await h.ledger();
  assert.is(after.debits - before.debits, 1);
  assert.is(after.reversals - before.reversals, 1, "one debit, reversed");
  assert.is(after.balanceKobo, before.balanceKobo);
  const raw = await h.raw(id);
  assert.is(raw?.irnLock, undefined, "a rejected invoice frees its IRN");
});

test("a billing identity another operation already holds (same domain, IRN, attempt) → the processor's next attempt number", async () => {
  await h.billing.debit(STORED_BUSINESS, { subBusinessId: SUB, domain: STORED, irn: irnOf("TAKEN1"), attemptNumber: 1 }, 5_000, "someone-else");
  const before = await h.ledger();
  const id = await submit(h, "TAKEN1", "proc-taken-0001");
  const inv = await h.waitFor(id, done);
  assert.is(inv.status, "signed");
  assert.is((await h.raw(id))?.signAttempt, 2);
  assert.is((await h.ledger()).debits - before.debits, 1, "one debit of its own");
});

test("an unprovable sign outcome (malformed success after signing) → frozen: debit held, never replayed", async () => {
  const before = await h.ledger();
  h.sim.faults.set("sign", { kind: "malformed", afterProcessing: true, times: 1 });
  const signs = h.sim.state.calls("sign");
  const id = await submit(h, "AMB1", "proc-amb-0001");
  const inv = await h.waitFor(id, done);
  assert.is(inv.status, "frozen");
  assert.is(inv.lastError.code, "GW_SIGN_OUTCOME_UNCONFIRMED");
  await new Promise((r) => setTimeout(r, 300));
  assert.is(h.sim.state.calls("sign") - signs, 1, "never replayed");
  assert.is((await h.invoice(id)).status, "frozen");
  const after = await h.ledger();
  assert.is(after.debits - before.debits, 1);
  assert.is(after.reversals, before.reversals, "the debit is held, not reversed");
  assert.ok(h.tg.logs.some((l) => l.event === "stored_invoice_frozen" && l.invoiceId === id && l.alert === "immediate"));
  await new Promise((r) => setImmediate(r));
  assert.ok(
    h.tg.logs.some((l) => l.event === "gateway_alert" && l.signal === "sign_outcome_unconfirmed" && l.operationId === inv.operationId && l.code === "GW_SIGN_OUTCOME_UNCONFIRMED"),
    "the alert channel carried the signal",
  );
  // Operators find it among the frozen operations of every kind (GET /admin/invoices/frozen, `npx gatehouse invoices frozen`).
  const frozenList = await h.call("GET", "/admin/invoices/frozen?businessId=demo-stored", { host: "localhost", apiKey: null, headers: { "x-admin-api-key": ADMIN_KEY } });
  assert.is(frozenList.status, 200);
  const listed = (await frozenList.json()).data.find((o: { operationId: string }) => o.operationId === inv.operationId);
  assert.ok(listed, "listed as a frozen operation");
  assert.equal(
    { kind: listed.kind, irn: listed.irn, money: listed.money, code: listed.code, subBusinessId: listed.subBusinessId },
    { kind: "stored-invoice", irn: inv.irn, money: "held", code: "GW_SIGN_OUTCOME_UNCONFIRMED", subBusinessId: inv.subBusinessId },
  );
});

test("the regulator down for the whole run: invoices stay pending, budget untouched; they finish once it is back", async () => {
  const before = await h.ledger();
  h.sim.faults.set("validate", { kind: "status", status: 503 });
  const ids = [await submit(h, "DOWN1", "proc-down-0001"), await submit(h, "DOWN2", "proc-down-0002"), await submit(h, "DOWN3", "proc-down-0003")];
  for (const id of ids) await h.waitFor(id, (inv) => inv.attempts >= 2);
  for (const id of ids) {
    const inv = await h.invoice(id);
    assert.is(inv.status, "pending");
    assert.is(inv.budgetLeft, 5, "an outage never consumes the budget");
    assert.is(inv.lastError.code, "GW_UPSTREAM_UNAVAILABLE");
  }
  assert.equal(await h.ledger(), before, "nothing billed while the regulator is down");
  h.sim.faults.clear("validate");
  for (const id of ids) {
    // After the outage the processor waits out its backoff and the circuit's cool-down: on a loaded
    // machine that can pass 10 s, and an invoice still pending here would sign during (and be billed
    // in) the next tests' ledger counts.
    const inv = await h.waitFor(id, done, 60_000);
    assert.is(inv.status, "signed");
    assert.is(inv.budgetLeft, 5);
    assert.is(inv.lastError, null);
  }
  assert.is((await h.ledger()).debits - before.debits, 3);
});

test("the regulator refuses the sign call before doing it (429): the fee goes back, the next attempt signs; one sign, net one fee", async () => {
  const before = await h.ledger();
  h.sim.faults.set("sign", { kind: "rate_limit", retryAfter: 1, times: 1 });
  const signs = h.sim.state.calls("sign");
  const id = await submit(h, "THR1", "proc-thr-0001");
  const inv = await h.waitFor(id, done);
  assert.is(inv.status, "signed");
  assert.equal(statuses(inv), ["pending", "validated", "signing", "validated", "signing", "signed"]);
  assert.is(inv.budgetLeft, 5);
  const after = await h.ledger();
  assert.is(after.debits - before.debits, 2, "attempt 1 and attempt 2");
  assert.is(after.reversals - before.reversals, 1, "attempt 1 reversed");
  assert.is(before.balanceKobo - after.balanceKobo, 5_000, "net: one fee");
  assert.is(h.sim.state.calls("sign") - signs, 2);
  assert.is((await h.raw(id))?.signAttempt, 2);
});

test("billing unavailable: the invoice waits as validated (budget kept), then signs with one debit", async () => {
  const before = await h.ledger();
  h.billing.faults = { debit: "unavailable" };
  const id = await submit(h, "BILL1", "proc-bill-0001");
  const waiting = await h.waitFor(id, (inv) => inv.attempts >= 2 && inv.status === "validated");
  assert.is(waiting.lastError.code, "GW_BILLING_SERVICE_UNAVAILABLE");
  assert.is(waiting.budgetLeft, 5);
  assert.not.ok(h.sim.state.isSigned(irnOf("BILL1")), "the regulator was not called");
  h.billing.clear();
  const inv = await h.waitFor(id, done);
  assert.is(inv.status, "signed");
  assert.is((await h.ledger()).debits - before.debits, 1);
});

test("a debit whose answer was lost (charged, then unavailable): the retry replays it — one debit, one sign", async () => {
  const before = await h.ledger();
  h.billing.faults = { debit: "unavailable_after_commit", once: true };
  const id = await submit(h, "BILL2", "proc-bill-0002");
  const inv = await h.waitFor(id, done);
  assert.is(inv.status, "signed");
  assert.is((await h.ledger()).debits - before.debits, 1, "one debit");
  assert.is(h.billing.injected.debit > 0, true);
});

test("a reversal billing cannot confirm: the invoice waits in signing (GW_SIGN_REVERSAL_UNCONFIRMED), then is rejected once it is confirmed", async () => {
  const pass = await simCall(h.sim, "POST", "/api/v1/invoice/sign", { body: demoInvoice("REV1") });
  assert.ok(pass.status < 300, pass.text);
  const before = await h.ledger();
  h.billing.faults = { reverse: "unavailable" };
  const id = await submit(h, "REV1", "proc-rev-0001");
  const waiting = await h.waitFor(id, (inv) => inv.lastError?.code === "GW_SIGN_REVERSAL_UNCONFIRMED");
  assert.is(waiting.status, "signing");
  h.billing.clear();
  const inv = await h.waitFor(id, done);
  assert.is(inv.status, "rejected");
  assert.is(inv.lastError.code, "GW_SIGN_REJECTED");
  const after = await h.ledger();
  assert.is(after.debits - before.debits, 1);
  assert.is(after.reversals - before.reversals, 1);
});

test("the billing confirmation fails after the sign: signed at once, the confirmation completes later", async () => {
  h.billing.faults = { confirm: "unavailable" };
  const id = await submit(h, "CONF1", "proc-conf-0001");
  const inv = await h.waitFor(id, done);
  assert.is(inv.status, "signed");
  assert.is((await h.raw(id))?.settle, true, "the confirmation is still owed");
  h.billing.clear();
  const deadline = Date.now() + 5_000;
  while ((await h.raw(id))?.settle !== false) {
    assert.ok(Date.now() < deadline, "the confirmation completes");
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.is((await h.raw(id))?.dueAt, null);
});

test("an invoice a dead holder left in 'dispatching' (lease expired) is frozen by the next processor, never signed again", async () => {
  const id = await submit(h, "STALE1", "proc-stale-0001");
  await h.waitFor(id, done);
  // Put it back as a holder that died after recording "dispatching" would have left it.
  const coll = h.store.collection<InvoiceDoc>(STORED_COLLECTIONS.invoices);
  const cur = (await coll.get(id))!;
  await coll.findOneAndUpdate(
    { _id: id },
    { $set: { status: "signing", step: "dispatching", dueAt: Date.now(), rev: cur.rev + 1, lease: { owner: "dead-processor", until: Date.now() - 1 } } },
  );
  const signs = h.sim.state.calls("sign");
  const inv = await h.waitFor(id, (i) => i.status === "frozen");
  assert.is(inv.lastError.code, "GW_SIGN_OUTCOME_UNCONFIRMED");
  assert.is(h.sim.state.calls("sign"), signs, "never replayed");
});

test("with the domain's autoTransmit on, the processor transmits every signed invoice once", async () => {
  const auto = await startStoredHarness({
    patch: {
      businesses: (DEMO_RAW.businesses as Array<Record<string, any>>).map((b) =>
        b.id === STORED_BUSINESS ? { ...b, gateway: { ...b.gateway, domains: b.gateway.domains.map((d: any) => (d.mode === "stored" ? { ...d, autoTransmit: true } : d)) } } : b,
      ),
    },
  });
  try {
    const id = await submit(auto, "AUTO1", "proc-auto-0001");
    const inv = await auto.waitFor(id, (i) => i.status === "transmitted" || i.status === "frozen" || i.status === "rejected");
    assert.is(inv.status, "transmitted");
    assert.equal(statuses(inv), ["pending", "validated", "signing", "signed", "transmitting", "transmitted"]);
    assert.is(auto.sim.state.calls("transmit"), 1);
    assert.ok(auto.sim.state.isTransmitted(irnOf("AUTO1")));
  } finally {
    await auto.close();
  }
});

test("business refusals consume the budget: the wallet declines until the budget is spent → rejected GW_BILLING_WALLET_DECLINED", async () => {
  // Refusals 0.5–1 s apart (backoff): the top-up below lands between two of them, not after the last.
  const poor = await startStoredHarness({
    openingKobo: 0,
    processorConfig: { backoffBaseMs: 1_000, backoffMaxMs: 4_000 },
    patch: { limits: { ...HIGH_QUOTAS.limits, storedRetryBudget: 3 } },
  });
  try {
    const id = await submit(poor, "POOR1", "proc-poor-0001");
    const inv = await poor.waitFor(id, done);
    assert.is(inv.status, "rejected");
    assert.is(inv.lastError.code, "GW_BILLING_WALLET_DECLINED");
    assert.is(inv.budgetLeft, 0);
    assert.equal(statuses(inv), ["pending", "validated", "signing", "validated", "signing", "validated", "signing", "rejected"]);
    assert.not.ok(poor.sim.state.isSigned(irnOf("POOR1")), "the regulator was never asked to sign");
    assert.is((await poor.ledger()).debits, 0);
    // A top-up between refusals: the next try signs, with the budget it has left.
    const id2 = await submit(poor, "POOR2", "proc-poor-0002");
    await poor.waitFor(id2, (i) => i.budgetLeft < 3);
    await poor.billing.credit(STORED_BUSINESS, 100_000, "topup-poor-0001");
    const inv2 = await poor.waitFor(id2, done);
    assert.is(inv2.status, "signed");
    assert.ok(inv2.budgetLeft >= 1 && inv2.budgetLeft < 3);
  } finally {
    await poor.close();
  }
});

test("operators resolve frozen invoices: GET /admin/invoices?status=frozen, then POST …/resolution after checking the regulator", async () => {
  const admin = { host: "localhost", apiKey: null, headers: { "x-admin-api-key": ADMIN_KEY } };
  // Frozen after the regulator did sign (its answer was lost): resolved as signed, the held fee confirmed.
  h.sim.faults.set("sign", { kind: "malformed", afterProcessing: true, times: 1 });
  const a = await submit(h, "RES1", "proc-res-0001");
  assert.is((await h.waitFor(a, done)).status, "frozen");
  // Frozen before the regulator did anything (no answer in time): resolved as not signed.
  h.sim.faults.set("sign", { kind: "timeout", times: 1 });
  const b = await submit(h, "RES2", "proc-res-0002");
  assert.is((await h.waitFor(b, done)).status, "frozen");
  assert.not.ok(h.sim.state.isSigned(irnOf("RES2")));

  const list = await h.call("GET", "/admin/invoices?status=frozen&businessId=demo-stored", admin);
  assert.is(list.status, 200);
  const frozen = (await list.json()).data as Array<{ invoiceId: string; businessId: string }>;
  assert.ok(frozen.some((d) => d.invoiceId === a && d.businessId === STORED_BUSINESS));
  assert.ok(frozen.some((d) => d.invoiceId === b));
  await expectProblem(await h.call("GET", "/admin/invoices?status=frozen", { host: "localhost" }), 401, "GW_ADMIN_AUTHENTICATION_FAILED");

  const before = await h.ledger();
  const resolve = (id: string, outcome: string, key: string) =>
    h.call("POST", `/admin/invoices/${id}/resolution`, { ...admin, headers: { ...admin.headers, "x-idempotency-key": key }, body: { outcome } });
  const wrong = await expectProblem(await resolve(a, "transmitted", "proc-resolve-0001"), 400, "GW_REQUEST_VALIDATION_FAILED");
  assert.is(wrong.errors[0].pointer, "/outcome");
  const resolved = await resolve(a, "signed", "proc-resolve-0002");
  assert.is(resolved.status, 200, await resolved.clone().text());
  assert.is((await resolved.json()).status, "signed");
  // The rule of every operator resolution route: the same decision again is 200 (what was recorded), another one 409.
  const same = await resolve(a, "signed", "proc-resolve-0003");
  assert.is(same.status, 200, await same.clone().text());
  assert.is((await same.json()).resolution.outcome, "signed");
  await expectProblem(await resolve(a, "not_signed", "proc-resolve-0004"), 409, "GW_INVOICE_STATE_CONFLICT");
  const deadline = Date.now() + 5_000;
  while ((await h.raw(a))?.settle !== false) {
    assert.ok(Date.now() < deadline, "the held fee is confirmed");
    await new Promise((r) => setTimeout(r, 20));
  }

  const signs = h.sim.state.calls("sign");
  assert.is((await resolve(b, "not_signed", "proc-resolve-0005")).status, 200);
  const again = await h.waitFor(b, done);
  assert.is(again.status, "signed", "signed again under the next attempt");
  assert.is((await h.raw(b))?.signAttempt, 2);
  assert.is(h.sim.state.calls("sign") - signs, 1);
  const after = await h.ledger();
  assert.is(after.debits - before.debits, 1, "attempt 2");
  assert.is(after.reversals - before.reversals, 1, "attempt 1's held fee went back");
  assert.ok(h.tg.logs.some((l) => l.event === "stored_invoice_resolved" && l.invoiceId === b && l.credentialId === "demo-operator"));
});

test("no raw document data, TIN or IRN in the processor's logs", () => {
  const logs = JSON.stringify(h.tg.logs.filter((l) => String(l.event).startsWith("stored_")));
  assert.not.ok(logs.includes("12345678-0001"));
  assert.not.ok(logs.includes(irnOf("HAPPY1")));
  assert.not.ok(logs.includes("USB keyboard"));
});

test.run();
