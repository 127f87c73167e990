/**
 * The tenant directory: approved domains, businesses and credentials, kept in the document store
 * (core/directory-store.ts), seeded from the config file at boot (core/directory-seed.ts) and
 * changed by operators through the Admin API without a restart. Spec §5.3: authorization is fresh,
 * configuration may be cached.
 *
 * - Credentials are never cached as answers: every key check asks the store about the key's record
 *   by its `_id` ("sha256:<hex>" of the presented key), so a revoked or expired key is refused by the
 *   next request of every process. What is derived from a record (the Principal) is kept with the
 *   record's `rev` and deadline; a later check asks the store to count the record with that `_id`,
 *   `rev`, `revoked: false` and deadline — one indexed lookup that copies nothing — and reads the
 *   record again only when that count is 0 (changed, revoked, deleted). Every writer of a key record
 *   increments its `rev`.
 * - Domain records are cached per process for `directory.domainCacheTtlMs`, and every change is
 *   pushed at once through the coordination port's publish/subscribe (Redis on the scale-out
 *   profile): a message makes the entry stale and reloads it. A lost subscription (`gap`) makes every
 *   entry stale. When a stale entry cannot be reloaded the request fails; an earlier answer is never
 *   used.
 * - Businesses (name, state, collections settings) are a snapshot loaded at boot and reloaded on
 *   change notifications: they only change through the config file.
 * - `isCurrent(record)` tells whether the domain's `modeVersion` moved since `record` was read (a
 *   mode change was approved): the dispatcher asks it right before the handler
 *   (GW_DOMAIN_APPROVAL_STATE_CHANGED).
 *
 * Failures are thrown (DependencyUnavailableError from the store, DirectoryRecordError for an
 * unreadable record); the pipeline stages turn them into the spec's 503 codes (docs/operations.md
 * "Tenant directory", docs/decisions.md "Control plane").
 */
import { hash, randomUUID } from "node:crypto";
import type { CoordinationStore, DocumentStore, Subscription } from "../adapters/ports.ts";
import type { Config } from "../config/schema.ts";
import { seedDirectory } from "./directory-seed.ts";
import {
  DirectoryRecordError,
  MODES,
  checkCredentialDoc,
  checkDomainDoc,
  openDirectoryStore,
  type Approval,
  type BusinessDoc,
  type BusinessState,
  type CredentialScheme,
  type DomainDoc,
  type Mode,
  type WebhookSettings,
} from "./directory-store.ts";
import { describeError, type Logger } from "./log.ts";

export type { Approval, BusinessState, CredentialScheme, Mode } from "./directory-store.ts";

export interface DomainRecord {
  readonly host: string;
  readonly businessId: string;
  /** null when the stored mode cannot be read (GW_TENANT_MODE_UNAVAILABLE). */
  readonly mode: Mode | null;
  readonly modeVersion: number;
  /** "approved" or "draining" (a pending domain is not provisioned). */
  readonly approval: Approval;
  /** While draining: the mode the domain will be approved in. */
  readonly pendingMode: Mode | null;
  /** The owning business's state. */
  readonly state: BusinessState;
  /** Sign fee in integer kobo. */
  readonly signFeeKobo: number;
  /** Stored mode: transmit every signed invoice automatically. */
  readonly autoTransmit: boolean;
}

export interface Principal {
  readonly scheme: CredentialScheme;
  /** Non-secret credential id (logs, quotas, audit). */
  readonly credentialId: string;
  /** Owning business; null for operator credentials. */
  readonly businessId: string | null;
  readonly ipWhitelisted: readonly string[];
}

export interface BusinessRecord {
  readonly id: string;
  readonly name: string;
  readonly state: BusinessState;
  readonly collections?: {
    readonly webhook?: WebhookSettings;
    readonly feeBearerDefault: "MERCHANT" | "CUSTOMER";
  };
  /** The invoice gateway's webhook endpoint (Stored mode events), when configured. */
  readonly gateway?: { readonly webhook: WebhookSettings };
}

/** A change written to the store, announced to every process. */
export interface DirectoryChange {
  kind: "domain" | "business" | "credential";
  id: string;
  /** Domains: the modeVersion after the change (in-flight requests of an older one are refused). */
  modeVersion?: number;
  /** The record was deleted (--sync). */
  removed?: boolean;
}

export interface TenantDirectory {
  /** The cached record of a canonical host while fresh (null: known not provisioned); undefined: call loadDomain. */
  cachedDomain(host: string): DomainRecord | null | undefined;
  /** Reads the domain record from the store and caches it. Throws when it cannot be read. */
  loadDomain(host: string): Promise<DomainRecord | null>;
  /** False when the domain's modeVersion moved since `record` was read. */
  isCurrent(record: DomainRecord): boolean;
  /** Is this a host the collections API answers on? (config `collections.hosts`) */
  isCollectionsHost(host: string): boolean;
  /**
   * The principal of a presented key: read fresh from the store; null when unknown, revoked or
   * expired. Throws (or rejects) when it cannot be read. Answered synchronously when the store
   * confirms a known key synchronously (the embedded store's `countNow`), else a promise.
   */
  authenticate(scheme: CredentialScheme, secret: string): Principal | null | Promise<Principal | null>;
  business(id: string): BusinessRecord | null;
  businesses(): readonly BusinessRecord[];
  /** After a write to the directory's store: updates this process at once and tells the others. */
  changed(change: DirectoryChange): Promise<void>;
  close(): Promise<void>;
}

