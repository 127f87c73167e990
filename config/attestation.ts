/**
 * The identity attestations onboarding records (docs/onboarding.md "Attestation"): an Ed25519 key
 * (`seed`: 32 bytes base64, a secret — prefer ATTESTATION_SEED; absent: a key generated at each
 * start), its `keyId`, and the per-call deadline of the attestor's resilience policy.
 */
import * as v from "valibot";

export const AttestationSchema = v.strictObject({
  keyId: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9._:-]{1,64}$/)), "gatehouse-attestation-1"),
  seed: v.optional(v.pipe(v.string(), v.check((s) => /^[A-Za-z0-9+/]{43}=?$/.test(s) && Buffer.from(s, "base64").length === 32, "must be 32 bytes, base64"))),
  timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 2_000),
});
