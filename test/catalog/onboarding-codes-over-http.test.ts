/**
 * Catalog coverage over real HTTP, onboarding: every refusal of spec §7.6 the onboarding route
 * answers, read off a listening gateway's socket (the in-process suites of test/plugins/onboarding
 * cover the behaviour in depth; this file makes sure each code also crosses the wire).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createEd25519Attestor, guardAttestor } from "../../adapters/attestation/ed25519.ts";
import { createPolicyRegistry } from "../../adapters/policies.ts";
import type { IdentityAttestor } from "../../adapters/ports.ts";
import { callOverHttp } from "../support/over-http.ts";
import { credentials, expectJson, expectProblem, startOnboardingHarness } from "../plugins/onboarding/onboarding-helpers.ts";

const signer = createEd25519Attestor({ keyId: "test-attestation-1", seed: Buffer.alloc(32, 7).toString("base64") });
let attestorDown = false;
const flaky: IdentityAttestor = {
  kind: "flaky",
  publicKeyPem: () => signer.publicKeyPem(),
  attest: async (s) => {
    if (attestorDown) throw new Error("signer offline");
    return signer.attest(s);
  },
};
const attestation = guardAttestor(flaky, createPolicyRegistry().create({ dependency: "attestation", timeoutMs: 1_000 }));
const h = await startOnboardingHarness({ fixtures: "test", attestation });
await callOverHttp(h.tg);
let n = 0;
const onboard = (body: unknown) => h.post("/sub-businesses", body, `http-onboard-${String(++n).padStart(4, "0")}`);

const CASES: Array<[unknown, number, string]> = [
  [credentials("multi@test.ng", "test-password-multi"), 409, "GW_REG_BUSINESS_SELECTION_AMBIGUOUS"],
  [{ ...credentials("multi@test.ng", "test-password-multi"), tin: "20000002-0009" }, 404, "GW_REG_BUSINESS_TIN_NOT_FOUND"],
  [{ ...credentials("multi@test.ng", "test-password-multi"), tin: "20000002-0003" }, 422, "GW_REG_BUSINESS_INACTIVE"],
  [credentials("inactive@test.ng", "test-password-inactive"), 422, "GW_REG_ENTITY_INACTIVE"],
  [credentials("noactive@test.ng", "test-password-noactive"), 422, "GW_REG_ACTIVE_BUSINESS_NOT_FOUND"],
  [credentials("missing-template@test.ng", "test-password-missing"), 422, "GW_REG_IRN_TEMPLATE_MISSING"],
  [credentials("long-metadata@test.ng", "test-password-long"), 502, "GW_REG_ENTITY_METADATA_UNSUPPORTED"],
  [credentials("bad-metadata@test.ng", "test-password-bad"), 502, "GW_REG_BUSINESS_METADATA_INVALID"],
  [credentials("ghost@test.ng", "test-password-ghost"), 404, "GW_REG_ENTITY_NOT_FOUND"],
  [credentials("solo@test.ng", "not-the-password"), 422, "GW_REG_LOGIN_INVALID"],
  [credentials("nobody@test.ng", "whatever-1"), 400, "GW_REG_CREDENTIALS_REJECTED"],
  [credentials("unlinked@test.ng", "test-password-unlinked"), 403, "GW_REG_APPLICATION_NOT_LINKED"],
  [credentials("solo@test.ng", ""), 400, "GW_REG_CREDENTIALS_REQUIRED"],
];

for (const [body, status, code] of CASES) {
  test(`over HTTP: ${status} ${code}`, async () => {
    await expectProblem(await onboard(body), status, code);
  });
}

test("over HTTP: regulator outages and refusals of the deployment's own access", async () => {
  const solo = credentials("solo@test.ng", "test-password-solo");
  h.sim.faults.set("authenticate", { kind: "status", status: 503, times: 1 });
  await expectProblem(await onboard(solo), 502, "GW_REG_AUTH_UNAVAILABLE");
  h.sim.faults.set("authenticate", { kind: "renamed", times: 1 });
  await expectProblem(await onboard(solo), 502, "GW_REG_AUTH_RESPONSE_INVALID");
  h.sim.faults.set("authenticate", { kind: "reject_credentials", times: 1 });
  await expectProblem(await onboard(solo), 503, "GW_REG_VERIFICATION_UNAVAILABLE");
  h.sim.faults.set("authenticate", { kind: "rate_limit", retryAfter: 7, times: 1 });
  await expectProblem(await onboard(solo), 429, "GW_RATE_LIMIT_EXCEEDED");
});

test("over HTTP: the attestation signer is down → 503 GW_ATTESTATION_SERVICE_UNAVAILABLE; the same request then completes", async () => {
  attestorDown = true;
  const body = credentials("solo@test.ng", "test-password-solo");
  await expectProblem(await h.post("/sub-businesses", body, "http-attest-0001"), 503, "GW_ATTESTATION_SERVICE_UNAVAILABLE");
  attestorDown = false;
  const created = await expectJson(await h.post("/sub-businesses", body, "http-attest-0001"), 201);
  assert.ok(created.gatewaySubBusinessId);
});

test.after(() => h.close());
test.run();
