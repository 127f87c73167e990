/**
 * The payer's receipt: one e-mail per successful session (whatever the method), through the e-mail
 * port, with the amount, the business, the transaction reference and the time of payment. Sent at
 * most once: the session is claimed (`receiptSentAt`) by a compare-and-set before sending; a send
 * that fails releases the claim and throws, so the effects stay pending and are re-driven.
 */
import { describeError } from "../../../../core/log.ts";
import { escapeHtml } from "../../shared/html.ts";
import { formatNgn } from "../../shared/money.ts";
import { formatTime } from "../../shared/time.ts";
import type { CheckoutDeps } from "./deps.ts";
import type { CheckoutSession } from "./session.ts";
import { isBankTransfer } from "./transfer.ts";

/** Sends the receipt of a successful session once (see the module comment). */
export async function sendReceipt(deps: CheckoutDeps, s: CheckoutSession): Promise<void> {
  if (s.status !== "successful" || s.receiptSentAt !== undefined) return;
  if (!deps.email) {
    deps.log.warn("collections_checkout_receipt_skipped", { sessionId: s._id, reason: "no e-mail sender configured" });
    return;
  }
  const claimed = await deps.sessions.findOneAndUpdate(
    { _id: s._id, status: "successful", receiptSentAt: { $exists: false } },
    { $set: { receiptSentAt: deps.clock() } },
  );
  if (!claimed) return;
  const business = deps.directory.business(s.businessId)?.name ?? "the business";
  try {
    await deps.email.send({ to: [s.customerEmail], ...receiptEmail(business, s) });
  } catch (e) {
    await deps.sessions.findOneAndUpdate({ _id: s._id, receiptSentAt: claimed.receiptSentAt }, { $unset: ["receiptSentAt"] }).catch(() => undefined);
    deps.log.warn("collections_checkout_receipt_failed", { sessionId: s._id, error: describeError(e) });
    throw e;
  }
  deps.log.event("collections_checkout_receipt_sent", { sessionId: s._id, businessId: s.businessId });
}

/** The receipt message (text and HTML, every value escaped). */
export function receiptEmail(businessName: string, s: CheckoutSession): { subject: string; text: string; html: string } {
  const amount = `NGN ${formatNgn(s.chargeKobo)}`;
  const paidAt = `${formatTime(s.paidAt ?? s.completedAt ?? s.updatedAt)} UTC`;
  const method = isBankTransfer(s) ? "Bank transfer" : "Card (payment processor)";
  const rows: Array<[string, string]> = [
    ["Amount", amount],
    ["Paid to", businessName],
    ["For", s.linkName],
    ["Transaction reference", s.reference],
    ["Paid at", paidAt],
    ["Payment method", method],
  ];
  if (s.transfer) rows.push(["Paid into", `${s.transfer.accountNumber} (${s.transfer.providerName})`]);
  const subject = `Receipt: ${amount} paid to ${businessName}`;
  const text = [`Thank you for your payment to ${businessName}.`, "", ...rows.map(([k, v]) => `${k}: ${v}`), "", "Keep this e-mail as your receipt."].join("\n");
  const html = [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body>`,
    `<p>Thank you for your payment to ${escapeHtml(businessName)}.</p>`,
    `<table>${rows.map(([k, v]) => `<tr><th scope="row" align="left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join("")}</table>`,
    `<p>Keep this e-mail as your receipt.</p>`,
    `</body></html>`,
  ].join("");
  return { subject, text, html };
}