export const DIRECTORY_CHANNEL = "directory";

/** Announces a change to every process's directory (`origin`: the announcing directory, which skips its own). */
export function announceChange(coordination: CoordinationStore, change: DirectoryChange, origin = ""): Promise<void> {
  return coordination.publish(DIRECTORY_CHANNEL, JSON.stringify({ ...change, origin }));
}

export function hashSecret(secret: string): string {
  return "sha256:" + hash("sha256", secret);
}

export interface DirectoryOptions {
  config: Config;
  store: DocumentStore;
  coordination: CoordinationStore;
  log: Logger;
  now?: () => number;
  /** Make the store match the config file exactly (`--sync`) instead of seeding it. */
  sync?: boolean;
}

/** Seeds (or syncs) the store from the config, loads the businesses and subscribes to changes. */
export async function openDirectory(o: DirectoryOptions): Promise<TenantDirectory> {
  const now = o.now ?? Date.now;
  const { log } = o;
  const ttlMs = o.config.directory.domainCacheTtlMs;
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

  const businesses = new Map<string, BusinessRecord>();
  const domains = new Map<string, _DomainEntry>();
  const loading = new Map<string, Promise<DomainRecord | null>>();
  /** What was derived from each valid key record, by key hash, with the record's rev and deadline. */
  const principals = new Map<string, { rev: number; expiresAt: number | null; principal: Principal }>();
  /** Bumped by every change and gap: a load that started before one does not fill the cache. */
  let epoch = 0;

  /** The principal for `scheme`, unless the key is for another scheme or has expired. */
  const verdict = (known: { expiresAt: number | null; principal: Principal }, scheme: CredentialScheme): Principal | null =>
    known.principal.scheme === scheme && (known.expiresAt === null || known.expiresAt > now()) ? known.principal : null;

  /** Reads the key record by its hash and remembers the principal built from it. */
  const read = async (id: string, scheme: CredentialScheme): Promise<Principal | null> => {
    const doc = await ds.credentials.get(id);
    if (doc === null || doc.revoked) {
      principals.delete(id);
      return null;
    }
    checkCredentialDoc(doc);
    const principal: Principal = Object.freeze({
      scheme: doc.scheme,
      credentialId: doc.credentialId,
      businessId: doc.businessId,
      ipWhitelisted: Object.freeze([...doc.ipWhitelisted]),
    });
    const entry = { rev: doc.rev, expiresAt: doc.expiresAt, principal };
    principals.set(id, entry);
    return verdict(entry, scheme);
  };

  const loadBusiness = async (id: string): Promise<BusinessRecord | null> => {
    const doc = await ds.businesses.get(id);
    const record = doc ? _businessRecord(doc) : null;
    if (record) businesses.set(id, record);
    else businesses.delete(id);
    return record;
  };

  const loadAllBusinesses = async (): Promise<void> => {
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: { items: BusinessDoc[]; nextCursor: string | null } = await ds.businesses.find({}, { limit: 1000, cursor });
      for (const doc of page.items) {
        businesses.set(doc._id, _businessRecord(doc));
        seen.add(doc._id);
      }
      cursor = page.nextCursor;
    } while (cursor !== null);
    for (const id of businesses.keys()) if (!seen.has(id)) businesses.delete(id);
  };

  const cache = (host: string, record: DomainRecord | null): void => {
    const entry = domains.get(host);
    const modeVersion = record?.modeVersion ?? -1;
    if (entry !== undefined) {
      entry.record = record;
      entry.freshUntil = now() + ttlMs;
      entry.modeVersion = modeVersion;
      return;
    }
    if (domains.size >= MAX_CACHED_DOMAINS) {
      // Unknown hosts first (a flood of made-up Host headers), everything if that is not enough.
      for (const [h, e] of domains) if (e.record === null) domains.delete(h);
      if (domains.size >= MAX_CACHED_DOMAINS) domains.clear();
    }
    domains.set(host, { record, freshUntil: now() + ttlMs, modeVersion });
  };

  const readDomain = async (host: string): Promise<DomainRecord | null> => {
    const started = epoch;
    const doc = await ds.domains.get(host);
    let record: DomainRecord | null = null;
    if (doc !== null && doc.approval !== "pending_approval") {
      checkDomainDoc(doc);
      const business = businesses.get(doc.businessId) ?? (await loadBusiness(doc.businessId));
      if (!business) throw new DirectoryRecordError("directory_domains", host, "its business is not in the directory");
      record = _domainRecord(doc, business);
    }
    if (started === epoch) cache(host, record);
    return record;
  };

  const loadDomain = (host: string): Promise<DomainRecord | null> => {
    let pending = loading.get(host);
    if (pending === undefined) {
      pending = readDomain(host).finally(() => loading.delete(host));
      loading.set(host, pending);
    }
    return pending;
  };

  const warm = (host: string): void => {
    loading.delete(host); // a load in flight may predate the change
    loadDomain(host).catch((e) => log.warn("directory_domain_reload_failed", { host, error: describeError(e) }));
  };

  const apply = (change: DirectoryChange): void => {
    epoch++;
    if (change.kind === "domain") {
      const entry = domains.get(change.id);
      if (entry === undefined) return;
      entry.freshUntil = 0;
      if (change.removed) entry.modeVersion = -1;
      else if (change.modeVersion !== undefined && change.modeVersion > entry.modeVersion) entry.modeVersion = change.modeVersion;
      warm(change.id);
    } else if (change.kind === "business") {
      for (const entry of domains.values()) if (entry.record?.businessId === change.id) entry.freshUntil = 0;
      loadBusiness(change.id).catch((e) => log.warn("directory_business_reload_failed", { businessId: change.id, error: describeError(e) }));
    }
    // "credential": nothing to drop; every key check reads the store.
  };

  await loadAllBusinesses();
  const subscription: Subscription = await o.coordination.subscribe(DIRECTORY_CHANNEL, {
    message(text) {
      const change = _parseChange(text);
      if (change !== null && change.origin !== origin) apply(change);
    },
    gap() {
      epoch++;
      for (const entry of domains.values()) entry.freshUntil = 0;
      loadAllBusinesses().catch((e) => log.warn("directory_business_reload_failed", { error: describeError(e) }));
      log.warn("directory_notifications_interrupted", { detail: "cached domain records are read again" });
    },
  });

  return {
    cachedDomain(host) {
      const entry = domains.get(host);
      return entry !== undefined && entry.freshUntil > now() ? entry.record : undefined;
    },

    loadDomain,

    isCurrent(record) {
      const entry = domains.get(record.host);
      return entry === undefined || entry.modeVersion === record.modeVersion;
    },

    isCollectionsHost: (host) => collectionsHosts.has(host),

    authenticate(scheme, secret) {
      const id = hashSecret(secret);
      const known = principals.get(id);
      // Fresh, and cheap: the store confirms the record is still the one the principal was built
      // from (same rev, not revoked, same deadline), by a count on its _id, without copying it; the
      // embedded store answers that synchronously (no promise on the hot path).
      if (known !== undefined) {
        const filter = { _id: id, rev: known.rev, revoked: false, expiresAt: known.expiresAt };
        if (ds.credentials.countNow) return ds.credentials.countNow(filter) === 1 ? verdict(known, scheme) : read(id, scheme);
        return ds.credentials.count(filter).then((n) => (n === 1 ? verdict(known, scheme) : read(id, scheme)));
      }
      return read(id, scheme);
    },

    business: (id) => businesses.get(id) ?? null,
    businesses: () => [...businesses.values()],

    async changed(change) {
      apply(change);
      await publish(change);
    },

    close: () => subscription.close(),
  };
}

