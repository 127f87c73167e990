/**
 * The dashboard's sections: each is a nav entry (optional) and the routes of its screens and
 * actions. The plugin mounts every section of `SECTIONS` in order and builds the navigation from
 * their `nav`. A new screen is one file under screens/ exporting a `DashboardSection`, plus one
 * import and one entry below.
 */
import type { RouteDeclaration } from "../../core/plugin.ts";
import type { DashboardEnv } from "./env.ts";
import { accountSection } from "./screens/account.ts";
import { DATA_SECTIONS } from "./screens/data-sections.ts";
import { homeSection } from "./screens/home.ts";
import { keysSection } from "./screens/keys.ts";
import { linksSection } from "./screens/links.ts";
import { requestsSection } from "./screens/requests.ts";
import { teamSection } from "./screens/team.ts";
import { twoFactorSection } from "./screens/two-factor.ts";
import { webhooksSection } from "./screens/webhooks.ts";

export interface DashboardSection {
  /** The navigation entry: its label and the path under the base ("" for home). */
  nav?: { label: string; path: string };
  routes(env: DashboardEnv): RouteDeclaration[];
}

export const SECTIONS: readonly DashboardSection[] = [
  homeSection,
  ...DATA_SECTIONS,
  keysSection,
  webhooksSection,
  requestsSection,
  teamSection,
  accountSection,
  twoFactorSection,
  linksSection,
];
