/**
 * The server-rendered pages of the checkout (no framework, no script): the payment form, its
 * re-render with accessible error messages, the outcome pages and the "no payment possible"
 * page, plus the e-mail that carries a link to customers. Every value is escaped; the pages use
 * only inline CSS and same-origin form posts, so the CSP of core/respond.ts `html()` holds.
 */
import { formatNgn, split, type FeePolicy } from "../../shared/money.ts";
import type { CheckoutSession } from "../checkout/service.ts";
import { redirectTarget, type FieldErrors, type SandboxOutcome } from "../schemas.ts";
import type { Availability, PaymentLink } from "../link-service.ts";
import { formatTime } from "../../shared/time.ts";

export interface FormState {
  email: string;
  amount: string;
  outcome: SandboxOutcome;
  errors: FieldErrors;
  token: string;
}

export interface PageLink {
  businessName: string;
  link: PaymentLink;
  testMode: boolean;
  fee: FeePolicy;
}

/** The checkout form (GET /pay/:reference, and its re-render after a refused POST). */
export function checkoutPage(p: PageLink, form: FormState, notice?: { title: string; text: string }): string {
  const { link } = p;
  const errors = form.errors;
  const summary =
    errors.length === 0
      ? ""
      : `<div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1">
  <h2 id="error-summary-title">There is a problem with your payment details</h2>
  <ul>${errors.map((e) => `<li><a href="#${_fieldId(e.field)}">${escapeHtml(e.message)}</a></li>`).join("")}</ul>
</div>`;
  const noticeBlock = notice
    ? `<div class="notice" role="status" aria-labelledby="notice-title"><h2 id="notice-title">${escapeHtml(notice.title)}</h2><p>${escapeHtml(notice.text)}</p></div>`
    : "";
  const errorOf = (field: string) => errors.find((e) => e.field === field)?.message ?? null;

  const amountError = errorOf("amount");
  const amountBlock =
    link.amountKobo !== null
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

  const emailError = errorOf("email");
  const emailBlock = `<div class="field${emailError ? " field--error" : ""}">
    <label for="email">E-mail address</label>
    <p class="hint" id="email-hint">${escapeHtml(p.businessName)} receives this address with your payment.</p>
    ${emailError ? `<p class="field-error" id="email-error"><span class="visually-hidden">Error: </span>${escapeHtml(emailError)}</p>` : ""}
    <input id="email" name="email" type="email" autocomplete="email" spellcheck="false" required
      value="${escapeHtml(form.email)}" aria-describedby="email-hint${emailError ? " email-error" : ""}"${emailError ? ' aria-invalid="true"' : ""}>
  </div>`;

  const outcomeError = errorOf("outcome");
  const outcomes: Array<[SandboxOutcome, string]> = [
    ["success", "Success"],
    ["failure", "Failure (the payment is declined)"],
    ["duplicate_report", "Duplicate report (success, reported twice by the processor)"],
  ];
  const sandboxBlock = p.testMode
    ? `<fieldset class="field sandbox" id="outcome"${outcomeError ? ' aria-describedby="outcome-error"' : ""}>
    <legend>Sandbox outcome</legend>
    <p class="hint">Test mode: no real money moves. Choose what the simulated processor does.</p>
    ${outcomeError ? `<p class="field-error" id="outcome-error"><span class="visually-hidden">Error: </span>${escapeHtml(outcomeError)}</p>` : ""}
    ${outcomes
      .map(
        ([value, label]) =>
          `<div class="choice"><input type="radio" id="outcome-${value}" name="outcome" value="${value}"${form.outcome === value ? " checked" : ""}><label for="outcome-${value}">${escapeHtml(label)}</label></div>`,
      )
      .join("\n    ")}
  </fieldset>`
    : "";

  const payLabel = link.amountKobo !== null ? `Pay NGN ${formatNgn(_chargeOf(p, link.amountKobo))}` : "Pay";
  const body = `${_header(p)}
${noticeBlock}
${summary}
<form method="post" action="/pay/${encodeURIComponent(link.reference)}" novalidate aria-labelledby="form-title">
  <h2 id="form-title">Payment details</h2>
  ${amountBlock}
  ${emailBlock}
  ${sandboxBlock}
  <input type="hidden" name="checkout_token" value="${escapeHtml(form.token)}">
  <button type="submit">${escapeHtml(payLabel)}</button>
</form>`;
  const title = `${errors.length > 0 ? "Error: " : ""}Pay ${p.businessName}: ${link.linkName}`;
  return _layout(title, body);
}

