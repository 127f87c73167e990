/**
 * The represented businesses as the merchant dashboard reads them (REPRESENTED_BUSINESS_READS): the
 * same service reads as `GET /sub-businesses`, `GET /sub-businesses/{id}` and `/identity-versions`,
 * with the list route's query schema, answering the routes' own views.
 */
import { validateInput } from "../../core/validation.ts";
import type { ApiView, RepresentedBusinessReads } from "../invoice/dashboard-offers.ts";
import { ListQuery, type ListInput } from "./schemas.ts";
import type { OnboardingService } from "./service.ts";

export function representedBusinessReads(service: OnboardingService): RepresentedBusinessReads {
  return {
    async list(caller, query) {
      const q = validateInput(ListQuery, _strings(query), "query") as ListInput;
      const page = await service.list(caller, q);
      return { data: page.data as unknown as ApiView[], nextCursor: page.nextCursor };
    },
    get: async (caller, id) => (await service.get(caller, id)) as unknown as ApiView,
    identityVersions: async (caller, id) => (await service.identityVersions(caller, id)) as unknown as ApiView,
  };
}

// --- Internal helpers ---

/** The query as a query string sends it (the schema reads text). */
function _strings(query: { limit?: number; cursor?: string }): Record<string, string> {
  const out: Record<string, string> = {};
  if (query.limit !== undefined) out.limit = String(query.limit);
  if (query.cursor) out.cursor = query.cursor;
  return out;
}
