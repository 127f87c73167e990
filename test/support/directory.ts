/** A key record as the Admin API writes one, for tests that put a record into the store directly. */
import { hashSecret } from "../../core/directory.ts";
import type { CredentialDoc } from "../../core/directory-store.ts";

export function credentialDoc(plainKey: string, fields: Pick<CredentialDoc, "credentialId" | "scheme" | "businessId"> & Partial<CredentialDoc>): CredentialDoc {
  const now = new Date().toISOString();
  return {
    _id: hashSecret(plainKey),
    ipWhitelisted: [],
    revoked: false,
    revokedAt: null,
    expiresAt: null,
    hint: null,
    source: "operator",
    seed: null,
    rolledFrom: null,
    rolledTo: null,
    rev: 1,
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
}
