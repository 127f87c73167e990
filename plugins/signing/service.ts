/**
 * Pass-through signing (spec §3.2) with billing, plus the unbilled validation and direct regulator
 * routes. Sees only ports: the document store (SigningStore), the billing ledger and the regulator.
 *
 * One sign request, in order:
 *   1. idempotency record read: same key + same content, completed/frozen → the stored answer;
 *      different content → 409 GW_IDEMPOTENCY_CONTENT_CONFLICT; in progress → wait (bounded) for it
 *   2. represented business + invoice checks (§4.2 rule 4), before anything is claimed
 *   3. claim: unique insert of the record (`_id` per key, unique `attemptKey` per billing identity)
 *   4. debit (fee of the domain) → 5. phase "dispatching" → 6. regulator sign → 7. settle
 *      (confirm / reverse / freeze) → 8. the record completed (or frozen) with the answer
 * A failure before any money effect releases the claim (the same key can be retried).
 */
import { randomUUID } from "node:crypto";
import type { AlertChannel, BillingIdentity, BillingLedger } from "../../adapters/ports.ts";
import { isBillingError, isDependencyUnavailableError, isDuplicateKeyError } from "../../adapters/ports.ts";
import { mapRegulatorFailure, type RegulatorClient, type RegulatorResponse, type RegulatorState } from "../../adapters/regulator/port.ts";
import type { ParsedIrn } from "../../adapters/regulator/irn.ts";
import { repeatUndo, UNDO_REPEAT_MS } from "../../core/background-retry.ts";
import type { GwCode } from "../../core/errors/catalog.ts";
import { gwError, isGatewayError, type GatewayError, type Violation } from "../../core/errors/gateway-error.ts";
import type { Logger } from "../../core/log.ts";
import { checkIrn, type IrnValidationInput } from "./schemas.ts";
import { canonicalJson, keyedHash, type RepresentedBusiness, type SignRecord, type SigningStore, type StoredAnswer } from "./store.ts";

export const SIGN_ROUTE = "POST /api/v1/invoice/sign";

export interface SignCaller {
  requestId: string;
  businessId: string;
  state: RegulatorState;
  domain: string;
  feeKobo: number;
}

export interface SignRequest {
  subBusinessId: string;
  idempotencyKey: string;
  attemptNumber: number;
  document: Record<string, unknown>;
}

/** What a route answers: a regulator response to pass through (errors are thrown). */
export type PassThrough = RegulatorResponse;

export interface SigningServiceOptions {
  store: SigningStore;
  billing: BillingLedger;
  regulator: RegulatorClient;
  log: Logger;
  secret: Buffer;
  now: () => number;
  /** An in-progress record older than this is stale (holder presumed dead). */
  staleAfterMs: number;
  /** How long a concurrent duplicate waits for the first request's answer. */
  waitMs: number;
  pollMs: number;
  retentionMs: number;
  /** Immediate operator signals (spec §6): unconfirmed sign or reversal, incomplete settlement. */
  alerts?: AlertChannel;
}

