/**
 * The content fingerprints of the onboarding mutations: keyed hashes (HMAC with the deployment's
 * idempotency key) of what identifies a request's content, never the content itself. The password
 * is never part of one; the e-mail only as its HMAC.
 */
import type { PresentedFingerprint } from "../../core/idempotency.ts";
import type { OnboardingInput } from "./schemas.ts";
import { cryptoFingerprint, keyedHash } from "./store.ts";

/**
 * The onboarding content fingerprint, without the password: HMAC of the e-mail (omittable on a
 * completed replay), HMAC of the TIN (null when absent), fingerprint of the QR material (omittable).
 */
export function onboardingFingerprint(secret: Buffer, input: OnboardingInput): PresentedFingerprint {
  const material = input.cryptoMaterial;
  return {
    email: emailPart(secret, input.regulatorCredentials),
    tin: input.tin !== undefined ? keyedPart(secret, "tin", input.tin) : null,
    crypto: material ? cryptoFingerprint(material.publicKey, material.certificate) : undefined,
  };
}

/** One fingerprint component: the HMAC of `value`, separated from other components by `part`. */
export function keyedPart(secret: Buffer, part: string, value: string): string {
  return keyedHash(secret, `${part}\u0000${value}`);
}

/** The e-mail's component (trimmed, lower-case), or undefined when the caller sent none. */
export function emailPart(secret: Buffer, creds: OnboardingInput["regulatorCredentials"]): string | undefined {
  return creds?.email ? keyedPart(secret, "email", creds.email.trim().toLowerCase()) : undefined;
}
