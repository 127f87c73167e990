/**
 * The public checkout pages on the collections hosts (HTML, no API key): the payment form of a
 * link, its submission (starts a checkout session and pays it, or opens its bank-transfer
 * account), and the outcome page of a session (the transfer page while a transfer is awaited:
 * transfer-routes.ts).
 * Pages answer HTML even when something unexpected fails: the JSON envelope is for the API.
 */
import { randomUUID } from "node:crypto";
import { isDependencyUnavailableError } from "../../../adapters/ports.ts";
import type { RequestContext } from "../../../core/context.ts";
import { describeError } from "../../../core/log.ts";
import type { RouteDeclaration } from "../../../core/plugin.ts";
import { html } from "../../../core/respond.ts";
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from "../shared/outage.ts";
import type { CheckoutSession } from "./checkout/session.ts";
import { CheckoutFormFields, parseCheckoutForm } from "./checkout/form.ts";
import type { PaymentLink, UnavailableReason } from "./links/link.ts";
import { checkoutPage, type PageLink } from "./pages/checkout-page.ts";
import { messagePage, sentence } from "./pages/layout.ts";
import { sessionPage, unavailablePage } from "./pages/outcome-pages.ts";
import { redirectTarget } from "./links/redirect.ts";
import type { PaymentLinkServices } from "./services.ts";
import { sessionOutcome, transferRoutes } from "./transfer-routes.ts";

const FORM = "application/x-www-form-urlencoded";
/** The checkout pages are public entry points: no API key, no per-credential quota. */
const PAGE_SKIPS = ["auth", "ip-allowlist", "quota", "mode"] as const;

/**
 * Status of a page for a link that accepts no payment: 410 Gone once its end date has passed
 * (links cannot be edited, so it will never accept payments again); 403 Forbidden while it is
 * deactivated or before its start date (it may accept payments later).
 */
export function unavailableStatus(reason: UnavailableReason): 403 | 410 {
  return reason === "ended" ? 410 : 403;
}

export function checkoutPageRoutes(s: PaymentLinkServices): RouteDeclaration[] {
  return [_formPage(s), _submitForm(s), _outcomePage(s), ...transferRoutes(s)];
}

// --- Internal helpers ---

function _formPage(s: PaymentLinkServices): RouteDeclaration {
  return {
    method: "GET",
    path: "/pay/:reference",
    service: "collections",
    auth: "none",
    skip: PAGE_SKIPS,
    summary: "Checkout page of a payment link (HTML)",
    responses: { 200: "The payment form", 403: "Link deactivated or not open yet", 404: "Unknown link", 410: "Link closed" },
    handler: (ctx) =>
      _page(s, ctx, async () => {
        const link = await s.links.findPublic(ctx.params.reference!);
        if (!link) return _notFoundPage(ctx);
        const available = s.links.availability(link);
        if (!available.ok) return html(ctx, unavailableStatus(available.reason), unavailablePage(_pageOf(s, link), available.reason));
        return html(ctx, 200, checkoutPage(_pageOf(s, link), { email: "", amount: "", outcome: "success", method: "processor", errors: [], token: randomUUID() }));
      }),
  };
}

function _submitForm(s: PaymentLinkServices): RouteDeclaration {
  return {
    method: "POST",
    path: "/pay/:reference",
    service: "collections",
    auth: "none",
    skip: PAGE_SKIPS,
    accepts: [FORM],
    // The fields the form posts; their rules depend on the link, so the page checks them and
    // answers its own 422 page (parseCheckoutForm).
    schemas: { body: CheckoutFormFields },
    summary: "Submit the checkout form: starts a checkout session and pays it",
    responses: {
      303: "Paid: to redirect_link or the success page; processing: to the status page",
      402: "Payment failed or refunded (the page allows a new attempt)",
      403: "Link deactivated or not open yet",
      404: "Unknown link",
      410: "Link closed",
      422: "The form has errors (re-rendered with messages)",
    },
    handler: (ctx) => _page(s, ctx, () => _submit(s, ctx)),
  };
}

async function _submit(s: PaymentLinkServices, ctx: RequestContext): Promise<Response> {
  const link = await s.links.findPublic(ctx.params.reference!);
  if (!link) return _notFoundPage(ctx);
  const available = s.links.availability(link);
  if (!available.ok) return html(ctx, unavailableStatus(available.reason), unavailablePage(_pageOf(s, link), available.reason));
  const business = s.directory.business(link.businessId);
  if (!business) return _notFoundPage(ctx);
  const view = _pageOf(s, link);
  const form = parseCheckoutForm(ctx.body, link.amountKobo);
  if (!form.ok) {
    const posted = ctx.body as Record<string, unknown> | undefined;
    const outcome = posted?.outcome;
    return html(
      ctx,
      422,
      checkoutPage(view, {
        email: form.email,
        amount: form.amount,
        outcome: outcome === "failure" || outcome === "duplicate_report" ? outcome : "success",
        method: posted?.method === "bank_transfer" ? "bank_transfer" : "processor",
        errors: form.errors,
        token: randomUUID(),
      }),
    );
  }
  const session = await s.checkout.start(link, business, form.value);
  return _outcomeResponse(s, ctx, link, view, session, form.value.amountKobo);
}

