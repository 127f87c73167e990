/**
 * The merchant dashboard (docs/dashboard.md): where a business's team signs in with a password and
 * a TOTP code, manages its API keys and follows its integration. Served under `dashboard.basePath`
 * on the business's own approved hosts and on the collections hosts (auth.ts says who may use which),
 * built on the UI kit (core/ui/) like the operator console. Every screen is a section
 * (sections.ts); key changes call the admin plugin's directory service (DIRECTORY_OPERATIONS), the
 * Admin API's own validation, idempotency and audit, with the user as the actor.
 *
 * Pages are public entry points for the pipeline (no API key, no per-credential quota): the
 * dashboard authenticates with its own session, and the admission and capacity stages still apply.
 */
import { definePlugin, type GatewayPlugin, type RouteDeclaration } from "../../core/plugin.ts";
import { STYLESHEET_PATH, stylesheet } from "../../core/ui/index.ts";
import { DIRECTORY_OPERATIONS, WALLET_OPERATIONS } from "../invoice/offers.ts";
import { demoOwnerSeed } from "./demo-owner.ts";
import { DATA_OFFERS } from "./screens/data-kit.ts";
import { createDashboardEnv, type DashboardEnv } from "./env.ts";
import { getPage } from "./routes.ts";
import { SECTIONS, type DashboardSection } from "./sections.ts";

export interface DashboardOptions {
  /** Epoch milliseconds (tests). Default Date.now. */
  now?: () => number;
  /** The sections to mount; default SECTIONS. */
  sections?: readonly DashboardSection[];
}

export function createDashboardPlugin(options: DashboardOptions = {}): GatewayPlugin {
  return definePlugin({
    name: "dashboard",
    needs: ["documentStore", "coordination"],
    uses: [DIRECTORY_OPERATIONS, WALLET_OPERATIONS, ...DATA_OFFERS],
    setup(kit) {
      if (!kit.config.dashboard.enabled) return { routes: [] };
      const env = createDashboardEnv(kit, { directory: kit.offers.get(DIRECTORY_OPERATIONS), wallet: kit.offers.get(WALLET_OPERATIONS) }, options.now ?? Date.now);
      return { routes: dashboardRoutes(env, options.sections ?? SECTIONS), workers: [demoOwnerSeed(kit.config, env.users, kit.log)] };
    },
  });
}

export const dashboard = createDashboardPlugin();

/** The stylesheet, then every section's routes; the navigation from the sections' entries. */
export function dashboardRoutes(env: DashboardEnv, sections: readonly DashboardSection[]): RouteDeclaration[] {
  env.nav = sections.flatMap((s) => (s.nav ? [s.nav] : []));
  return [getPage(env, STYLESHEET_PATH, "the UI kit's stylesheet", (ctx) => stylesheet(ctx)), ...sections.flatMap((s) => s.routes(env))];
}
