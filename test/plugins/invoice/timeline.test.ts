/**
 * The shared invoice timeline (plugins/invoice/timeline.ts): statuses with their durations, the
 * regulator's answers and refusals in words, the last error with the catalog's words, what the
 * processor does next, and never the invoice body.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { InvoiceDoc } from "../../../plugins/invoice/stored-invoices.ts";
import { codeInWords, invoiceTimeline } from "../../../plugins/invoice/timeline.ts";

function doc(over: Partial<InvoiceDoc> = {}): InvoiceDoc {
  return {
    _id: "inv-1", businessId: "biz", state: "TEST", domain: "gw.example", subBusinessId: "sub-1", direction: "outbound", irn: "INV1-SVC1-20240611",
    status: "signed", statusHistory: [
      { status: "pending", at: "2026-11-28T10:00:00.000Z" },
      { status: "validated", at: "2026-11-28T10:00:02.000Z" },
      { status: "signing", at: "2026-11-28T10:00:03.000Z" },
      { status: "signed", at: "2026-11-28T10:00:03.500Z" },
    ],
    attempts: 3, budgetLeft: 3, budget: 3, lastError: null, operationId: "op-1", createdAt: "2026-11-28T10:00:00.000Z", updatedAt: "2026-11-28T10:00:03.500Z", createdAtMs: 0,
    document: { secret_line: "BODY-MUST-NOT-APPEAR" }, filled: ["business_id"], feeKobo: 5000, rev: 4, dueAt: null, step: "done", signAttempt: 1, outages: 0, billDoubt: false, settle: false, reverseFor: null, events: [],
    ...over,
  };
}

test("timeline: statuses oldest first with how long each lasted; the current one open", () => {
  const t = invoiceTimeline(doc());
  assert.equal(t.entries.map((e) => [e.status, e.lastedMs, e.current]), [["pending", 2000, false], ["validated", 1000, false], ["signing", 500, false], ["signed", null, true]]);
  assert.match(t.statusMeaning, /signed/);
  assert.equal(t.answers.map((a) => [a.step, a.verdict]), [["validation", "accepted"], ["signing", "accepted"]]);
  assert.is(t.next, null);
});

test("timeline: never the invoice body", () => {
  const json = JSON.stringify(invoiceTimeline(doc()));
  assert.not.match(json, /BODY-MUST-NOT-APPEAR/);
  assert.not.ok("document" in invoiceTimeline(doc()));
});

test("timeline: a sign refusal names the step, the code in words and the regulator's message", () => {
  const t = invoiceTimeline(doc({
    status: "rejected",
    statusHistory: [{ status: "pending", at: "2026-11-28T10:00:00.000Z" }, { status: "validated", at: "2026-11-28T10:00:01.000Z" }, { status: "signing", at: "2026-11-28T10:00:02.000Z" }, { status: "rejected", at: "2026-11-28T10:00:03.000Z" }],
    lastError: { code: "GW_SIGN_REJECTED", at: "2026-11-28T10:00:03.000Z", regulatorMessage: "TIN <b>unknown</b>" },
  }));
  const refusal = t.answers.at(-1)!;
  assert.equal([refusal.step, refusal.verdict, refusal.regulatorMessage], ["signing", "refused", "TIN <b>unknown</b>"]);
  assert.is(t.lastError?.title, "Regulator rejected signing");
  assert.ok(t.lastError?.fromRegulator);
  assert.match(t.lastError?.docs ?? "", /gw-sign-rejected/);
});

test("timeline: a validation refusal and a wallet refusal are told apart", () => {
  const validation = invoiceTimeline(doc({ status: "rejected", statusHistory: [{ status: "pending", at: "2026-11-28T10:00:00.000Z" }, { status: "rejected", at: "2026-11-28T10:00:01.000Z" }], lastError: { code: "GW_REQUEST_VALIDATION_FAILED", at: "x", regulatorMessage: "line 3: bad" } }));
  assert.equal(validation.answers.at(-1)?.step, "validation");
  const wallet = invoiceTimeline(doc({ status: "rejected", statusHistory: [{ status: "pending", at: "2026-11-28T10:00:00.000Z" }, { status: "validated", at: "2026-11-28T10:00:01.000Z" }, { status: "rejected", at: "2026-11-28T10:00:02.000Z" }], lastError: { code: "GW_BILLING_WALLET_DECLINED", at: "x" } }));
  assert.equal(wallet.answers.map((a) => a.verdict), ["accepted"]);
  assert.not.ok(wallet.lastError?.fromRegulator);
});

test("timeline: frozen means the answer never came; the processor's next step is said in words", () => {
  const frozen = invoiceTimeline(doc({ status: "frozen", statusHistory: [{ status: "signing", at: "2026-11-28T10:00:00.000Z" }, { status: "frozen", at: "2026-11-28T10:00:01.000Z" }], lastError: { code: "GW_SIGN_OUTCOME_UNCONFIRMED", at: "x" } }));
  assert.equal([frozen.answers.at(-1)?.step, frozen.answers.at(-1)?.verdict], ["signing", "unconfirmed"]);
  const waiting = invoiceTimeline(doc({ status: "validated", step: "bill", dueAt: Date.parse("2026-11-28T10:01:00.000Z"), outages: 2 }));
  assert.equal(waiting.next, { what: "charge the sign fee (after 2 dependency outages)", dueAt: "2026-11-28T10:01:00.000Z" });
});

test("codeInWords: a code outside the catalog keeps its code", () => {
  assert.equal(codeInWords("X_UNKNOWN"), { code: "X_UNKNOWN", title: "X_UNKNOWN", meaning: "", action: null, docs: null });
});

test.run();
