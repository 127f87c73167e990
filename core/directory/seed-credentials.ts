/**
 * Seeding credentials: keys are matched by credential id. File-owned fields (scheme, owner,
 * ipWhitelisted) follow the file; `revoked` merges three ways against its `seed` value, and an
 * expiry set by a roll is the operator's. A key an operator changed (revoked against the file,
 * rolled) is not replaced or renamed by a seed, only by --sync.
 */
import type { Config, CredentialConfig } from "../../config/schema.ts";
import { hashSecret } from "./secrets.ts";
import { converge, diff, keepOperatorChange, pick, seedAudit, seedIso, updateRecord, type SeedRun } from "./seed-run.ts";
import type { CredentialDoc, CredentialScheme } from "./store.ts";

/** Seeds every key of the file (business keys, then operator keys); answers their credential ids. */
export async function seedCredentials(run: SeedRun, config: Config): Promise<Set<string>> {
  const fileKeys = new Set<string>();
  const fileHashes = new Set<string>();
  for (const { c, scheme, businessId } of _entries(config)) {
    const hashId = c.keyHash ?? hashSecret(c.key!);
    if (fileHashes.has(hashId)) throw new Error(`directory seed: credential "${c.id}" has the same key as another credential of the file`);
    fileHashes.add(hashId);
    fileKeys.add(c.id);
    const key: _FileKey = { c, hashId, owned: { scheme, businessId, ipWhitelisted: [...c.ipWhitelisted] } };
    await converge(`credential ${c.id}`, () => _seedCredential(run, key));
  }
  return fileKeys;
}

// --- Internal helpers ---

/** One key of the file: its config, the `_id` of its record, and the fields the file owns. */
interface _FileKey {
  c: CredentialConfig;
  hashId: string;
  owned: { scheme: CredentialScheme; businessId: string | null; ipWhitelisted: string[] };
}

function _entries(config: Config): Array<{ c: CredentialConfig; scheme: CredentialScheme; businessId: string | null }> {
  const entries: Array<{ c: CredentialConfig; scheme: CredentialScheme; businessId: string | null }> = [];
  for (const b of config.businesses) {
    for (const c of b.gateway?.apiKeys ?? []) entries.push({ c, scheme: "apiKey", businessId: b.id });
    for (const c of b.collections?.apiKeys ?? []) entries.push({ c, scheme: "bearer", businessId: b.id });
  }
  for (const c of config.operators.apiKeys) entries.push({ c, scheme: "admin", businessId: null });
  return entries;
}

async function _seedCredential(run: SeedRun, key: _FileKey): Promise<boolean> {
  const { ds } = run;
  const { c, hashId, owned } = key;
  const byName = await ds.credentials.findOne({ credentialId: c.id });
  const byHash = byName?._id === hashId ? byName : await ds.credentials.get(hashId);
  if (byName && byName._id === hashId) return _sameKey(run, key, byName);
  if (byName) return _otherKeyUnderId(run, key, byName, byHash);
  if (byHash) return _renamedKey(run, key, byHash);
  await ds.credentials.insert(_freshCredential(run, key));
  await seedAudit(run, "create", "key", c.id, { ...owned, revoked: c.revoked });
  run.report.created++;
  return true;
}

/** The same key: file-owned fields follow the file; `revoked` merges three ways. */
async function _sameKey(run: SeedRun, { c, owned }: _FileKey, doc: CredentialDoc): Promise<boolean> {
  const set: Record<string, unknown> = {};
  for (const [f, v] of Object.entries(owned)) if (JSON.stringify(doc[f]) !== JSON.stringify(v)) set[f] = v;
  let kept = false;
  if (run.o.sync) {
    if (doc.revoked !== c.revoked) set.revoked = c.revoked;
    if (doc.expiresAt !== null) set.expiresAt = null;
    if (doc.rolledTo !== null) set.rolledTo = null;
  } else if (doc.seed?.revoked !== c.revoked) {
    if (doc.seed === null || doc.revoked === doc.seed.revoked) {
      if (doc.revoked !== c.revoked) set.revoked = c.revoked;
    } else if (doc.revoked !== c.revoked) kept = true;
  }
  if (set.revoked !== undefined) set.revokedAt = set.revoked ? seedIso(run) : null;
  const seed = { revoked: kept ? doc.seed!.revoked : c.revoked };
  const changes = diff(pick(doc, Object.keys(set).filter((k) => k !== "revokedAt")), set);
  if (Object.keys(changes).length > 0 || doc.seed?.revoked !== seed.revoked) {
    if (!(await updateRecord(run, run.ds.credentials, doc, { ...set, seed }))) return false;
    if (Object.keys(changes).length > 0) {
      await seedAudit(run, "update", "key", c.id, changes);
      run.report.updated++;
      await run.o.notify({ kind: "credential", id: c.id });
    }
  }
  if (kept) keepOperatorChange(run, "key", c.id, "revoked");
  return true;
}

/** The file holds another key under this id: replaced, unless an operator changed the stored one. */
async function _otherKeyUnderId(run: SeedRun, key: _FileKey, byName: CredentialDoc, byHash: CredentialDoc | null): Promise<boolean> {
  const { c } = key;
  if (!_replaceable(run, byName)) {
    keepOperatorChange(run, "key", c.id, "key");
    return true;
  }
  if (byHash) throw new Error(`directory seed: the key of credential "${c.id}" is stored under id "${byHash.credentialId}"`);
  await run.ds.credentials.deleteMany({ _id: byName._id, rev: byName.rev });
  await run.ds.credentials.insert(_freshCredential(run, key));
  await seedAudit(run, "replace", "key", c.id, { key: "replaced by the file's key" });
  run.report.updated++;
  await run.o.notify({ kind: "credential", id: c.id });
  return true;
}

/** The file renamed the key: renamed, unless an operator changed it. */
async function _renamedKey(run: SeedRun, { c, owned }: _FileKey, byHash: CredentialDoc): Promise<boolean> {
  if (!_replaceable(run, byHash)) {
    keepOperatorChange(run, "key", byHash.credentialId, "credentialId");
    return true;
  }
  if (!(await updateRecord(run, run.ds.credentials, byHash, { credentialId: c.id, ...owned }))) return false;
  await seedAudit(run, "update", "key", c.id, { credentialId: { from: byHash.credentialId, to: c.id } });
  run.report.updated++;
  return true;
}

function _replaceable(run: SeedRun, doc: CredentialDoc): boolean {
  return run.o.sync || (doc.source === "config" && _untouched(doc));
}

/** A config key no operator has changed: not revoked or un-revoked against the file, never rolled. */
function _untouched(doc: CredentialDoc): boolean {
  return doc.seed !== null && doc.revoked === doc.seed.revoked && doc.expiresAt === null && doc.rolledTo === null;
}

function _freshCredential(run: SeedRun, { c, hashId, owned }: _FileKey): CredentialDoc {
  return {
    _id: hashId,
    credentialId: c.id,
    ...owned,
    revoked: c.revoked,
    revokedAt: c.revoked ? seedIso(run) : null,
    expiresAt: null,
    hint: c.key ? `…${c.key.slice(-4)}` : null,
    source: "config",
    seed: { revoked: c.revoked },
    rolledFrom: null,
    rolledTo: null,
    rev: 1,
    createdAt: seedIso(run),
    updatedAt: seedIso(run),
  };
}
