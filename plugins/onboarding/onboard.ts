/**
 * Onboarding a represented business (spec §2.1): authenticate at the regulator with the taxpayer's
 * transient credentials, select the business, store its identity as version 1 (and the QR material
 * as cryptoVersion 1 when sent). Idempotent on x-idempotency-key; a regulator business is
 * represented at most once (unique identityKey, spec §7.2 exception 2).
 */
import { gwError } from "../../core/errors/gateway-error.ts";
import { idempotencyId, KeepClaim, type IdempotencyDoc, type IdempotentAnswer, type Outcome } from "../../core/idempotency.ts";
import { isDuplicateKeyError } from "../../adapters/ports.ts";
import type { RegulatorBusiness } from "../../adapters/regulator/port.ts";
import { isoNow, type Caller, type OnboardingEnv } from "./env.ts";
import { attestIdentity } from "./attest.ts";
import { ALREADY_REPRESENTED, uncertain } from "./failures.ts";
import { onboardingFingerprint } from "./fingerprint.ts";
import { sealCrypto, sealVersion } from "./history.ts";
import { identityOf, selectForOnboarding, type RegulatorIdentity } from "./identity.ts";
import type { OnboardingInput } from "./schemas.ts";
import { cryptoFingerprint, identityKeyOf, subKeyOf, type CryptoMaterial, type SubBusinessDoc } from "./store.ts";
import { requireLogin, verifiedEntity } from "./taxpayer.ts";
import { subBusinessView } from "./views.ts";

export async function onboard(env: OnboardingEnv, caller: Caller, input: OnboardingInput): Promise<IdempotentAnswer> {
  const recordId = idempotencyId(env.secret, caller.businessId, caller.route, caller.idempotencyKey);
  return env.idempotency.run({
    recordId,
    scope: caller.businessId,
    route: caller.route,
    fingerprint: onboardingFingerprint(env.secret, input),
    omittable: ["email", "crypto"],
    owner: caller.requestId,
    beforeClaim: () => void requireLogin(input.regulatorCredentials),
    onStale: (rec) => _resume(env, rec),
    execute: async () => {
      const login = requireLogin(input.regulatorCredentials);
      const entity = await verifiedEntity(env, caller.state, login, caller.requestId);
      const business = selectForOnboarding(entity, input.tin);
      const doc = _newSubBusiness(caller, business, identityOf(entity, business), input.cryptoMaterial, recordId, isoNow(env));
      const attestation = await attestIdentity(env, doc);
      return _store(env, caller, attestation ? { ...doc, attestation } : doc);
    },
  });
}

// --- Internal helpers ---

/** A dead holder's onboarding: its represented business if it was saved, else not resumable. */
async function _resume(env: OnboardingEnv, rec: IdempotencyDoc): Promise<Outcome> {
  const sub = await env.store.subBusinesses.findOne({ onboardingKey: rec._id });
  if (!sub)
    throw gwError("GW_ONBOARDING_NOT_RESUMABLE", {
      detail: "The earlier onboarding with this key did not complete and cannot be resumed; stop and contact support.",
    });
  await sealVersion(env, sub, "onboarding", null);
  await sealCrypto(env, sub, false);
  return { status: 201, body: subBusinessView(sub) };
}

function _newSubBusiness(
  caller: Caller,
  business: RegulatorBusiness,
  identity: RegulatorIdentity,
  material: OnboardingInput["cryptoMaterial"],
  recordId: string,
  at: string,
): SubBusinessDoc {
  const crypto: CryptoMaterial | null = material
    ? {
        version: 1,
        publicKey: material.publicKey,
        certificate: material.certificate,
        fingerprint: cryptoFingerprint(material.publicKey, material.certificate),
        installedBy: recordId,
        installedAt: at,
      }
    : null;
  return {
    _id: subKeyOf(caller.state, business.id),
    gatewaySubBusinessId: business.id,
    businessId: caller.businessId,
    state: caller.state,
    externalBusinessId: business.id,
    identityKey: identityKeyOf(caller.state, business.id),
    identity,
    identityVersion: 1,
    cryptoVersion: crypto ? 1 : 0,
    crypto,
    onboardingKey: recordId,
    createdAt: at,
    updatedAt: at,
  };
}

/** Inserts the new represented business; an uncertain insert keeps the claim (resolved when stale). */
async function _store(env: OnboardingEnv, caller: Caller, doc: SubBusinessDoc): Promise<Outcome> {
  try {
    await env.store.subBusinesses.insert(doc);
  } catch (e) {
    if (!isDuplicateKeyError(e)) throw new KeepClaim(uncertain(e, "GW_ONBOARDING_SERVICE_INVALID_RESPONSE"));
    // An earlier, uncertain insert of this very onboarding landed: it is ours.
    const mine = await env.store.subBusinesses.findOne({ onboardingKey: doc.onboardingKey });
    if (mine) return { status: 201, body: subBusinessView(mine) };
    throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", {
      title: ALREADY_REPRESENTED,
      detail: "This regulator business is already represented through the gateway (spec §7.2 exception 2); do not start new work, contact support.",
    });
  }
  await sealVersion(env, doc, "onboarding", null);
  await sealCrypto(env, doc, false);
  env.log.event("onboarding_sub_business_created", {
    requestId: caller.requestId,
    businessId: caller.businessId,
    state: caller.state,
    gatewaySubBusinessId: doc.gatewaySubBusinessId,
    cryptoVersion: doc.cryptoVersion,
  });
  return { status: 201, body: subBusinessView(doc) };
}
