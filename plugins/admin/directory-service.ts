/**
 * The operator's control plane over the tenant directory (docs/operations.md "Admin API"): reads of
 * businesses, domains, keys and the audit log; key create / roll / revoke; a domain's sign fee and
 * autoTransmit; the mode change with drain and reapproval (DECISIONS.md "Stored mode — Mode change").
 *
 * Every mutation is idempotent on x-idempotency-key (core/idempotency.ts, scope = the operator's
 * credential): a replay answers what the first request answered (201 → 200) and changes nothing;
 * the same key with other content is 409 GW_IDEMPOTENCY_CONTENT_CONFLICT. Each mutation is written so
 * that running it again after a failure resumes it: its one state change is a single-document
 * compare-and-set (a roll writes the new key before the old key's deadline, so a failure between
 * leaves both keys valid, never none), then the audit record (its `_id` derived from the idempotency
 * record, so it is appended once), then the change is announced to every process. A store failure
 * answers 503 GW_MANAGEMENT_SERVICE_UNAVAILABLE and releases the key: the same request again
 * completes what was started.
 *
 * The plain key of a created or rolled key is in the first answer only: it is never stored (its
 * sha256 is the record's `_id`), never logged, never audited, never in a replay. If the first
 * attempt failed before answering, nobody has seen that key: the retry replaces it with a new one
 * (same key id) and shows that.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  isDependencyUnavailableError,
  isDuplicateKeyError,
  isInvalidQueryError,
  type Collection,
  type Doc,
  type Filter,
} from "../../adapters/ports.ts";
import type { RequestContext } from "../../core/context.ts";
import { hashSecret, type TenantDirectory } from "../../core/directory.ts";
import {
  appendAudit,
  type AuditDoc,
  type AuditTargetType,
  type CredentialDoc,
  type CredentialScheme,
  type DirectoryStore,
  type DomainDoc,
  type LastChange,
} from "../../core/directory-store.ts";
import { gwError, isGatewayError, type GatewayError } from "../../core/errors/gateway-error.ts";
import { createIdempotency, idempotencyId, type IdempotentAnswer, type Outcome } from "../../core/idempotency.ts";
import { canonicalJson, keyedHash } from "../../core/keyed-hash.ts";
import type { Logger } from "../../core/log.ts";
import { koboToNgn, ngnToKobo } from "../../core/money.ts";
import {
  DEFAULT_LIMIT,
  MAX_KEY_DEADLINE_MS,
  type AuditListInput,
  type DomainListInput,
  type DomainUpdateInput,
  type KeyCreateInput,
  type KeyListInput,
  type KeyRollInput,
  type ListLimit,
  type ModeChangeInput,
} from "./directory-schemas.ts";

export type ApiScheme = "gateway" | "collections" | "operator";

const TO_SCHEME: Record<ApiScheme, CredentialScheme> = { gateway: "apiKey", collections: "bearer", operator: "admin" };
const TO_API: Record<CredentialScheme, ApiScheme> = { apiKey: "gateway", bearer: "collections", admin: "operator" };

/** Who asks: the operator credential, the request, the route and its idempotency key. */
export interface OperatorCall {
  credentialId: string;
  requestId: string;
  route: string;
  idempotencyKey: string;
}

export function operatorCall(ctx: RequestContext): OperatorCall {
  return { credentialId: ctx.principal!.credentialId, requestId: ctx.requestId, route: ctx.route!.id, idempotencyKey: ctx.idempotencyKey! };
}

export interface DirectoryAdminOptions {
  store: DirectoryStore;
  directory: TenantDirectory;
  /** HMAC key for idempotency keys and content fingerprints. */
  secret: Buffer;
  log: Logger;
  now: () => number;
  /** The 503 Retry-After customers get while a domain drains (shown in the mode-change answer). */
  drainRetryAfterSeconds: number;
}

/** A mutation's answer; `plainKey` is set on the first answer of a key create or roll only. */
export interface AdminAnswer extends IdempotentAnswer {
  plainKey?: string;
}

