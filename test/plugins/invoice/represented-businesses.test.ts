/**
 * The invoice kit's one ownership check (plugins/invoice/represented-businesses.ts): the caller's
 * represented business in the caller's state, 404 when there is none, 403 when it is another
 * top-level business's; a store outage is left to the route's declaration.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { DependencyUnavailableError, type Collection } from "../../../adapters/ports.ts";
import { isGatewayError } from "../../../core/errors/gateway-error.ts";
import { businessesWithTin, openRepresentedBusinesses, ownedBusiness, subKeyOf, type SubBusinessDoc } from "../../../plugins/invoice/represented-businesses.ts";

function doc(businessId: string, state: "TEST" | "LIVE", id: string, tin: string): SubBusinessDoc {
  const at = new Date(0).toISOString();
  return {
    _id: subKeyOf(state, id),
    gatewaySubBusinessId: id,
    businessId,
    state,
    externalBusinessId: `ext-${id}`,
    identityKey: `${state}:ext-${id}`,
    identity: { entityId: "e", entityReference: "r", regulatorBusinessId: `ext-${id}`, businessName: "n", tin, irnTemplate: null, active: true },
    identityVersion: 1,
    cryptoVersion: 0,
    crypto: null,
    onboardingKey: `k-${state}-${id}`,
    createdAt: at,
    updatedAt: at,
  };
}

async function code(p: Promise<unknown>): Promise<string> {
  const e = await p.then(() => null, (err: unknown) => err);
  return isGatewayError(e) ? `${e.code}: ${e.message}` : String(e);
}

test("the caller's own business in its state; 404 elsewhere (naming the id as the caller sent it); 403 another business's", async () => {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  const subs = openRepresentedBusinesses(store);
  await subs.insert(doc("biz-a", "TEST", "sub-1", "111"));
  await subs.insert(doc("biz-b", "TEST", "sub-2", "111"));
  assert.is((await ownedBusiness(subs, { businessId: "biz-a", state: "TEST" }, "sub-1")).gatewaySubBusinessId, "sub-1");
  assert.is(await code(ownedBusiness(subs, { businessId: "biz-a", state: "LIVE" }, "sub-1")), "GW_SUB_BUSINESS_NOT_FOUND: No represented business with that x-sub-business-id.");
  assert.is(
    await code(ownedBusiness(subs, { businessId: "biz-a", state: "TEST" }, "nope", "gatewaySubBusinessId")),
    "GW_SUB_BUSINESS_NOT_FOUND: No represented business with that gatewaySubBusinessId.",
  );
  assert.is(await code(ownedBusiness(subs, { businessId: "biz-a", state: "TEST" }, "sub-2")), "GW_SUB_BUSINESS_FORBIDDEN: That represented business belongs to another top-level business.");
  assert.equal((await businessesWithTin(subs, "TEST", "111", 10)).map((d) => d.gatewaySubBusinessId).sort(), ["sub-1", "sub-2"]);
  await store.close();
});

test("a store that cannot answer throws its own error (the route declares the answer)", async () => {
  const outage = new DependencyUnavailableError("documentStore", "down");
  const subs = { get: () => Promise.reject(outage) } as unknown as Collection<SubBusinessDoc>;
  const e = await ownedBusiness(subs, { businessId: "biz-a", state: "TEST" }, "sub-1").catch((err: unknown) => err);
  assert.is(e, outage);
});

test.run();
