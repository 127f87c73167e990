/**
 * The identity and QR-material histories. Best effort and idempotent (the `_id` is derived from the
 * version, so a second write is a duplicate): the represented business document is the truth, and a
 * read shows a version whose history write was lost from it.
 */
import { isDuplicateKeyError } from "../../adapters/ports.ts";
import type { OnboardingEnv } from "./env.ts";
import { cleanIdentity } from "./identity.ts";
import type { SubBusinessDoc, VersionSource } from "./store.ts";

/** Records the represented business's current identity version (a failed write is logged). */
export async function sealVersion(env: OnboardingEnv, sub: SubBusinessDoc, source: VersionSource, reviewId: string | null): Promise<void> {
  try {
    await env.store.versions.insert({
      _id: `${sub._id}|v${sub.identityVersion}`,
      subKey: sub._id,
      gatewaySubBusinessId: sub.gatewaySubBusinessId,
      version: sub.identityVersion,
      identity: cleanIdentity(sub.identity),
      source,
      reviewId,
      createdAt: sub.updatedAt,
    });
  } catch (e) {
    if (!isDuplicateKeyError(e)) env.log.warn("onboarding_history_write_failed", { gatewaySubBusinessId: sub.gatewaySubBusinessId, kind: "identity" });
  }
}

/**
 * Records the QR material in force. `strict`: a failed write fails the request (a rotation keeps the
 * material it replaces, which recovery reads); otherwise it is logged.
 */
export async function sealCrypto(env: OnboardingEnv, sub: SubBusinessDoc, strict: boolean): Promise<void> {
  const c = sub.crypto;
  if (!c) return;
  try {
    await env.store.crypto.insert({
      _id: `${sub._id}|c${c.version}`,
      subKey: sub._id,
      gatewaySubBusinessId: sub.gatewaySubBusinessId,
      version: c.version,
      publicKey: c.publicKey,
      certificate: c.certificate,
      fingerprint: c.fingerprint,
      installedBy: c.installedBy,
      installedAt: c.installedAt,
    });
  } catch (e) {
    if (isDuplicateKeyError(e)) return;
    if (strict) throw e;
    env.log.warn("onboarding_history_write_failed", { gatewaySubBusinessId: sub.gatewaySubBusinessId, kind: "crypto" });
  }
}
