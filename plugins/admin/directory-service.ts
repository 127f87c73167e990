/**
 * The operator's control plane over the tenant directory (docs/operations.md "Admin API"): reads of
 * businesses, domains, keys and the audit log; key create / roll / revoke; a domain's sign fee and
 * autoTransmit; the mode change with drain and reapproval (DECISIONS.md "Stored mode — Mode change").
 * This file declares the service and composes its parts in directory/:
 *
 *   reads.ts         businesses, domains, keys, audit log
 *   keys.ts          key create, roll, revoke, IP allowlist
 *   domains.ts       sign fee and autoTransmit; the steps every domain mutation shares
 *   mode-change.ts   mode change (drain) and approval
 *   apply.ts         one change of one record (compare-and-set + audit); env.ts, lookups.ts, views.ts, failures.ts
 *
 * Every mutation is idempotent on x-idempotency-key (core/idempotency.ts, scope = the operator's
 * credential): a replay answers what the first request answered (201 → 200) and changes nothing;
 * the same key with other content is 409 GW_IDEMPOTENCY_CONTENT_CONFLICT. Each mutation is written so
 * that running it again after a failure resumes it: its one state change is a single-document
 * compare-and-set (a roll writes the new key before the old key's deadline, so a failure between
 * leaves both keys valid, never none), then the audit record (its `_id` derived from the idempotency
 * record, so it is appended once), then the change is announced to every process. A store failure
 * answers 503 GW_MANAGEMENT_SERVICE_UNAVAILABLE (the routes declare it) and releases the key: the
 * same request again completes what was started.
 */
import type { AuditListInput, DomainListInput, DomainUpdateInput, KeyCreateInput, KeyListInput, KeyRollInput, KeyUpdateInput, ListLimit, ModeChangeInput } from "./directory-schemas.ts";
import { updateDomain } from "./directory/domains.ts";
import { createDirectoryEnv, type AdminAnswer, type DirectoryAdminOptions, type OperatorCall } from "./directory/env.ts";
import { createKey, revokeKey, rollKey, updateKey } from "./directory/keys.ts";
import { approveDomain, changeMode } from "./directory/mode-change.ts";
import { getBusiness, getDomain, getKey, listAudit, listBusinesses, listDomains, listKeys } from "./directory/reads.ts";
import type { AuditView, BusinessView, DomainView, KeyView, ListPage } from "./directory/views.ts";

export { operatorCall, type AdminAnswer, type DirectoryAdminOptions, type OperatorCall } from "./directory/env.ts";
export { auditView, businessView, domainView, keyView, type ApiScheme, type AuditView, type BusinessView, type DomainView, type KeyView, type ListPage } from "./directory/views.ts";

/** What the directory routes call. Mutations answer `{ status, body, replayed, plainKey? }`. */
export interface DirectoryAdmin {
  listBusinesses(q: ListLimit): Promise<ListPage<BusinessView>>;
  getBusiness(id: string): Promise<BusinessView & { domains: string[] }>;
  listDomains(q: DomainListInput): Promise<ListPage<DomainView>>;
  getDomain(host: string): Promise<DomainView>;
  listKeys(q: KeyListInput): Promise<ListPage<KeyView>>;
  getKey(keyId: string): Promise<KeyView>;
  listAudit(q: AuditListInput): Promise<ListPage<AuditView>>;
  /** The plain key is in the first answer only (`plainKey`). */
  createKey(op: OperatorCall, input: KeyCreateInput): Promise<AdminAnswer>;
  /** A new key for the same owner; the old one stays valid until `oldKeyExpiresAt`. */
  rollKey(op: OperatorCall, keyId: string, input: KeyRollInput): Promise<AdminAnswer>;
  revokeKey(op: OperatorCall, keyId: string): Promise<AdminAnswer>;
  /** Replaces a key's IP allowlist. */
  updateKey(op: OperatorCall, keyId: string, input: KeyUpdateInput): Promise<AdminAnswer>;
  updateDomain(op: OperatorCall, host: string, input: DomainUpdateInput): Promise<AdminAnswer>;
  changeMode(op: OperatorCall, host: string, input: ModeChangeInput): Promise<AdminAnswer>;
  approveDomain(op: OperatorCall, host: string): Promise<AdminAnswer>;
}

export function createDirectoryAdmin(o: DirectoryAdminOptions): DirectoryAdmin {
  const env = createDirectoryEnv(o);
  return {
    listBusinesses: (q) => listBusinesses(env, q),
    getBusiness: (id) => getBusiness(env, id),
    listDomains: (q) => listDomains(env, q),
    getDomain: (host) => getDomain(env, host),
    listKeys: (q) => listKeys(env, q),
    getKey: (keyId) => getKey(env, keyId),
    listAudit: (q) => listAudit(env, q),
    createKey: (op, input) => createKey(env, op, input),
    rollKey: (op, keyId, input) => rollKey(env, op, keyId, input),
    revokeKey: (op, keyId) => revokeKey(env, op, keyId),
    updateKey: (op, keyId, input) => updateKey(env, op, keyId, input),
    updateDomain: (op, host, input) => updateDomain(env, op, host, input),
    changeMode: (op, host, input) => changeMode(env, op, host, input),
    approveDomain: (op, host) => approveDomain(env, op, host),
  };
}
