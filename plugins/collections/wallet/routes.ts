/** The credits of the business collection wallet (checkouts and deposits), newest first. */
import type { RouteDeclaration } from "../../../core/plugin.ts";
import { envelope, pageMeta } from "../../../core/respond.ts";
import { PageQuery, type PageInput } from "../shared/input.ts";
import { walletEntryView, type CollectionWallet } from "./wallet.ts";

export function walletRoutes(wallet: CollectionWallet): RouteDeclaration[] {
  return [
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
  ];
}
