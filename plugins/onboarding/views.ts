/**
 * Response bodies of the onboarding routes, built from stored documents only (reads never call the
 * regulator). QR material appears only as its fingerprint; operator credential ids only in operator
 * answers.
 */
import { cleanIdentity, type RegulatorIdentity } from "./identity.ts";
import type { IdentityVersionDoc, MigrationDoc, MigrationSide, ReviewDoc, ReviewStatus, SubBusinessDoc, VersionSource } from "./store.ts";

/** The represented business (spec §2.1, DECISIONS.md field list, plus identityVersion and cryptoFingerprint). */
export interface SubBusinessView {
  gatewaySubBusinessId: string;
  externalBusinessId: string;
  regulatorIdentity: RegulatorIdentity;
  reference: string;
  registeredName: string;
  tin: string;
  irnTemplate: string | null;
  cryptoVersion: number;
  cryptoFingerprint: string | null;
  identityVersion: number;
  state: "TEST" | "LIVE";
  createdAt: string;
  updatedAt: string;
}

export function subBusinessView(d: SubBusinessDoc): SubBusinessView {
  const identity = cleanIdentity(d.identity);
  return {
    gatewaySubBusinessId: d.gatewaySubBusinessId,
    externalBusinessId: d.externalBusinessId,
    regulatorIdentity: identity,
    reference: identity.entityReference,
    registeredName: identity.businessName,
    tin: identity.tin,
    irnTemplate: identity.irnTemplate,
    cryptoVersion: d.cryptoVersion,
    cryptoFingerprint: d.crypto?.fingerprint ?? null,
    identityVersion: d.identityVersion,
    state: d.state,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

/** Spec §2.2: the reverification result. */
export interface ReverificationView {
  gatewaySubBusinessId: string;
  reviewId: string;
  version: number;
  status: "unchanged" | "review_created" | "review_pending";
  driftClass: "initial" | "none" | "additive" | "protected";
  changedFields: string[];
  requiresProtectedMigration: boolean;
  observedIdentity: RegulatorIdentity;
}

export function reverificationView(r: ReviewDoc, status: ReverificationView["status"]): ReverificationView {
  return {
    gatewaySubBusinessId: r.gatewaySubBusinessId,
    reviewId: r._id,
    version: r.baseVersion,
    status,
    driftClass: r.driftClass,
    changedFields: [...r.changedFields],
    requiresProtectedMigration: r.requiresProtectedMigration,
    observedIdentity: cleanIdentity(r.observedIdentity),
  };
}

/** A review; `decidedBy` (the operator credential id) only in operator answers. */
export interface ReviewView {
  reviewId: string;
  gatewaySubBusinessId: string;
  status: ReviewStatus;
  driftClass: ReviewDoc["driftClass"];
  changedFields: string[];
  requiresProtectedMigration: boolean;
  baseVersion: number;
  appliedVersion: number | null;
  observedIdentity: RegulatorIdentity;
  createdAt: string;
  decidedAt: string | null;
  decidedBy?: string | null;
}

/** A review in the operator's list, with its business and state. */
export interface OperatorReviewView extends ReviewView {
  businessId: string;
  state: "TEST" | "LIVE";
}

export function reviewView(r: ReviewDoc, operator = false): ReviewView {
  return {
    reviewId: r._id,
    gatewaySubBusinessId: r.gatewaySubBusinessId,
    status: r.status,
    driftClass: r.driftClass,
    changedFields: [...r.changedFields],
    requiresProtectedMigration: r.requiresProtectedMigration,
    baseVersion: r.baseVersion,
    appliedVersion: r.appliedVersion,
    observedIdentity: cleanIdentity(r.observedIdentity),
    createdAt: r.createdAt,
    decidedAt: r.decidedAt,
    ...(operator ? { decidedBy: r.decidedBy } : {}),
  };
}

/** One identity version of a represented business. */
export interface VersionView {
  version: number;
  current: boolean;
  source: VersionSource;
  reviewId: string | null;
  identity: RegulatorIdentity;
  createdAt: string;
}

export function versionView(v: IdentityVersionDoc, current: number): VersionView {
  return {
    version: v.version,
    current: v.version === current,
    source: v.source,
    reviewId: v.reviewId,
    identity: cleanIdentity(v.identity),
    createdAt: v.createdAt,
  };
}

/** A protected migration's audit record; `operatorCredentialId` only in operator answers. */
export interface MigrationView {
  migrationId: string;
  reviewId: string;
  gatewaySubBusinessId: string;
  at: string;
  from: MigrationSide;
  to: MigrationSide;
  operatorCredentialId?: string;
}

export function migrationView(m: MigrationDoc, operator = false): MigrationView {
  return {
    migrationId: m._id,
    reviewId: m.reviewId,
    gatewaySubBusinessId: m.gatewaySubBusinessId,
    at: m.at,
    from: { ...m.from },
    to: { ...m.to },
    ...(operator ? { operatorCredentialId: m.operatorCredentialId } : {}),
  };
}
