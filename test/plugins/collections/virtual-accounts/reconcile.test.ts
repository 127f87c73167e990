/**
 * Reconciliation (spec §4 "Reconciliation rule"): the IN_FLOW_SUCCESS_EVENT a real receiver got is
 * matched by `recipient.accountNumber` against the business's virtual accounts — with
 * `reconcileInflow` and over HTTP with the list's `accountNumber` filter.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { reconcileInflow } from "../../../../plugins/collections/virtual-accounts/reconcile.ts";
import { BEARER_HOOKED, eventually, startCollections, startReceiver } from "../payment-links/collections-helpers.ts";
import { HOUR, createAccount, deposit, fmt, list } from "./va-helpers.ts";

const receiver = await startReceiver();
const h = await startCollections({ webhookUrl: receiver.url });
const K = BEARER_HOOKED;

test("the delivered event reconciles to the credited account (helper and HTTP)", async () => {
  const decoy = await createAccount(h, { account_type: "multi_use", account_name: "Decoy" }, K);
  const a = await createAccount(h, { account_type: "single_use", account_name: "Invoice 77", amount: 1234.5, expires_at: fmt(h.clock.now() + HOUR) }, K);
  const d = (await deposit(h, a.accountNumber, 1234.5, K)).data;
  assert.is(d.status, "settled");
  await h.outbox.deliverDue();
  await eventually(() => receiver.received.some((r) => r.body.includes(d.sessionId)), 3_000, "delivery");
  const got = receiver.received.find((r) => r.body.includes(d.sessionId))!;
  assert.ok(got.valid);
  const event = JSON.parse(got.body) as { data: { recipient: { accountNumber: string } } };

  const r = await reconcileInflow(event, h.store, "hooked");
  assert.ok(r.matched);
  if (!r.matched) return;
  assert.is(r.account._id, a.id);
  assert.is(r.account.reference, a.reference);
  assert.is(r.account.sourceReference, a.sourceReference);
  assert.is.not(r.account._id, decoy.id);
  assert.is(r.amountKobo, 123_450);
  assert.is(r.sessionId, d.sessionId);
  assert.is(r.nameMatches, true);

  const http = await list(h, `?accountNumber=${event.data.recipient.accountNumber}`, K);
  assert.equal(http.data.map((x) => x.reference), [a.reference]);
  assert.is(http.data[0]!.status, "expired", "the single_use account was fulfilled");
});

test("no match: another business, not an inflow event, no recipient account number", async () => {
  const a = await createAccount(h, {}, K);
  const event = { event_type: "IN_FLOW_SUCCESS_EVENT", data: { recipient: { accountName: a.accountName, accountNumber: a.accountNumber }, amount: 1 } };
  assert.equal(await reconcileInflow(event, h.store, "demo"), { matched: false, reason: "unknown_account" });
  assert.equal(await reconcileInflow({ ...event, event_type: "CHECKOUT_COMPLETED" }, h.store, "hooked"), { matched: false, reason: "not_an_inflow_event" });
  assert.equal(await reconcileInflow("not json", h.store, "hooked"), { matched: false, reason: "not_an_inflow_event" });
  assert.equal(await reconcileInflow({ event_type: "IN_FLOW_SUCCESS_EVENT", data: {} }, h.store, "hooked"), { matched: false, reason: "no_recipient_account_number" });
  const renamed = { ...event, data: { ...event.data, recipient: { accountName: "Someone else", accountNumber: a.accountNumber } } };
  const r = await reconcileInflow(renamed, h.store, "hooked");
  assert.ok(r.matched && r.nameMatches === false, "the number decides; the name is informational");
});

test.after(async () => {
  await h.close();
  await receiver.close();
});
test.run();