function _outcomePage(s: PaymentLinkServices): RouteDeclaration {
  return {
    method: "GET",
    path: "/pay/:reference/success/:sessionId",
    service: "collections",
    auth: "none",
    skip: PAGE_SKIPS,
    summary: "Outcome page of a checkout session (success, or its current state)",
    responses: { 200: "The session's outcome", 202: "Still processing", 404: "Unknown link or session" },
    handler: (ctx) =>
      _page(s, ctx, async () => {
        const link = await s.links.findPublic(ctx.params.reference!);
        if (!link) return _notFoundPage(ctx);
        let session = await s.checkout.findSession(link._id, ctx.params.sessionId!);
        if (session?.status === "pending") {
          await s.checkout.expireStale({ linkId: link._id });
          session = await s.checkout.findSession(link._id, session._id);
        }
        if (!session) return html(ctx, 404, messagePage("Payment not found", "There is no payment at this address."));
        const outcome = await sessionOutcome(s, link, session);
        return html(ctx, outcome.status, outcome.page);
      }),
  };
}

/** Where a submitted form goes: 303 to the redirect or the status page, or a 402 page. */
function _outcomeResponse(s: PaymentLinkServices, ctx: RequestContext, link: PaymentLink, view: PageLink, session: CheckoutSession, amountKobo: number): Response {
  const statusPage = `/pay/${encodeURIComponent(link.reference)}/success/${encodeURIComponent(session._id)}`;
  switch (session.status) {
    case "successful": {
      // The payment succeeded whatever the redirect: an unusable stored link (saved before
      // creation validated it) sends the payer to the success page instead of an error page.
      const target = redirectTarget(link.redirectLink);
      if (link.redirectLink && !target) s.log.warn("collections_redirect_link_unusable", { requestId: ctx.requestId, linkReference: link.reference });
      return _seeOther(ctx, target ?? statusPage);
    }
    case "pending":
      return _seeOther(ctx, statusPage);
    case "failed": {
      const form = {
        email: session.customerEmail,
        amount: link.amountKobo === null ? (amountKobo / 100).toFixed(2) : "",
        outcome: "success" as const,
        method: "processor" as const,
        errors: [],
        token: randomUUID(),
      };
      const notice = { title: "Payment failed", text: `${sentence(session.failureReason ?? "The payment was declined")} Nothing was charged. You can try again.` };
      return html(ctx, 402, checkoutPage(view, form, notice));
    }
    default:
      return html(ctx, 402, sessionPage(view, session));
  }
}

/** Runs a page; a dependency outage is the HTML 503 page, anything else the HTML 500 page. */
async function _page(s: PaymentLinkServices, ctx: RequestContext, render: () => Promise<Response>): Promise<Response> {
  try {
    return await render();
  } catch (e) {
    if (isDependencyUnavailableError(e)) {
      s.log.warn("collections_checkout_page_unavailable", { requestId: ctx.requestId, route: ctx.route?.id ?? null, error: describeError(e) });
      return html(
        ctx,
        503,
        messagePage("Payments are temporarily unavailable", "Please try again in a minute. If you submitted a payment, check with the business before paying again."),
        { "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      );
    }
    s.log.error("collections_checkout_page_failed", { requestId: ctx.requestId, route: ctx.route?.id ?? null, error: describeError(e) });
    return html(
      ctx,
      500,
      messagePage("Something went wrong", "We could not complete this step. If you submitted a payment, check with the business before paying again."),
    );
  }
}

function _pageOf(s: PaymentLinkServices, link: PaymentLink): PageLink {
  const business = s.directory.business(link.businessId);
  return { businessName: business?.name ?? "", link, testMode: business?.state === "TEST", fee: s.fee, offersTransfer: s.checkout.offersTransfer };
}

function _notFoundPage(ctx: RequestContext): Response {
  return html(ctx, 404, messagePage("Payment link not found", "Check the address you were given: there is no payment link at this address."));
}

function _seeOther(ctx: RequestContext, location: string): Response {
  return new Response(null, {
    status: 303,
    headers: { location, "cache-control": "no-store", "content-length": "0", "x-request-id": ctx.requestId },
  });
}
