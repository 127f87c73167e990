/**
 * A store outage inside a collections API handler answers 503 in the collections envelope, never a
 * 500 (found by the topology test, issue 15: a deposit and a wallet read during a hung store). The
 * checkout pages keep their own HTML 503.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUnstorageDocumentStore } from "../../adapters/document-store/unstorage.ts";
import { withStoreFaults } from "../support/store-faults.ts";
import { startCollections, type CollectionsHarness } from "./collections-helpers.ts";
import { body, createAccount, depositBody } from "../virtual-accounts/va-helpers.ts";

/** Collections whose every call fails while `down` holds them. */
const down = new Set<string>();
let h: CollectionsHarness;

test.before(async () => {
  h = await startCollections({
    store: async (clock) => withStoreFaults(await createUnstorageDocumentStore({ driver: "memory", clock }), (collection) => (down.has(collection) ? "before" : null)),
  });
});

test.after(async () => {
  await h.close();
});

test("a deposit whose store cannot answer is a 503 envelope with a request id; the next one settles", async () => {
  const account = await createAccount(h);
  down.add("collections_va_deposits");
  const res = await h.api("/api/v1/sandbox/virtual-account/deposit", { body: depositBody(account.accountNumber, 2_500) });
  down.clear();
  assert.is(res.status, 503);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const envelope = await body(res);
  assert.is(envelope.statusCode, 503);
  assert.is(envelope.requestId, res.headers.get("x-request-id"));
  assert.match(envelope.message, /Check its result before sending it again/);
  assert.not.match(JSON.stringify(envelope), /injected|store failure|Error/, "no internals");
  assert.ok(h.tg.logs.some((l) => l.event === "collections_dependency_unavailable" && l.requestId === envelope.requestId), "operators see the cause");
  assert.not.ok(h.tg.logs.some((l) => l.event === "gateway_internal_error"), "not an internal error");
  const again = await h.api("/api/v1/sandbox/virtual-account/deposit", { body: depositBody(account.accountNumber, 2_500) });
  assert.is(again.status, 201);
});

test("a wallet read whose store cannot answer is a 503 envelope", async () => {
  down.add("collections_wallet_entries");
  const res = await h.api("/api/v1/balances/transactions");
  down.clear();
  assert.is(res.status, 503);
  assert.is((await body(res)).statusCode, 503);
  assert.is((await h.api("/api/v1/balances/transactions")).status, 200);
});

test.run();
