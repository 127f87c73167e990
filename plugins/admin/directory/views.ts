/**
 * Answers of the directory-admin routes, built from stored records: never a key's hash or plain
 * value, never a webhook secret. Keys are named by the API's scheme names (gateway, collections,
 * operator), which map one to one to the directory's credential schemes.
 */
import type { AuditDoc, AuditTargetType, CredentialDoc, CredentialScheme, DomainDoc } from "../../../core/directory-store.ts";
import { koboToNgn } from "../../../core/money.ts";

export type ApiScheme = "gateway" | "collections" | "operator";

export const TO_SCHEME: Record<ApiScheme, CredentialScheme> = { gateway: "apiKey", collections: "bearer", operator: "admin" };
export const TO_API: Record<CredentialScheme, ApiScheme> = { apiKey: "gateway", bearer: "collections", admin: "operator" };

/** `{ data, nextCursor }` of every list. */
export interface ListPage<T> {
  data: T[];
  nextCursor: string | null;
}

export interface BusinessView {
  id: string;
  name: string;
  state: string;
  invoiceGateway: boolean;
  collections: { feeBearerDefault: string; webhookUrl: string | null } | null;
}

export interface DomainView {
  host: string;
  businessId: string;
  mode: DomainDoc["mode"];
  modeVersion: number;
  approval: DomainDoc["approval"];
  pendingMode: DomainDoc["pendingMode"];
  drainingSince: string | null;
  signFee: number;
  autoTransmit: boolean;
  updatedAt: string;
}

export interface KeyView {
  id: string;
  scheme: ApiScheme;
  businessId: string | null;
  status: "active" | "revoked" | "expired";
  hint: string | null;
  ipWhitelisted: string[];
  expiresAt: string | null;
  revokedAt: string | null;
  rolledFrom: string | null;
  rolledTo: string | null;
  source: CredentialDoc["source"];
  createdAt: string;
  updatedAt: string;
}

export interface AuditView {
  id: string;
  at: string;
  actor: string;
  requestId: string | null;
  action: string;
  target: { type: AuditTargetType; id: string };
  changes: Record<string, unknown>;
}

export function businessView(d: {
  _id: string;
  name: string;
  state: string;
  gateway: boolean;
  collections: { webhook: { url: string } | null; feeBearerDefault: string } | null;
}): BusinessView {
  return {
    id: d._id,
    name: d.name,
    state: d.state,
    invoiceGateway: d.gateway,
    collections: d.collections ? { feeBearerDefault: d.collections.feeBearerDefault, webhookUrl: d.collections.webhook?.url ?? null } : null,
  };
}

export function domainView(d: DomainDoc): DomainView {
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
export function keyView(d: CredentialDoc, now: number): KeyView {
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

export function auditView(d: AuditDoc): AuditView {
  return { id: d._id, at: d.at, actor: d.actor, requestId: d.requestId, action: d.action, target: d.target, changes: d.changes };
}
