/**
 * What every console screen reads: the page paths, the session cookies, the plugin kit's ports and
 * runtime facts, and the services the Admin API routes call (the frozen-operations listing of the
 * invoice kit, the recovery plugin's resolver offered through the kit, the alert channel), so a
 * console action and its API route cannot drift apart.
 */
import type { AlertChannel, DocumentStore } from "../../adapters/ports.ts";
import type { PluginKit } from "../../core/plugin.ts";
import { deriveKey } from "../../core/keyed-hash.ts";
import { createPagePaths, createSessionCookies, type PagePaths, type SessionCookies } from "../../core/ui/index.ts";
import { frozenSources, type FrozenSource } from "../invoice/frozen-operations.ts";
import type { DirectoryOperations, FrozenInvoiceResolver, FrozenOperationResolver, IdentityReviewOperations, WalletOperations } from "../invoice/offers.ts";
import type { TrafficHistory } from "./traffic.ts";

export const SESSION_COOKIE = "gh_console";
export const FLASH_COOKIE = "gh_console_flash";

export type Role = "admin" | "viewer";

export interface ConsoleEnv {
  kit: PluginKit;
  paths: PagePaths;
  cookies: SessionCookies;
  store: DocumentStore;
  alerts: AlertChannel | null;
  frozen: readonly FrozenSource[];
  resolver: FrozenOperationResolver;
  /** The admin plugin's directory changes (key create / roll / revoke, mode change, approval). */
  directory: DirectoryOperations;
  /** The admin plugin's wallet reads and changes. */
  wallet: WalletOperations;
  traffic: TrafficHistory;
  /** The Stored plugin's resolution of a frozen Stored invoice (the Admin API route's service). */
  storedResolver: FrozenInvoiceResolver | null;
  /** The onboarding plugin's identity reviews and decisions (the Admin API routes' service). */
  identity: IdentityReviewOperations | null;
  /** Hosts that serve the console, or "any". */
  hosts: "any" | readonly string[];
  allowedOrigins: readonly string[];
  now: () => number;
}

/** Services offered by other plugins that some screens use (absent in a gateway built without them). */
export interface ConsoleServices {
  storedResolver?: FrozenInvoiceResolver;
  identity?: IdentityReviewOperations;
}

export function createConsoleEnv(
  kit: PluginKit,
  resolver: FrozenOperationResolver,
  directory: DirectoryOperations,
  wallet: WalletOperations,
  traffic: TrafficHistory,
  now: () => number,
  services: ConsoleServices = {},
): ConsoleEnv {
  const c = kit.config.console;
  const paths = createPagePaths(c.basePath, c.publicPath ?? c.basePath);
  return {
    kit,
    paths,
    cookies: createSessionCookies({
      // Every process derives the same key from the shared config: a session works on any of them.
      secret: deriveKey(kit.config.regulator.apiSecret, "console-session-v1"),
      cookieName: SESSION_COOKIE,
      path: paths.public || "/",
      ttlMs: c.sessionTtlMs,
      now,
    }),
    store: kit.ports.documentStore,
    alerts: kit.ports.alerts ?? null,
    frozen: frozenSources(kit.ports.documentStore),
    resolver,
    directory,
    wallet,
    traffic,
    storedResolver: services.storedResolver ?? null,
    identity: services.identity ?? null,
    hosts: c.hosts,
    allowedOrigins: c.allowedOrigins,
    now,
  };
}