export function createSigningService(o: SigningServiceOptions) {
  const { store, billing, regulator, log, secret, now } = o;
  const records = store.idempotency;

  async function db<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw _storeError(e);
    }
  }

  /** The caller's represented business: 404 unknown (in the caller's state), 403 another business's. */
  async function representedBusiness(businessId: string, state: RegulatorState, subBusinessId: string): Promise<RepresentedBusiness> {
    const doc = await db(() => store.subBusinesses.get(`${state}:${subBusinessId}`));
    if (!doc) throw gwError("GW_SUB_BUSINESS_NOT_FOUND", { detail: "No represented business with that x-sub-business-id." });
    if (doc.businessId !== businessId)
      throw gwError("GW_SUB_BUSINESS_FORBIDDEN", { detail: "That represented business belongs to another top-level business." });
    return doc;
  }

  // -------------------------------------------------------------------------
  // Sign
  // -------------------------------------------------------------------------

  async function sign(caller: SignCaller, r: SignRequest): Promise<PassThrough> {
    const recordId = `${caller.businessId}|${SIGN_ROUTE}|${keyedHash(secret, `${caller.businessId}\u0000${SIGN_ROUTE}\u0000${r.idempotencyKey}`)}`;
    const fingerprint = keyedHash(secret, `${canonicalJson(r.document)}\u0000${r.subBusinessId}\u0000${r.attemptNumber}`);
    const deadline = now() + o.waitMs;
    let checked: { sub: RepresentedBusiness; irn: ParsedIrn } | null = null;
    for (;;) {
      const rec = await db(() => records.get(recordId));
      if (rec) {
        if (rec.fingerprint !== fingerprint)
          throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", {
            detail: "This idempotency key was used with different content; never reuse a key for different content.",
          });
        if (rec.status !== "in_progress" && rec.answer) return _replay(rec.answer);
        if (now() - rec.startedAtMs >= o.staleAfterMs) {
          const resolved = await _resolveStale(rec, caller);
          if (resolved === "takeover") return _execute(caller, r, rec, fingerprint, checked, true);
          continue;
        }
        if (now() >= deadline)
          throw gwError("GW_SIGN_ATTEMPT_ALREADY_PROCESSED", {
            detail: "A request with this key and attempt number is still being processed; do not resubmit.",
            operationId: rec.operationId,
          });
        await _sleep(o.pollMs);
        continue;
      }
      checked ??= await _check(caller, r);
      const startedAtMs = now();
      const attemptKey = _attemptKey(caller, r, checked.irn.irn);
      const claim: SignRecord = {
        _id: recordId,
        businessId: caller.businessId,
        route: SIGN_ROUTE,
        fingerprint,
        attemptKey,
        operationId: randomUUID(),
        status: "in_progress",
        phase: "claimed",
        owner: caller.requestId,
        startedAtMs,
        completedAtMs: null,
        answer: null,
        money: "none",
        expiresAtMs: startedAtMs + o.retentionMs,
      };
      try {
        await records.insert(claim);
      } catch (e) {
        if (!isDuplicateKeyError(e)) {
          // Not acknowledged, but it may land: nothing ran for it, so it is taken back.
          await _release(claim);
          throw _storeError(e);
        }
        // The key's own record (a concurrent duplicate) → read it again; otherwise the billing
        // identity is held by another key: this attempt number is taken.
        const mine = await db(() => records.get(recordId));
        if (mine) continue;
        const other = await db(() => records.findOne({ attemptKey }));
        if (!other) continue;
        throw gwError("GW_SIGN_ATTEMPT_ALREADY_PROCESSED", {
          detail: "This attempt number was already used for this IRN under another idempotency key; a new attempt needs the next x-attempt-number.",
          operationId: other.operationId,
        });
      }
      return _execute(caller, r, claim, fingerprint, checked, false);
    }
  }

  async function _check(caller: SignCaller, r: SignRequest) {
    const sub = await representedBusiness(caller.businessId, caller.state, r.subBusinessId);
    return { sub, irn: checkInvoice(sub, r.document) };
  }

  async function _execute(
    caller: SignCaller,
    r: SignRequest,
    rec: SignRecord,
    fingerprint: string,
    checked: { sub: RepresentedBusiness; irn: ParsedIrn } | null,
    takenOver: boolean,
  ): Promise<PassThrough> {
    const { irn } = checked ?? (await _check(caller, r));
    const identity: BillingIdentity = { subBusinessId: r.subBusinessId, domain: caller.domain, irn: irn.irn, attemptNumber: r.attemptNumber };
    const operationId = rec.operationId;
    const base = { requestId: caller.requestId, operationId, attemptNumber: r.attemptNumber };

    // --- debit -------------------------------------------------------------
    let debit;
    try {
      debit = await billing.debit(caller.businessId, identity, caller.feeKobo, fingerprint);
    } catch (e) {
      await _release(rec);
      if (isBillingError(e)) {
        const code: GwCode =
          e.reason === "wallet_declined" ? "GW_BILLING_WALLET_DECLINED" : e.reason === "attempt_conflict" ? "GW_BILLING_ATTEMPT_CONFLICT" : "GW_BILLING_REQUEST_REJECTED";
        log.event("signing_billing_refused", { ...base, reason: e.reason });
        throw gwError(code, { detail: _billingDetail(e.reason) });
      }
      log.warn("signing_billing_unavailable", { ...base, takenOver });
      throw gwError("GW_BILLING_SERVICE_UNAVAILABLE", {
        detail: "The fee could not be confirmed; the regulator was not called. Retry with the same key, attempt number and content.",
        cause: e,
      });
    }
    if (debit.kind === "replay" && debit.state !== "debited") {
      // The identity was settled before (record expired or lost): never a second sign for it.
      const err = gwError("GW_SIGN_ATTEMPT_ALREADY_PROCESSED", {
        detail: "This attempt was already processed; a new attempt needs the next x-attempt-number and a new key.",
        operationId,
      });
      await _finish(rec, "completed", _errorAnswer(err), debit.state);
      throw err;
    }

    // --- mark dispatching (a stale record from here on is frozen, never taken over) ---
    const marked = await records
      .updateOne({ _id: rec._id, owner: rec.owner, status: "in_progress" }, { $set: { phase: "dispatching", money: "debited" } })
      .catch(() => false);
    if (!marked) {
      // The regulator was not called; the debit stays and a retry with the same key replays it.
      await _release(rec);
      log.warn("signing_dispatch_mark_failed", base);
      throw gwError("GW_BILLING_SERVICE_UNAVAILABLE", {
        detail: "The attempt could not be recorded; the regulator was not called. Retry with the same key, attempt number and content.",
      });
    }

    // --- sign --------------------------------------------------------------
    let outcome;
    try {
      outcome = await regulator.sign(caller.state, r.document, { requestId: caller.requestId });
    } catch (e) {
      // Thrown = the regulator certainly did not sign.
      const err = isGatewayError(e) ? e : gwError("GW_UPSTREAM_UNAVAILABLE", { cause: e });
      if (err.code === "GW_RATE_LIMIT_EXCEEDED") {
        // Throttled: keep the debit (no second charge on the same-key retry the error asks for).
        await _release(rec);
        log.event("signing_regulator_throttled", base);
        throw err;
      }
      return _reverseAndAnswer(rec, caller, identity, base, err, "not_performed");
    }

    if (outcome.kind === "signed") {
      try {
        await billing.confirm(caller.businessId, identity);
      } catch (e) {
        const err = gwError("GW_SIGN_RECOVERY_UNAVAILABLE", {
          detail: "The invoice was signed and the fee charged, but settlement could not complete; do not resubmit, contact support.",
          operationId,
          cause: e,
        });
        log.error("signing_recovery_unavailable", { ...base, alert: "immediate" });
        o.alerts?.raise({ signal: "sign_recovery_unavailable", dependency: "billing", requestId: caller.requestId, operationId, code: "GW_SIGN_RECOVERY_UNAVAILABLE" });
        await _finish(rec, "completed", _errorAnswer(err), "held");
        throw err;
      }
      const answer: StoredAnswer = {
        kind: "regulator",
        status: outcome.response.status,
        contentType: outcome.response.contentType,
        bodyBase64: Buffer.from(outcome.response.body).toString("base64"),
        headers: outcome.response.headers,
      };
      await _finish(rec, "completed", answer, "confirmed");
      log.event("signing_signed", base);
      return outcome.response;
    }

    if (outcome.kind === "rejected") {
      const err = gwError("GW_SIGN_REJECTED", {
        detail: "The regulator rejected the invoice; the fee was reversed. A new attempt needs the next x-attempt-number and a new key.",
        operationId,
      });
      return _reverseAndAnswer(rec, caller, identity, { ...base, upstreamErrorId: outcome.errorId }, err, "rejected");
    }

    // ambiguous: frozen, never replayed, the debit stays.
    const err = gwError("GW_SIGN_OUTCOME_UNCONFIRMED", {
      detail: "The regulator's result cannot be proved; the invoice may be signed. Do not resubmit or use a new key; contact support with the operationId.",
      operationId,
    });
    log.error("signing_outcome_unconfirmed", { ...base, reason: outcome.reason, alert: "immediate" });
    o.alerts?.raise({ signal: "sign_outcome_unconfirmed", dependency: `regulator:${caller.state}`, operation: "sign", failureClass: outcome.reason, requestId: caller.requestId, operationId, code: "GW_SIGN_OUTCOME_UNCONFIRMED" });
    await _finish(rec, "frozen", _errorAnswer(err), "held");
    throw err;
  }

  async function _reverseAndAnswer(
    rec: SignRecord,
    caller: SignCaller,
    identity: BillingIdentity,
    base: Record<string, unknown>,
    err: GatewayError,
    why: "rejected" | "not_performed",
  ): Promise<never> {
    try {
      await billing.reverse(caller.businessId, identity, why === "rejected" ? "regulator_rejected" : "regulator_not_called");
    } catch (e) {
      const unconfirmed = gwError("GW_SIGN_REVERSAL_UNCONFIRMED", {
        detail: "The regulator did not sign, but the fee reversal could not be confirmed; do not resubmit, contact support.",
        operationId: rec.operationId,
        cause: e,
      });
      log.error("signing_reversal_unconfirmed", { ...base, why, alert: "immediate" });
      o.alerts?.raise({ signal: "sign_reversal_unconfirmed", dependency: "billing", requestId: caller.requestId, operationId: rec.operationId, code: "GW_SIGN_REVERSAL_UNCONFIRMED" });
      await _finish(rec, "completed", _errorAnswer(unconfirmed), "held");
      throw unconfirmed;
    }
    log.event("signing_reversed", { ...base, why });
    await _finish(rec, "completed", _errorAnswer(err), "reversed");
    throw err;
  }

  async function _finish(rec: SignRecord, status: "completed" | "frozen", answer: StoredAnswer, money: string): Promise<void> {
    const at = now();
    await records
      .updateOne(
        { _id: rec._id, owner: rec.owner, status: "in_progress" },
        { $set: { status, phase: "done", answer, money, completedAtMs: at, expiresAtMs: at + o.retentionMs } },
      )
      .catch(() => {
        // Left in progress, phase "dispatching": the stale path freezes it (never replays it).
        log.warn("signing_record_write_failed", { operationId: rec.operationId, status });
        o.alerts?.raise({ signal: "post_sign_state_missing", dependency: "documentStore", operation: "signing_idempotency.updateOne", operationId: rec.operationId });
      });
  }

  /**
   * Releases a claim whose execution left no regulator effect (the same key may be retried). The
   * delete is repeated in the background (an outage is often why we are releasing, and a claim insert
   * the store did not acknowledge may land later): a claim left behind would make the same-key retry
   * wait and then answer "already processed" until the claim is stale.
   */
  async function _release(rec: SignRecord): Promise<void> {
    await repeatUndo(
      () => records.deleteMany({ _id: rec._id, owner: rec.owner, status: "in_progress" }).then(() => true, () => false),
      UNDO_REPEAT_MS,
      () => log.warn("signing_claim_release_failed", { operationId: rec.operationId }),
    );
  }

  /**
   * A stale in-progress record: its holder is presumed dead. Before "dispatching" the regulator was
   * never called: take it over (the debit, if any, replays). From "dispatching" on the outcome cannot
   * be proved: freeze it (502, never replayed).
   */
  async function _resolveStale(rec: SignRecord, caller: SignCaller): Promise<"takeover" | "resolved"> {
    if (rec.phase === "claimed") {
      const taken = await db(() =>
        records.findOneAndUpdate(
          { _id: rec._id, owner: rec.owner, status: "in_progress", phase: "claimed" },
          { $set: { owner: caller.requestId, startedAtMs: now() } },
        ),
      );
      if (taken) {
        Object.assign(rec, taken);
        return "takeover";
      }
      return "resolved";
    }
    const err = gwError("GW_SIGN_OUTCOME_UNCONFIRMED", {
      detail: "The earlier request with this key stopped after calling the regulator; its result cannot be proved. Contact support with the operationId.",
      operationId: rec.operationId,
    });
    log.error("signing_outcome_unconfirmed", { operationId: rec.operationId, reason: "stale_claim", alert: "immediate" });
    o.alerts?.raise({ signal: "sign_outcome_unconfirmed", operation: "sign", failureClass: "stale_claim", requestId: caller.requestId, operationId: rec.operationId, code: "GW_SIGN_OUTCOME_UNCONFIRMED" });
    const at = now();
    await db(() =>
      records.updateOne(
        { _id: rec._id, owner: rec.owner, status: "in_progress" },
        { $set: { status: "frozen", phase: "done", answer: _errorAnswer(err), money: "held", completedAtMs: at, expiresAtMs: at + o.retentionMs } },
      ),
    );
    return "resolved";
  }

  // -------------------------------------------------------------------------
  // Unbilled: validation and direct routes
  // -------------------------------------------------------------------------

  async function validateInvoice(caller: SignCaller, subBusinessId: string, document: Record<string, unknown>): Promise<PassThrough> {
    const sub = await representedBusiness(caller.businessId, caller.state, subBusinessId);
    checkInvoice(sub, document);
    const outcome = await regulator.validateInvoice(caller.state, document, { requestId: caller.requestId });
    if (outcome.kind === "valid") return outcome.response;
    throw mapRegulatorFailure(outcome, "validateInvoice");
  }

  async function validateIrn(caller: SignCaller, subBusinessId: string, body: IrnValidationInput): Promise<PassThrough> {
    const sub = await representedBusiness(caller.businessId, caller.state, subBusinessId);
    if (body.business_id !== sub.externalBusinessId)
      throw gwError("GW_INVOICE_BUSINESS_MISMATCH", { detail: "business_id differs from the current externalBusinessId of the represented business." });
    const irn = checkIrn(body.irn, sub.identity.irnTemplate, "body");
    checkReference(irn, body.invoice_reference, "body");
    const outcome = await regulator.validateIrn(caller.state, body, { requestId: caller.requestId });
    if (outcome.kind === "valid") return outcome.response;
    throw mapRegulatorFailure(outcome, "validateIrn");
  }

  /** confirm / download / update by IRN: the IRN must be the represented business's. */
  async function byIrn(
    caller: SignCaller,
    subBusinessId: string,
    irn: string,
    call: { method: "GET" | "PATCH"; segment: "confirm" | "download" | "update"; body?: Record<string, unknown> },
  ): Promise<PassThrough> {
    const sub = await representedBusiness(caller.businessId, caller.state, subBusinessId);
    const parsed = checkIrn(irn, sub.identity.irnTemplate, "path");
    if (call.body && call.body.irn !== undefined && call.body.irn !== parsed.irn)
      throw gwError("GW_INVOICE_REFERENCE_MISMATCH", {
        detail: "The IRN in the body differs from the IRN in the path.",
        violations: [{ location: "body", pointer: "/irn", code: "MISMATCH", detail: "differs from the path IRN" }],
      });
    return regulator.relay(
      caller.state,
      {
        method: call.method,
        path: `/api/v1/invoice/${call.segment}/${encodeURIComponent(parsed.irn)}`,
        ...(call.body ? { body: call.body } : {}),
        operation: `relay.${call.segment}`,
      },
      { requestId: caller.requestId },
    );
  }

  async function resource(caller: Pick<SignCaller, "state" | "requestId">, name: string): Promise<PassThrough> {
    return regulator.relay(
      caller.state,
      { method: "GET", path: `/api/v1/invoice/resources/${encodeURIComponent(name)}`, operation: "relay.resources" },
      { requestId: caller.requestId },
    );
  }

  return { sign, validateInvoice, validateIrn, byIrn, resource, representedBusiness };
}

