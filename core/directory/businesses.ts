/**
 * The businesses of the directory (name, state, collections settings): a per-process snapshot
 * loaded at boot and reloaded on change notifications. They only change through the config file.
 */
import type { BusinessDoc, DirectoryStore } from "./store.ts";
import type { BusinessRecord } from "./types.ts";

export interface BusinessSnapshot {
  get(id: string): BusinessRecord | undefined;
  all(): BusinessRecord[];
  /** Reads one business again (null and dropped when it is gone). */
  load(id: string): Promise<BusinessRecord | null>;
  /** Reads every business again; those no longer stored are dropped. */
  loadAll(): Promise<void>;
}

export function createBusinessSnapshot(ds: DirectoryStore): BusinessSnapshot {
  const businesses = new Map<string, BusinessRecord>();
  return {
    get: (id) => businesses.get(id),
    all: () => [...businesses.values()],
    load: (id) => _loadBusiness(ds, businesses, id),
    loadAll: () => _loadAllBusinesses(ds, businesses),
  };
}

// --- Internal helpers ---

async function _loadBusiness(ds: DirectoryStore, businesses: Map<string, BusinessRecord>, id: string): Promise<BusinessRecord | null> {
  const doc = await ds.businesses.get(id);
  const record = doc ? _businessRecord(doc) : null;
  if (record) businesses.set(id, record);
  else businesses.delete(id);
  return record;
}

async function _loadAllBusinesses(ds: DirectoryStore, businesses: Map<string, BusinessRecord>): Promise<void> {
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
