/**
 * Key checks, always fresh (spec §5.3): every check asks the store about the key's record by its
 * `_id` (core/directory/secrets.ts), so a revoked or expired key is refused by the next request of
 * every process. What is derived from a record (the Principal) is kept with the record's `rev` and
 * deadline; a later check asks the store to count the record with that `_id`, `rev`,
 * `revoked: false` and deadline — one indexed lookup that copies nothing — and reads the record
 * again only when that count is 0 (changed, revoked, deleted). Every writer of a key record
 * increments its `rev`.
 */
import { hashSecret } from "./secrets.ts";
import { checkCredentialDoc, type CredentialScheme, type DirectoryStore } from "./store.ts";
import type { Principal } from "./types.ts";

export interface KeyChecker {
  /** See TenantDirectory.authenticate. */
  authenticate(scheme: CredentialScheme, secret: string): Principal | null | Promise<Principal | null>;
}

export function createKeyChecker(ds: DirectoryStore, now: () => number): KeyChecker {
  const k: _Keys = { ds, now, principals: new Map() };
  return {
    authenticate(scheme, secret) {
      const id = hashSecret(secret);
      const known = k.principals.get(id);
      // Fresh, and cheap: the store confirms the record is still the one the principal was built
      // from (same rev, not revoked, same deadline), by a count on its _id, without copying it; the
      // embedded store answers that synchronously (no promise on the hot path).
      if (known !== undefined) {
        const filter = { _id: id, rev: known.rev, revoked: false, expiresAt: known.expiresAt };
        if (ds.credentials.countNow) return ds.credentials.countNow(filter) === 1 ? _verdict(k, known, scheme) : _read(k, id, scheme);
        return ds.credentials.count(filter).then((n) => (n === 1 ? _verdict(k, known, scheme) : _read(k, id, scheme)));
      }
      return _read(k, id, scheme);
    },
  };
}

// --- Internal helpers ---

/** What was derived from one valid key record, with the record's rev and deadline. */
interface _Known {
  rev: number;
  expiresAt: number | null;
  principal: Principal;
}

interface _Keys {
  ds: DirectoryStore;
  now: () => number;
  /** By key hash. */
  principals: Map<string, _Known>;
}

/** The principal for `scheme`, unless the key is for another scheme or has expired. */
function _verdict(k: _Keys, known: _Known, scheme: CredentialScheme): Principal | null {
  return known.principal.scheme === scheme && (known.expiresAt === null || known.expiresAt > k.now()) ? known.principal : null;
}

/** Reads the key record by its hash and remembers the principal built from it. */
async function _read(k: _Keys, id: string, scheme: CredentialScheme): Promise<Principal | null> {
  const doc = await k.ds.credentials.get(id);
  if (doc === null || doc.revoked) {
    k.principals.delete(id);
    return null;
  }
  checkCredentialDoc(doc);
  const principal: Principal = Object.freeze({
    scheme: doc.scheme,
    credentialId: doc.credentialId,
    businessId: doc.businessId,
    ipWhitelisted: Object.freeze([...doc.ipWhitelisted]),
  });
  const entry = { rev: doc.rev, expiresAt: doc.expiresAt, principal };
  k.principals.set(id, entry);
  return _verdict(k, entry, scheme);
}
