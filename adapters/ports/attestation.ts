/** The attestation port (re-exported by adapters/ports.ts): the gateway signs what it verified. */

/** What onboarding verified at the regulator about a represented business. */
export interface IdentityStatement {
  gatewaySubBusinessId: string;
  /** The top-level business that onboarded it, and its state. */
  businessId: string;
  state: "TEST" | "LIVE";
  entityId: string;
  regulatorBusinessId: string;
  tin: string;
  /** ISO 8601: when the regulator confirmed the identity. */
  verifiedAt: string;
}

/** A statement signed by the gateway: `payload` is the exact signed text (canonical JSON). */
export interface SignedAttestation {
  algorithm: "Ed25519";
  keyId: string;
  payload: string;
  /** base64url of the signature over the UTF-8 bytes of `payload`. */
  signature: string;
  signedAt: string;
}

/**
 * Signs identity statements. An outage throws DependencyUnavailableError("attestation", …)
 * (GW_ATTESTATION_SERVICE_UNAVAILABLE: nothing was onboarded, retry with the same key).
 */
export interface IdentityAttestor {
  readonly kind: string;
  attest(statement: IdentityStatement): Promise<SignedAttestation>;
  /** The public key that verifies this attestor's signatures (SPKI PEM), to publish to relying parties. */
  publicKeyPem(): string;
}
