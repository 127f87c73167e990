/**
 * The demo's reset, `POST /admin/demo/reset` (`npx gatehouse demo reset`; docs/operations.md "Demo
 * reset"). Mounted on a demo config only (`"demo": true`): it makes the tenant directory match the
 * config this gateway started with, as `npm start -- --sync` would but without a restart — keys the
 * Admin API made are removed, revoked demo keys work again, every domain is back in its mode with its
 * fee and autoTransmit. Each change is audited (actor `config-sync`) and announced to every process.
 * Represented businesses, invoices and wallets are left as they are. Running it twice changes nothing
 * the second time, so it needs no idempotency record.
 */
import { announceChange } from "../../core/directory.ts";
import { seedDirectory } from "../../core/directory/seed.ts";
import { openDirectoryStore } from "../../core/directory-store.ts";
import type { PluginKit, RouteDeclaration } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import { EmptyBody } from "./directory-schemas.ts";

export const DEMO_RESET_PATH = "/admin/demo/reset";

/** The reset route, or none when the config is not a demo. */
export function demoResetRoutes(kit: PluginKit): RouteDeclaration[] {
  if (!kit.config.demo) return [];
  return [
    {
      service: "gateway",
      hosts: "any",
      auth: "admin",
      quota: "management",
      skip: ["mode"],
      rejectServerFields: false,
      method: "POST",
      path: DEMO_RESET_PATH,
      schemas: { body: EmptyBody },
      unavailable: { code: "GW_MANAGEMENT_SERVICE_UNAVAILABLE", detail: "The directory store is unavailable; the reset may be sent again." },
      summary: "Operator (demo only): restore the demo's directory",
      description: "Makes keys, domain modes, sign fees and autoTransmit match the demo config the gateway started with (audited as config-sync). Answers the counts of records created, updated and removed.",
      responses: { 200: "{ created, updated, removed }" },
      async handler(ctx) {
        const report = await seedDirectory(openDirectoryStore(kit.ports.documentStore), kit.config, {
          sync: true,
          now: Date.now,
          log: kit.log,
          notify: (change) => announceChange(kit.ports.coordination, change).catch(() => undefined),
        });
        return json(ctx, 200, { created: report.created, updated: report.updated, removed: report.removed });
      },
    },
  ];
}
