/**
 * The e-mail that carries a new payment link to each of its `customer_emails`: the message (text
 * and HTML, every value escaped) and its sending, one message per recipient (no recipient sees
 * another's address), never awaited by the create request. Without an e-mail sender the send is
 * skipped and logged.
 */
import type { EmailSender } from "../../../../adapters/ports.ts";
import type { TenantDirectory } from "../../../../core/directory.ts";
import { describeError, type Logger } from "../../../../core/log.ts";
import { formatNgn } from "../../shared/money.ts";
import type { PaymentLink } from "./link.ts";
import { escapeHtml } from "../../shared/html.ts";

export interface LinkEmailDeps {
  directory: TenantDirectory;
  log: Logger;
  email?: EmailSender;
}

/** Sends the link to its customers in the background; failures are logged, never thrown. */
export function sendLinkEmails(deps: LinkEmailDeps, link: PaymentLink, url: string): void {
  if (link.customerEmails.length === 0) return;
  const { log } = deps;
  const sender = deps.email;
  if (!sender) {
    log.warn("collections_payment_link_email_skipped", { linkReference: link.reference, reason: "no e-mail sender configured" });
    return;
  }
  const business = deps.directory.business(link.businessId)?.name ?? "A business";
  const message = linkEmail(business, link, url);
  void Promise.allSettled(link.customerEmails.map((to) => sender.send({ ...message, to: [to] }))).then((results) => {
    const failed = results.filter((r) => r.status === "rejected");
    if (failed.length > 0)
      log.warn("collections_payment_link_email_failed", {
        linkReference: link.reference,
        failed: failed.length,
        recipients: results.length,
        error: describeError((failed[0] as PromiseRejectedResult).reason),
      });
    else log.debug("collections_payment_link_email_sent", { linkReference: link.reference, recipients: results.length });
  });
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
