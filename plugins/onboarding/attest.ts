/**
 * The attestation onboarding records: the gateway signs the identity it verified at the regulator
 * (the attestation port, behind its resilience policy). The port's outage answers 503
 * GW_ATTESTATION_SERVICE_UNAVAILABLE before anything is stored: the same request again completes.
 */
import { gwError } from "../../core/errors/gateway-error.ts";
import { isDependencyUnavailableError, type SignedAttestation } from "../../adapters/ports.ts";
import type { OnboardingEnv } from "./env.ts";
import type { SubBusinessDoc } from "./store.ts";

/** The signed statement of `doc`'s verified identity; null when the gateway has no attestor. */
export async function attestIdentity(env: OnboardingEnv, doc: SubBusinessDoc): Promise<SignedAttestation | null> {
  if (!env.attestation) return null;
  try {
    return await env.attestation.attest({
      gatewaySubBusinessId: doc.gatewaySubBusinessId,
      businessId: doc.businessId,
      state: doc.state,
      entityId: doc.identity.entityId,
      regulatorBusinessId: doc.identity.regulatorBusinessId,
      tin: doc.identity.tin,
      verifiedAt: doc.createdAt,
    });
  } catch (e) {
    if (!isDependencyUnavailableError(e)) throw e;
    env.log.warn("onboarding_attestation_unavailable", { gatewaySubBusinessId: doc.gatewaySubBusinessId, failureClass: e.failureClass });
    throw gwError("GW_ATTESTATION_SERVICE_UNAVAILABLE", {
      detail: "The identity was verified but its signed attestation could not be made; nothing was stored. Retry with the same idempotency key and content.",
      cause: e,
    });
  }
}
