/**
 * The outcome pages of the checkout: the session's result (or "processing"), and the page of a
 * link that accepts no payment now (deactivated, before its start, after its end).
 */
import type { CheckoutSession } from "../checkout/session.ts";
import type { TransferAttempt } from "../checkout/transfer.ts";
import type { PaymentLink, UnavailableReason } from "../links/link.ts";
import { redirectTarget } from "../links/redirect.ts";
import { formatNgn } from "../../shared/money.ts";
import { formatTime } from "../../shared/time.ts";
import { escapeHtml } from "../../shared/html.ts";
import { pageHeader, pageLayout, sentence } from "./layout.ts";
import { returnedTransfers } from "./transfer-page.ts";

/** What an outcome page shows of the link. */
export interface PageOf {
  businessName: string;
  link: PaymentLink;
}

/** The page of a link that accepts no payment now (inactive, before its start, after its end). */
export function unavailablePage(p: PageOf, reason: UnavailableReason): string {
  const copy = _UNAVAILABLE[reason];
  const when =
    reason === "not_started" && p.link.startAt !== null
      ? ` ${formatTime(p.link.startAt)} UTC.`
      : reason === "ended" && p.link.endAt !== null
        ? ` ${formatTime(p.link.endAt)} UTC.`
        : "";
  const body = `${pageHeader(p)}
<div class="notice" role="status" aria-labelledby="notice-title">
  <h2 id="notice-title">${escapeHtml(copy.title)}</h2>
  <p>${escapeHtml(copy.text + when)} No payment can be made through it.</p>
</div>`;
  return pageLayout(`${copy.title}: ${p.link.linkName}`, body);
}

/**
 * The page of a session that reached an outcome (or is still being processed); `attempts` are the
 * transfers into a transfer session's account (those returned to the payer are listed).
 */
export function sessionPage(p: PageOf, s: CheckoutSession, attempts: readonly TransferAttempt[] = []): string {
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
      // The address itself is not shown: the page's URL may be shared.
      const receipt = s.receiptSentAt !== undefined ? "<p>A receipt has been sent to your e-mail address.</p>" : "";
      content = `<p>Thank you. ${escapeHtml(p.businessName)} has received your payment.</p>${facts}${receipt}${
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
  const body = `${pageHeader(p)}
<section class="outcome outcome--${s.status}" aria-labelledby="outcome-title">
  <h2 id="outcome-title">${escapeHtml(title)}</h2>
  ${content}
  ${returnedTransfers(attempts)}
</section>`;
  return pageLayout(`${title}: ${p.link.linkName}`, body, s.status === "pending" ? 5 : undefined);
}

// --- Internal helpers ---

const _UNAVAILABLE: Record<UnavailableReason, { title: string; text: string }> = {
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
