/**
 * A Pass-through validate or sign the regulator rejects carries the fields it named in `errors`
 * (location body, a JSON Pointer when known, the gateway's own fixed words, never the rejected
 * values), over real HTTP and the regulator simulator's schema checks.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { SUB, expectProblem, invoice, startSigningHarness } from "./signing-helpers.ts";

const h = await startSigningHarness();
test.after(() => h.close());

/** A document the gateway's own checks pass and the regulator's schema refuses twice. */
function broken(no: string): Record<string, unknown> {
  const doc = invoice(no, { invoice_type_code: "ZZ-SECRET-VALUE", issue_time: "99:99:99" }) as Record<string, unknown>;
  delete doc.tax_currency_code;
  return doc;
}

const pointers = (p: { errors: { location: string; pointer?: string; code: string; detail: string }[] }) =>
  p.errors.map((e) => [e.location, e.pointer ?? null, e.code]).sort();

test("validate rejected by the regulator → 400 GW_REQUEST_VALIDATION_FAILED with the regulator's violations in errors, no echoed value", async () => {
  const res = await h.call("POST", "/api/v1/invoice/validate", { body: broken("RV1"), sub: SUB });
  const text = await res.clone().text();
  const p = await expectProblem(res, 400, "GW_REQUEST_VALIDATION_FAILED");
  assert.equal(pointers(p), [
    ["body", "/invoice_type_code", "FORMAT"],
    ["body", "/issue_time", "FORMAT"],
    ["body", "/tax_currency_code", "REQUIRED"],
  ]);
  assert.not.ok(text.includes("ZZ-SECRET-VALUE") || text.includes("99:99:99"), "no rejected value echoed");
});

test("sign rejected by the regulator → 422 GW_SIGN_REJECTED (fee reversed) with the violations in errors; the same-key replay repeats them", async () => {
  const before = await h.ledgerBalanced();
  const res = await h.sign(broken("RV2"), { key: "rv2-key-0001" });
  const text = await res.clone().text();
  const p = await expectProblem(res, 422, "GW_SIGN_REJECTED");
  assert.ok(pointers(p).some(([, ptr, code]) => ptr === "/tax_currency_code" && code === "REQUIRED"), text);
  assert.not.ok(text.includes("ZZ-SECRET-VALUE"), "no rejected value echoed");
  const after = await h.ledgerBalanced();
  assert.is(after.balanceKobo, before.balanceKobo, "the fee went back");
  const again = await expectProblem(await h.sign(broken("RV2"), { key: "rv2-key-0001" }), 422, "GW_SIGN_REJECTED");
  assert.equal(pointers(again), pointers(p));
});

test.run();
