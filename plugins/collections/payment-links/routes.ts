/**
 * Route declarations of the collections plugin (payment links, checkout pages, wallet credits).
 * Handlers stay thin: read validated input → call the service → answer the envelope or the page.
 */
import { randomUUID } from "node:crypto";
import { isDependencyUnavailableError } from "../../../adapters/ports.ts";
import type { RequestContext } from "../../../core/context.ts";
import { describeError } from "../../../core/log.ts";
import type { PluginKit, RouteDeclaration } from "../../../core/plugin.ts";
import { envelope, html, pageMeta } from "../../../core/respond.ts";
import type { CheckoutService, CheckoutSession } from "./checkout/service.ts";
import { checkoutPage, messagePage, sentence, sessionPage, unavailablePage, type PageLink } from "./pages/checkout-page.ts";
import type { FeePolicy } from "../shared/money.ts";
import {
  CreatePaymentLinkBody,
  ListLinksQuery,
  ListTransactionsQuery,
  PageQuery,
  ToggleStatusBody,
  parseCheckoutForm,
  parseInput,
  redirectTarget,
  type ListLinksInput,
  type ListTransactionsInput,
  type PageInput,
} from "./schemas.ts";
import type { Availability, PaymentLink, PaymentLinkService } from "./link-service.ts";
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from "../shared/common.ts";
import { walletEntryView, type CollectionWallet } from "../wallet/wallet.ts";

export interface CollectionsServices {
  kit: PluginKit;
  links: PaymentLinkService;
  checkout: CheckoutService;
  wallet: CollectionWallet;
  fee: FeePolicy;
}

const FORM = "application/x-www-form-urlencoded";
/** The checkout pages are public entry points: no API key, no per-credential quota. */
const PAGE_SKIPS = ["auth", "ip-allowlist", "quota", "mode"] as const;

/**
 * Status of a page for a link that accepts no payment: 410 Gone once its end date has passed
 * (links cannot be edited, so it will never accept payments again); 403 Forbidden while it is
 * deactivated or before its start date (it may accept payments later).
 */
export function unavailableStatus(reason: Exclude<Availability, { ok: true }>["reason"]): 403 | 410 {
  return reason === "ended" ? 410 : 403;
}

