/**
 * The sandbox deposit endpoint: a simulated inbound transfer into a virtual account of a TEST
 * business, settled into the collection wallet (IN_FLOW_SUCCESS_EVENT) or refunded.
 */
import { CollectionsError } from "../../../core/errors/gateway-error.ts";
import type { RouteDeclaration } from "../../../core/plugin.ts";
import { envelope } from "../../../core/respond.ts";
import { bodyOf } from "../shared/input.ts";
import { DepositBody, type DepositInput } from "./schemas.ts";
import type { VirtualAccountServices } from "./services.ts";

export function depositRoutes({ accounts, deposits, directory }: VirtualAccountServices): RouteDeclaration[] {
  return [
    {
      method: "POST",
      path: "/api/v1/sandbox/virtual-account/deposit",
      service: "collections",
      auth: "bearer",
      schemas: { body: DepositBody },
      summary: "Sandbox: simulate an inbound transfer into a virtual account (TEST businesses only)",
      description:
        "Body: account_number, amount (> 0), sender_name, sender_account_number (10 digits), sender_bank. Settled: the wallet is credited once and IN_FLOW_SUCCESS_EVENT is sent (an account a checkout opened for pay-by-transfer settles that checkout instead: one credit under the session, CHECKOUT_COMPLETED). Refunded (expired, used single_use, inactive, fixed-amount mismatch): nothing is credited and no event is sent. 404 for LIVE businesses and for account numbers that are not this business's.",
      responses: { 201: "The deposit: settled or refunded (with the reason)", 404: "LIVE business, or no such account in this business", 422: "Validation errors" },
      async handler(ctx) {
        if (directory.business(ctx.businessId!)?.state !== "TEST")
          throw new CollectionsError(404, "Not found: sandbox deposits are available to TEST businesses only.");
        const input = bodyOf<DepositInput>(ctx.body);
        const account = await accounts.findByAccountNumber(ctx.businessId!, input.accountNumber);
        if (!account)
          throw new CollectionsError(404, "Virtual account not found.", [
            { field: "account_number", message: "is not a virtual account of this business" },
          ]);
        const deposit = await deposits.receive(account, input);
        const message =
          deposit.status === "settled"
            ? "Deposit settled into the collection wallet."
            : deposit.status === "refunded"
              ? "Deposit refunded to the sender."
              : "Deposit received; settlement is in progress.";
        return envelope(ctx, 201, message, deposits.view(deposit));
      },
    },
  ];
}
