/**
 * The bank-transfer side of the checkout pages: the session's page while it waits for a transfer
 * (rendered by the outcome route of page-routes.ts), the status route its script polls, and the
 * script itself (same-origin, so the pages' CSP holds).
 */
import { FastResponse } from "srvx";
import type { RequestContext } from "../../../core/context.ts";
import type { RouteDeclaration } from "../../../core/plugin.ts";
import { CollectionsError } from "../../../core/errors/gateway-error.ts";
import { built, envelope } from "../../../core/respond.ts";
import type { CheckoutSession } from "./checkout/session.ts";
import { isBankTransfer } from "./checkout/transfer.ts";
import type { PaymentLink } from "./links/link.ts";
import { sessionPage } from "./pages/outcome-pages.ts";
import { TRANSFER_SCRIPT } from "./pages/transfer-script.ts";
import { TRANSFER_SCRIPT_PATH, transferPage, transferVersion } from "./pages/transfer-page.ts";
import type { PaymentLinkServices } from "./services.ts";

const PAGE_SKIPS = ["auth", "ip-allowlist", "quota", "mode"] as const;

export function transferRoutes(s: PaymentLinkServices): RouteDeclaration[] {
  return [_statusRoute(s), _scriptRoute()];
}

/**
 * A session's page as the outcome route answers it: a pending transfer session gets its account
 * (opened now if it has none) and the transfer page (202); any other the outcome page, listing
 * transfers returned to the payer.
 */
export async function sessionOutcome(
  s: PaymentLinkServices,
  link: PaymentLink,
  session: CheckoutSession,
): Promise<{ status: 200 | 202; page: string }> {
  const business = s.directory.business(link.businessId);
  const view = { businessName: business?.name ?? "", link, testMode: business?.state === "TEST" };
  if (!isBankTransfer(session)) return { status: session.status === "pending" ? 202 : 200, page: sessionPage(view, session) };
  const current = session.status === "pending" && business ? await s.checkout.openTransfer(session, business) : session;
  const attempts = await s.checkout.transferAttempts(current);
  if (current.status === "pending") return { status: 202, page: transferPage(view, current, attempts, s.clock()) };
  return { status: 200, page: sessionPage(view, current, attempts) };
}

// --- Internal helpers ---

/** The session's status and page version, for the transfer page's script. */
function _statusRoute(s: PaymentLinkServices): RouteDeclaration {
  return {
    method: "GET",
    path: "/pay/:reference/status/:sessionId",
    service: "collections",
    auth: "none",
    skip: PAGE_SKIPS,
    summary: "Status of a checkout session (the collections envelope, polled by the bank-transfer page)",
    responses: { 200: "data: { status, version }", 404: "Unknown link or session" },
    async handler(ctx: RequestContext) {
      const link = await s.links.findPublic(ctx.params.reference!);
      let session = link ? await s.checkout.findSession(link._id, ctx.params.sessionId!) : null;
      if (!link || !session) throw new CollectionsError(404, "Payment not found.");
      if (session.status === "pending" && session.expiresAt <= s.clock()) {
        await s.checkout.expireStale({ linkId: link._id });
        session = (await s.checkout.findSession(link._id, session._id)) ?? session;
      }
      const attempts = await s.checkout.transferAttempts(session);
      return envelope(ctx, 200, "Checkout session status.", { status: session.status, version: transferVersion(session, attempts) });
    },
  };
}

function _scriptRoute(): RouteDeclaration {
  const size = Buffer.byteLength(TRANSFER_SCRIPT);
  return {
    method: "GET",
    path: TRANSFER_SCRIPT_PATH,
    service: "collections",
    auth: "none",
    skip: PAGE_SKIPS,
    summary: "The bank-transfer page's script (countdown, copy, status refresh)",
    responses: { 200: "JavaScript" },
    handler: (ctx) =>
      built(
        new FastResponse(TRANSFER_SCRIPT, {
          status: 200,
          headers: {
            "content-type": "text/javascript; charset=utf-8",
            "content-length": String(size),
            "cache-control": "public, max-age=300",
            "x-content-type-options": "nosniff",
            "x-request-id": ctx.requestId,
          },
        }),
        size,
      ),
  };
}
