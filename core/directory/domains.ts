/**
 * The per-process cache of domain records. An entry answers for `directory.domainCacheTtlMs`;
 * a change notification makes it stale at once and reloads it, a lost subscription (`gap`) makes
 * every entry stale. A stale entry is never answered: the caller reads the store (and fails when it
 * cannot). Each entry also keeps the latest `modeVersion` this process knows of, so a request
 * authorized under an older one is refused (`isCurrent`).
 */
import { describeError, type Logger } from "../log.ts";
import type { BusinessSnapshot } from "./businesses.ts";
import { DirectoryRecordError, MODES, checkDomainDoc, type DirectoryStore, type DomainDoc, type Mode } from "./store.ts";
import type { BusinessRecord, DirectoryChange, DomainRecord } from "./types.ts";

export interface DomainCache {
  /** The cached record while fresh (null: known not provisioned); undefined: call `load`. */
  cached(host: string): DomainRecord | null | undefined;
  /** Reads the record from the store (one read per host at a time) and caches it. */
  load(host: string): Promise<DomainRecord | null>;
  /** False when the domain's modeVersion moved since `record` was read. */
  isCurrent(record: DomainRecord): boolean;
  /** A change or gap happened: a load that started before it does not fill the cache. */
  newEpoch(): void;
  /** A domain changed: its entry (if any) goes stale, learns the new modeVersion and reloads. */
  domainChanged(change: DirectoryChange): void;
  /** A business changed: the entries of its domains go stale. */
  businessChanged(businessId: string): void;
  /** Every entry goes stale (the change notifications were interrupted). */
  staleAll(): void;
}

export interface DomainCacheOptions {
  ds: DirectoryStore;
  businesses: BusinessSnapshot;
  ttlMs: number;
  now: () => number;
  log: Logger;
}

export function createDomainCache(o: DomainCacheOptions): DomainCache {
  const c: _Cache = { ...o, domains: new Map(), loading: new Map(), epoch: 0 };
  return {
    cached(host) {
      const entry = c.domains.get(host);
      return entry !== undefined && entry.freshUntil > c.now() ? entry.record : undefined;
    },
    load: (host) => _load(c, host),
    isCurrent(record) {
      const entry = c.domains.get(record.host);
      return entry === undefined || entry.modeVersion === record.modeVersion;
    },
    newEpoch: () => void c.epoch++,
    domainChanged: (change) => _domainChanged(c, change),
    businessChanged(businessId) {
      for (const entry of c.domains.values()) if (entry.record?.businessId === businessId) entry.freshUntil = 0;
    },
    staleAll() {
      for (const entry of c.domains.values()) entry.freshUntil = 0;
    },
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

interface _Cache extends DomainCacheOptions {
  domains: Map<string, _DomainEntry>;
  loading: Map<string, Promise<DomainRecord | null>>;
  /** Bumped by every change and gap: a load that started before one does not fill the cache. */
  epoch: number;
}

function _load(c: _Cache, host: string): Promise<DomainRecord | null> {
  let pending = c.loading.get(host);
  if (pending === undefined) {
    pending = _read(c, host).finally(() => c.loading.delete(host));
    c.loading.set(host, pending);
  }
  return pending;
}

async function _read(c: _Cache, host: string): Promise<DomainRecord | null> {
  const started = c.epoch;
  const doc = await c.ds.domains.get(host);
  let record: DomainRecord | null = null;
  if (doc !== null && doc.approval !== "pending_approval") {
    checkDomainDoc(doc);
    const business = c.businesses.get(doc.businessId) ?? (await c.businesses.load(doc.businessId));
    if (!business) throw new DirectoryRecordError("directory_domains", host, "its business is not in the directory");
    record = _domainRecord(doc, business);
  }
  if (started === c.epoch) _store(c, host, record);
  return record;
}

function _store(c: _Cache, host: string, record: DomainRecord | null): void {
  const entry = c.domains.get(host);
  const modeVersion = record?.modeVersion ?? -1;
  if (entry !== undefined) {
    entry.record = record;
    entry.freshUntil = c.now() + c.ttlMs;
    entry.modeVersion = modeVersion;
    return;
  }
  if (c.domains.size >= MAX_CACHED_DOMAINS) {
    // Unknown hosts first (a flood of made-up Host headers), everything if that is not enough.
    for (const [h, e] of c.domains) if (e.record === null) c.domains.delete(h);
    if (c.domains.size >= MAX_CACHED_DOMAINS) c.domains.clear();
  }
  c.domains.set(host, { record, freshUntil: c.now() + c.ttlMs, modeVersion });
}

function _domainChanged(c: _Cache, change: DirectoryChange): void {
  const entry = c.domains.get(change.id);
  if (entry === undefined) return;
  entry.freshUntil = 0;
  if (change.removed) entry.modeVersion = -1;
  else if (change.modeVersion !== undefined && change.modeVersion > entry.modeVersion) entry.modeVersion = change.modeVersion;
  // Reloaded in the background; a load in flight may predate the change.
  c.loading.delete(change.id);
  _load(c, change.id).catch((e) => c.log.warn("directory_domain_reload_failed", { host: change.id, error: describeError(e) }));
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
