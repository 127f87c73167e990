/**
 * The built-in attestor: an in-process Ed25519 signer (node:crypto) keyed from config
 * (`attestation.seed`, 32 bytes base64; without one, a key generated at startup, so its
 * signatures verify only against that process's published key). `guardAttestor` puts any attestor
 * behind its resilience policy: a deadline and a circuit, every failure a DependencyUnavailableError.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { DependencyUnavailableError, isDependencyUnavailableError, type IdentityAttestor, type IdentityStatement, type SignedAttestation } from "../ports.ts";
import type { DependencyPolicy } from "../policies.ts";

/** PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

export interface Ed25519AttestorOptions {
  keyId: string;
  /** base64 of the 32-byte private seed; absent: a key generated now. */
  seed?: string;
  clock?: () => number;
}

export function createEd25519Attestor(options: Ed25519AttestorOptions): IdentityAttestor {
  const privateKey = options.seed ? _keyFromSeed(options.seed) : generateKeyPairSync("ed25519").privateKey;
  const publicPem = createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString();
  const clock = options.clock ?? Date.now;
  return {
    kind: "ed25519",
    async attest(statement) {
      const payload = canonicalStatement(statement);
      return {
        algorithm: "Ed25519",
        keyId: options.keyId,
        payload,
        signature: sign(null, Buffer.from(payload, "utf8"), privateKey).toString("base64url"),
        signedAt: new Date(clock()).toISOString(),
      };
    },
    publicKeyPem: () => publicPem,
  };
}

/**
 * The attestor behind `policy`: bounded, counted by its circuit; every failure an outage of
 * "attestation". `policy` may be a factory, called at the first attestation (as the regulator's
 * policies are made at first use, a dependency appears in /health/dependencies once it is used).
 */
export function guardAttestor(inner: IdentityAttestor, policyOrFactory: DependencyPolicy | (() => DependencyPolicy)): IdentityAttestor {
  let made: DependencyPolicy | null = typeof policyOrFactory === "function" ? null : policyOrFactory;
  const policyOf = () => (made ??= (policyOrFactory as () => DependencyPolicy)());
  return {
    kind: inner.kind,
    publicKeyPem: () => inner.publicKeyPem(),
    async attest(statement): Promise<SignedAttestation> {
      const policy = policyOf();
      try {
        return await policy.execute(() => inner.attest(statement));
      } catch (e) {
        if (isDependencyUnavailableError(e)) throw e;
        throw new DependencyUnavailableError(policy.dependency, `attest failed: ${(e as Error).message ?? "error"}`, "server_error");
      }
    },
  };
}

/** The signed text: the statement's fields in a fixed order (JSON), so a verifier rebuilds nothing. */
export function canonicalStatement(s: IdentityStatement): string {
  return JSON.stringify({
    type: "gatehouse.identity-attestation.v1",
    gatewaySubBusinessId: s.gatewaySubBusinessId,
    businessId: s.businessId,
    state: s.state,
    entityId: s.entityId,
    regulatorBusinessId: s.regulatorBusinessId,
    tin: s.tin,
    verifiedAt: s.verifiedAt,
  });
}

// --- Internal helpers ---

function _keyFromSeed(seed: string): KeyObject {
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, Buffer.from(seed, "base64")]), format: "der", type: "pkcs8" });
}
