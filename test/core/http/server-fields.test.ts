/**
 * Issue 18 item 7: spec §1.2 rule 1 on every channel. A server-managed field (mode, business state,
 * parent business, domain, wallet, fee) sent as a query parameter or a header is rejected with
 * GW_REQUEST_SERVER_FIELD_SUPPLIED like a body field, on the real gateway routes, before anything is
 * billed. And the real sign route is in the sign quota class.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { expectProblem } from "../../support/assertions.ts";
import { BEARER_DEMO, DEMO_KEY, PASSTHROUGH, gatewayTracker } from "../../support/gateway.ts";
import { httpCall } from "../../support/raw-http.ts";
import { SUB, invoice, startSigningHarness } from "../../plugins/signing/signing-helpers.ts";

const { start, track, closeAll } = gatewayTracker();
test.after.each(closeAll);

const where = (body: Record<string, any>) =>
  (body.errors as Array<{ location: string; field?: string; pointer?: string }>).map((e) => `${e.location}:${e.field ?? e.pointer}`).sort();

test("?mode=stored, ?Wallet=…, ?signFee=… on gateway reads: 400 GW_REQUEST_SERVER_FIELD_SUPPLIED naming each query parameter", async () => {
  const tg = await start();
  for (const path of ["/sub-businesses?mode=stored", "/api/v1/invoice/resources/currencies?Wallet=w1&signFee=0", "/sub-businesses?limit=5&business_state=LIVE"]) {
    const res = await tg.call(path, { headers: { "x-api-key": DEMO_KEY } });
    const body = await expectProblem(res, 400, "GW_REQUEST_SERVER_FIELD_SUPPLIED", "AFTER_CORRECTION");
    const names = [...new URLSearchParams(path.split("?")[1]).keys()].filter((k) => k !== "limit");
    assert.equal(where(body), names.map((n) => `query:${n}`).sort(), path);
    for (const e of body.errors) assert.is(e.code, "IMMUTABLE_FIELD");
  }
  // Ordinary query parameters are not server-managed.
  assert.is((await tg.call("/sub-businesses?limit=5", { headers: { "x-api-key": DEMO_KEY } })).status, 200);
});

test("x-wallet, X-Sign-Fee, mode, x-business-state, x-parent-business-id headers: rejected the same way (real HTTP)", async () => {
  const tg = await start();
  const server = await tg.listen();
  const res = await httpCall(server.url, "/sub-businesses", {
    host: PASSTHROUGH,
    headers: { "x-api-key": DEMO_KEY, "x-wallet": "w-1", "X-Sign-Fee": "0.00", mode: "stored", "x-business-state": "LIVE", "x-parent-business-id": "other" },
  });
  assert.is(res.status, 400);
  const body = res.json() as { code: string; errors: Array<{ location: string; field?: string }> };
  assert.is(body.code, "GW_REQUEST_SERVER_FIELD_SUPPLIED");
  assert.equal(where(body), ["header:mode", "header:x-business-state", "header:x-parent-business-id", "header:x-sign-fee", "header:x-wallet"]);
  // Headers that merely contain such a word are not server-managed (a browser's sec-fetch-mode).
  const fine = await httpCall(server.url, "/sub-businesses", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY, "sec-fetch-mode": "cors", "x-wallet-app": "1" } });
  assert.is(fine.status, 200);
});

test("sign with ?mode=stored or x-fee: refused before billing (no debit, regulator not called); the collections API is not a gateway route", async () => {
  const h = track(await startSigningHarness());
  const calls = h.sim.state.calls("sign");
  const viaQuery = await h.call("POST", "/api/v1/invoice/sign?mode=stored", {
    sub: SUB,
    headers: { "x-idempotency-key": "srv-field-0001" },
    body: invoice("SRV1"),
  });
  await expectProblem(viaQuery, 400, "GW_REQUEST_SERVER_FIELD_SUPPLIED", "AFTER_CORRECTION");
  const viaHeader = await h.call("POST", "/api/v1/invoice/sign", {
    sub: SUB,
    headers: { "x-idempotency-key": "srv-field-0002", "x-fee": "0.00" },
    body: invoice("SRV1"),
  });
  await expectProblem(viaHeader, 400, "GW_REQUEST_SERVER_FIELD_SUPPLIED", "AFTER_CORRECTION");
  assert.is((await h.ledgerBalanced()).debits, 0);
  assert.is(h.sim.state.calls("sign"), calls);
  // Collections filters are its own API (spec §1.2 is the invoice gateway's): ?status=active stays valid.
  const list = await h.tg.call("/api/v1/payment-link?status=active", { host: "localhost", headers: { authorization: `Bearer ${BEARER_DEMO}` } });
  assert.is(list.status, 200);
});

test("the real /api/v1/invoice/sign route is in the sign quota class: over limits.quotas.sign → 429 with Retry-After, not billed; other classes unaffected", async () => {
  const h = track(
    await startSigningHarness({
      patch: { limits: { quotas: { sign: { limit: 2, windowSeconds: 60 }, management: { limit: 1000, windowSeconds: 60 }, default: { limit: 1000, windowSeconds: 60 } } } },
    }),
  );
  assert.is((await h.sign(invoice("Q1"), { key: "quota-sign-0001" })).status, 201);
  assert.is((await h.sign(invoice("Q2"), { key: "quota-sign-0002" })).status, 201);
  const over = await h.sign(invoice("Q3"), { key: "quota-sign-0003" });
  const body = await expectProblem(over, 429, "GW_RATE_LIMIT_EXCEEDED", "BACKOFF");
  assert.ok(Number(over.headers.get("retry-after")) >= 1, "Retry-After");
  assert.is(body.retry.sameIdempotencyKey, true);
  assert.is((await h.ledgerBalanced()).debits, 2, "the refused sign is not billed");
  // The default and management classes have their own budgets.
  assert.is((await h.call("GET", "/sub-businesses")).status, 200);
  assert.is((await h.call("GET", "/api/v1/invoice/resources/currencies", { sub: SUB })).status, 200);
});

test.run();
