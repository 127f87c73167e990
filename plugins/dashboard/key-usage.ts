/**
 * When each of a business's keys was last used, read from the request log (core/request-log/): the
 * business's newest `RECENT_REQUESTS` entries (the list without filters), the newest time per
 * credential id. A bounded read, so the keys page costs the same with a million log rows; a key
 * not among them is "not in the recent requests" rather than a guess. The log keeps 7 days.
 */
import type { DocumentStore } from "../../adapters/ports.ts";
import { createRequestLog } from "../../core/request-log/query.ts";

/** How many of the business's newest requests the keys page reads. */
export const RECENT_REQUESTS = 250;

/** Credential id → epoch ms of its newest request among the business's recent ones. */
export async function recentKeyUse(store: DocumentStore, businessId: string): Promise<Map<string, number>> {
  const page = await createRequestLog(store).list(businessId, {}, { limit: RECENT_REQUESTS });
  const last = new Map<string, number>();
  for (const e of page.items) if (e.credentialId && !last.has(e.credentialId)) last.set(e.credentialId, e.at);
  return last;
}