export function collectionsRoutes(s: CollectionsServices): RouteDeclaration[] {
  const { kit, links, checkout, wallet } = s;

  const linkPath = (link: PaymentLink) => `/pay/${encodeURIComponent(link.reference)}`;
  const pageOf = (link: PaymentLink): PageLink => {
    const business = kit.directory.business(link.businessId);
    return { businessName: business?.name ?? "", link, testMode: business?.state === "TEST", fee: s.fee };
  };
  const notFoundPage = (ctx: RequestContext) =>
    html(ctx, 404, messagePage("Payment link not found", "Check the address you were given: there is no payment link at this address."));

  /** Pages answer HTML even when something unexpected fails (the JSON envelope is for the API). */
  const page = async (ctx: RequestContext, render: () => Promise<Response>): Promise<Response> => {
    try {
      return await render();
    } catch (e) {
      if (isDependencyUnavailableError(e)) {
        kit.log.warn("collections_checkout_page_unavailable", { requestId: ctx.requestId, route: ctx.route?.id ?? null, error: describeError(e) });
        return html(
          ctx,
          503,
          messagePage("Payments are temporarily unavailable", "Please try again in a minute. If you submitted a payment, check with the business before paying again."),
          { "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
        );
      }
      kit.log.error("collections_checkout_page_failed", { requestId: ctx.requestId, route: ctx.route?.id ?? null, error: describeError(e) });
      return html(
        ctx,
        500,
        messagePage("Something went wrong", "We could not complete this step. If you submitted a payment, check with the business before paying again."),
      );
    }
  };

  return [
    // -----------------------------------------------------------------------
    // Payment-link API (Bearer)
    // -----------------------------------------------------------------------
    {
      method: "POST",
      path: "/api/v1/payment-link",
      service: "collections",
      auth: "bearer",
      summary: "Create a payment link",
      description:
        "Body: link_name, narration, fee_bearer (MERCHANT | CUSTOMER), source_reference (unique per business), optional amount (≥ 100), customer_emails, redirect_link, start_date, end_date (ISO 8601). 422 lists every failing field; 409 on a reused source_reference.",
      responses: { 201: "The payment link", 409: "source_reference already used", 422: "Validation errors" },
      async handler(ctx) {
        const input = parseInput(CreatePaymentLinkBody, ctx.body);
        const link = await links.create(ctx.businessId!, input);
        return envelope(ctx, 201, "Payment link created successfully.", links.view(link));
      },
    },
    {
      method: "GET",
      path: "/api/v1/payment-link",
      service: "collections",
      auth: "bearer",
      schemas: { query: ListLinksQuery },
      summary: "List payment links (page, limit, status, search over link name and reference)",
      responses: { 200: "Payment links and meta" },
      async handler(ctx) {
        const q = ctx.query as unknown as ListLinksInput;
        const { items, total } = await links.list(ctx.businessId!, q);
        return envelope(ctx, 200, "Payment links retrieved successfully.", items.map(links.view), pageMeta(q.page, q.limit, total));
      },
    },
    {
      method: "GET",
      path: "/api/v1/payment-link/find-by-reference/:reference",
      service: "collections",
      auth: "bearer",
      summary: "Find a payment link by its generated reference",
      responses: { 200: "The payment link", 404: "No such link in this business" },
      async handler(ctx) {
        const link = await links.findByReference(ctx.businessId!, ctx.params.reference!);
        return envelope(ctx, 200, "Payment link retrieved successfully.", links.view(link));
      },
    },
    {
      method: "GET",
      path: "/api/v1/payment-link/find-by-source-reference/:source_reference",
      service: "collections",
      auth: "bearer",
      summary: "Find a payment link by the caller's source reference",
      responses: { 200: "The payment link", 404: "No such link in this business" },
      async handler(ctx) {
        const link = await links.findBySourceReference(ctx.businessId!, ctx.params.source_reference!);
        return envelope(ctx, 200, "Payment link retrieved successfully.", links.view(link));
      },
    },
    {
      method: "GET",
      path: "/api/v1/payment-link/find-by-reference/:reference/transactions",
      service: "collections",
      auth: "bearer",
      schemas: { query: ListTransactionsQuery },
      summary: "Transactions (checkout sessions) of a link, by its reference",
      responses: { 200: "Transactions and meta", 404: "No such link in this business" },
      async handler(ctx) {
        const link = await links.findByReference(ctx.businessId!, ctx.params.reference!);
        return transactionsOf(ctx, link);
      },
    },
    {
      method: "GET",
      path: "/api/v1/payment-link/source-reference/:source_reference/transactions",
      service: "collections",
      auth: "bearer",
      schemas: { query: ListTransactionsQuery },
      summary: "Transactions (checkout sessions) of a link, by its source reference",
      responses: { 200: "Transactions and meta", 404: "No such link in this business" },
      async handler(ctx) {
        const link = await links.findBySourceReference(ctx.businessId!, ctx.params.source_reference!);
        return transactionsOf(ctx, link);
      },
    },
    {
      method: "POST",
      path: "/api/v1/payment-link/toggle-status",
      service: "collections",
      auth: "bearer",
      summary: "Activate or deactivate a payment link (link_id: its reference or id)",
      responses: { 200: "The updated payment link", 404: "No such link in this business", 422: "Validation errors" },
      async handler(ctx) {
        const input = parseInput(ToggleStatusBody, ctx.body);
        const link = await links.toggle(ctx.businessId!, input.link_id, input.activate);
        return envelope(ctx, 200, input.activate ? "Payment link activated." : "Payment link deactivated.", links.view(link));
      },
    },
    {
      method: "GET",
      path: "/api/v1/balances/transactions",
      service: "collections",
      auth: "bearer",
      schemas: { query: PageQuery },
      summary: "Credits of the business collection wallet, newest first",
      responses: { 200: "Wallet credits and meta" },
      async handler(ctx) {
        const q = ctx.query as unknown as PageInput;
        const { items, total } = await wallet.transactions(ctx.businessId!, q.page, q.limit);
        return envelope(ctx, 200, "Wallet transactions retrieved successfully.", items.map(walletEntryView), pageMeta(q.page, q.limit, total));
      },
    },

    // -----------------------------------------------------------------------
    // Checkout pages (public HTML)
    // -----------------------------------------------------------------------
    {
      method: "GET",
      path: "/pay/:reference",
      service: "collections",
      auth: "none",
      skip: PAGE_SKIPS,
      summary: "Checkout page of a payment link (HTML)",
      responses: { 200: "The payment form", 403: "Link deactivated or not open yet", 404: "Unknown link", 410: "Link closed" },
      handler: (ctx) =>
        page(ctx, async () => {
          const link = await links.findPublic(ctx.params.reference!);
          if (!link) return notFoundPage(ctx);
          const available = links.availability(link);
          if (!available.ok) return html(ctx, unavailableStatus(available.reason), unavailablePage(pageOf(link), available.reason));
          return html(ctx, 200, checkoutPage(pageOf(link), { email: "", amount: "", outcome: "success", errors: [], token: randomUUID() }));
        }),
    },
    {
      method: "POST",
      path: "/pay/:reference",
      service: "collections",
      auth: "none",
      skip: PAGE_SKIPS,
      accepts: [FORM],
      summary: "Submit the checkout form: starts a checkout session and pays it",
      responses: {
        303: "Paid: to redirect_link or the success page; processing: to the status page",
        402: "Payment failed or refunded (the page allows a new attempt)",
        403: "Link deactivated or not open yet",
        404: "Unknown link",
        410: "Link closed",
        422: "The form has errors (re-rendered with messages)",
      },
      handler: (ctx) =>
        page(ctx, async () => {
          const link = await links.findPublic(ctx.params.reference!);
          if (!link) return notFoundPage(ctx);
          const available = links.availability(link);
          if (!available.ok) return html(ctx, unavailableStatus(available.reason), unavailablePage(pageOf(link), available.reason));
          const business = kit.directory.business(link.businessId);
          if (!business) return notFoundPage(ctx);
          const view = pageOf(link);
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
                errors: form.errors,
                token: randomUUID(),
              }),
            );
          }
          const session = await checkout.start(link, business, form.value);
          return outcomeResponse(ctx, link, view, session, form.value.amountKobo);
        }),
    },
    {
      method: "GET",
      path: "/pay/:reference/success/:sessionId",
      service: "collections",
      auth: "none",
      skip: PAGE_SKIPS,
      summary: "Outcome page of a checkout session (success, or its current state)",
      responses: { 200: "The session's outcome", 202: "Still processing", 404: "Unknown link or session" },
      handler: (ctx) =>
        page(ctx, async () => {
          const link = await links.findPublic(ctx.params.reference!);
          if (!link) return notFoundPage(ctx);
          let session = await checkout.findSession(link._id, ctx.params.sessionId!);
          if (session?.status === "pending") {
            await checkout.expireStale({ linkId: link._id });
            session = await checkout.findSession(link._id, session._id);
          }
          if (!session) return html(ctx, 404, messagePage("Payment not found", "There is no payment at this address."));
          return html(ctx, session.status === "pending" ? 202 : 200, sessionPage(pageOf(link), session));
        }),
    },
  ];

  async function transactionsOf(ctx: RequestContext, link: PaymentLink): Promise<Response> {
    const q = ctx.query as unknown as ListTransactionsInput;
    const { items, total } = await checkout.transactions(ctx.businessId!, link._id, q);
    return envelope(ctx, 200, "Payment link transactions retrieved successfully.", items.map(checkout.view), pageMeta(q.page, q.limit, total));
  }

  function outcomeResponse(ctx: RequestContext, link: PaymentLink, view: PageLink, session: CheckoutSession, amountKobo: number): Response {
    const statusPage = `${linkPath(link)}/success/${encodeURIComponent(session._id)}`;
    switch (session.status) {
      case "successful": {
        // The payment succeeded whatever the redirect: an unusable stored link (saved before
        // creation validated it) sends the payer to the success page instead of an error page.
        const target = redirectTarget(link.redirectLink);
        if (link.redirectLink && !target)
          kit.log.warn("collections_redirect_link_unusable", { requestId: ctx.requestId, linkReference: link.reference });
        return _seeOther(ctx, target ?? statusPage);
      }
      case "pending":
        return _seeOther(ctx, statusPage);
      case "failed":
        return html(
          ctx,
          402,
          checkoutPage(
            view,
            {
              email: session.customerEmail,
              amount: link.amountKobo === null ? (amountKobo / 100).toFixed(2) : "",
              outcome: "success",
              errors: [],
              token: randomUUID(),
            },
            { title: "Payment failed", text: `${sentence(session.failureReason ?? "The payment was declined")} Nothing was charged. You can try again.` },
          ),
        );
      default:
        return html(ctx, 402, sessionPage(view, session));
    }
  }
}

// --- Internal helpers ---

function _seeOther(ctx: RequestContext, location: string): Response {
  return new Response(null, {
    status: 303,
    headers: { location, "cache-control": "no-store", "content-length": "0", "x-request-id": ctx.requestId },
  });
}
