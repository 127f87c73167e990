/**
 * API keys: create, roll (the old key stays valid until its deadline) and revoke. The plain key of
 * a created or rolled key is in the first answer only: it is never stored (its sha256 is the
 * record's `_id`), never logged, never audited, never in a replay. If the first attempt failed
 * before answering, nobody has seen that key: the retry replaces it with a new one (same key id).
 */
import { randomBytes } from "node:crypto";
import { isDuplicateKeyError } from "../../../adapters/ports.ts";
import { hashSecret } from "../../../core/directory.ts";
import type { CredentialDoc } from "../../../core/directory-store.ts";
import type { Outcome } from "../../../core/idempotency.ts";
import { MAX_KEY_DEADLINE_MS, type KeyCreateInput, type KeyRollInput, type KeyUpdateInput } from "../directory-schemas.ts";
import { applyChange, resumeChange } from "./apply.ts";
import { audit, isoNow, mutate, type AdminAnswer, type DirectoryEnv, type OperatorCall } from "./env.ts";
import { invalidBody, isKeyRaced, keyState } from "./failures.ts";
import { keyOf, keyOwner } from "./lookups.ts";
import { keyView, TO_API, TO_SCHEME, type ApiScheme } from "./views.ts";

export async function createKey(env: DirectoryEnv, op: OperatorCall, input: KeyCreateInput): Promise<AdminAnswer> {
  const scheme = TO_SCHEME[input.scheme];
  const owner = await keyOwner(env, scheme, input.businessId);
  const expiresAt = input.expiresAt === undefined ? null : _deadline(env, input.expiresAt, "/expiresAt", false);
  const shown: _Shown = {};
  const answer = await mutate(env, op, { ...input }, async (recordId) => {
    const earlier = await env.store.credentials.findOne({ createdBy: recordId });
    const credentialId = earlier?.credentialId ?? input.id ?? `${input.businessId ?? "operator"}-${randomBytes(5).toString("hex")}`;
    const issued = _issueKey(input.scheme, owner.state);
    const doc = _credential(env, issued, earlier, {
      credentialId,
      scheme,
      businessId: input.businessId ?? null,
      ipWhitelisted: input.ipWhitelisted ?? [],
      expiresAt,
      createdBy: recordId,
      rolledFrom: null,
    });
    await _issue(env, doc, earlier);
    shown.key = issued.key;
    await audit(env, op, recordId, "key.create", { type: "key", id: credentialId }, {
      scheme: input.scheme,
      businessId: doc.businessId,
      ipWhitelisted: doc.ipWhitelisted,
      expiresAt: input.expiresAt ?? null,
    });
    await env.directory.changed({ kind: "credential", id: credentialId });
    env.log.event("directory_key_created", { requestId: op.requestId, operator: op.credentialId, keyId: credentialId, scheme: input.scheme, businessId: doc.businessId });
    return { status: 201, body: { key: keyView(doc, env.now()), plainKey: null, plainKeyNote: PLAIN_KEY_NOTE } };
  });
  return _withPlainKey(answer, shown);
}

export async function rollKey(env: DirectoryEnv, op: OperatorCall, keyId: string, input: KeyRollInput): Promise<AdminAnswer> {
  await keyOf(env, keyId);
  const deadline = _deadline(env, input.oldKeyExpiresAt, "/oldKeyExpiresAt", true);
  const shown: _Shown = {};
  const answer = await mutate(env, op, { keyId, ...input }, (recordId) => _roll(env, op, keyId, deadline, recordId, shown));
  return _withPlainKey(answer, shown);
}

export async function revokeKey(env: DirectoryEnv, op: OperatorCall, keyId: string): Promise<AdminAnswer> {
  await keyOf(env, keyId);
  return mutate(env, op, { keyId }, async (recordId) => {
    // A revoke applies whatever else changed meanwhile (a concurrent roll): a lost race reads again.
    for (let attempt = 1; ; attempt++) {
      try {
        const doc = await _revoke(env, op, keyId, recordId);
        await env.directory.changed({ kind: "credential", id: keyId });
        return { status: 200, body: { key: keyView(doc, env.now()) } };
      } catch (e) {
        if (!isKeyRaced(e) || attempt >= REVOKE_ATTEMPTS) throw e;
      }
    }
  });
}