export function createDirectoryAdmin(o: DirectoryAdminOptions) {
  const { store, directory, secret, log, now } = o;
  const iso = () => new Date(now()).toISOString();
  const idem = createIdempotency(store.operations, {
    now,
    staleAfterMs: 60_000,
    waitMs: 5_000,
    pollMs: 25,
    retentionMs: 30 * 24 * 60 * 60 * 1000,
    unavailable: (e) => _unavailable(e),
  });

  /** A store call of a read or a mutation step: failures → 503 GW_MANAGEMENT_SERVICE_UNAVAILABLE. */
  async function db<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw _unavailable(e);
    }
  }

  async function mutate(
    op: OperatorCall,
    content: Record<string, unknown>,
    execute: (recordId: string) => Promise<Outcome>,
  ): Promise<IdempotentAnswer> {
    const scope = `operator:${op.credentialId}`;
    const recordId = idempotencyId(secret, scope, op.route, op.idempotencyKey);
    return idem.run({
      recordId,
      scope,
      route: op.route,
      fingerprint: { content: keyedHash(secret, canonicalJson(content)) },
      owner: op.requestId,
      // Every mutation resumes where a dead holder stopped.
      onStale: async () => "takeover",
      execute: () => execute(recordId),
    });
  }

  const audit = (op: OperatorCall, recordId: string, action: string, type: AuditTargetType, id: string, changes: Record<string, unknown>) =>
    db(() =>
      appendAudit(
        store.audit,
        { _id: _auditId(recordId), actor: `operator:${op.credentialId}`, requestId: op.requestId, action, target: { type, id }, changes },
        now(),
      ),
    );

  // -------------------------------------------------------------------------
  // Reads
  // -------------------------------------------------------------------------

  async function listBusinesses(q: ListLimit) {
    const page = await _page(store.businesses, {}, "_id", q);
    return { data: page.items.map(businessView), nextCursor: page.nextCursor };
  }

  async function getBusiness(id: string) {
    const doc = await db(() => store.businesses.get(id));
    if (!doc) throw _notFound("business");
    const domains = await db(() => store.domains.find({ businessId: id }, { sort: [{ field: "_id", direction: 1 }], limit: 1000 }));
    return { ...businessView(doc), domains: domains.items.map((d) => d._id) };
  }

  async function listDomains(q: DomainListInput) {
    const filter: Filter = {};
    if (q.businessId) filter.businessId = q.businessId;
    if (q.approval) filter.approval = q.approval;
    const page = await _page(store.domains, filter, "_id", q);
    return { data: page.items.map(domainView), nextCursor: page.nextCursor };
  }

  async function getDomain(host: string) {
    return domainView(await _domain(host));
  }

  async function listKeys(q: KeyListInput) {
    const filter: Filter = {};
    if (q.businessId) filter.businessId = q.businessId;
    if (q.scheme) filter.scheme = TO_SCHEME[q.scheme];
    const t = now();
    if (q.status === "revoked") filter.revoked = true;
    if (q.status === "expired") Object.assign(filter, { revoked: false, expiresAt: { $lte: t } });
    if (q.status === "active") Object.assign(filter, { revoked: false, $or: [{ expiresAt: null }, { expiresAt: { $gt: t } }] });
    const page = await _page(store.credentials, filter, "credentialId", q);
    return { data: page.items.map((d) => keyView(d, t)), nextCursor: page.nextCursor };
  }

  async function getKey(keyId: string) {
    return keyView(await _key(keyId), now());
  }

  async function listAudit(q: AuditListInput) {
    const filter: Filter = {};
    if (q.targetId) filter["target.id"] = q.targetId;
    if (q.action) filter.action = q.action;
    let page;
    try {
      page = await store.audit.find(filter, {
        sort: [{ field: "atMs", direction: -1 }],
        limit: q.limit ?? DEFAULT_LIMIT,
        cursor: q.cursor ?? null,
      });
    } catch (e) {
      if (isInvalidQueryError(e)) throw _badCursor();
      throw _unavailable(e);
    }
    return { data: page.items.map(auditView), nextCursor: page.nextCursor };
  }

  // -------------------------------------------------------------------------
  // Keys
  // -------------------------------------------------------------------------

  async function createKey(op: OperatorCall, input: KeyCreateInput): Promise<AdminAnswer> {
    const scheme = TO_SCHEME[input.scheme];
    const owner = await _owner(scheme, input.businessId);
    const expiresAt = input.expiresAt === undefined ? null : _deadline(input.expiresAt, "/expiresAt", false);
    let plainKey: string | undefined;
    const answer = await mutate(op, { ...input }, async (recordId) => {
      const earlier = await db(() => store.credentials.findOne({ createdBy: recordId }));
      const credentialId = earlier?.credentialId ?? input.id ?? `${input.businessId ?? "operator"}-${randomBytes(5).toString("hex")}`;
      const issued = _issueKey(input.scheme, owner.state);
      const doc: CredentialDoc = {
        _id: hashSecret(issued.key),
        credentialId,
        scheme,
        businessId: input.businessId ?? null,
        ipWhitelisted: input.ipWhitelisted ?? [],
        revoked: false,
        revokedAt: null,
        expiresAt,
        hint: issued.hint,
        source: "operator",
        seed: null,
        createdBy: recordId,
        rolledFrom: null,
        rolledTo: null,
        rev: 1,
        createdAt: earlier?.createdAt ?? iso(),
        updatedAt: iso(),
      };
      await _issue(doc, earlier);
      plainKey = issued.key;
      await audit(op, recordId, "key.create", "key", credentialId, {
        scheme: input.scheme,
        businessId: doc.businessId,
        ipWhitelisted: doc.ipWhitelisted,
        expiresAt: input.expiresAt ?? null,
      });
      await directory.changed({ kind: "credential", id: credentialId });
      log.event("directory_key_created", { requestId: op.requestId, operator: op.credentialId, keyId: credentialId, scheme: input.scheme, businessId: doc.businessId });
      return { status: 201, body: { key: keyView(doc, now()), plainKey: null, plainKeyNote: PLAIN_KEY_NOTE } };
    });
    return answer.replayed ? answer : { ...answer, plainKey };
  }

  async function rollKey(op: OperatorCall, keyId: string, input: KeyRollInput): Promise<AdminAnswer> {
    await _key(keyId);
    const deadline = _deadline(input.oldKeyExpiresAt, "/oldKeyExpiresAt", true);
    let plainKey: string | undefined;
    const answer = await mutate(op, { keyId, ...input }, async (recordId) => {
      const old = await _key(keyId);
      const earlier = await db(() => store.credentials.findOne({ createdBy: recordId }));
      const resumed = old.lastChange?.op === recordId;
      if (!resumed) {
        if (old.revoked || (old.expiresAt !== null && old.expiresAt <= now()))
          throw _keyState("The key is revoked or expired; create a new key instead.");
        if (old.rolledTo !== null) throw _keyState(`The key was already rolled to "${old.rolledTo}"; roll that key.`);
      }
      const owner = await _owner(old.scheme, old.businessId ?? undefined);
      const issued = _issueKey(TO_API[old.scheme], owner.state);
      const credentialId = earlier?.credentialId ?? `${old.businessId ?? "operator"}-${randomBytes(5).toString("hex")}`;
      const next: CredentialDoc = {
        _id: hashSecret(issued.key),
        credentialId,
        scheme: old.scheme,
        businessId: old.businessId,
        ipWhitelisted: [...old.ipWhitelisted],
        revoked: false,
        revokedAt: null,
        expiresAt: null,
        hint: issued.hint,
        source: "operator",
        seed: null,
        createdBy: recordId,
        rolledFrom: old.credentialId,
        rolledTo: null,
        rev: 1,
        createdAt: earlier?.createdAt ?? iso(),
        updatedAt: iso(),
      };
      // The new key first: a failure before the old key's deadline is set leaves both valid.
      await _issue(next, earlier);
      plainKey = issued.key;
      const expiresAt = Math.min(old.expiresAt ?? Number.POSITIVE_INFINITY, deadline);
      const previous = resumed
        ? await _resume(old, "key", keyId, op, recordId)
        : await _apply(store.credentials, old, "key", keyId, op, recordId, "key.roll", { expiresAt, rolledTo: credentialId }, {
            newKeyId: credentialId,
            oldKeyExpiresAt: new Date(expiresAt).toISOString(),
          });
      await directory.changed({ kind: "credential", id: keyId });
      await directory.changed({ kind: "credential", id: credentialId });
      log.event("directory_key_rolled", { requestId: op.requestId, operator: op.credentialId, keyId, newKeyId: credentialId });
      const t = now();
      return { status: 201, body: { key: keyView(next, t), plainKey: null, plainKeyNote: PLAIN_KEY_NOTE, previous: keyView(previous, t) } };
    });
    return answer.replayed ? answer : { ...answer, plainKey };
  }

  async function revokeKey(op: OperatorCall, keyId: string): Promise<AdminAnswer> {
    await _key(keyId);
    return mutate(op, { keyId }, async (recordId) => {
      let doc = await _key(keyId);
      if (doc.lastChange?.op === recordId) doc = await _resume(doc, "key", keyId, op, recordId);
      else if (!doc.revoked) {
        doc = await _apply(store.credentials, doc, "key", keyId, op, recordId, "key.revoke", { revoked: true, revokedAt: iso() }, {
          revoked: { from: false, to: true },
        });
        log.event("directory_key_revoked", { requestId: op.requestId, operator: op.credentialId, keyId });
      }
      await directory.changed({ kind: "credential", id: keyId });
      return { status: 200, body: { key: keyView(doc, now()) } };
    });
  }

  // -------------------------------------------------------------------------
  // Domains
  // -------------------------------------------------------------------------

  async function updateDomain(op: OperatorCall, host: string, input: DomainUpdateInput): Promise<AdminAnswer> {
    await _domain(host);
    return mutate(op, { host, ...input }, async (recordId) => {
      let doc = await _domain(host);
      if (doc.lastChange?.op === recordId) doc = await _resume(doc, "domain", host, op, recordId);
      else {
        const set: Partial<DomainDoc> = {};
        const changes: Record<string, unknown> = {};
        const fee = input.signFee === undefined ? undefined : ngnToKobo(input.signFee)!;
        if (fee !== undefined && fee !== doc.signFeeKobo) {
          set.signFeeKobo = fee;
          changes.signFee = { from: koboToNgn(doc.signFeeKobo), to: koboToNgn(fee) };
        }
        if (input.autoTransmit !== undefined && input.autoTransmit !== doc.autoTransmit) {
          set.autoTransmit = input.autoTransmit;
          changes.autoTransmit = { from: doc.autoTransmit, to: input.autoTransmit };
        }
        if (Object.keys(changes).length > 0) doc = await _apply(store.domains, doc, "domain", host, op, recordId, "domain.update", set, changes);
      }
      await directory.changed({ kind: "domain", id: host, modeVersion: doc.modeVersion });
      return { status: 200, body: domainView(doc) };
    });
  }

  async function changeMode(op: OperatorCall, host: string, input: ModeChangeInput): Promise<AdminAnswer> {
    await _domain(host);
    return mutate(op, { host, ...input }, async (recordId) => {
      let doc = await _domain(host);
      if (doc.lastChange?.op === recordId) doc = await _resume(doc, "domain", host, op, recordId);
      else {
        let set: Partial<DomainDoc> | null = null;
        let action = "domain.mode_change";
        if (doc.approval === "pending_approval") {
          if (doc.mode !== input.mode) set = { mode: input.mode }; // not served yet: nothing to drain
        } else if (doc.approval === "draining") {
          // Back to the current mode: the drain is called off; nothing was approved, modeVersion stays.
          if (doc.pendingMode !== input.mode) {
            set = { approval: "approved", pendingMode: null, drainingSince: null };
            action = "domain.mode_change_cancelled";
          }
        } else {
          if (doc.mode === input.mode) throw _approvalState(`The domain is approved in ${input.mode} mode already.`);
          set = { approval: "draining", pendingMode: input.mode, drainingSince: iso() };
        }
        if (set) {
          doc = await _apply(store.domains, doc, "domain", host, op, recordId, action, set, _domainChanges(doc, { ...doc, ...set }));
          log.event("directory_domain_mode_change", { requestId: op.requestId, operator: op.credentialId, host, approval: doc.approval, mode: doc.mode, pendingMode: doc.pendingMode });
        }
      }
      await directory.changed({ kind: "domain", id: host, modeVersion: doc.modeVersion });
      return { status: 200, body: { ...domainView(doc), ...(doc.approval === "draining" ? { retryAfterSeconds: o.drainRetryAfterSeconds } : {}) } };
    });
  }

  async function approveDomain(op: OperatorCall, host: string): Promise<AdminAnswer> {
    await _domain(host);
    return mutate(op, { host }, async (recordId) => {
      let doc = await _domain(host);
      if (doc.lastChange?.op === recordId) doc = await _resume(doc, "domain", host, op, recordId);
      else {
        if (doc.approval === "approved") throw _approvalState("The domain is approved; nothing awaits approval (start with a mode change).");
        const set: Partial<DomainDoc> = {
          approval: "approved",
          mode: doc.approval === "draining" && doc.pendingMode ? doc.pendingMode : doc.mode,
          pendingMode: null,
          drainingSince: null,
          modeVersion: doc.modeVersion + 1,
        };
        doc = await _apply(store.domains, doc, "domain", host, op, recordId, "domain.approve", set, _domainChanges(doc, { ...doc, ...set }));
        log.event("directory_domain_approved", { requestId: op.requestId, operator: op.credentialId, host, mode: doc.mode, modeVersion: doc.modeVersion });
      }
      await directory.changed({ kind: "domain", id: host, modeVersion: doc.modeVersion });
      return { status: 200, body: domainView(doc) };
    });
  }

  /**
   * One change of one record: a compare-and-set that also records the change as the record's
   * `lastChange`, then its audit record. A concurrent writer in between loses nothing: this request
   * fails (domains: 409 GW_DOMAIN_APPROVAL_STATE_CHANGED; keys: 503, the same request again resumes).
   */
  async function _apply<T extends DomainDoc | CredentialDoc>(
    coll: Collection<T>,
    doc: T,
    type: AuditTargetType,
    targetId: string,
    op: OperatorCall,
    recordId: string,
    action: string,
    set: Partial<T>,
    changes: Record<string, unknown>,
  ): Promise<T> {
    const lastChange: LastChange = { op: recordId, action, changes };
    const updated = await db(() =>
      coll.findOneAndUpdate({ _id: doc._id, rev: doc.rev }, { $set: { ...set, lastChange, updatedAt: iso() }, $inc: { rev: 1 } }),
    );
    if (!updated) throw type === "domain" ? _approvalState("The domain changed while this request ran; read it and decide again.") : _raced();
    await audit(op, recordId, action, type, targetId, changes);
    return updated;
  }

  /** A record this mutation changed already (a resumed run): its audit record is completed, nothing else. */
  async function _resume<T extends DomainDoc | CredentialDoc>(doc: T, type: AuditTargetType, targetId: string, op: OperatorCall, recordId: string): Promise<T> {
    const c = doc.lastChange!;
    await audit(op, recordId, c.action, type, targetId, c.changes);
    return doc;
  }

  // -------------------------------------------------------------------------
  // Internal helpers
  // -------------------------------------------------------------------------

  async function _domain(host: string): Promise<DomainDoc> {
    const doc = await db(() => store.domains.get(host));
    if (!doc) throw gwError("GW_DOMAIN_NOT_PROVISIONED", { detail: "No domain with that host in the directory." });
    return doc;
  }

  async function _key(keyId: string): Promise<CredentialDoc> {
    const doc = await db(() => store.credentials.findOne({ credentialId: keyId }));
    if (!doc) throw _notFound("key");
    return doc;
  }

  /** The owner a key of `scheme` needs: its business (with that product), or none for operator keys. */
  async function _owner(scheme: CredentialScheme, businessId: string | undefined): Promise<{ state: "TEST" | "LIVE" | null }> {
    if (scheme === "admin") {
      if (businessId !== undefined) throw _invalidBody("/businessId", "MISMATCH", "operator keys belong to no business");
      return { state: null };
    }
    if (businessId === undefined) throw _invalidBody("/businessId", "REQUIRED", "gateway and collections keys need their business");
    const business = await db(() => store.businesses.get(businessId));
    if (!business) throw _notFound("business");
    if (scheme === "apiKey" ? !business.gateway : !business.collections)
      throw _invalidBody("/scheme", "MISMATCH", `the business does not use the ${scheme === "apiKey" ? "invoice gateway" : "collections"} product`);
    return { state: business.state };
  }

  /** Stores a newly issued key; an earlier, never-shown key of the same operation is replaced. */
  async function _issue(doc: CredentialDoc, earlier: CredentialDoc | null): Promise<void> {
    if (earlier) await db(() => store.credentials.delete(earlier._id));
    try {
      await db(() => store.credentials.insert(doc));
    } catch (e) {
      if (isDuplicateKeyError(e)) throw _invalidBody("/id", "MISMATCH", "a key with this id exists");
      throw e;
    }
  }

  function _deadline(text: string, pointer: string, pastMeansNow: boolean): number {
    const at = Date.parse(text);
    const t = now();
    if (at <= t && !pastMeansNow) throw _invalidBody(pointer, "RANGE", "must be in the future");
    if (at > t + MAX_KEY_DEADLINE_MS) throw _invalidBody(pointer, "RANGE", "at most 366 days ahead");
    return Math.max(at, t);
  }

  /** Pages a collection by a unique string field; the cursor is that field's last value. */
  async function _page<T extends Doc>(coll: Collection<T>, filter: Filter, field: string, q: ListLimit): Promise<{ items: T[]; nextCursor: string | null }> {
    const limit = q.limit ?? DEFAULT_LIMIT;
    const f: Filter = { ...filter };
    if (q.cursor !== undefined) {
      const after = Buffer.from(q.cursor, "base64url").toString("utf8");
      if (after === "") throw _badCursor();
      f[field] = { $gt: after };
    }
    const page = await db(() => coll.find(f, { sort: [{ field, direction: 1 }], limit: limit + 1 }));
    const items = page.items.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items,
      nextCursor: page.items.length > limit && last ? Buffer.from(String(last[field]), "utf8").toString("base64url") : null,
    };
  }

  return { listBusinesses, getBusiness, listDomains, getDomain, listKeys, getKey, listAudit, createKey, rollKey, revokeKey, updateDomain, changeMode, approveDomain };
}

