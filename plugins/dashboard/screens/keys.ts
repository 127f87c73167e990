/**
 * The API keys section: its nav entry, the pages (key-pages.ts) and the actions (key-actions.ts).
 * Split in three so the pages and the actions do not import each other.
 */
import { viewing } from "../auth.ts";
import { getPage } from "../routes.ts";
import type { DashboardSection } from "../sections.ts";
import { keyActionRoutes } from "./key-actions.ts";
import { keyScreen, keysScreen } from "./key-pages.ts";

export const keysSection: DashboardSection = {
  nav: { label: "API keys", path: "/keys" },
  routes: (env) => [
    getPage(env, "/keys", "API keys", viewing(env, (ctx, who) => keysScreen(env, ctx, who))),
    getPage(env, "/keys/:keyId", "one API key", viewing(env, (ctx, who) => keyScreen(env, ctx, who))),
    ...keyActionRoutes(env),
  ],
};
