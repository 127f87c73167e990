/**
 * Small pieces every part of the collections plugin uses: generated references, the business's
 * webhook endpoint, page/limit lists over a collection, and the periodic background worker.
 */
import { randomBytes } from "node:crypto";
import type { Collection, Doc, Filter, SortSpec, WebhookEndpoint } from "../../../adapters/ports.ts";
import type { TenantDirectory } from "../../../core/directory.ts";
import type { Worker } from "../../../core/plugin.ts";

const _ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** `prefix` + 16 characters of an unambiguous alphabet (80 bits of randomness), e.g. `PL-…`. */
export function newReference(prefix: string): string {
  let out = prefix;
  for (const b of randomBytes(16)) out += _ALPHABET[b & 31];
  return out;
}

/**
 * The first of the business's enabled endpoints for collections events, or null when it has none.
 * Events go to every such endpoint through core/webhook-events.ts `enqueueWebhookEvent`.
 */
export function webhookEndpointOf(directory: TenantDirectory, businessId: string): WebhookEndpoint | null {
  const target = directory.webhooks.targets(businessId, "collections")[0];
  return target ? { id: target.id, url: target.url } : null;
}

/** One page (`page` from 1, `limit` per page) of the documents matching `filter`, and their total. */
export async function findPage<T extends Doc>(
  collection: Collection<T>,
  filter: Filter,
  sort: SortSpec,
  page: number,
  limit: number,
): Promise<{ items: T[]; total: number }> {
  const [found, total] = await Promise.all([
    collection.find(filter, { sort: [sort], skip: (page - 1) * limit, limit }),
    collection.count(filter),
  ]);
  return { items: found.items, total };
}

/** A worker that runs `run` every `intervalMs` (never two runs at once); safe in every process. */
export function intervalWorker(name: string, intervalMs: number, run: () => Promise<void>): Worker {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  return {
    name,
    start() {
      if (timer) return; // startWorkers may run more than once (tests listen after composing)
      timer = setInterval(() => {
        running ??= run().finally(() => (running = null));
      }, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
