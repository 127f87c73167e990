/**
 * This process's view of every business's enabled webhook endpoints: loaded at boot, reloaded per
 * business on a "webhook" change notification (every process) and whole after lost notifications.
 * The event producers read it synchronously to know where an event goes; attempts read the
 * endpoint's current state from the store (webhook-health.ts).
 */
import type { Collection } from "../../adapters/ports.ts";
import type { WebhookEndpointDoc } from "./webhook-store.ts";
import type { WebhookService, WebhookTarget } from "./webhook-types.ts";

export interface WebhookSnapshot {
  targets(businessId: string, service: WebhookService): readonly WebhookTarget[];
  load(businessId: string): Promise<void>;
  loadAll(): Promise<void>;
}

export function createWebhookSnapshot(coll: Collection<WebhookEndpointDoc>): WebhookSnapshot {
  const byBusiness = new Map<string, readonly WebhookEndpointDoc[]>();
  const none: readonly WebhookTarget[] = Object.freeze([]);
  return {
    targets(businessId, service) {
      const docs = byBusiness.get(businessId);
      if (!docs) return none;
      return docs.filter((d) => d.enabled && d.services.includes(service)).map((d) => ({ id: d._id, url: d.url }));
    },
    async load(businessId) {
      const docs = await _all(coll, { businessId });
      if (docs.length === 0) byBusiness.delete(businessId);
      else byBusiness.set(businessId, docs);
    },
    async loadAll() {
      const docs = await _all(coll, {});
      const grouped = new Map<string, WebhookEndpointDoc[]>();
      for (const d of docs) grouped.set(d.businessId, [...(grouped.get(d.businessId) ?? []), d]);
      byBusiness.clear();
      for (const [id, list] of grouped) byBusiness.set(id, list);
    },
  };
}

// --- Internal helpers ---

async function _all(coll: Collection<WebhookEndpointDoc>, filter: Record<string, unknown>): Promise<WebhookEndpointDoc[]> {
  const out: WebhookEndpointDoc[] = [];
  let cursor: string | null = null;
  do {
    const page: { items: WebhookEndpointDoc[]; nextCursor: string | null } = await coll.find(filter, {
      sort: [{ field: "businessId", direction: 1 }, { field: "createdAt", direction: 1 }],
      limit: 1000,
      cursor,
    });
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}
