/**
 * What the tenant directory keeps in the document store (docs/operations.md "Directory"), and the
 * one reading of each document. Six collections:
 *
 *   directory_businesses    `_id` = business id; name, state, collections settings. File-owned:
 *                           only the config file (seed / --sync) writes them.
 *   directory_domains       `_id` = canonical host; owner, mode, `modeVersion`, approval
 *                           (`approved` | `draining` | `pending_approval`), sign fee, autoTransmit.
 *   directory_credentials   `_id` = "sha256:<hex>" of the key (the plain key is never stored), unique
 *                           `credentialId`; scheme, owner, ipWhitelisted, revoked, expiresAt.
 *   directory_audit         append-only: who (operator credential id or the config file), what,
 *                           when, the changed fields; never a key, a hash or a secret.
 *   directory_operations    idempotency records of the Admin API's mutations (core/idempotency.ts).
 *   directory_webhook_endpoints  a business's webhook endpoints and their signing secrets
 *                           (core/directory/webhook-store.ts).
 *
 * Every record carries `rev`, incremented by every write: writers compare-and-set on it, and the
 * runtime directory reuses what it derived from a credential while its `rev` is unchanged.
 * `seed` holds the config file's values as last applied (the decK-style three-way merge of
 * core/directory/seed.ts): a field still equal to its seed value was not changed by an operator.
 */
import { randomUUID } from "node:crypto";
import type { Collection, Doc, DocumentStore } from "../../adapters/ports.ts";
import type { IdempotencyDoc } from "../idempotency.ts";
import { openWebhookEndpoints, WEBHOOK_ENDPOINTS_COLLECTION, type WebhookEndpointDoc } from "./webhook-store.ts";

export type Mode = "passthrough" | "stored";
export type BusinessState = "TEST" | "LIVE";
export type CredentialScheme = "apiKey" | "bearer" | "admin";
export type Approval = "approved" | "draining" | "pending_approval";

export const MODES: readonly Mode[] = ["passthrough", "stored"];
export const APPROVALS: readonly Approval[] = ["approved", "draining", "pending_approval"];
export const SCHEMES: readonly CredentialScheme[] = ["apiKey", "bearer", "admin"];

export const DIRECTORY_COLLECTIONS = {
  businesses: "directory_businesses",
  domains: "directory_domains",
  credentials: "directory_credentials",
  audit: "directory_audit",
  operations: "directory_operations",
  webhookEndpoints: WEBHOOK_ENDPOINTS_COLLECTION,
} as const;

export interface WebhookSettings {
  url: string;
  /** Standard Webhooks signing secret (never answered by the Admin API). */
  secret: string;
}

export interface BusinessDoc extends Doc {
  name: string;
  state: BusinessState;
  collections: { webhook: WebhookSettings | null; feeBearerDefault: "MERCHANT" | "CUSTOMER" } | null;
  /** The business has an invoice-gateway section (domains, keys, wallet). */
  gateway: boolean;
  /** The invoice webhook endpoint (Stored mode events); absent on records written before it existed. */
  gatewayWebhook?: WebhookSettings | null;
  rev: number;
  createdAt: string;
  updatedAt: string;
}

/** The fields of a domain the config file declares (and operators may change since). */
export interface DomainFields {
  businessId: string;
  mode: Mode;
  approval: Approval;
  signFeeKobo: number;
  autoTransmit: boolean;
}

/**
 * The last Admin API change of a record, written in the same compare-and-set as the change itself:
 * a mutation resumed after a failure finds its own change here and completes the audit record.
 */
export interface LastChange {
  /** The idempotency record of the mutation. */
  op: string;
  action: string;
  changes: Record<string, unknown>;
}

export interface DomainDoc extends Doc, DomainFields {
  /** +1 at every approval in a (possibly new) mode; a request authorized under another is refused. */
  modeVersion: number;
  /** While draining: the mode it will be approved in. */
  pendingMode: Mode | null;
  drainingSince: string | null;
  seed: DomainFields | null;
  lastChange?: LastChange;
  rev: number;
  createdAt: string;
  updatedAt: string;
}

export interface CredentialDoc extends Doc {
  credentialId: string;
  scheme: CredentialScheme;
  /** Owning business; null for operator keys. */
  businessId: string | null;
  ipWhitelisted: string[];
  revoked: boolean;
  revokedAt: string | null;
  /** Epoch ms after which the key is refused (a rolled key's deadline); null: no expiry. */
  expiresAt: number | null;
  /** A recognisable fragment for people ("gw_test_…a1b2"); never enough to use the key. */
  hint: string | null;
  source: "config" | "operator";
  /** The config file's values when last seeded (config keys only). */
  seed: { revoked: boolean } | null;
  /** Idempotency record of the Admin API mutation that created the key (operator keys; absent otherwise). */
  createdBy?: string;
  rolledFrom: string | null;
  rolledTo: string | null;
  lastChange?: LastChange;
  rev: number;
  createdAt: string;
  updatedAt: string;
}

export type AuditTargetType = "business" | "domain" | "key" | "operation" | "webhook_endpoint" | "webhook_delivery";

export interface AuditEntry {
  /** Given when a retried write must not append twice (the Admin API: derived from its idempotency record). */
  _id?: string;
  /** "operator:<credential id>", "config" (seeded at boot) or "config-sync" (--sync). */
  actor: string;
  requestId: string | null;
  action: string;
  target: { type: AuditTargetType; id: string };
  changes: Record<string, unknown>;
}

