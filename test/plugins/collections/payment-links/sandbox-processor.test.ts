/**
 * The sandbox PaymentProcessor: outcomes, idempotency per session, duplicate reports, lookups, refunds,
 * LIVE refusal; with a store, the same guarantees across processes (two sandboxes on one store).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isPaymentRefusedError, type PaymentReport, type PaymentRequest } from "../../../../adapters/ports.ts";
import { createSandboxPaymentProcessor, isSandboxLiveBusinessError, SANDBOX_PAYMENTS_COLLECTION } from "../../../../adapters/payments/sandbox.ts";
import { createSqliteDocumentStore } from "../../../../adapters/document-store/sqlite/store.ts";
import { withStoreFaults } from "../../../support/store-faults.ts";

const request = (sessionId: string, extra: Partial<PaymentRequest> = {}): PaymentRequest => ({
  sessionId,
  businessId: "demo",
  businessState: "TEST",
  amountKobo: 150_000,
  currency: "NGN",
  customerEmail: "ada@example.com",
  ...extra,
});

test("kind is sandbox; a TEST payment succeeds at once and every listener gets the report once", async () => {
  const clock = () => Date.UTC(2025, 0, 2, 3, 4, 5);
  const sandbox = createSandboxPaymentProcessor({ clock });
  assert.is(sandbox.kind, "sandbox");
  const a: PaymentReport[] = [];
  const b: PaymentReport[] = [];
  sandbox.onReport(async (r) => void a.push(r));
  sandbox.onReport(async (r) => void b.push(r));
  const report = await sandbox.pay(request("s-1"));
  assert.is(report.status, "succeeded");
  assert.is(report.amountKobo, 150_000);
  assert.is(report.sessionId, "s-1");
  assert.is(report.reportedAt, "2025-01-02T03:04:05.000Z");
  assert.match(report.processorReference, /^SBX-[0-9A-F]{16}$/);
  await sandbox.idle();
  assert.equal(a, [report]);
  assert.equal(b, [report]);
  assert.is(sandbox.payment("s-1")!.report.processorReference, report.processorReference, "processor references are kept");
});

test("lookup: null for a session never paid and while the payment is processing; the report once decided", async () => {
  const sandbox = createSandboxPaymentProcessor({ delayReportMs: 50 });
  assert.is(await sandbox.lookup("s-unknown"), null, "never asked");
  const paying = sandbox.pay(request("s-look"));
  assert.is(await sandbox.lookup("s-look"), null, "still processing");
  const report = await paying;
  const known = await sandbox.lookup("s-look");
  assert.equal(known, report, "decided: the same report");
  known!.amountKobo = 1;
  assert.is((await sandbox.lookup("s-look"))!.amountKobo, 150_000, "a copy each time");
  await sandbox.idle();
});

test("simulate failure → failed report with a reason", async () => {
  const sandbox = createSandboxPaymentProcessor();
  const seen: PaymentReport[] = [];
  sandbox.onReport(async (r) => void seen.push(r));
  const report = await sandbox.pay(request("s-f", { simulate: "failure" }));
  assert.is(report.status, "failed");
  assert.type(report.failureReason, "string");
  await sandbox.idle();
  assert.is(seen.length, 1);
  assert.is(seen[0]!.status, "failed");
});

test("simulate duplicate_report → the same report reaches each listener twice", async () => {
  const sandbox = createSandboxPaymentProcessor();
  const seen: PaymentReport[] = [];
  sandbox.onReport(async (r) => void seen.push(r));
  const report = await sandbox.pay(request("s-d", { simulate: "duplicate_report" }));
  assert.is(report.status, "succeeded");
  await sandbox.idle();
  assert.is(seen.length, 2);
  assert.equal(seen[0], report);
  assert.equal(seen[1], report);
  assert.is(sandbox.payment("s-d")!.deliveries, 2);
});

test("pay is idempotent per sessionId: a repeat returns the first outcome and reports nothing new", async () => {
  const sandbox = createSandboxPaymentProcessor();
  const seen: PaymentReport[] = [];
  sandbox.onReport(async (r) => void seen.push(r));
  const [first, concurrent] = await Promise.all([sandbox.pay(request("s-i")), sandbox.pay(request("s-i", { amountKobo: 999_00 }))]);
  const later = await sandbox.pay(request("s-i", { simulate: "failure" }));
  assert.equal(concurrent, first);
  assert.equal(later, first);
  await sandbox.idle();
  assert.is(seen.length, 1);
  assert.is(sandbox.payments().length, 1);
});

test("LIVE businesses are refused (the sandbox never takes real money)", async () => {
  const sandbox = createSandboxPaymentProcessor();
  try {
    await sandbox.pay(request("s-live", { businessState: "LIVE" }));
    assert.unreachable("LIVE must be refused");
  } catch (e) {
    assert.ok(isSandboxLiveBusinessError(e));
    assert.ok(isPaymentRefusedError(e), "a definite refusal");
  }
  assert.is(sandbox.payment("s-live"), null);
});

test("invalid amounts are refused: a definite refusal (PaymentRefusedError), nothing charged", async () => {
  const sandbox = createSandboxPaymentProcessor();
  for (const amountKobo of [0, -5, 1.5]) {
    try {
      await sandbox.pay(request(`s-amount-${amountKobo}`, { amountKobo }));
      assert.unreachable("must refuse");
    } catch (e) {
      assert.ok(isPaymentRefusedError(e), String(e));
      assert.is(sandbox.payment(`s-amount-${amountKobo}`), null);
    }
  }
});

test("refund: idempotent per session, only for succeeded payments, never above the charge", async () => {
  const sandbox = createSandboxPaymentProcessor();
  await sandbox.pay(request("s-r"));
  const first = await sandbox.refund("s-r", 150_000, "amount mismatch");
  const again = await sandbox.refund("s-r", 150_000, "amount mismatch");
  assert.match(first.refundReference, /^SBR-[0-9A-F]{16}$/);
  assert.is(again.refundReference, first.refundReference);
  assert.is(sandbox.payment("s-r")!.refund!.amountKobo, 150_000);

  await sandbox.pay(request("s-r2"));
  await assertRejects(sandbox.refund("s-r2", 150_001, "too much"));
  await sandbox.pay(request("s-r3", { simulate: "failure" }));
  await assertRejects(sandbox.refund("s-r3", 100, "declined"));
  await assertRejects(sandbox.refund("unknown", 100, "nothing"));
});

test("delayReportMs delays both pay and the listeners; a throwing listener is counted, not fatal", async () => {
  const sandbox = createSandboxPaymentProcessor({ delayReportMs: 60 });
  let delivered = 0;
  sandbox.onReport(async () => {
    delivered++;
    throw new Error("listener down");
  });
  const started = Date.now();
  await sandbox.pay(request("s-slow"));
  assert.ok(Date.now() - started >= 50, "pay waited for the delay");
  await sandbox.idle();
  assert.is(delivered, 1);
  assert.is(sandbox.listenerFailures(), 1);
});

test("redeliverAfterMs: a report a listener threw on is handed over again after each delay until it is taken", async () => {
  const sandbox = createSandboxPaymentProcessor({ redeliverAfterMs: [10, 20, 30] });
  const seen: PaymentReport[] = [];
  sandbox.onReport(async (report) => {
    seen.push(report);
    if (seen.length < 3) throw new Error("store down");
  });
  const report = await sandbox.pay(request("s-redeliver"));
  for (let i = 0; i < 200 && seen.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
  assert.is(seen.length, 3, "taken on the second redelivery");
  for (const r of seen) assert.equal(r, report, "the same report every time");
  assert.is(sandbox.listenerFailures(), 2);
  await new Promise((r) => setTimeout(r, 60));
  assert.is(seen.length, 3, "nothing more once it was taken");
  sandbox.dispose();
});

test("dispose cancels scheduled deliveries and idle() still resolves", async () => {
  const sandbox = createSandboxPaymentProcessor({ delayReportMs: 10_000 });
  let delivered = 0;
  sandbox.onReport(async () => void delivered++);
  const paying = sandbox.pay(request("s-disposed"));
  sandbox.dispose();
  await assertRejects(paying);
  await sandbox.idle();
  assert.is(delivered, 0);
});

test("with a store, two processes: one charge per session, the first outcome answered by the other, no second delivery", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  const a = createSandboxPaymentProcessor({ store });
  const b = createSandboxPaymentProcessor({ store });
  const seenA: PaymentReport[] = [];
  const seenB: PaymentReport[] = [];
  a.onReport(async (r) => void seenA.push(r));
  b.onReport(async (r) => void seenB.push(r));
  const first = await a.pay(request("s-shared"));
  const again = await b.pay(request("s-shared", { simulate: "failure" }));
  assert.equal(again, first, "the other process answers the first charge's outcome");
  await a.idle();
  await b.idle();
  assert.is(seenA.length, 1, "the charging process notifies");
  assert.is(seenB.length, 0, "a repeated request is not a second notification");
  assert.is((await store.collection(SANDBOX_PAYMENTS_COLLECTION).find({}, { limit: 10 })).items.length, 1, "one payment document");
  await store.close();
});

test("with a store: lookup and refund work from a process that did not take the payment; the refund is one", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  const a = createSandboxPaymentProcessor({ store });
  const b = createSandboxPaymentProcessor({ store });
  assert.is(await b.lookup("s-elsewhere"), null, "never asked");
  const report = await a.pay(request("s-elsewhere"));
  assert.equal(await b.lookup("s-elsewhere"), report, "known to every process on the store");
  const [r1, r2] = await Promise.all([b.refund("s-elsewhere", 150_000, "late"), a.refund("s-elsewhere", 150_000, "late")]);
  assert.is(r1.refundReference, r2.refundReference, "one refund across processes");
  assert.is((await b.refund("s-elsewhere", 150_000, "late")).refundReference, r1.refundReference);
  await store.close();
});

test("with a store that cannot answer: pay rejects with an unknown outcome (not a refusal), and may be asked again", async () => {
  let down = true;
  const store = withStoreFaults(await createSqliteDocumentStore({ file: ":memory:" }), () => (down ? "before" : null));
  const sandbox = createSandboxPaymentProcessor({ store });
  try {
    await sandbox.pay(request("s-store-down"));
    assert.unreachable("must reject while the store is down");
  } catch (e) {
    assert.not.ok(isPaymentRefusedError(e), "unknown, not refused");
  }
  down = false;
  const report = await sandbox.pay(request("s-store-down"));
  assert.is(report.status, "succeeded");
  await store.close();
});

test.run();

async function assertRejects(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch {
    return;
  }
  assert.unreachable("expected a rejection");
}
