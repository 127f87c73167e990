/**
 * A protected identity change awaiting the operator (entity ID, business ID or TIN drift found by
 * reverification) stops invoices for that represented business, over real HTTP: Pass-through sign
 * and Stored intake answer 409 GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED before any debit or
 * regulator call; once the review is decided, invoices go on.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ADMIN_KEY, PASSTHROUGH, SUB, expectProblem, invoice, startSigningHarness } from "./signing-helpers.ts";
import { demoEntity } from "../onboarding/onboarding-helpers.ts";

const h = await startSigningHarness();
test.after(() => h.close());
const signCalls = () => h.sim.state.calls("sign");
const CREDS = { regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } };

test("pending protected migration → sign and intake 409 GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED, nothing billed; after the decision they go on", async () => {
  assert.is((await h.sign(invoice("PM1"), { key: "pm1-key-0001" })).status, 201);
  h.sim.faults.set("entity", { ...demoEntity({ tin: "12345678-0099" }), times: 1 });
  const rv = await h.call("POST", `/sub-businesses/${SUB}/identity-reverification`, { body: CREDS, headers: { "x-idempotency-key": "pm-reverify-0001" } });
  const review = (await rv.json()) as { status: string; reviewId: string; requiresProtectedMigration: boolean };
  assert.is(rv.status, 200, JSON.stringify(review));
  assert.is(review.requiresProtectedMigration, true);

  const before = await h.ledgerBalanced();
  const calls = signCalls();
  const p = await expectProblem(await h.sign(invoice("PM2"), { key: "pm2-key-0001" }), 409, "GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED");
  assert.is(p.retry.strategy, "AFTER_CORRECTION");
  // The Stored demo host is another business's (one approved domain per business): the Stored intake
  // is tried on this business's own domain, switched to Stored mode (a mode change carries the mappings).
  await switchMode("stored", 1);
  const intake = await h.call("POST", "/api/v1/invoice/sign", { host: PASSTHROUGH, sub: SUB, body: invoice("PM3"), headers: { "x-idempotency-key": "pm3-intake-0001" } });
  await expectProblem(intake, 409, "GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED");
  await switchMode("passthrough", 2);
  assert.is(signCalls(), calls, "the regulator was not called");
  assert.is((await h.ledgerBalanced()).debits, before.debits, "nothing billed");

  const decided = await h.tg.call(`/admin/sub-businesses/${SUB}/identity-reviews/${review.reviewId}/decision`, {
    method: "POST",
    host: "localhost",
    headers: { "x-admin-api-key": ADMIN_KEY, "x-idempotency-key": "pm-decide-0001" },
    body: { decision: "reject" },
  });
  assert.is(decided.status, 200, await decided.clone().text());
  assert.is((await h.sign(invoice("PM2"), { key: "pm2-key-0002" })).status, 201, "signing goes on once nothing awaits a migration");
});

/** A mode change of the demo's Pass-through domain, drained and approved at once (nothing in flight). */
async function switchMode(mode: "passthrough" | "stored", n: number): Promise<void> {
  const admin = (path: string, body: unknown, key: string) =>
    h.tg.call(path, { method: "POST", host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY, "x-idempotency-key": key }, body });
  const change = await admin(`/admin/domains/${PASSTHROUGH}/mode-change`, { mode }, `pm-mode-000${n}`);
  assert.is(change.status, 200, await change.clone().text());
  const approve = await admin(`/admin/domains/${PASSTHROUGH}/approval`, {}, `pm-approve-000${n}`);
  assert.is(approve.status, 200, await approve.clone().text());
}

test.run();
