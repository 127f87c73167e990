/**
 * Onboarding domain logic: represented businesses (spec §2.1), identity reverification and review
 * (§2.2, §3.1), QR-material rotation, and the operator's review decisions and protected migrations.
 * Sees only ports: the document store (through OnboardingStore) and the regulator client.
 *
 * Taxpayer credentials are used for the two regulator calls of one request and dropped: they are
 * never stored (the idempotency fingerprint holds an HMAC of the e-mail, nothing of the password),
 * never logged and never put in an error.
 */
import { hash, randomUUID } from "node:crypto";
import { gwError, isGatewayError, type GatewayError } from "../../core/errors/gateway-error.ts";
import type { GwCode } from "../../core/errors/catalog.ts";
import type { Logger } from "../../core/log.ts";
import { isDependencyUnavailableError, isDuplicateKeyError, type Collection, type Doc, type Filter } from "../../adapters/ports.ts";
import type { RegulatorClient, RegulatorState, TaxpayerLogin } from "../../adapters/regulator/port.ts";
import {
  cleanIdentity,
  diffIdentity,
  identityOf,
  selectForOnboarding,
  selectForReverification,
} from "./identity.ts";
import {
  createIdempotency,
  idempotencyId,
  KeepClaim,
  type IdempotencyDoc,
  type IdempotentAnswer,
  type Outcome,
  type PresentedFingerprint,
} from "../../core/idempotency.ts";
import type { DecisionInput, ListInput, MigrationInput, OnboardingInput, ReverificationInput, ReviewListInput, RotationInput } from "./schemas.ts";
import { DEFAULT_LIST_LIMIT } from "./schemas.ts";
import {
  cryptoFingerprint,
  identityKeyOf,
  keyedHash,
  subKeyOf,
  type CryptoMaterial,
  type MigrationDoc,
  type MigrationSide,
  type OnboardingStore,
  type ReviewDoc,
  type SubBusinessDoc,
  type VersionSource,
} from "./store.ts";
import { migrationView, reverificationView, reviewView, subBusinessView, versionView, type SubBusinessView } from "./views.ts";

/** A customer request: the top-level business and state come from the approved hostname. */
export interface Caller {
  businessId: string;
  state: RegulatorState;
  requestId: string;
  /** Route id, part of the idempotency scope. */
  route: string;
  /** The validated x-idempotency-key (mutations). */
  idempotencyKey: string;
}

/** An operator request (x-admin-api-key). */
export interface OperatorCaller {
  credentialId: string;
  requestId: string;
  route: string;
  idempotencyKey: string;
}

export interface OnboardingServiceOptions {
  store: OnboardingStore;
  regulator: RegulatorClient;
  log: Logger;
  /** HMAC key for idempotency keys and fingerprints (store.ts deriveIdempotencySecret). */
  secret: Buffer;
  now: () => number;
  /** An in-progress mutation older than this is stale (its holder presumed dead). */
  staleAfterMs: number;
  /** How long a concurrent duplicate waits for the first request. */
  inFlightWaitMs: number;
  pollMs: number;
  /** How long idempotency records are kept. */
  retentionMs: number;
}

export interface ListPage {
  data: SubBusinessView[];
  nextCursor: string | null;
}