export type SigningService = ReturnType<typeof createSigningService>;

/**
 * §4.2 rule 4 on a regulator invoice document (business_id, supplier TIN, IRN format and binding,
 * invoice reference); returns the parsed IRN. Shared with the Stored intake (plugins/stored-processing).
 */
export function checkInvoice(sub: RepresentedBusiness, doc: Record<string, unknown>): ParsedIrn {
  const problems: Violation[] = [];
  if (typeof doc.business_id !== "string") problems.push({ location: "body", pointer: "/business_id", code: "REQUIRED", detail: "required (string)" });
  const supplier = doc.accounting_supplier_party;
  const tin = typeof supplier === "object" && supplier !== null ? (supplier as Record<string, unknown>).tin : undefined;
  if (typeof tin !== "string")
    problems.push({ location: "body", pointer: "/accounting_supplier_party/tin", code: "REQUIRED", detail: "required (string)" });
  if (problems.length > 0) throw gwError("GW_REQUEST_VALIDATION_FAILED", { detail: "The invoice lacks fields the gateway checks; see errors.", violations: problems });
  if (doc.business_id !== sub.externalBusinessId)
    throw gwError("GW_INVOICE_BUSINESS_MISMATCH", {
      detail: "business_id differs from the current externalBusinessId of the represented business.",
      violations: [{ location: "body", pointer: "/business_id", code: "MISMATCH", detail: "differs from the current externalBusinessId" }],
    });
  if (tin !== sub.identity.tin)
    throw gwError("GW_INVOICE_SUPPLIER_TIN_MISMATCH", {
      detail: "The supplier TIN differs from the represented business's stored TIN.",
      violations: [{ location: "body", pointer: "/accounting_supplier_party/tin", code: "MISMATCH", detail: "differs from the stored TIN" }],
    });
  const irn = checkIrn(doc.irn, sub.identity.irnTemplate, "body");
  checkReference(irn, doc.invoice_reference, "body");
  return irn;
}

