/**
 * Issue 18 item 2: every JSON body has a depth and a per-object member limit
 * (`limits.json.maxDepth` 64, `limits.json.maxObjectKeys` 1000), checked in one pass over the text
 * before anything parses it: 400 GW_REQUEST_VALIDATION_FAILED on gateway routes, 422 in the
 * collections envelope, never a 500, and nothing billed: on the real sign route the wallet is
 * untouched, the regulator is not called and the attempt number is not consumed.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createJsonLimitCheck } from "../../../core/validation.ts";
import { expectContractShape } from "../../support/assertions.ts";
import { BEARER_DEMO, DEMO_KEY, PASSTHROUGH, gatewayTracker } from "../../support/gateway.ts";
import { httpCall } from "../../support/raw-http.ts";
import { SUB, invoice, irnOf, startSigningHarness } from "../../plugins/signing/signing-helpers.ts";

const { start, track, closeAll } = gatewayTracker();
test.after.each(closeAll);

/** `{...doc, deep: [[[…1…]]]}` with `levels` nested arrays. */
function deepBody(doc: Record<string, unknown>, levels: number): string {
  return JSON.stringify({ ...doc, deep: "D" }).replace('"D"', "[".repeat(levels) + "1" + "]".repeat(levels));
}

/** An object with `members` keys. */
function wideObject(members: number): Record<string, number> {
  return Object.fromEntries(Array.from({ length: members }, (_, i) => [`k${i}`, i]));
}

function raw(res: { status: number; headers: Record<string, string>; text: string }) {
  return { status: res.status, headers: res.headers, body: res.text };
}

test("createJsonLimitCheck: depth and members counted structurally; brackets, colons and escaped quotes inside strings do not count", () => {
  const check = createJsonLimitCheck({ maxDepth: 3, maxObjectKeys: 2 });
  for (const ok of ['{"a":[[1]]}', '{"a":"[[[[[[:::::"}', '{"a":"\\"[[[[\\\\","b":1}', '[[["x"]]]', "1", '"[[[[["', '{"a":{"b":1,"c":2},"d":{}}'])
    check(ok);
  const fails = (text: string) => {
    try {
      check(text);
      return null;
    } catch (e) {
      return (e as { code: string; info: { violations: Array<{ pointer: string; detail: string }> } });
    }
  };
  for (const bad of ['{"a":[[[1]]]}', "[[[[]]]]", '{"a":"\\\\",  "b":[[[1]]]}']) {
    const e = fails(bad);
    assert.ok(e, bad);
    assert.is(e!.code, "GW_REQUEST_VALIDATION_FAILED");
    assert.equal(e!.info.violations, [{ location: "body", pointer: "", code: "RANGE", detail: "nesting is deeper than 3 levels" }]);
  }
  assert.match(fails('{"a":1,"b":2,"c":3}')!.info.violations[0]!.detail, "more than 2 members");
  assert.match(fails('[{"a":1},{"a":1,"b":2,"c":3}]')!.info.violations[0]!.detail, "more than 2 members");
  // Member counts are per object: two objects of two members each pass.
  check('[{"a":1,"b":2},{"a":1,"b":2}]');
  // Unterminated or malformed texts are left to JSON.parse.
  check('{"a":"unterminated');
});

test("sign with 4 250 and 6 000 levels of nesting: 400 GW_REQUEST_VALIDATION_FAILED, nothing debited, regulator not called, attempt not consumed", async () => {
  const h = track(await startSigningHarness());
  const server = await h.tg.listen();
  const signCalls = h.sim.state.calls("sign");
  for (const levels of [4_250, 6_000]) {
    const res = await httpCall(server.url, "/api/v1/invoice/sign", {
      method: "POST",
      host: PASSTHROUGH,
      headers: { "x-api-key": DEMO_KEY, "x-idempotency-key": "deep-sign-0001", "x-sub-business-id": SUB, "x-attempt-number": "1", "content-type": "application/json" },
      body: deepBody(invoice("DEEP1"), levels),
    });
    const body = expectContractShape(raw(res), "gateway", 400);
    assert.is(body.code, "GW_REQUEST_VALIDATION_FAILED");
    assert.equal(body.errors, [{ location: "body", pointer: "", code: "RANGE", detail: "nesting is deeper than 64 levels" }]);
  }
  const ledger = await h.ledgerBalanced();
  assert.is(ledger.debits, 0, "nothing debited");
  assert.is(ledger.reversals, 0);
  assert.is(h.sim.state.calls("sign"), signCalls, "the regulator was not called");
  // The same key and attempt number are still free: the corrected request signs and bills once.
  const ok = await h.sign(invoice("DEEP1"), { key: "deep-sign-0001", attempt: 1 });
  assert.is(ok.status, 201, await ok.clone().text());
  assert.is((await h.ledgerBalanced()).debits, 1);
});