export function createOnboardingService(o: OnboardingServiceOptions) {
  const { store, regulator, log, secret, now } = o;
  const idem = createIdempotency(store.idempotency, {
    now,
    staleAfterMs: o.staleAfterMs,
    waitMs: o.inFlightWaitMs,
    pollMs: o.pollMs,
    retentionMs: o.retentionMs,
    unavailable: (e) => _storeError(e, "GW_MANAGEMENT_SERVICE_UNAVAILABLE"),
  });
  const iso = () => new Date(now()).toISOString();
  const mac = (part: string, value: string) => _mac(secret, part, value);

  /** Store reads (and writes with nothing uncertain behind them): failures → GW_MANAGEMENT_SERVICE_UNAVAILABLE. */
  async function db<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw _storeError(e, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
    }
  }

  /** The caller's represented business: 404 unknown (in the caller's state), 403 another business's. */
  async function owned(caller: Pick<Caller, "businessId" | "state">, gatewaySubBusinessId: string): Promise<SubBusinessDoc> {
    const doc = await db(() => store.subBusinesses.get(subKeyOf(caller.state, gatewaySubBusinessId)));
    if (!doc) throw gwError("GW_SUB_BUSINESS_NOT_FOUND", { detail: "No represented business with that gatewaySubBusinessId." });
    if (doc.businessId !== caller.businessId)
      throw gwError("GW_SUB_BUSINESS_FORBIDDEN", { detail: "That represented business belongs to another top-level business." });
    return doc;
  }

  async function verifiedEntity(state: RegulatorState, login: TaxpayerLogin, requestId: string) {
    const { entityId } = await regulator.authenticate(state, login, { requestId });
    return regulator.getEntity(state, entityId, { requestId });
  }

  /** Credentials as the regulator needs them, or GW_REG_CREDENTIALS_REQUIRED (nothing claimed, no call). */
  function requireLogin(creds: OnboardingInput["regulatorCredentials"]): TaxpayerLogin {
    const email = creds?.email;
    const password = creds?.password;
    if (!email || !password)
      throw gwError("GW_REG_CREDENTIALS_REQUIRED", {
        detail: "Send regulatorCredentials with both email and password; retry with the same idempotency key.",
        violations: [
          ...(!email ? [{ location: "body" as const, pointer: "/regulatorCredentials/email", code: "REQUIRED" as const, detail: "required" }] : []),
          ...(!password ? [{ location: "body" as const, pointer: "/regulatorCredentials/password", code: "REQUIRED" as const, detail: "required" }] : []),
        ],
      });
    return { email, password };
  }

  const emailPart = (creds: OnboardingInput["regulatorCredentials"]) => _emailPart(secret, creds);

  // -------------------------------------------------------------------------
  // History (best effort, idempotent: the represented business document is the truth)
  // -------------------------------------------------------------------------

  async function sealVersion(sub: SubBusinessDoc, source: VersionSource, reviewId: string | null): Promise<void> {
    try {
      await store.versions.insert({
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
      if (!isDuplicateKeyError(e)) log.warn("onboarding_history_write_failed", { gatewaySubBusinessId: sub.gatewaySubBusinessId, kind: "identity" });
    }
  }

  async function sealCrypto(sub: SubBusinessDoc, strict: boolean): Promise<void> {
    const c = sub.crypto;
    if (!c) return;
    try {
      await store.crypto.insert({
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
      if (strict) throw _storeError(e, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
      log.warn("onboarding_history_write_failed", { gatewaySubBusinessId: sub.gatewaySubBusinessId, kind: "crypto" });
    }
  }

  // -------------------------------------------------------------------------
  // Onboarding
  // -------------------------------------------------------------------------

  async function onboard(caller: Caller, input: OnboardingInput): Promise<IdempotentAnswer> {
    const recordId = idempotencyId(secret, caller.businessId, caller.route, caller.idempotencyKey);
    const material = input.cryptoMaterial;
    return idem.run({
      recordId,
      scope: caller.businessId,
      route: caller.route,
      fingerprint: onboardingFingerprint(secret, input),
      omittable: ["email", "crypto"],
      owner: caller.requestId,
      beforeClaim: () => void requireLogin(input.regulatorCredentials),
      onStale: async (rec) => {
        const sub = await db(() => store.subBusinesses.findOne({ onboardingKey: rec._id }));
        if (!sub)
          throw gwError("GW_ONBOARDING_NOT_RESUMABLE", {
            detail: "The earlier onboarding with this key did not complete and cannot be resumed; stop and contact support.",
          });
        await sealVersion(sub, "onboarding", null);
        await sealCrypto(sub, false);
        return { status: 201, body: subBusinessView(sub) };
      },
      execute: async () => {
        const login = requireLogin(input.regulatorCredentials);
        const entity = await verifiedEntity(caller.state, login, caller.requestId);
        const business = selectForOnboarding(entity, input.tin);
        const identity = identityOf(entity, business);
        const at = iso();
        const subKey = subKeyOf(caller.state, business.id);
        const crypto: CryptoMaterial | null = material
          ? {
              version: 1,
              publicKey: material.publicKey,
              certificate: material.certificate,
              fingerprint: cryptoFingerprint(material.publicKey, material.certificate),
              installedBy: recordId,
              installedAt: at,
            }
          : null;
        const doc: SubBusinessDoc = {
          _id: subKey,
          gatewaySubBusinessId: business.id,
          businessId: caller.businessId,
          state: caller.state,
          externalBusinessId: business.id,
          identityKey: identityKeyOf(caller.state, business.id),
          identity,
          identityVersion: 1,
          cryptoVersion: crypto ? 1 : 0,
          crypto,
          onboardingKey: recordId,
          createdAt: at,
          updatedAt: at,
        };
        try {
          await store.subBusinesses.insert(doc);
        } catch (e) {
          if (!isDuplicateKeyError(e))
            throw new KeepClaim(_uncertain(e, "GW_ONBOARDING_SERVICE_INVALID_RESPONSE"));
          // An earlier, uncertain insert of this very onboarding landed: it is ours.
          const mine = await db(() => store.subBusinesses.findOne({ onboardingKey: recordId }));
          if (mine) return { status: 201, body: subBusinessView(mine) };
          throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", {
            detail: "This regulator business is already represented through the gateway (spec §7.2 exception 2); do not start new work, contact support.",
          });
        }
        await sealVersion(doc, "onboarding", null);
        await sealCrypto(doc, false);
        log.event("onboarding_sub_business_created", {
          requestId: caller.requestId,
          businessId: caller.businessId,
          state: caller.state,
          gatewaySubBusinessId: doc.gatewaySubBusinessId,
          cryptoVersion: doc.cryptoVersion,
        });
        return { status: 201, body: subBusinessView(doc) };
      },
    });
  }

  // -------------------------------------------------------------------------
  // Reads
  // -------------------------------------------------------------------------

  async function list(caller: Pick<Caller, "businessId" | "state">, input: ListInput): Promise<ListPage> {
    const page = await _byCreatedAt(store.subBusinesses, { businessId: caller.businessId, state: caller.state }, input);
    return { data: page.items.map(subBusinessView), nextCursor: page.nextCursor };
  }

  /** Operator: reviews of every business in one status (default pending), oldest first. */
  async function listReviews(input: ReviewListInput) {
    const filter: Filter = { status: input.status };
    if (input.businessId !== undefined) filter.businessId = input.businessId;
    const page = await _byCreatedAt(store.reviews, filter, input);
    return { data: page.items.map((r) => ({ ...reviewView(r, true), businessId: r.businessId, state: r.state })), nextCursor: page.nextCursor };
  }

  /** One page of `filter`'s documents, oldest first (createdAt, then _id), from `input.cursor` on. */
  async function _byCreatedAt<T extends Doc & { createdAt: string }>(coll: Collection<T>, filter: Filter, input: ListInput) {
    const limit = input.limit ?? DEFAULT_LIST_LIMIT;
    if (input.cursor !== undefined) {
      const [t, id] = _decodeCursor(input.cursor);
      filter = { ...filter, $or: [{ createdAt: { $gt: t } }, { createdAt: t, _id: { $gt: id } }] };
    }
    const page = await db(() => coll.find(filter, { sort: [{ field: "createdAt", direction: 1 }], limit: limit + 1 }));
    const items = page.items.slice(0, limit);
    const last = items[items.length - 1];
    return { items, nextCursor: page.items.length > limit && last ? _encodeCursor(last.createdAt, last._id) : null };
  }

  async function get(caller: Pick<Caller, "businessId" | "state">, gatewaySubBusinessId: string): Promise<SubBusinessView> {
    return subBusinessView(await owned(caller, gatewaySubBusinessId));
  }

  async function identityVersions(caller: Pick<Caller, "businessId" | "state">, gatewaySubBusinessId: string) {
    const sub = await owned(caller, gatewaySubBusinessId);
    const [versions, reviews, migrations] = await db(() =>
      Promise.all([
        store.versions.find({ subKey: sub._id }, { sort: [{ field: "version", direction: 1 }], limit: 1000 }),
        store.reviews.find({ subKey: sub._id }, { sort: [{ field: "createdAt", direction: -1 }], limit: 100 }),
        store.migrations.find({ subKey: sub._id }, { sort: [{ field: "at", direction: 1 }], limit: 100 }),
      ]),
    );
    const history = versions.items.map((v) => versionView(v, sub.identityVersion));
    // The represented business is the truth: a version whose history write was lost is shown from it.
    if (!history.some((v) => v.version === sub.identityVersion))
      history.push({
        version: sub.identityVersion,
        current: true,
        source: sub.identityVersion === 1 ? "onboarding" : "review",
        reviewId: null,
        identity: cleanIdentity(sub.identity),
        createdAt: sub.updatedAt,
      });
    const pending = reviews.items.find((r) => r.status === "pending");
    return {
      gatewaySubBusinessId: sub.gatewaySubBusinessId,
      externalBusinessId: sub.externalBusinessId,
      currentVersion: sub.identityVersion,
      pendingReviewId: pending?._id ?? null,
      versions: history,
      reviews: reviews.items.map((r) => reviewView(r)),
      migrations: migrations.items.map((m) => migrationView(m)),
    };
  }

  // -------------------------------------------------------------------------
  // Identity reverification
  // -------------------------------------------------------------------------

  async function reverify(caller: Caller, gatewaySubBusinessId: string, input: ReverificationInput): Promise<IdempotentAnswer> {
    await owned(caller, gatewaySubBusinessId);
    const recordId = idempotencyId(secret, caller.businessId, caller.route, caller.idempotencyKey);
    return idem.run({
      recordId,
      scope: caller.businessId,
      route: caller.route,
      fingerprint: { target: mac("target", gatewaySubBusinessId), email: emailPart(input.regulatorCredentials) },
      omittable: ["email"],
      owner: caller.requestId,
      beforeClaim: () => void requireLogin(input.regulatorCredentials),
      // Reverification is repeatable (reviews are deduplicated): a dead holder's work is redone.
      onStale: async () => "takeover",
      execute: async () => {
        const login = requireLogin(input.regulatorCredentials);
        const entity = await verifiedEntity(caller.state, login, caller.requestId);
        const sub = await owned(caller, gatewaySubBusinessId);
        const observed = identityOf(entity, selectForReverification(entity, sub.identity));
        const diff = diffIdentity(sub.identity, observed);
        const pending = await db(() => store.reviews.findOne({ pendingKey: sub._id }));
        const driftHash = hash("sha256", JSON.stringify([sub.identityVersion, cleanIdentity(observed)]));
        const record = (status: "unchanged" | "pending", driftClass: ReviewDoc["driftClass"]): ReviewDoc => ({
          _id: randomUUID(),
          status,
          driftClass,
          ...(status === "pending" ? { pendingKey: sub._id } : {}),
          subKey: sub._id,
          gatewaySubBusinessId: sub.gatewaySubBusinessId,
          businessId: sub.businessId,
          state: sub.state,
          changedFields: diff.changedFields,
          requiresProtectedMigration: diff.requiresProtectedMigration,
          baseVersion: sub.identityVersion,
          observedIdentity: cleanIdentity(observed),
          driftHash,
          createdAt: iso(),
          decidedAt: null,
          decidedBy: null,
          decisionKey: null,
          appliedVersion: null,
          migrationFrom: null,
        });
        if (diff.changedFields.length === 0) {
          if (pending)
            throw gwError("GW_IDENTITY_REVIEW_CONFLICT", {
              detail: "A review of another identity change is pending; read identity-versions and wait for the operator's decision.",
            });
          const check = record("unchanged", sub.identityVersion === 1 ? "initial" : "none");
          await db(() => store.reviews.insert(check));
          return { status: 200, body: reverificationView(check, "unchanged") };
        }
        if (pending) return { status: 200, body: _pendingAnswer(pending, driftHash) };
        const review = record("pending", diff.driftClass);
        try {
          await store.reviews.insert(review);
        } catch (e) {
          if (!isDuplicateKeyError(e)) throw _storeError(e, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
          // A concurrent reverification created the pending review first.
          const raced = await db(() => store.reviews.findOne({ pendingKey: sub._id }));
          if (!raced) throw gwError("GW_MANAGEMENT_SERVICE_UNAVAILABLE", { detail: "The review could not be recorded; retry with the same key." });
          return { status: 200, body: _pendingAnswer(raced, driftHash) };
        }
        log.event("onboarding_identity_review_created", {
          requestId: caller.requestId,
          businessId: caller.businessId,
          gatewaySubBusinessId: sub.gatewaySubBusinessId,
          reviewId: review._id,
          driftClass: review.driftClass,
          changedFields: review.changedFields,
        });
        return { status: 200, body: reverificationView(review, "review_created") };
      },
    });
  }

  function _pendingAnswer(pending: ReviewDoc, driftHash: string) {
    if (pending.driftHash !== driftHash)
      throw gwError("GW_IDENTITY_REVIEW_CONFLICT", {
        detail: "Another identity change awaits review; read identity-versions and wait for the operator's decision.",
      });
    return reverificationView(pending, "review_pending");
  }

  // -------------------------------------------------------------------------
  // QR material rotation
  // -------------------------------------------------------------------------

  async function rotateCrypto(caller: Caller, gatewaySubBusinessId: string, input: RotationInput): Promise<IdempotentAnswer> {
    await owned(caller, gatewaySubBusinessId);
    const recordId = idempotencyId(secret, caller.businessId, caller.route, caller.idempotencyKey);
    const fingerprint = cryptoFingerprint(input.publicKey, input.certificate);
    return idem.run({
      recordId,
      scope: caller.businessId,
      route: caller.route,
      fingerprint: {
        target: mac("target", gatewaySubBusinessId),
        material: fingerprint,
        proof: input.expectedCryptoVersion === undefined ? null : String(input.expectedCryptoVersion),
      },
      owner: caller.requestId,
      onStale: async (rec) => {
        // Stale means long past any store deadline: whether the holder's compare-and-set landed is known.
        const sub = await owned(caller, gatewaySubBusinessId);
        const installed =
          sub.crypto?.installedBy === rec._id || (await db(() => store.crypto.findOne({ subKey: sub._id, installedBy: rec._id }))) !== null;
        return installed ? { status: 200, body: subBusinessView(sub) } : "takeover";
      },
      execute: async () => {
        for (let attempt = 0; attempt < 5; attempt++) {
          const sub = await owned(caller, gatewaySubBusinessId);
          const base = sub.cryptoVersion;
          if (input.expectedCryptoVersion !== undefined && input.expectedCryptoVersion !== base) throw _staleProof();
          // The material in force goes to the history before it is replaced (recovery reads it).
          await sealCrypto(sub, true);
          const at = iso();
          const next: CryptoMaterial = {
            version: base + 1,
            publicKey: input.publicKey,
            certificate: input.certificate,
            fingerprint,
            installedBy: recordId,
            installedAt: at,
          };
          let updated: SubBusinessDoc | null;
          try {
            updated = await store.subBusinesses.findOneAndUpdate(
              { _id: sub._id, cryptoVersion: base },
              { $set: { cryptoVersion: base + 1, crypto: next, updatedAt: at } },
            );
          } catch (e) {
            // The replacement may or may not be saved (spec §7.2 exception 1): keep the claim.
            throw new KeepClaim(_uncertain(e, "GW_CRYPTO_MATERIAL_SERVICE_INVALID_RESPONSE"));
          }
          if (updated) {
            await sealCrypto(updated, false);
            log.event("onboarding_crypto_material_rotated", {
              requestId: caller.requestId,
              businessId: caller.businessId,
              gatewaySubBusinessId: updated.gatewaySubBusinessId,
              cryptoVersion: updated.cryptoVersion,
            });
            return { status: 200, body: subBusinessView(updated) };
          }
          // Another rotation applied on the same base version first.
          if (input.expectedCryptoVersion !== undefined) throw _staleProof();
        }
        throw gwError("GW_MANAGEMENT_SERVICE_UNAVAILABLE", { detail: "Too many concurrent rotations; retry with the same key." });
      },
    });
  }

  // -------------------------------------------------------------------------
  // Operator: review decisions and protected migrations
  // -------------------------------------------------------------------------

  async function _operatorReview(gatewaySubBusinessId: string, reviewId: string): Promise<ReviewDoc> {
    const [sub, review] = await db(() =>
      Promise.all([store.subBusinesses.findOne({ gatewaySubBusinessId }), store.reviews.get(reviewId)]),
    );
    if (!sub) throw gwError("GW_SUB_BUSINESS_NOT_FOUND", { detail: "No represented business with that gatewaySubBusinessId." });
    if (!review || review.gatewaySubBusinessId !== gatewaySubBusinessId || review.status === "unchanged")
      throw gwError("GW_IDENTITY_REVIEW_NOT_FOUND", { detail: "No review with that id for this represented business." });
    return review;
  }

  async function decideReview(op: OperatorCaller, gatewaySubBusinessId: string, reviewId: string, input: DecisionInput) {
    await _operatorReview(gatewaySubBusinessId, reviewId);
    const recordId = idempotencyId(secret, `operator:${op.credentialId}`, op.route, op.idempotencyKey);
    return idem.run({
      recordId,
      scope: `operator:${op.credentialId}`,
      route: op.route,
      fingerprint: { target: mac("target", reviewId), decision: input.decision },
      owner: op.requestId,
      onStale: (rec) => _recoverDecision(rec, reviewId, op),
      execute: async () => {
        const review = await _operatorReview(gatewaySubBusinessId, reviewId);
        if (review.status !== "pending") throw _decided();
        if (input.decision === "approve" && review.requiresProtectedMigration)
          throw gwError("GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED", {
            detail: "The entity ID, business ID or TIN changed: apply it with POST /admin/sub-businesses/{id}/identity-migrations.",
          });
        const decided = await _claimDecision(review, input.decision === "approve" ? "approved" : "rejected", op, recordId, null);
        return _finishDecision(decided, op);
      },
    });
  }

  async function migrate(op: OperatorCaller, gatewaySubBusinessId: string, input: MigrationInput) {
    await _operatorReview(gatewaySubBusinessId, input.reviewId);
    const recordId = idempotencyId(secret, `operator:${op.credentialId}`, op.route, op.idempotencyKey);
    return idem.run({
      recordId,
      scope: `operator:${op.credentialId}`,
      route: op.route,
      fingerprint: { target: mac("target", input.reviewId), sub: mac("sub", gatewaySubBusinessId) },
      owner: op.requestId,
      onStale: (rec) => _recoverDecision(rec, input.reviewId, op),
      execute: async () => {
        const review = await _operatorReview(gatewaySubBusinessId, input.reviewId);
        if (review.status !== "pending") throw _decided();
        if (!review.requiresProtectedMigration)
          throw gwError("GW_IDENTITY_REVIEW_CONFLICT", {
            detail: "This review holds additive drift only; decide it with the review decision route.",
          });
        const sub = await db(() => store.subBusinesses.get(review.subKey));
        if (!sub || sub.identityVersion !== review.baseVersion) throw _decided();
        const from: MigrationSide = {
          version: sub.identityVersion,
          externalBusinessId: sub.externalBusinessId,
          entityId: sub.identity.entityId,
          tin: sub.identity.tin,
        };
        const decided = await _claimDecision(review, "migrated", op, recordId, from);
        return _finishDecision(decided, op);
      },
    });
  }

  /** pending → decided, by compare-and-set (a concurrent decision loses with GW_IDENTITY_REVIEW_CONFLICT). */
  async function _claimDecision(
    review: ReviewDoc,
    status: "approved" | "rejected" | "migrated",
    op: OperatorCaller,
    recordId: string,
    migrationFrom: MigrationSide | null,
  ): Promise<ReviewDoc> {
    const updated = await db(() =>
      store.reviews.findOneAndUpdate(
        { _id: review._id, status: "pending" },
        {
          $set: {
            status,
            decidedAt: iso(),
            decidedBy: op.credentialId,
            decisionKey: recordId,
            appliedVersion: status === "rejected" ? null : review.baseVersion + 1,
            migrationFrom,
          },
          $unset: ["pendingKey"],
        },
      ),
    );
    if (!updated) throw _decided();
    return updated;
  }

  /** Rolls a decided review forward (idempotent): new identity version, migration audit. */
  async function _finishDecision(review: ReviewDoc, op: OperatorCaller): Promise<Outcome> {
    let sub = await db(() => store.subBusinesses.get(review.subKey));
    if (!sub) throw gwError("GW_IDENTITY_SERVICE_INVALID_RESPONSE", { detail: "The represented business could not be read." });
    let migration: MigrationDoc | null = null;
    if (review.status === "approved" || review.status === "migrated") {
      sub = await _applyIdentity(sub, review);
      if (review.status === "migrated") migration = await _auditMigration(sub, review, op);
    }
    log.event("onboarding_identity_review_decided", {
      requestId: op.requestId,
      operatorCredentialId: op.credentialId,
      reviewId: review._id,
      gatewaySubBusinessId: review.gatewaySubBusinessId,
      status: review.status,
      appliedVersion: review.appliedVersion,
    });
    return {
      status: 200,
      body: {
        review: reviewView(review, true),
        subBusiness: subBusinessView(sub),
        ...(migration ? { migration: migrationView(migration, true) } : {}),
      },
    };
  }

  async function _applyIdentity(sub: SubBusinessDoc, review: ReviewDoc): Promise<SubBusinessDoc> {
    const target = review.appliedVersion!;
    const source: VersionSource = review.status === "migrated" ? "migration" : "review";
    if (sub.identityVersion < target) {
      const observed = cleanIdentity(review.observedIdentity);
      const set: Record<string, unknown> = { identity: observed, identityVersion: target, updatedAt: iso() };
      if (review.status === "migrated") {
        set.externalBusinessId = observed.regulatorBusinessId;
        set.identityKey = identityKeyOf(sub.state, observed.regulatorBusinessId);
      }
      let updated: SubBusinessDoc | null;
      try {
        updated = await store.subBusinesses.findOneAndUpdate({ _id: sub._id, identityVersion: review.baseVersion }, { $set: set });
      } catch (e) {
        if (isDuplicateKeyError(e)) {
          await _reopen(review);
          throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", {
            detail: "The new regulator business is already represented through the gateway (spec §7.2 exception 2); the review stays pending.",
          });
        }
        throw new KeepClaim(_uncertain(e, "GW_IDENTITY_SERVICE_INVALID_RESPONSE"));
      }
      if (!updated) {
        const now2 = await db(() => store.subBusinesses.get(sub._id));
        if (!now2 || now2.identityVersion < target)
          throw new KeepClaim(gwError("GW_IDENTITY_SERVICE_INVALID_RESPONSE", { detail: "The identity version moved during the decision." }));
        updated = now2;
      }
      sub = updated;
    }
    await sealVersion({ ...sub, identityVersion: target, identity: review.observedIdentity, updatedAt: review.decidedAt ?? sub.updatedAt }, source, review._id);
    return sub;
  }

  /** A migration refused by the identity index: the review goes back to pending. */
  async function _reopen(review: ReviewDoc): Promise<void> {
    await store.reviews
      .findOneAndUpdate(
        { _id: review._id, status: review.status, decisionKey: review.decisionKey },
        {
          $set: {
            status: "pending",
            pendingKey: review.subKey,
            decidedAt: null,
            decidedBy: null,
            decisionKey: null,
            appliedVersion: null,
            migrationFrom: null,
          },
        },
      )
      .catch(() => null);
  }

  async function _auditMigration(sub: SubBusinessDoc, review: ReviewDoc, op: OperatorCaller): Promise<MigrationDoc> {
    const observed = review.observedIdentity;
    const doc: MigrationDoc = {
      _id: `migration-${review._id}`,
      subKey: sub._id,
      gatewaySubBusinessId: sub.gatewaySubBusinessId,
      reviewId: review._id,
      operatorCredentialId: review.decidedBy ?? op.credentialId,
      requestId: op.requestId,
      at: review.decidedAt ?? iso(),
      from: review.migrationFrom!,
      to: {
        version: review.appliedVersion!,
        externalBusinessId: observed.regulatorBusinessId,
        entityId: observed.entityId,
        tin: observed.tin,
      },
    };
    try {
      await store.migrations.insert(doc);
      log.event("onboarding_identity_migrated", {
        requestId: op.requestId,
        operatorCredentialId: doc.operatorCredentialId,
        reviewId: review._id,
        gatewaySubBusinessId: sub.gatewaySubBusinessId,
        fromVersion: doc.from.version,
        toVersion: doc.to.version,
      });
      return doc;
    } catch (e) {
      if (isDuplicateKeyError(e)) return (await db(() => store.migrations.get(doc._id))) ?? doc;
      throw new KeepClaim(_uncertain(e, "GW_IDENTITY_SERVICE_INVALID_RESPONSE"));
    }
  }

  async function _recoverDecision(rec: IdempotencyDoc, reviewId: string, op: OperatorCaller): Promise<Outcome | "takeover"> {
    const review = await db(() => store.reviews.get(reviewId));
    if (!review || review.decisionKey !== rec._id) return "takeover";
    return _finishDecision(review, op);
  }

  return { onboard, list, listReviews, get, identityVersions, reverify, rotateCrypto, decideReview, migrate };
}

export type OnboardingService = ReturnType<typeof createOnboardingService>;

/**
 * The onboarding content fingerprint, without the password: HMAC of the e-mail (omittable on a
 * completed replay), HMAC of the TIN (null when absent), fingerprint of the QR material (omittable).
 */
export function onboardingFingerprint(secret: Buffer, input: OnboardingInput): PresentedFingerprint {
  const material = input.cryptoMaterial;
  return {
    email: _emailPart(secret, input.regulatorCredentials),
    tin: input.tin !== undefined ? _mac(secret, "tin", input.tin) : null,
    crypto: material ? cryptoFingerprint(material.publicKey, material.certificate) : undefined,
  };
}

// --- Internal helpers ---

function _mac(secret: Buffer, part: string, value: string): string {
  return keyedHash(secret, `${part}\u0000${value}`);
}

function _emailPart(secret: Buffer, creds: OnboardingInput["regulatorCredentials"]): string | undefined {
  return creds?.email ? _mac(secret, "email", creds.email.trim().toLowerCase()) : undefined;
}

/** A store failure → `code`; anything else unchanged (an unexpected error stays GW_INTERNAL_ERROR). */
function _storeError(e: unknown, code: GwCode): unknown {
  if (isGatewayError(e)) return e;
  if (isDependencyUnavailableError(e))
    return gwError(code, { detail: "The represented-business store is unavailable; retry as the retry field says.", cause: e });
  return e;
}

/** A failure after which the effect is uncertain: always answered with `code`. */
function _uncertain(e: unknown, code: GwCode): GatewayError {
  if (isGatewayError(e)) return e;
  return gwError(code, { detail: "The outcome could not be confirmed; do not retry automatically, contact support.", cause: e });
}

function _decided(): GatewayError {
  return gwError("GW_IDENTITY_REVIEW_CONFLICT", { detail: "The review is already decided; read identity-versions first." });
}

function _staleProof(): GatewayError {
  return gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", {
    detail: "expectedCryptoVersion is no longer the current cryptoVersion (stale rotation proof); read the represented business, do not retry.",
  });
}

function _encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id]), "utf8").toString("base64url");
}

function _decodeCursor(cursor: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && typeof v[1] === "string" && v[0].length <= 40 && v[1].length <= 600)
      return [v[0], v[1]];
  } catch {
    // fall through
  }
  throw gwError("GW_REQUEST_VALIDATION_FAILED", {
    detail: "The request has invalid values; see errors.",
    violations: [{ location: "query", field: "cursor", code: "FORMAT", detail: "not a cursor returned as nextCursor" }],
  });
}