// --- Internal helpers ---

/** Beyond this many cached hosts, the unknown ones are dropped first. */
const MAX_CACHED_DOMAINS = 10_000;

interface _DomainEntry {
  record: DomainRecord | null;
  /** Epoch ms until which the entry answers without a store read (0: stale). */
  freshUntil: number;
  /** The latest modeVersion this process knows of (from a read or a change message); -1: none. */
  modeVersion: number;
}

function _domainRecord(doc: DomainDoc, business: BusinessRecord): DomainRecord {
  return Object.freeze({
    host: doc._id,
    businessId: doc.businessId,
    mode: MODES.includes(doc.mode) ? doc.mode : null,
    modeVersion: doc.modeVersion,
    approval: doc.approval,
    pendingMode: MODES.includes(doc.pendingMode as Mode) ? doc.pendingMode : null,
    state: business.state,
    signFeeKobo: doc.signFeeKobo,
    autoTransmit: doc.autoTransmit,
  });
}

function _businessRecord(doc: BusinessDoc): BusinessRecord {
  const c = doc.collections;
  return Object.freeze({
    id: doc._id,
    name: doc.name,
    state: doc.state,
    ...(c ? { collections: { feeBearerDefault: c.feeBearerDefault, ...(c.webhook ? { webhook: c.webhook } : {}) } } : {}),
    ...(doc.gatewayWebhook ? { gateway: { webhook: doc.gatewayWebhook } } : {}),
  });
}

function _parseChange(text: string): (DirectoryChange & { origin?: string }) | null {
  try {
    const c = JSON.parse(text) as DirectoryChange & { origin?: string };
    return (c.kind === "domain" || c.kind === "business" || c.kind === "credential") && typeof c.id === "string" ? c : null;
  } catch {
    return null;
  }
}