export interface AuditDoc extends Doc {
  at: string;
  atMs: number;
  /** "operator:<credential id>", "config" (seeded at boot) or "config-sync" (--sync). */
  actor: string;
  requestId: string | null;
  /** "key.create", "key.roll", "key.revoke", "domain.update", "domain.mode_change", "domain.approve", "seed.create", … */
  action: string;
  target: { type: AuditTargetType; id: string };
  /** What changed: field → { from, to }, or the created record's non-secret fields. */
  changes: Record<string, unknown>;
}

export interface DirectoryStore {
  businesses: Collection<BusinessDoc>;
  domains: Collection<DomainDoc>;
  credentials: Collection<CredentialDoc>;
  audit: Collection<AuditDoc>;
  operations: Collection<IdempotencyDoc>;
  /** Webhook endpoints (core/directory/webhook-store.ts). */
  webhookEndpoints: Collection<WebhookEndpointDoc>;
}

export function openDirectoryStore(store: DocumentStore): DirectoryStore {
  return {
    businesses: store.collection<BusinessDoc>(DIRECTORY_COLLECTIONS.businesses),
    domains: store.collection<DomainDoc>(DIRECTORY_COLLECTIONS.domains, { indexes: [{ fields: ["businessId"] }] }),
    credentials: store.collection<CredentialDoc>(DIRECTORY_COLLECTIONS.credentials, {
      indexes: [
        { fields: ["credentialId"], unique: true },
        { fields: ["createdBy"], unique: true, sparse: true },
        { fields: ["businessId", "scheme"] },
      ],
    }),
    // The audit log's filters, newest first: by target, by actor and by action (the operator console;
    // a time range rides on each, or on atMs alone).
    audit: store.collection<AuditDoc>(DIRECTORY_COLLECTIONS.audit, {
      indexes: [{ fields: ["atMs"] }, { fields: ["target.id", "atMs"] }, { fields: ["actor", "atMs"] }, { fields: ["action", "atMs"] }],
    }),
    operations: store.collection<IdempotencyDoc>(DIRECTORY_COLLECTIONS.operations, { ttlField: "expiresAtMs" }),
    webhookEndpoints: openWebhookEndpoints(store),
  };
}

/** A directory document that does not have the shape this version writes: a corrupt or foreign record. */
export class DirectoryRecordError extends Error {
  readonly isDirectoryRecordError = true;
  constructor(collection: string, id: string, problem: string) {
    super(`${collection} record ${JSON.stringify(id.slice(0, 80))}: ${problem}`);
    this.name = "DirectoryRecordError";
  }
}

/** Appends one audit record (an `_id` collision is a retried write of the same record, not an error). */
export async function appendAudit(audit: Collection<AuditDoc>, entry: AuditEntry, nowMs: number): Promise<void> {
  const doc: AuditDoc = {
    _id: entry._id ?? randomUUID(),
    at: new Date(nowMs).toISOString(),
    atMs: nowMs,
    actor: entry.actor,
    requestId: entry.requestId,
    action: entry.action,
    target: entry.target,
    changes: entry.changes,
  };
  try {
    await audit.insert(doc);
  } catch (e) {
    if ((e as { isDuplicateKeyError?: boolean }).isDuplicateKeyError !== true) throw e;
  }
}

/** Throws DirectoryRecordError unless `doc` is a domain record this version can serve. */
export function checkDomainDoc(doc: DomainDoc): void {
  const bad = (problem: string) => new DirectoryRecordError(DIRECTORY_COLLECTIONS.domains, doc._id, problem);
  if (typeof doc.businessId !== "string" || doc.businessId === "") throw bad("no owning business");
  if (!Number.isInteger(doc.modeVersion) || doc.modeVersion < 1) throw bad("modeVersion is not a positive integer");
  if (!APPROVALS.includes(doc.approval)) throw bad("unknown approval state");
  if (!Number.isInteger(doc.signFeeKobo) || doc.signFeeKobo < 0) throw bad("signFeeKobo is not an amount");
  if (typeof doc.autoTransmit !== "boolean") throw bad("autoTransmit is not a boolean");
}

/** Throws DirectoryRecordError unless `doc` is a credential record this version can check. */
export function checkCredentialDoc(doc: CredentialDoc): void {
  const bad = (problem: string) => new DirectoryRecordError(DIRECTORY_COLLECTIONS.credentials, doc.credentialId ?? "?", problem);
  if (typeof doc.credentialId !== "string" || doc.credentialId === "") throw bad("no credential id");
  if (!SCHEMES.includes(doc.scheme)) throw bad("unknown scheme");
  if (doc.scheme === "admin" ? doc.businessId !== null : typeof doc.businessId !== "string") throw bad("owner does not match the scheme");
  if (!Array.isArray(doc.ipWhitelisted) || doc.ipWhitelisted.some((a) => typeof a !== "string")) throw bad("ipWhitelisted is not a list");
  if (typeof doc.revoked !== "boolean") throw bad("revoked is not a boolean");
  if (doc.expiresAt !== null && !Number.isFinite(doc.expiresAt)) throw bad("expiresAt is not a time");
  if (!Number.isInteger(doc.rev)) throw bad("rev is not an integer");
}