/** A body `invoice_reference`, when sent, must be the IRN's invoice number (spec §4.2 rule 4). */
export function checkReference(irn: ParsedIrn, reference: unknown, where: "body"): void {
  if (reference === undefined) return;
  if (reference !== irn.invoiceNumber)
    throw gwError("GW_INVOICE_REFERENCE_MISMATCH", {
      detail: "The invoice reference differs from the invoice number in the IRN.",
      violations: [{ location: where, pointer: "/invoice_reference", code: "MISMATCH", detail: "differs from the IRN's invoice number" }],
    });
}

// --- Internal helpers ---

function _attemptKey(caller: SignCaller, r: SignRequest, irn: string): string {
  return `${caller.state}|${caller.domain}|${r.subBusinessId}|${irn}|${r.attemptNumber}`;
}

function _errorAnswer(err: GatewayError): StoredAnswer {
  return {
    kind: "error",
    code: err.code,
    detail: err.message,
    operationId: err.info.operationId ?? null,
    violations: err.info.violations ?? null,
  };
}

/** The stored answer again: the same regulator status and body, or the same GW_* error. */
function _replay(answer: StoredAnswer): PassThrough {
  if (answer.kind === "regulator")
    return { status: answer.status, contentType: answer.contentType, body: new Uint8Array(Buffer.from(answer.bodyBase64, "base64")), headers: answer.headers };
  throw gwError(answer.code as GwCode, {
    detail: answer.detail,
    ...(answer.operationId ? { operationId: answer.operationId } : {}),
    ...(answer.violations ? { violations: answer.violations as Violation[] } : {}),
  });
}

function _billingDetail(reason: string): string {
  switch (reason) {
    case "wallet_declined":
      return "The wallet could not fund the signing fee; fund it, then retry.";
    case "attempt_conflict":
      return "This billing identity (represented business, domain, IRN, attempt number) was billed for different content; contact support.";
    default:
      return "A billing rule rejected the request.";
  }
}

function _storeError(e: unknown): unknown {
  if (isGatewayError(e)) return e;
  if (isDependencyUnavailableError(e))
    return gwError("GW_MANAGEMENT_SERVICE_UNAVAILABLE", { detail: "The gateway's store is unavailable; retry with the same key.", cause: e });
  return e;
}

function _sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
