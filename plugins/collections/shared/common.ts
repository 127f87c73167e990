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

/**
 * One page (`page` from 1, `limit` per page) of the documents matching `filter`, and their total.
 * `sort` takes one key or several (the store breaks ties by `_id` ascending unless `_id` is one).
 * `knownTotal`, when the caller keeps the total apart (a counter), saves the count; a page past the
 * middle is then read from the other end (the same documents, fewer skipped), in the order asked.
 */
export async function findPage<T extends Doc>(
  collection: Collection<T>,
  filter: Filter,
  sort: SortSpec | readonly SortSpec[],
  page: number,
  limit: number,
  knownTotal: number | null = null,
): Promise<{ items: T[]; total: number }> {
  const keys = _withId(Array.isArray(sort) ? sort : [sort as SortSpec]);
  const skip = (page - 1) * limit;
  if (knownTotal !== null) {
    if (skip >= knownTotal) return { items: [], total: knownTotal };
    if (skip > knownTotal / 2) return { items: await _pageFromEnd(collection, filter, keys, skip, limit, knownTotal), total: knownTotal };
    const found = await collection.find(filter, { sort: keys, skip, limit });
    return { items: found.items, total: knownTotal };
  }
  const [found, total] = await Promise.all([collection.find(filter, { sort: keys, skip, limit }), collection.count(filter)]);
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

// --- Internal helpers ---

/** The sort as the store applies it: the keys, then `_id` ascending unless `_id` is one of them. */
function _withId(sort: readonly SortSpec[]): SortSpec[] {
  return sort.some((k) => k.field === "_id") ? [...sort] : [...sort, { field: "_id", direction: 1 }];
}

/** Rows `skip`..`skip + limit` of `total` in `sort` (ending with `_id`), read in the reverse order. */
async function _pageFromEnd<T extends Doc>(collection: Collection<T>, filter: Filter, sort: readonly SortSpec[], skip: number, limit: number, total: number): Promise<T[]> {
  const end = Math.min(total, skip + limit);
  const reversed = sort.map((k): SortSpec => ({ field: k.field, direction: k.direction === 1 ? -1 : 1 }));
  const found = await collection.find(filter, { sort: reversed, skip: total - end, limit: end - skip });
  return found.items.reverse();
}