export type DirectoryAdmin = ReturnType<typeof createDirectoryAdmin>;

// --- Views ---

export function businessView(d: { _id: string; name: string; state: string; gateway: boolean; collections: { webhook: { url: string } | null; feeBearerDefault: string } | null }) {
  return {
    id: d._id,
    name: d.name,
    state: d.state,
    invoiceGateway: d.gateway,
    collections: d.collections ? { feeBearerDefault: d.collections.feeBearerDefault, webhookUrl: d.collections.webhook?.url ?? null } : null,
  };
}

export function domainView(d: DomainDoc) {
  return {
    host: d._id,
    businessId: d.businessId,
    mode: d.mode,
    modeVersion: d.modeVersion,
    approval: d.approval,
    pendingMode: d.pendingMode,
    drainingSince: d.drainingSince,
    signFee: koboToNgn(d.signFeeKobo),
    autoTransmit: d.autoTransmit,
    updatedAt: d.updatedAt,
  };
}

/** A key without its hash or plain value; `status` is computed at `now`. */
export function keyView(d: CredentialDoc, now: number) {
  return {
    id: d.credentialId,
    scheme: TO_API[d.scheme],
    businessId: d.businessId,
    status: d.revoked ? "revoked" : d.expiresAt !== null && d.expiresAt <= now ? "expired" : "active",
    hint: d.hint,
    ipWhitelisted: d.ipWhitelisted,
    expiresAt: d.expiresAt === null ? null : new Date(d.expiresAt).toISOString(),
    revokedAt: d.revokedAt,
    rolledFrom: d.rolledFrom,
    rolledTo: d.rolledTo,
    source: d.source,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

export function auditView(d: AuditDoc) {
  return { id: d._id, at: d.at, actor: d.actor, requestId: d.requestId, action: d.action, target: d.target, changes: d.changes };
}

// --- Internal helpers ---

const PLAIN_KEY_NOTE = "The plain key is shown once, in the first answer; it is not stored. If you did not receive it, roll or revoke this key.";

/** A random key: a recognisable prefix (product and state) and 192 random bits. */
function _issueKey(scheme: ApiScheme, state: "TEST" | "LIVE" | null): { key: string; hint: string } {
  const env = state === "LIVE" ? "live" : "test";
  const prefix = scheme === "gateway" ? `gw_${env}_` : scheme === "collections" ? `sk_${env}_` : "admin_";
  const key = prefix + randomBytes(24).toString("base64url");
  return { key, hint: `${prefix}…${key.slice(-4)}` };
}

function _auditId(recordId: string): string {
  return "op_" + createHash("sha256").update(recordId).digest("base64url").slice(0, 32);
}

function _domainChanges(before: DomainDoc, after: Partial<DomainDoc>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of ["approval", "mode", "pendingMode", "modeVersion"] as const)
    if (before[f] !== after[f]) out[f] = { from: before[f], to: after[f] };
  return out;
}

function _unavailable(e: unknown): unknown {
  if (isGatewayError(e) || !isDependencyUnavailableError(e)) return e;
  return gwError("GW_MANAGEMENT_SERVICE_UNAVAILABLE", {
    detail: "The directory store is unavailable; reads may retry with backoff, mutations only with the same idempotency key.",
    cause: e,
  });
}

/** Another writer changed the record between our read and our write: the same request again resumes. */
function _raced(): GatewayError {
  return gwError("GW_MANAGEMENT_SERVICE_UNAVAILABLE", {
    detail: "The key changed while this request ran; send the same request again with the same idempotency key.",
  });
}

function _notFound(what: "business" | "key"): GatewayError {
  return gwError("GW_OPERATION_NOT_FOUND", { detail: what === "business" ? "No business with that id." : "No key with that id." });
}

function _approvalState(detail: string): GatewayError {
  return gwError("GW_DOMAIN_APPROVAL_STATE_CHANGED", { detail });
}

function _keyState(detail: string): GatewayError {
  return gwError("GW_REQUEST_VALIDATION_FAILED", {
    detail,
    violations: [{ location: "path", field: "keyId", code: "MISMATCH", detail }],
  });
}

function _invalidBody(pointer: string, code: "REQUIRED" | "MISMATCH" | "RANGE", detail: string): GatewayError {
  return gwError("GW_REQUEST_VALIDATION_FAILED", {
    detail: "The request has invalid values; see errors.",
    violations: [{ location: "body", pointer, code, detail }],
  });
}

function _badCursor(): GatewayError {
  return gwError("GW_REQUEST_VALIDATION_FAILED", {
    detail: "The request has invalid values; see errors.",
    violations: [{ location: "query", field: "cursor", code: "FORMAT", detail: "an opaque cursor from nextCursor" }],
  });
}
