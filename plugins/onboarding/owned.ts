/**
 * The ownership check of the customer routes: the caller's represented business, looked up in the
 * caller's state. 404 when there is none, 403 when it belongs to another top-level business. One
 * function on purpose, so the invoice domain kit's shared check can replace it in one place.
 */
import { gwError } from "../../core/errors/gateway-error.ts";
import type { CallerScope } from "./env.ts";
import { subKeyOf, type OnboardingStore, type SubBusinessDoc } from "./store.ts";

export async function owned(store: OnboardingStore, caller: CallerScope, gatewaySubBusinessId: string): Promise<SubBusinessDoc> {
  const doc = await store.subBusinesses.get(subKeyOf(caller.state, gatewaySubBusinessId));
  if (!doc) throw gwError("GW_SUB_BUSINESS_NOT_FOUND", { detail: "No represented business with that gatewaySubBusinessId." });
  if (doc.businessId !== caller.businessId)
    throw gwError("GW_SUB_BUSINESS_FORBIDDEN", { detail: "That represented business belongs to another top-level business." });
  return doc;
}
