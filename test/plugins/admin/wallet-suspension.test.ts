/**
 * The operator's billing rule: a suspended wallet refuses every new sign debit with 422
 * GW_BILLING_REQUEST_REJECTED (nothing charged, the regulator not called); a sign billed before
 * answers its own same-key answer (409 already processed), not the suspension; lifting the suspension lets the same request through. Over HTTP, the full plugin
 * set on the document ledger and the regulator simulator.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ADMIN_KEY, expectProblem, invoice, startSigningHarness } from "../signing/signing-helpers.ts";

const h = await startSigningHarness();
test.after(() => h.close());

const suspend = (suspended: boolean) =>
  h.tg.call("/admin/wallets/demo/suspension", { method: "POST", host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY }, body: { suspended } });

test("a suspended wallet: new signs answer 422 GW_BILLING_REQUEST_REJECTED, nothing charged; a billed sign's key answers already processed; lifted: signs again", async () => {
  const billed = await h.sign(invoice("SUSP1"), { key: "suspension-sign-0001" });
  assert.is(billed.status, 201, await billed.clone().text());
  const before = await h.ledgerBalanced();

  const on = await suspend(true);
  assert.is(on.status, 200, await on.clone().text());
  assert.equal(await on.json(), { businessId: "demo", suspended: true });
  const wallet = await h.tg.call("/admin/wallets/demo", { host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY } });
  assert.is(((await wallet.json()) as { suspended: boolean }).suspended, true);

  const signs = h.sim.state.calls("sign");
  const refused = await expectProblem(await h.sign(invoice("SUSP2"), { key: "suspension-sign-0002" }), 422, "GW_BILLING_REQUEST_REJECTED");
  assert.is(refused.retry.strategy, "AFTER_CORRECTION");
  assert.is(h.sim.state.calls("sign"), signs, "the regulator was not called");
  assert.equal(await h.ledgerBalanced(), before, "nothing charged");
  // The billed sign's same key and attempt answers what it answers on any wallet: already processed, not the suspension.
  await expectProblem(await h.sign(invoice("SUSP1"), { key: "suspension-sign-0001" }), 409, "GW_SIGN_ATTEMPT_ALREADY_PROCESSED");

  assert.is((await suspend(false)).status, 200);
  const after = await h.sign(invoice("SUSP2"), { key: "suspension-sign-0003" });
  assert.is(after.status, 201, await after.clone().text());
});

test("the suspension route: admin only, strict body, unknown business 404", async () => {
  const noKey = await h.tg.call("/admin/wallets/demo/suspension", { method: "POST", host: "localhost", body: { suspended: true } });
  await expectProblem(noKey, 401, "GW_ADMIN_AUTHENTICATION_FAILED");
  const bad = await h.tg.call("/admin/wallets/demo/suspension", { method: "POST", host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY }, body: { suspended: "yes" } });
  await expectProblem(bad, 400, "GW_REQUEST_VALIDATION_FAILED");
  const unknown = await h.tg.call("/admin/wallets/nobody/suspension", { method: "POST", host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY }, body: { suspended: true } });
  await expectProblem(unknown, 404, "GW_OPERATION_NOT_FOUND");
});

test.run();