const _UNAVAILABLE: Record<Exclude<Availability, { ok: true }>["reason"], { title: string; text: string }> = {
  inactive: {
    title: "This payment link is not accepting payments",
    text: "The business has deactivated this link. Contact the business if you expected to pay here.",
  },
  not_started: {
    title: "This payment link is not open yet",
    text: "Payments through this link open on",
  },
  ended: {
    title: "This payment link has closed",
    text: "Payments through this link closed on",
  },
};

/** The page of a link that accepts no payment now (inactive, before its start, after its end). */
export function unavailablePage(p: Omit<PageLink, "fee" | "testMode">, reason: Exclude<Availability, { ok: true }>["reason"]): string {
  const copy = _UNAVAILABLE[reason];
  const when =
    reason === "not_started" && p.link.startAt !== null
      ? ` ${formatTime(p.link.startAt)} UTC.`
      : reason === "ended" && p.link.endAt !== null
        ? ` ${formatTime(p.link.endAt)} UTC.`
        : "";
  const body = `${_header(p)}
<div class="notice" role="status" aria-labelledby="notice-title">
  <h2 id="notice-title">${escapeHtml(copy.title)}</h2>
  <p>${escapeHtml(copy.text + when)} No payment can be made through it.</p>
</div>`;
  return _layout(`${copy.title}: ${p.link.linkName}`, body);
}

/** The page of a session that reached an outcome (or is still being processed). */
export function sessionPage(p: Omit<PageLink, "fee" | "testMode">, s: CheckoutSession): string {
  const ref = encodeURIComponent(p.link.reference);
  const facts = `<dl class="facts">
  <div><dt>Amount</dt><dd>NGN ${formatNgn(s.chargeKobo)}</dd></div>
  <div><dt>Transaction reference</dt><dd>${escapeHtml(s.reference)}</dd></div>
  ${s.paidAt !== null ? `<div><dt>Paid at</dt><dd>${formatTime(s.paidAt)} UTC</dd></div>` : ""}
</dl>`;
  let title: string;
  let content: string;
  switch (s.status) {
    case "successful": {
      const redirect = redirectTarget(p.link.redirectLink);
      title = "Payment successful";
      content = `<p>Thank you. ${escapeHtml(p.businessName)} has received your payment.</p>${facts}${
        redirect ? `<p><a class="button" href="${escapeHtml(redirect)}">Continue</a></p>` : ""
      }`;
      break;
    }
    case "pending":
      title = "Payment processing";
      content = `<p>Your payment is being processed. This page updates every few seconds; you can also <a href="/pay/${ref}/success/${encodeURIComponent(s._id)}">check again</a>.</p>${facts}`;
      break;
    case "refunded":
      title = "Payment refunded";
      content = `<p>${escapeHtml(sentence(s.failureReason ?? "The payment could not be accepted"))} The money has been refunded to you; ${escapeHtml(p.businessName)} did not receive it.</p>${facts}<p><a href="/pay/${ref}">Start a new payment</a></p>`;
      break;
    case "abandoned":
      title = "Payment not completed";
      content = `<p>This payment was not completed within 30 minutes and was cancelled. Nothing was charged.</p><p><a href="/pay/${ref}">Start a new payment</a></p>`;
      break;
    default:
      title = "Payment failed";
      content = `<p>${escapeHtml(sentence(s.failureReason ?? "The payment was declined"))} Nothing was charged.</p><p><a href="/pay/${ref}">Try again</a></p>`;
  }
  const body = `${_header(p)}
<section class="outcome outcome--${s.status}" aria-labelledby="outcome-title">
  <h2 id="outcome-title">${escapeHtml(title)}</h2>
  ${content}
</section>`;
  return _layout(`${title}: ${p.link.linkName}`, body, s.status === "pending" ? 5 : undefined);
}

/** Unknown reference, unknown session, or an unexpected failure. */
export function messagePage(title: string, text: string): string {
  const body = `<header><h1 id="page-title">${escapeHtml(title)}</h1></header>
<p>${escapeHtml(text)}</p>`;
  return _layout(title, body);
}

