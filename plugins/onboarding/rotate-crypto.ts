/**
 * QR-material rotation: the new material replaces the one in force by compare-and-set on
 * cryptoVersion (+1 per accepted replacement); the replaced material goes to the history first.
 * `expectedCryptoVersion` is the caller's rotation proof: a rotation on another base is refused.
 * An uncertain write keeps the claim (never retried automatically, spec §7.2 exception 1); once
 * stale, the same key finds out from the store whether it landed.
 */
import { gwError } from "../../core/errors/gateway-error.ts";
import { idempotencyId, KeepClaim, type IdempotencyDoc, type IdempotentAnswer, type Outcome } from "../../core/idempotency.ts";
import { isoNow, type Caller, type OnboardingEnv } from "./env.ts";
import { staleRotationProof, uncertain } from "./failures.ts";
import { keyedPart } from "./fingerprint.ts";
import { sealCrypto } from "./history.ts";
import { owned } from "./owned.ts";
import type { RotationInput } from "./schemas.ts";
import { cryptoFingerprint, type CryptoMaterial, type SubBusinessDoc } from "./store.ts";
import { subBusinessView } from "./views.ts";

/** Compare-and-set attempts against concurrent rotations before answering 503. */
const MAX_ATTEMPTS = 5;

export async function rotateCrypto(env: OnboardingEnv, caller: Caller, gatewaySubBusinessId: string, input: RotationInput): Promise<IdempotentAnswer> {
  await owned(env.store, caller, gatewaySubBusinessId);
  const recordId = idempotencyId(env.secret, caller.businessId, caller.route, caller.idempotencyKey);
  const fingerprint = cryptoFingerprint(input.publicKey, input.certificate);
  return env.idempotency.run({
    recordId,
    scope: caller.businessId,
    route: caller.route,
    fingerprint: {
      target: keyedPart(env.secret, "target", gatewaySubBusinessId),
      material: fingerprint,
      proof: input.expectedCryptoVersion === undefined ? null : String(input.expectedCryptoVersion),
    },
    owner: caller.requestId,
    onStale: (rec) => _resume(env, caller, gatewaySubBusinessId, rec),
    execute: async () => {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const sub = await owned(env.store, caller, gatewaySubBusinessId);
        if (input.expectedCryptoVersion !== undefined && input.expectedCryptoVersion !== sub.cryptoVersion) throw staleRotationProof();
        const rotated = await _rotateOnce(env, caller, sub, { ...input, fingerprint }, recordId);
        if (rotated) return rotated;
        // Another rotation applied on the same base version first.
        if (input.expectedCryptoVersion !== undefined) throw staleRotationProof();
      }
      throw gwError("GW_MANAGEMENT_SERVICE_UNAVAILABLE", { detail: "Too many concurrent rotations; retry with the same key." });
    },
  });
}

// --- Internal helpers ---

/** Stale means long past any store deadline: whether the holder's compare-and-set landed is known. */
async function _resume(env: OnboardingEnv, caller: Caller, gatewaySubBusinessId: string, rec: IdempotencyDoc): Promise<Outcome | "takeover"> {
  const sub = await owned(env.store, caller, gatewaySubBusinessId);
  const installed = sub.crypto?.installedBy === rec._id || (await env.store.crypto.findOne({ subKey: sub._id, installedBy: rec._id })) !== null;
  return installed ? { status: 200, body: subBusinessView(sub) } : "takeover";
}

/** One compare-and-set on `sub`'s cryptoVersion: the answer, or null when another rotation won. */
async function _rotateOnce(
  env: OnboardingEnv,
  caller: Caller,
  sub: SubBusinessDoc,
  material: { publicKey: string; certificate: string; fingerprint: string },
  recordId: string,
): Promise<Outcome | null> {
  const base = sub.cryptoVersion;
  // The material in force goes to the history before it is replaced (recovery reads it).
  await sealCrypto(env, sub, true);
  const at = isoNow(env);
  const next: CryptoMaterial = {
    version: base + 1,
    publicKey: material.publicKey,
    certificate: material.certificate,
    fingerprint: material.fingerprint,
    installedBy: recordId,
    installedAt: at,
  };
  let updated: SubBusinessDoc | null;
  try {
    updated = await env.store.subBusinesses.findOneAndUpdate({ _id: sub._id, cryptoVersion: base }, { $set: { cryptoVersion: base + 1, crypto: next, updatedAt: at } });
  } catch (e) {
    // The replacement may or may not be saved (spec §7.2 exception 1): keep the claim.
    throw new KeepClaim(uncertain(e, "GW_CRYPTO_MATERIAL_SERVICE_INVALID_RESPONSE"));
  }
  if (!updated) return null;
  await sealCrypto(env, updated, false);
  env.log.event("onboarding_crypto_material_rotated", {
    requestId: caller.requestId,
    businessId: caller.businessId,
    gatewaySubBusinessId: updated.gatewaySubBusinessId,
    cryptoVersion: updated.cryptoVersion,
  });
  return { status: 200, body: subBusinessView(updated) };
}
