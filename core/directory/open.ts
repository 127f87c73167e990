/**
 * Opens the tenant directory of one process: seeds (or syncs) the store from the config, loads the
 * businesses, subscribes to change notifications, and answers through the domain cache
 * (core/directory/domains.ts), the business snapshot (businesses.ts) and fresh key checks
 * (credentials.ts).
 */
import { randomUUID } from "node:crypto";
import type { Subscription } from "../../adapters/ports.ts";
import { describeError, type Logger } from "../log.ts";
import { createBusinessSnapshot, type BusinessSnapshot } from "./businesses.ts";
import { DIRECTORY_CHANNEL, announceChange, parseChange } from "./changes.ts";
import { createKeyChecker } from "./credentials.ts";
import { createDomainCache, type DomainCache } from "./domains.ts";
import { seedDirectory } from "./seed.ts";
import { openDirectoryStore, type DirectoryStore } from "./store.ts";
import type { DirectoryChange, DirectoryOptions, TenantDirectory } from "./types.ts";
import { webhookNotice } from "./webhook-notice.ts";
import { createWebhookEndpoints } from "./webhook-service.ts";
import { createWebhookSnapshot, type WebhookSnapshot } from "./webhook-snapshot.ts";
import type { WebhookEndpoints } from "./webhook-types.ts";

/** Seeds (or syncs) the store from the config, loads the businesses and subscribes to changes. */
export async function openDirectory(o: DirectoryOptions): Promise<TenantDirectory> {
  const now = o.now ?? Date.now;
  const { log } = o;
  const ds = openDirectoryStore(o.store);
  const origin = randomUUID();
  const collectionsHosts = new Set(o.config.collections.hosts);

  const publish = async (change: DirectoryChange): Promise<void> => {
    try {
      await announceChange(o.coordination, change, origin);
    } catch (e) {
      // The change is stored; other processes see it when their cached entry expires.
      log.warn("directory_change_not_announced", { kind: change.kind, id: change.id, error: describeError(e) });
    }
  };

  await seedDirectory(ds, o.config, { sync: o.sync ?? false, now, log, notify: publish });

  const businesses = createBusinessSnapshot(ds);
  const domains = createDomainCache({ ds, businesses, ttlMs: o.config.directory.domainCacheTtlMs, now, log });
  const keys = createKeyChecker(ds, now);
  const hooks = createWebhookSnapshot(ds.webhookEndpoints);
  const apply = (change: DirectoryChange) => _apply(domains, businesses, hooks, log, change);
  const webhooks = _webhooks(o, ds, hooks, now, async (businessId) => {
    await hooks.load(businessId);
    await publish({ kind: "webhook", id: businessId });
  });

  await businesses.loadAll();
  await hooks.loadAll();
  const subscription: Subscription = await o.coordination.subscribe(DIRECTORY_CHANNEL, {
    message(text) {
      const change = parseChange(text);
      if (change !== null && change.origin !== origin) apply(change);
    },
    gap: () => _gap(domains, businesses, hooks, log),
  });

  return {
    // The request path's calls go straight to the parts (their methods do not use `this`).
    cachedDomain: domains.cached,
    loadDomain: domains.load,
    isCurrent: domains.isCurrent,
    isCollectionsHost: (host) => collectionsHosts.has(host),
    authenticate: keys.authenticate,
    business: (id) => businesses.get(id) ?? null,
    businesses: () => businesses.all(),
    async changed(change) {
      apply(change);
      await publish(change);
    },
    webhooks,
    close: () => subscription.close(),
  };
}

// --- Internal helpers ---

/** The webhook endpoint service over the directory's store, its changes announced like the others. */
function _webhooks(o: DirectoryOptions, ds: DirectoryStore, snapshot: WebhookSnapshot, now: () => number, changed: (businessId: string) => Promise<void>): WebhookEndpoints {
  return createWebhookEndpoints(
    {
      coll: ds.webhookEndpoints,
      audit: ds.audit,
      now,
      log: o.log,
      overlapMs: o.config.webhooks.rotationOverlapMs,
      autoDisableAfterMs: o.config.webhooks.autoDisableAfterMs,
      changed,
      notice: webhookNotice(o.config, o.email, o.log),
    },
    snapshot,
  );
}

/** Brings this process's view up to a change (its own, or one announced by another process). */
function _apply(domains: DomainCache, businesses: BusinessSnapshot, hooks: WebhookSnapshot, log: Logger, change: DirectoryChange): void {
  if (change.kind === "webhook") {
    hooks.load(change.id).catch((e) => log.warn("directory_webhooks_reload_failed", { businessId: change.id, error: describeError(e) }));
    return;
  }
  domains.newEpoch();
  if (change.kind === "domain") domains.domainChanged(change);
  else if (change.kind === "business") {
    domains.businessChanged(change.id);
    businesses.load(change.id).catch((e) => log.warn("directory_business_reload_failed", { businessId: change.id, error: describeError(e) }));
  }
  // "credential": nothing to drop; every key check reads the store.
}

/** Notifications may have been lost: nothing cached is trusted until read again. */
function _gap(domains: DomainCache, businesses: BusinessSnapshot, hooks: WebhookSnapshot, log: Logger): void {
  domains.newEpoch();
  domains.staleAll();
  businesses.loadAll().catch((e) => log.warn("directory_business_reload_failed", { error: describeError(e) }));
  hooks.loadAll().catch((e) => log.warn("directory_webhooks_reload_failed", { error: describeError(e) }));
  log.warn("directory_notifications_interrupted", { detail: "cached domain records are read again" });
}
