/**
 * The checkout form page (GET /pay/:reference, and its re-render after a refused POST, with an
 * error summary and accessible messages per field). Every value is escaped.
 */
import type { PayMethod, SandboxOutcome } from "../checkout/form.ts";
import type { PaymentLink } from "../links/link.ts";
import type { FieldErrors } from "../../shared/input.ts";
import { formatNgn, split, type FeePolicy } from "../../shared/money.ts";
import { escapeHtml } from "../../shared/html.ts";
import { pageHeader, pageLayout } from "./layout.ts";

export interface FormState {
  email: string;
  amount: string;
  outcome: SandboxOutcome;
  method: PayMethod;
  errors: FieldErrors;
  token: string;
}

export interface PageLink {
  businessName: string;
  link: PaymentLink;
  testMode: boolean;
  fee: FeePolicy;
  /** Whether the payer may choose a bank transfer. */
  offersTransfer: boolean;
}

/** The checkout form (GET /pay/:reference, and its re-render after a refused POST). */
export function checkoutPage(p: PageLink, form: FormState, notice?: { title: string; text: string }): string {
  const { link } = p;
  const noticeBlock = notice
    ? `<div class="notice" role="status" aria-labelledby="notice-title"><h2 id="notice-title">${escapeHtml(notice.title)}</h2><p>${escapeHtml(notice.text)}</p></div>`
    : "";
  const payLabel = link.amountKobo !== null ? `Pay NGN ${formatNgn(_chargeOf(p, link.amountKobo))}` : "Pay";
  const body = `${pageHeader(p)}
${noticeBlock}
${_errorSummary(form.errors)}
<form method="post" action="/pay/${encodeURIComponent(link.reference)}" novalidate aria-labelledby="form-title">
  <h2 id="form-title">Payment details</h2>
  ${_amountBlock(p, form)}
  ${_emailBlock(p, form)}
  ${p.offersTransfer ? _methodBlock(p, form) : ""}
  ${p.testMode ? _sandboxBlock(form) : ""}
  <input type="hidden" name="checkout_token" value="${escapeHtml(form.token)}">
  <button type="submit">${escapeHtml(payLabel)}</button>
</form>`;
  const title = `${form.errors.length > 0 ? "Error: " : ""}Pay ${p.businessName}: ${link.linkName}`;
  return pageLayout(title, body);
}

// --- Internal helpers ---

function _errorSummary(errors: FieldErrors): string {
  if (errors.length === 0) return "";
  return `<div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1">
  <h2 id="error-summary-title">There is a problem with your payment details</h2>
  <ul>${errors.map((e) => `<li><a href="#${_fieldId(e.field)}">${escapeHtml(e.message)}</a></li>`).join("")}</ul>
</div>`;
}

function _errorOf(form: FormState, field: string): string | null {
  return form.errors.find((e) => e.field === field)?.message ?? null;
}

/** A fixed amount (shown, with its fee note, and posted hidden) or the amount field. */
function _amountBlock(p: PageLink, form: FormState): string {
  const { link } = p;
  const amountError = _errorOf(form, "amount");
  return link.amountKobo !== null
    ? `<div class="field">
    <dl class="facts"><div><dt>Amount</dt><dd class="amount">NGN ${formatNgn(link.amountKobo)}</dd></div></dl>
    ${_feeNote(p, link.amountKobo)}
    ${amountError ? `<p class="field-error" id="amount"><span class="visually-hidden">Error: </span>${escapeHtml(amountError)}</p>` : ""}
    <input type="hidden" name="amount" value="${(link.amountKobo / 100).toFixed(2)}">
  </div>`
    : `<div class="field${amountError ? " field--error" : ""}">
    <label for="amount">Amount (NGN)</label>
    <p class="hint" id="amount-hint">${escapeHtml(`Minimum NGN 100.00. ${_variableFeeText(p)}`.trim())}</p>
    ${amountError ? `<p class="field-error" id="amount-error"><span class="visually-hidden">Error: </span>${escapeHtml(amountError)}</p>` : ""}
    <input id="amount" name="amount" type="text" inputmode="decimal" autocomplete="transaction-amount" required
      value="${escapeHtml(form.amount)}" aria-describedby="amount-hint${amountError ? " amount-error" : ""}"${amountError ? ' aria-invalid="true"' : ""}>
  </div>`;
}

