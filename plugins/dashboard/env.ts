/**
 * What every dashboard screen reads: the page paths, the session cookies, the dashboard's config,
 * the team's users (users.ts), the plugin kit's ports, and the services the Admin API routes call
 * (the admin plugin's directory and wallet operations), so a dashboard action and its API route
 * cannot drift apart. `Viewer` is who a request is from: the signed-in user, their business (its
 * environment TEST or LIVE) and role, read fresh from the store on every request.
 */
import type { DocumentStore, EmailSender } from "../../adapters/ports.ts";
import type { DashboardConfig } from "../../config/dashboard.ts";
import type { BusinessRecord } from "../../core/directory.ts";
import { deriveKey } from "../../core/keyed-hash.ts";
import type { PluginKit } from "../../core/plugin.ts";
import { createPagePaths, createSessionCookies, type NavItem, type PagePaths, type Session, type SessionCookies } from "../../core/ui/index.ts";
import type { DirectoryOperations, WalletOperations } from "../invoice/offers.ts";
import { createUserStore, type DashboardUser, type UserStore } from "./users.ts";

export const SESSION_COOKIE = "gh_dash";
export const FLASH_COOKIE = "gh_dash_flash";
/** Sealed per session once a TOTP code was entered (requireFreshTotp), expiring after `totpFreshMs`. */
export const TOTP_COOKIE = "gh_dash_totp";
/** Sealed between the password step and the code step of a sign-in. */
export const PENDING_COOKIE = "gh_dash_pending";

/** The team roles, weakest first: viewer reads, developer manages the integration, owner also the team. */
export const ROLES = ["viewer", "developer", "owner"] as const;
export type Role = (typeof ROLES)[number];

export function isRole(v: unknown): v is Role {
  return typeof v === "string" && (ROLES as readonly string[]).includes(v);
}

/** True when `role` is `min` or stronger. */
export function hasRole(role: Role, min: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(min);
}

/** The signed-in user of a request, as the guards established it. */
export interface Viewer {
  session: Session;
  user: DashboardUser;
  business: BusinessRecord;
  role: Role;
  /** "TEST" or "LIVE": shown on every page. */
  environment: string;
}

export interface DashboardEnv {
  kit: PluginKit;
  config: DashboardConfig;
  paths: PagePaths;
  cookies: SessionCookies;
  store: DocumentStore;
  users: UserStore;
  /** The e-mail port (invitations, resets, lock notices); null when the deployment has none. */
  email: EmailSender | null;
  /** The admin plugin's directory changes (key create / roll / revoke / allowlist). */
  directory: DirectoryOperations;
  /** The admin plugin's wallet reads. */
  wallet: WalletOperations;
  allowedOrigins: readonly string[];
  /** The navigation: the mounted sections' entries, in order (set by the plugin when it mounts them). */
  nav: NavItem[];
  now: () => number;
}

export interface DashboardServices {
  directory: DirectoryOperations;
  wallet: WalletOperations;
}

export function createDashboardEnv(kit: PluginKit, services: DashboardServices, now: () => number): DashboardEnv {
  const c = kit.config.dashboard;
  const paths = createPagePaths(c.basePath, c.publicPath ?? c.basePath);
  return {
    kit,
    config: c,
    paths,
    cookies: createSessionCookies({
      // Every process derives the same key from the shared config: a session works on any of them.
      secret: deriveKey(kit.config.regulator.apiSecret, "dashboard-session-v1"),
      cookieName: SESSION_COOKIE,
      path: paths.public || "/",
      ttlMs: c.sessionTtlMs,
      now,
    }),
    store: kit.ports.documentStore,
    users: createUserStore(kit.ports.documentStore, now),
    email: kit.ports.email ?? null,
    directory: services.directory,
    wallet: services.wallet,
    allowedOrigins: c.allowedOrigins,
    nav: [],
    now,
  };
}
