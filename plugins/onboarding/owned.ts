/**
 * The ownership check of the customer routes: the caller's represented business, looked up in the
 * caller's state (the invoice kit's one check: 404 when there is none, 403 when it belongs to
 * another top-level business).
 */
import { ownedBusiness, type SubBusinessDoc } from "../invoice/represented-businesses.ts";
import type { CallerScope } from "./env.ts";
import type { OnboardingStore } from "./store.ts";

export function owned(store: OnboardingStore, caller: CallerScope, gatewaySubBusinessId: string): Promise<SubBusinessDoc> {
  return ownedBusiness(store.subBusinesses, caller, gatewaySubBusinessId, "gatewaySubBusinessId");
}
