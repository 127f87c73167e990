/**
 * Onboarding records a signed attestation of the identity it verified (the attestation port: an
 * in-process Ed25519 signer behind its resilience policy). The signer's outage answers 503
 * GW_ATTESTATION_SERVICE_UNAVAILABLE with nothing stored; the same request again then completes,
 * and the recorded attestation verifies against the attestor's public key.
 */
import { verify } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createEd25519Attestor, guardAttestor } from "../../../adapters/attestation/ed25519.ts";
import { createPolicyRegistry } from "../../../adapters/policies.ts";
import type { IdentityAttestor, SignedAttestation } from "../../../adapters/ports.ts";
import { REPRESENTED_BUSINESSES_COLLECTION } from "../../../plugins/invoice/represented-businesses.ts";
import { TAXPAYER, credentials, expectJson, expectProblem, startOnboardingHarness } from "./onboarding-helpers.ts";

const signer = createEd25519Attestor({ keyId: "test-attestation-1", seed: Buffer.alloc(32, 7).toString("base64") });
let down = false;
const flaky: IdentityAttestor = {
  kind: "flaky",
  publicKeyPem: () => signer.publicKeyPem(),
  attest: async (s) => {
    if (down) throw new Error("signer offline");
    return signer.attest(s);
  },
};
const attestation = guardAttestor(flaky, createPolicyRegistry().create({ dependency: "attestation", timeoutMs: 1_000 }));
const h = await startOnboardingHarness({ attestation });
test.after(() => h.close());

test("the attestation signer is down: 503 GW_ATTESTATION_SERVICE_UNAVAILABLE, same key; nothing stored; then the same request completes with a verifiable attestation", async () => {
  down = true;
  const body = credentials(TAXPAYER.email, TAXPAYER.password);
  const p = await expectProblem(await h.post("/sub-businesses", body, "attest-onboard-0001"), 503, "GW_ATTESTATION_SERVICE_UNAVAILABLE");
  assert.is(p.retry.strategy, "SAME_IDEMPOTENCY_KEY");
  assert.is(p.retry.sameIdempotencyKey, true);
  assert.not.match(JSON.stringify(p), /signer offline/, "the cause is not answered");
  assert.is(await h.store.collection(REPRESENTED_BUSINESSES_COLLECTION).count({}), 0, "nothing onboarded");

  down = false;
  const created = await expectJson(await h.post("/sub-businesses", body, "attest-onboard-0001"), 201);
  const doc = (await h.store.collection<{ _id: string; gatewaySubBusinessId: string; attestation?: SignedAttestation }>(REPRESENTED_BUSINESSES_COLLECTION).find({})).items[0]!;
  assert.is(doc.gatewaySubBusinessId, created.gatewaySubBusinessId ?? doc.gatewaySubBusinessId);
  const a = doc.attestation!;
  assert.ok(a, "an attestation is recorded");
  assert.is(a.algorithm, "Ed25519");
  assert.is(a.keyId, "test-attestation-1");
  assert.ok(verify(null, Buffer.from(a.payload, "utf8"), signer.publicKeyPem(), Buffer.from(a.signature, "base64url")), "the signature verifies");
  const statement = JSON.parse(a.payload) as Record<string, string>;
  assert.is(statement.type, "gatehouse.identity-attestation.v1");
  assert.is(statement.tin, TAXPAYER.tin);
  assert.is(statement.regulatorBusinessId, TAXPAYER.businessId);
  assert.is(statement.entityId, TAXPAYER.entityId);
  assert.is(statement.businessId, "demo");
});

test.run();