/** Replaces a key's IP allowlist (a revoked or expired key is refused; the same list again changes nothing). */
export async function updateKey(env: DirectoryEnv, op: OperatorCall, keyId: string, input: KeyUpdateInput): Promise<AdminAnswer> {
  await keyOf(env, keyId);
  return mutate(env, op, { keyId, ...input }, async (recordId) => {
    let doc = await keyOf(env, keyId);
    const target = { type: "key", id: keyId } as const;
    if (doc.lastChange?.op === recordId) doc = await resumeChange(env, doc, target, op, recordId);
    else {
      if (doc.revoked || (doc.expiresAt !== null && doc.expiresAt <= env.now())) throw keyState("The key is revoked or expired; its allowlist cannot change.");
      const to = [...new Set(input.ipWhitelisted.map((s) => s.trim()))];
      if (to.join(",") !== doc.ipWhitelisted.join(",")) {
        const change = { ipWhitelisted: { from: doc.ipWhitelisted, to } };
        doc = await applyChange(env, env.store.credentials, doc, op, recordId, { target, action: "key.update", set: { ipWhitelisted: to }, changes: change });
        env.log.event("directory_key_updated", { requestId: op.requestId, operator: op.actor ?? op.credentialId, keyId });
      }
    }
    await env.directory.changed({ kind: "credential", id: keyId });
    return { status: 200, body: { key: keyView(doc, env.now()) } };
  });
}

// --- Internal helpers ---

const PLAIN_KEY_NOTE = "The plain key is shown once, in the first answer; it is not stored. If you did not receive it, roll or revoke this key.";

/** Reads of the key a revoke makes when concurrent changes keep winning the compare-and-set. */
const REVOKE_ATTEMPTS = 3;

async function _revoke(env: DirectoryEnv, op: OperatorCall, keyId: string, recordId: string): Promise<CredentialDoc> {
  const doc = await keyOf(env, keyId);
  if (doc.lastChange?.op === recordId) return resumeChange(env, doc, { type: "key", id: keyId }, op, recordId);
  if (doc.revoked) return doc;
  const revoked = await applyChange(env, env.store.credentials, doc, op, recordId, {
    target: { type: "key", id: keyId },
    action: "key.revoke",
    set: { revoked: true, revokedAt: isoNow(env) },
    changes: { revoked: { from: false, to: true } },
  });
  env.log.event("directory_key_revoked", { requestId: op.requestId, operator: op.credentialId, keyId });
  return revoked;
}

/** The plain key issued by this request's run of the mutation (none on a replay). */
interface _Shown {
  key?: string;
}

function _withPlainKey(answer: AdminAnswer, shown: _Shown): AdminAnswer {
  return answer.replayed ? answer : { ...answer, plainKey: shown.key };
}