test("payment-status update and validate with deep nesting: 400, never a 500", async () => {
  const h = track(await startSigningHarness());
  const server = await h.tg.listen();
  const headers = { "x-api-key": DEMO_KEY, "x-sub-business-id": SUB, "content-type": "application/json" };
  const update = await httpCall(server.url, `/api/v1/invoice/update/${irnOf("UPD1")}`, {
    method: "PATCH",
    host: PASSTHROUGH,
    headers,
    body: deepBody({ payment_status: "PAID" }, 5_000),
  });
  assert.is(expectContractShape(raw(update), "gateway", 400).code, "GW_REQUEST_VALIDATION_FAILED");
  const validate = await httpCall(server.url, "/api/v1/invoice/validate", { method: "POST", host: PASSTHROUGH, headers, body: deepBody(invoice("VAL1"), 5_000) });
  assert.is(expectContractShape(raw(validate), "gateway", 400).code, "GW_REQUEST_VALIDATION_FAILED");
  assert.not.ok(h.tg.logs.some((l) => l.event === "gateway_internal_error"), "no internal error");
});

test("collections: too deep or too wide → 422 in the collections envelope, naming the body; nothing created", async () => {
  const tg = await start();
  const server = await tg.listen();
  const link = { link_name: "T", narration: "x", fee_bearer: "MERCHANT", source_reference: "deep-link-1" };
  const auth = { authorization: `Bearer ${BEARER_DEMO}`, "content-type": "application/json" };
  const deep = await httpCall(server.url, "/api/v1/payment-link", { method: "POST", host: "localhost", headers: auth, body: deepBody(link, 5_000) });
  const body = expectContractShape(raw(deep), "collections", 422);
  assert.equal(body.errors, [{ field: "body", message: "nesting is deeper than 64 levels" }]);
  const wide = await httpCall(server.url, "/api/v1/payment-link", {
    method: "POST",
    host: "localhost",
    headers: auth,
    body: JSON.stringify({ ...link, extra: wideObject(1_001) }),
  });
  assert.equal(expectContractShape(raw(wide), "collections", 422).errors, [{ field: "body", message: "an object has more than 1000 members" }]);
  const found = await tg.call("/api/v1/payment-link/find-by-source-reference/deep-link-1", { host: "localhost", headers: { authorization: `Bearer ${BEARER_DEMO}` } });
  assert.is(found.status, 404, "nothing was created");
});

test("the limits are config: at the limit a body passes the check, one over it does not", async () => {
  const tg = await start({ patch: { limits: { json: { maxDepth: 8, maxObjectKeys: 5 } } } });
  const link = { link_name: "T", narration: "x", fee_bearer: "MERCHANT" };
  const create = (body: string) =>
    tg.call("/api/v1/payment-link", { method: "POST", host: "localhost", headers: { authorization: `Bearer ${BEARER_DEMO}`, "content-type": "application/json" }, body });
  // 7 nested arrays inside the top-level object: 8 levels. Without fee_bearer the schema answers
  // (422 naming fee_bearer): the shape check let it through.
  const atDepth = await create(deepBody({ ...link, source_reference: "lim-1" }, 7).replace('"fee_bearer":"MERCHANT",', ""));
  assert.is(atDepth.status, 422, "the schema, not the shape check, answers");
  assert.not.ok(JSON.stringify(await atDepth.json()).includes("nesting"));
  const overDepth = await create(deepBody({ source_reference: "lim-2" }, 8));
  assert.match(JSON.stringify(await overDepth.json()), "nesting is deeper than 8 levels");
  // Five members: fine; six: refused.
  const five = await create(JSON.stringify({ ...link, source_reference: "lim-3", amount: 500 }));
  assert.is(five.status, 201);
  const six = await create(JSON.stringify({ ...link, source_reference: "lim-4", amount: 500, narration2: "y" }));
  assert.match(JSON.stringify(await six.json()), "more than 5 members");
});

test.run();