/** The e-mail that sends a new link to a customer. */
export function linkEmail(businessName: string, link: PaymentLink, url: string): { subject: string; text: string; html: string } {
  const amount = link.amountKobo === null ? "an amount of your choice (minimum NGN 100.00)" : `NGN ${formatNgn(link.amountKobo)}`;
  const subject = `${businessName}: ${link.linkName}`;
  const text = [`${businessName} sent you a payment link.`, "", link.linkName, link.narration, `Amount: ${amount}`, "", `Pay here: ${url}`].join("\n");
  const html = [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body>`,
    `<p>${escapeHtml(businessName)} sent you a payment link.</p>`,
    `<h1>${escapeHtml(link.linkName)}</h1>`,
    `<p>${escapeHtml(link.narration)}</p>`,
    `<p>Amount: ${escapeHtml(amount)}</p>`,
    `<p><a href="${escapeHtml(url)}">Pay ${escapeHtml(businessName)}</a></p>`,
    `</body></html>`,
  ].join("");
  return { subject, text, html };
}

/** Text ending in a full stop (reasons come from processors with or without one). */
export function sentence(text: string): string {
  const t = text.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** Escapes text for HTML element content and quoted attributes. */
export function escapeHtml(s: string): string {
  return s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&#39;");
}

// --- Internal helpers ---

function _fieldId(field: string): string {
  return field === "outcome" ? "outcome" : field === "email" ? "email" : field === "amount" ? "amount" : "main";
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

function _header(p: { businessName: string; link: PaymentLink }): string {
  return `<header>
  <p class="merchant">Payment to <strong>${escapeHtml(p.businessName)}</strong></p>
  <h1 id="page-title">${escapeHtml(p.link.linkName)}</h1>
  <p class="narration">${escapeHtml(p.link.narration)}</p>
</header>`;
}

const _CSS = `
:root{color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5;color:#1b1b1b;background:#f4f5f7}
body{margin:0}
main{max-width:32rem;margin:2rem auto;padding:1.5rem;background:#fff;border:1px solid #d0d4da;border-radius:.5rem}
h1{font-size:1.5rem;margin:.25rem 0}
h2{font-size:1.15rem;margin:1rem 0 .5rem}
.merchant{margin:0;color:#3d4451}
.narration{margin:.25rem 0 1rem;color:#3d4451}
.field{margin:1rem 0;border:0;padding:0}
label,.label,legend{display:block;font-weight:600}
.hint{margin:.15rem 0 .35rem;color:#4a5160;font-size:.95rem}
.amount{font-size:1.4rem;font-weight:700;margin:.25rem 0}
input[type=text],input[type=email]{box-sizing:border-box;width:100%;font:inherit;padding:.55rem .6rem;border:2px solid #5b6473;border-radius:.3rem}
.field--error input{border-color:#b3261e}
.choice{display:flex;gap:.5rem;align-items:center;margin:.3rem 0}
.choice label{font-weight:400}
.sandbox{background:#fff8e1;padding:.75rem;border:1px dashed #8a6d00;border-radius:.3rem}
.field-error{color:#b3261e;font-weight:600;margin:.2rem 0}
.error-summary{border:3px solid #b3261e;padding:.5rem 1rem;margin:1rem 0;border-radius:.3rem}
.error-summary a{color:#b3261e;font-weight:600}
.notice{border-left:5px solid #1d4ed8;background:#eef2ff;padding:.5rem 1rem;margin:1rem 0}
button,.button{display:inline-block;font:inherit;font-weight:700;color:#fff;background:#14532d;border:0;border-radius:.3rem;padding:.7rem 1.4rem;cursor:pointer;text-decoration:none}
button:hover,.button:hover{background:#166534}
a{color:#1d4ed8}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.facts div{display:flex;gap:.5rem;align-items:baseline}
.facts dt{font-weight:600}
.facts dd{margin:0}
.outcome--successful h2{color:#14532d}
.outcome--failed h2,.outcome--refunded h2{color:#b3261e}
.visually-hidden{position:absolute!important;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
`;

function _layout(title: string, body: string, refreshSeconds?: number): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
${refreshSeconds ? `<meta http-equiv="refresh" content="${refreshSeconds}">` : ""}
<title>${escapeHtml(title)}</title>
<style>${_CSS}</style>
</head>
<body>
<main id="main" aria-labelledby="page-title">
${body}
</main>
</body>
</html>
`;
}