/** The roll: a new key first (a failure before the old key's deadline is set leaves both valid), then the old key's deadline. */
async function _roll(env: DirectoryEnv, op: OperatorCall, keyId: string, deadline: number, recordId: string, shown: _Shown): Promise<Outcome> {
  const old = await keyOf(env, keyId);
  const earlier = await env.store.credentials.findOne({ createdBy: recordId });
  const resumed = old.lastChange?.op === recordId;
  if (!resumed) {
    if (old.revoked || (old.expiresAt !== null && old.expiresAt <= env.now())) throw keyState("The key is revoked or expired; create a new key instead.");
    if (old.rolledTo !== null) throw keyState(`The key was already rolled to "${old.rolledTo}"; roll that key.`);
  }
  const owner = await keyOwner(env, old.scheme, old.businessId ?? undefined);
  const issued = _issueKey(TO_API[old.scheme], owner.state);
  const credentialId = earlier?.credentialId ?? `${old.businessId ?? "operator"}-${randomBytes(5).toString("hex")}`;
  const next = _credential(env, issued, earlier, {
    credentialId,
    scheme: old.scheme,
    businessId: old.businessId,
    ipWhitelisted: [...old.ipWhitelisted],
    expiresAt: null,
    createdBy: recordId,
    rolledFrom: old.credentialId,
  });
  await _issue(env, next, earlier);
  shown.key = issued.key;
  const expiresAt = Math.min(old.expiresAt ?? Number.POSITIVE_INFINITY, deadline);
  const target = { type: "key", id: keyId } as const;
  const previous = resumed
    ? await resumeChange(env, old, target, op, recordId)
    : await applyChange(env, env.store.credentials, old, op, recordId, {
        target,
        action: "key.roll",
        set: { expiresAt, rolledTo: credentialId },
        changes: { newKeyId: credentialId, oldKeyExpiresAt: new Date(expiresAt).toISOString() },
      }).catch(async (e: unknown) => {
        // Another roll or revoke won: the key this request issued was never shown; it must not stay valid.
        if (isKeyRaced(e)) await env.store.credentials.delete(next._id);
        throw e;
      });
  await env.directory.changed({ kind: "credential", id: keyId });
  await env.directory.changed({ kind: "credential", id: credentialId });
  env.log.event("directory_key_rolled", { requestId: op.requestId, operator: op.credentialId, keyId, newKeyId: credentialId });
  const t = env.now();
  return { status: 201, body: { key: keyView(next, t), plainKey: null, plainKeyNote: PLAIN_KEY_NOTE, previous: keyView(previous, t) } };
}

/** A new operator key's record (an earlier, never-shown key of the same operation keeps its creation time). */
function _credential(
  env: DirectoryEnv,
  issued: { key: string; hint: string },
  earlier: CredentialDoc | null,
  c: Pick<CredentialDoc, "credentialId" | "scheme" | "businessId" | "ipWhitelisted" | "expiresAt" | "rolledFrom"> & { createdBy: string },
): CredentialDoc {
  return {
    _id: hashSecret(issued.key),
    credentialId: c.credentialId,
    scheme: c.scheme,
    businessId: c.businessId,
    ipWhitelisted: c.ipWhitelisted,
    revoked: false,
    revokedAt: null,
    expiresAt: c.expiresAt,
    hint: issued.hint,
    source: "operator",
    seed: null,
    createdBy: c.createdBy,
    rolledFrom: c.rolledFrom,
    rolledTo: null,
    rev: 1,
    createdAt: earlier?.createdAt ?? isoNow(env),
    updatedAt: isoNow(env),
  };
}

/** Stores a newly issued key; an earlier, never-shown key of the same operation is replaced. */
async function _issue(env: DirectoryEnv, doc: CredentialDoc, earlier: CredentialDoc | null): Promise<void> {
  if (earlier) await env.store.credentials.delete(earlier._id);
  try {
    await env.store.credentials.insert(doc);
  } catch (e) {
    if (isDuplicateKeyError(e)) throw invalidBody("/id", "MISMATCH", "a key with this id exists");
    throw e;
  }
}

/** A key's deadline in epoch ms: within MAX_KEY_DEADLINE_MS; a past time is refused, or means "now". */
function _deadline(env: DirectoryEnv, text: string, pointer: string, pastMeansNow: boolean): number {
  const at = Date.parse(text);
  const t = env.now();
  if (at <= t && !pastMeansNow) throw invalidBody(pointer, "RANGE", "must be in the future");
  if (at > t + MAX_KEY_DEADLINE_MS) throw invalidBody(pointer, "RANGE", "at most 366 days ahead");
  return Math.max(at, t);
}

/** A random key: a recognisable prefix (product and state) and 192 random bits. */
function _issueKey(scheme: ApiScheme, state: "TEST" | "LIVE" | null): { key: string; hint: string } {
  const env = state === "LIVE" ? "live" : "test";
  const prefix = scheme === "gateway" ? `gw_${env}_` : scheme === "collections" ? `sk_${env}_` : "admin_";
  const key = prefix + randomBytes(24).toString("base64url");
  return { key, hint: `${prefix}…${key.slice(-4)}` };
}