function _emailBlock(p: PageLink, form: FormState): string {
  const emailError = _errorOf(form, "email");
  return `<div class="field${emailError ? " field--error" : ""}">
    <label for="email">E-mail address</label>
    <p class="hint" id="email-hint">${escapeHtml(p.businessName)} receives this address with your payment.</p>
    ${emailError ? `<p class="field-error" id="email-error"><span class="visually-hidden">Error: </span>${escapeHtml(emailError)}</p>` : ""}
    <input id="email" name="email" type="email" autocomplete="email" spellcheck="false" required
      value="${escapeHtml(form.email)}" aria-describedby="email-hint${emailError ? " email-error" : ""}"${emailError ? ' aria-invalid="true"' : ""}>
  </div>`;
}

/** How to pay: the processor (named for what it is) or a one-time account for a bank transfer. */
function _methodBlock(p: PageLink, form: FormState): string {
  const methods: Array<[PayMethod, string, string]> = [
    [
      "bank_transfer",
      "Bank transfer",
      "Get a one-time account number and send the exact amount from any Nigerian bank app. This page confirms the payment by itself.",
    ],
    [
      "processor",
      p.testMode ? "Sandbox card processor" : "Card",
      p.testMode ? "Test mode: a simulated card payment, settled at once by the sandbox processor." : "Pay with a debit or credit card.",
    ],
  ];
  return `<fieldset class="field methods" id="method">
    <legend>Payment method</legend>
    ${methods
      .map(
        ([value, label, hint]) =>
          `<div class="choice"><input type="radio" id="method-${value}" name="method" value="${value}" aria-describedby="method-${value}-hint"${form.method === value ? " checked" : ""}><label for="method-${value}">${escapeHtml(label)}</label></div>
    <p class="hint" id="method-${value}-hint">${escapeHtml(hint)}</p>`,
      )
      .join("\n    ")}
  </fieldset>`;
}

const _OUTCOMES: Array<[SandboxOutcome, string]> = [
  ["success", "Success"],
  ["failure", "Failure (the payment is declined)"],
  ["duplicate_report", "Duplicate report (success, reported twice by the processor)"],
];

/** Test businesses only: what the sandbox processor does with this payment. */
function _sandboxBlock(form: FormState): string {
  const outcomeError = _errorOf(form, "outcome");
  return `<fieldset class="field sandbox" id="outcome"${outcomeError ? ' aria-describedby="outcome-error"' : ""}>
    <legend>Sandbox outcome</legend>
    <p class="hint">Test mode: no real money moves. Choose what the simulated card processor does (bank transfers ignore this).</p>
    ${outcomeError ? `<p class="field-error" id="outcome-error"><span class="visually-hidden">Error: </span>${escapeHtml(outcomeError)}</p>` : ""}
    ${_OUTCOMES.map(
      ([value, label]) =>
        `<div class="choice"><input type="radio" id="outcome-${value}" name="outcome" value="${value}"${form.outcome === value ? " checked" : ""}><label for="outcome-${value}">${escapeHtml(label)}</label></div>`,
    ).join("\n    ")}
  </fieldset>`;
}

function _fieldId(field: string): string {
  return field === "outcome" || field === "method" || field === "email" || field === "amount" ? field : "main";
}

function _chargeOf(p: PageLink, amountKobo: number): number {
  return split(amountKobo, p.link.feeBearer, p.fee).chargeKobo;
}

function _feeNote(p: PageLink, amountKobo: number): string {
  if (p.link.feeBearer !== "CUSTOMER") return "";
  const fee = _chargeOf(p, amountKobo) - amountKobo;
  return `<p class="hint">A processing fee of NGN ${formatNgn(fee)} is added: you pay NGN ${formatNgn(amountKobo + fee)}.</p>`;
}

function _variableFeeText(p: PageLink): string {
  if (p.link.feeBearer !== "CUSTOMER") return "";
  return `A processing fee of ${p.fee.percent}% (at most NGN ${formatNgn(p.fee.capKobo)}) is added to the amount.`;
}
