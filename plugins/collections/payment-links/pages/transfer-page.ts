/**
 * The bank-transfer page of a pending session (GET /pay/:reference/success/:sessionId): the
 * one-time account number (large, selectable, with a copy control), the bank, the account name,
 * the exact amount and a countdown to the account's expiry, what happened to transfers already
 * received (a wrong amount is returned), and the status. With script (one same-origin file,
 * transfer-script.ts) the countdown ticks, the copy control works and the page reloads itself when
 * the status changes; without script it refreshes every 15 seconds and has a "check" link.
 */
import type { CheckoutSession } from "../checkout/session.ts";
import type { TransferAttempt } from "../checkout/transfer.ts";
import { escapeHtml } from "../../shared/html.ts";
import { formatNgn } from "../../shared/money.ts";
import { formatTime } from "../../shared/time.ts";
import type { PageOf } from "./outcome-pages.ts";
import { pageHeader, pageLayout } from "./layout.ts";

/** Where the page's script is served (transfer-routes.ts). */
export const TRANSFER_SCRIPT_PATH = "/pay/-/transfer.js";
/** Without script, the page reloads itself this often. */
const NOSCRIPT_REFRESH_SECONDS = 15;

/** The status page's version: the script reloads the page when the status route answers another. */
export function transferVersion(s: CheckoutSession, attempts: readonly TransferAttempt[]): string {
  return `${s.status}:${attempts.length}`;
}

/** The page of a pending transfer session (see the module comment). */
export function transferPage(p: PageOf & { testMode: boolean }, s: CheckoutSession, attempts: readonly TransferAttempt[], now: number): string {
  const ref = encodeURIComponent(p.link.reference);
  const id = encodeURIComponent(s._id);
  const self = `/pay/${ref}/success/${id}`;
  const t = s.transfer;
  const content = t
    ? `<p>Transfer exactly <strong>NGN ${formatNgn(t.amountKobo)}</strong> to the account below from your bank app or USSD. The account is for this payment only.</p>
${_returned(attempts, t.amountKobo)}
<dl class="transfer-details">
  <div><dt>Account number</dt><dd><span class="account-number" id="account-number">${escapeHtml(t.accountNumber)}</span>
    <button type="button" class="copy" data-copy="${escapeHtml(t.accountNumber)}" hidden>Copy account number</button><span class="visually-hidden" id="copy-status" role="status"></span></dd></div>
  <div><dt>Bank</dt><dd id="bank-name">${escapeHtml(t.providerName)}</dd></div>
  <div><dt>Account name</dt><dd id="account-name">${escapeHtml(t.accountName)}</dd></div>
  <div><dt>Amount</dt><dd class="amount" id="transfer-amount">NGN ${formatNgn(t.amountKobo)}</dd></div>
  <div><dt>Expires in</dt><dd><span class="countdown" id="countdown" role="timer">${_clock(t.expiresAt - now)}</span> <span class="hint">(at ${formatTime(t.expiresAt)} UTC)</span></dd></div>
</dl>
<p id="transfer-status">Waiting for your transfer. This page moves on by itself once the money arrives, usually within a minute.</p>
<p><a href="${self}">I have sent the money: check the status</a></p>
${p.testMode ? _sandboxHint(t.accountNumber) : ""}`
    : `<div class="alert" role="alert"><p>We could not open an account for this payment just now. <a href="${self}">Try again</a>.</p></div>`;
  const body = `${pageHeader(p)}
<section class="outcome outcome--pending" aria-labelledby="outcome-title" data-status-url="/pay/${ref}/status/${id}" data-version="${escapeHtml(transferVersion(s, attempts))}" data-seconds-left="${Math.max(0, Math.floor(((t?.expiresAt ?? now) - now) / 1000))}">
  <h2 id="outcome-title">Pay by bank transfer</h2>
  ${content}
  <dl class="facts"><div><dt>Transaction reference</dt><dd>${escapeHtml(s.reference)}</dd></div></dl>
</section>`;
  const head = `<noscript><meta http-equiv="refresh" content="${NOSCRIPT_REFRESH_SECONDS}"></noscript>\n<script src="${TRANSFER_SCRIPT_PATH}" defer></script>\n`;
  return pageLayout(`Pay by bank transfer: ${p.link.linkName}`, body, undefined, head);
}

/** Transfers an outcome page reports as returned to the payer (wrong amount, late, a second one). */
export function returnedTransfers(attempts: readonly TransferAttempt[]): string {
  const returned = attempts.filter((a) => a.status === "refunded");
  if (returned.length === 0) return "";
  return `<div class="alert" role="status"><p>${returned.map((a) => escapeHtml(_returnedText(a))).join("</p><p>")}</p></div>`;
}

// --- Internal helpers ---

function _returned(attempts: readonly TransferAttempt[], dueKobo: number): string {
  const returned = attempts.filter((a) => a.status === "refunded");
  if (returned.length === 0) return "";
  const lines = returned.map((a) => `${_returnedText(a)}`);
  return `<div class="alert" role="alert" aria-labelledby="returned-title"><h3 id="returned-title">Transfer returned</h3><p>${lines.map(escapeHtml).join("</p><p>")}</p><p>${escapeHtml(`This payment is still open: transfer exactly NGN ${formatNgn(dueKobo)} before the time runs out.`)}</p></div>`;
}

function _returnedText(a: TransferAttempt): string {
  const amount = `NGN ${formatNgn(a.amountKobo)}`;
  switch (a.reason) {
    case "amount_mismatch":
      return `We received ${amount}, which is not the amount due, and returned it to the account it came from.`;
    case "account_expired":
      return `A transfer of ${amount} arrived after this account expired and was returned to the account it came from.`;
    case "account_used":
      return `A further transfer of ${amount} arrived after this payment was complete and was returned to the account it came from.`;
    default:
      return `A transfer of ${amount} could not be accepted and was returned to the account it came from.`;
  }
}

/** `m:ss` of a duration (never negative). */
function _clock(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function _sandboxHint(accountNumber: string): string {
  return `<div class="sandbox"><p><strong>Test mode:</strong> no real money moves. Simulate the transfer with the sandbox deposit API (<code>POST /api/v1/sandbox/virtual-account/deposit</code>, account number ${escapeHtml(accountNumber)}).</p></div>`;
}
