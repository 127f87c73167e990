/**
 * Operator administration: the invoice-gateway wallet routes (DECISIONS.md "Wallet (operator)"),
 * `GET /admin/wallets/:businessId` and `POST /admin/wallets/:businessId/credits`. Needs the billing
 * port (the composition root builds the document ledger when none is given). docs/billing.md.
 */
import { definePlugin, requirePort, type GatewayPlugin } from "../../core/plugin.ts";
import { walletRoutes } from "./wallet-routes.ts";

export function createAdminPlugin(): GatewayPlugin {
  return definePlugin({
    name: "admin",
    needs: ["billing"],
    stages: ["auth", "quota"],
    routes(kit) {
      return walletRoutes(kit, requirePort(kit, "billing"));
    },
  });
}

export const admin = createAdminPlugin();
