/**
 * Recovery jobs (docs/operations.md "Recovery jobs"): what nobody else will finish.
 *
 *   held signs        Pass-through sign attempts whose fee is held — frozen (outcome unprovable),
 *                     a reversal or settlement that did not confirm, or abandoned (the holder died
 *                     and the caller never came back) — and frozen Stored signs are settled against
 *                     the regulator (confirm by IRN): it holds the invoice → the debit is confirmed;
 *                     its own "no such invoice" → the debit is reversed (Stored: the "not_signed"
 *                     resolution, which signs again under the next attempt; the regulator refuses a
 *                     second sign of one IRN anyway); anything else proves nothing → an alert
 *                     (`recovery_unprovable`), the record stays as it is. Each settlement is recorded
 *                     on the record (`resolution`) and in the audit log.
 *   stale claims      Pass-through transmission claims `in_progress` past the stale age → `unknown`
 *                     (502 GW_TRANSMIT_OUTCOME_UNCONFIRMED from then on; never replayed).
 *   overdue           anything above still unresolved past `recovery.overdueAfterMs` →
 *                     `reconciliation_overdue` (an alert, every cooldown while it lasts).
 *
 * One run at a time in the deployment: a run holds the coordination lease `recovery:run` (ttl
 * `leaseMs`, renewed every third of it while the run lasts, so it outlives no dead process by more
 * than `leaseMs`); a run whose renewal fails stops before its next record. Every write is a
 * compare-and-set on the record's state and the ledger's confirm and reverse are idempotent, so even
 * two overlapping runs settle nothing twice. Operator decisions (`resolveSignAttempt`) use the same
 * settlement code.
 */
import { hostname } from "node:os";
import { randomBytes, randomUUID } from "node:crypto";
import {
  isDependencyUnavailableError,
  type AlertChannel,
  type BillingIdentity,
  type BillingLedger,
  type Collection,
  type CoordinationStore,
  type DocumentStore,
} from "../../adapters/ports.ts";
import type { RegulatorClient, RegulatorState } from "../../adapters/regulator/port.ts";
import { appendAudit, openDirectoryStore, type AuditDoc } from "../../core/directory-store.ts";
import { describeError, type Logger } from "../../core/log.ts";
import type { GatewayMetrics } from "../../core/metrics.ts";
import { openSigningStore, parseAttemptKey, type SignRecord, type StoredAnswer } from "../signing/store.ts";
import type { FrozenInvoiceResolver } from "../invoice/offers.ts";
import { STORED_COLLECTIONS, type InvoiceDoc } from "../stored-processing/store.ts";
import { TRANSMISSION_COLLECTION, type ClaimDoc } from "../transmission/service.ts";

export interface RecoveryOptions {
  store: DocumentStore;
  coordination: CoordinationStore;
  billing: BillingLedger;
  regulator: RegulatorClient;
  /** Stored invoices are resolved through the Stored service (the same path as the operator route). */
  stored: FrozenInvoiceResolver | null;
  alerts: AlertChannel | null;
  metrics: GatewayMetrics;
  log: Logger;
  now: () => number;
  intervalMs: number;
  settleAfterMs: number;
  abandonedAfterMs: number;
  overdueAfterMs: number;
  /** A transmission claim in_progress this long is stale. */
  claimStaleAfterMs: number;
  batchSize: number;
  /** Time to live of the run lease (renewed every third of it while a run lasts). */
  leaseMs: number;
}

export interface RunSummary {
  ran: boolean;
  confirmed: number;
  reversed: number;
  released: number;
  unprovable: number;
  claimsUnknown: number;
  overdue: number;
  /** The run lost its lease (a renewal failed) and stopped before its next record. */
  leaseLost: boolean;
}

export type SettleOutcome = "signed" | "not_signed";
export type TransmissionOutcome = "transmitted" | "not_transmitted";

export interface Recovery {
  /** One run of every job (tests call it; the worker calls it every `intervalMs`). */
  runOnce(): Promise<RunSummary>;
  /** An operator's decision on a held Pass-through sign attempt (same settlement as the job). */
  resolveSignAttempt(operationId: string, outcome: SettleOutcome, by: { actor: string; requestId: string }): Promise<SignRecord | "not_found" | "not_held">;
  /**
   * An operator's decision on a Pass-through transmission whose outcome is unknown: "transmitted"
   * records it as succeeded (a matching request then answers 409 with its operationId);
   * "not_transmitted" removes the claim, so the merchant may transmit the IRN again.
   */
  resolveTransmission(
    operationId: string,
    outcome: TransmissionOutcome,
    by: { actor: string; requestId: string },
  ): Promise<{ operationId: string; businessId: string; claimState: "succeeded" | "released"; resolution: { outcome: TransmissionOutcome; by: string; at: string } } | "not_found" | "not_unknown">;
  report(): Promise<Record<string, unknown>>;
  readonly worker: { name: string; start(): Promise<void>; stop(): Promise<void> };
}

const LEASE_KEY = "recovery:run";

export function createRecovery(o: RecoveryOptions): Recovery {
  const { log, now } = o;
  const signing = openSigningStore(o.store);
  const records = signing.idempotency;
  const invoices = o.store.collection<InvoiceDoc>(STORED_COLLECTIONS.invoices);
  const claims = o.store.collection<ClaimDoc>(TRANSMISSION_COLLECTION);
  const audit: Collection<AuditDoc> = openDirectoryStore(o.store).audit;
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const actions = o.metrics.counter("gatehouse_recovery_actions_total", "Recovery job actions, by job and outcome.", ["job", "outcome"]);
  const counter = (job: string, outcome: string) => actions.series(job, outcome);
  const totals = { confirmed: 0, reversed: 0, released: 0, unprovable: 0, claimsUnknown: 0 };
  let lastRun: { at: string; durationMs: number; outcome: "ok" | "skipped" | "failed" } | null = null;
  let open: Record<string, number> = {};
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<RunSummary> | null = null;

  // -------------------------------------------------------------------------
  // Held Pass-through sign attempts
  // -------------------------------------------------------------------------

  async function settleSigns(s: RunSummary): Promise<void> {
    const t = now();
    // Abandoned: in progress long past any request's lifetime (the holder died, the caller never retried).
    const abandoned = await records.find({ status: "in_progress", startedAtMs: { $lte: t - o.abandonedAfterMs } }, { limit: o.batchSize });
    for (const r of abandoned.items) {
      if (s.leaseLost) return;
      await _abandoned(r, s);
    }
    const held = await records.find({ money: "held", completedAtMs: { $lte: t - o.settleAfterMs } }, { limit: o.batchSize });
    for (const r of held.items) {
      if (s.leaseLost) return;
      await _held(r, "recovery", _newRequestId(), s);
    }
  }

  /** An abandoned attempt: before "dispatching" the regulator was never called; from then on it is frozen first. */
  async function _abandoned(r: SignRecord, s: RunSummary): Promise<void> {
    const k = parseAttemptKey(r.attemptKey);
    if (!k) return;
    const at = now();
    if (r.phase === "dispatching") {
      const answer: StoredAnswer = {
        kind: "error",
        code: "GW_SIGN_OUTCOME_UNCONFIRMED",
        detail: "The earlier request with this key stopped after calling the regulator; its result cannot be proved. Contact support with the operationId.",
        operationId: r.operationId,
        violations: null,
      };
      const frozen = await records.findOneAndUpdate(
        { _id: r._id, owner: r.owner, status: "in_progress" },
        { $set: { status: "frozen", phase: "done", answer, money: "held", completedAtMs: at } },
      );
      if (!frozen) return;
      log.error("signing_outcome_unconfirmed", { operationId: r.operationId, reason: "abandoned", alert: "immediate" });
      o.alerts?.raise({ signal: "sign_outcome_unconfirmed", operation: "sign", failureClass: "abandoned", operationId: r.operationId, code: "GW_SIGN_OUTCOME_UNCONFIRMED" });
      return _held(frozen, "recovery", _newRequestId(), s);
    }
    // Claimed: the regulator was never called. A debit, if one was made, goes back.
    const identity = _identity(k);
    try {
      await o.billing.reverse(r.businessId, identity, "abandoned_before_dispatch");
    } catch (e) {
      if (isDependencyUnavailableError(e)) return; // next run
      // No debit (the holder died before it) or a declined one: nothing is held; the key may be retried.
      const released = await records.deleteMany({ _id: r._id, owner: r.owner, status: "in_progress", phase: "claimed" });
      if (released > 0) {
        s.released++;
        totals.released++;
        counter("held_signs", "released").inc();
        log.event("recovery_sign_released", { operationId: r.operationId });
      }
      return;
    }
    const answer: StoredAnswer = {
      kind: "error",
      code: "GW_SIGN_ATTEMPT_ALREADY_PROCESSED",
      detail: "This attempt was abandoned before the regulator was called; its fee was reversed. A new attempt needs the next x-attempt-number and a new key.",
      operationId: r.operationId,
      violations: null,
    };
    const done = await records.findOneAndUpdate(
      { _id: r._id, owner: r.owner, status: "in_progress", phase: "claimed" },
      {
        $set: {
          status: "resolved",
          phase: "done",
          answer,
          money: "reversed",
          completedAtMs: at,
          resolution: { outcome: "not_signed", by: "recovery", at: new Date(at).toISOString(), basis: "never_dispatched" },
        },
      },
    );
    if (!done) return;
    await _recorded(r, "not_signed", "recovery", null, "never_dispatched", "none", s);
  }

  /**
   * A held fee: the regulator is asked (confirm by IRN) unless the answer already says what the
   * regulator did (a rejection whose reversal did not confirm; a sign whose settlement did not).
   */
  async function _held(r: SignRecord, by: string, requestId: string, s: RunSummary): Promise<void> {
    const k = parseAttemptKey(r.attemptKey);
    if (!k) return;
    const code = r.answer?.kind === "error" ? r.answer.code : null;
    let outcome: SettleOutcome;
    let basis: string;
    if (code === "GW_SIGN_REVERSAL_UNCONFIRMED") {
      outcome = "not_signed";
      basis = "regulator_rejected";
    } else if (code === "GW_SIGN_RECOVERY_UNAVAILABLE") {
      outcome = "signed";
      basis = "regulator_signed";
    } else {
      const c = await o.regulator.confirm(k.state as RegulatorState, k.irn, { requestId });
      if (c.kind === "unknown") {
        _unprovable(r.operationId, `regulator_${c.failureClass}`, s);
        return;
      }
      outcome = c.kind === "found" ? "signed" : "not_signed";
      basis = c.kind === "found" ? "regulator_confirm_found" : "regulator_confirm_not_found";
    }
    await _settle(r, k, outcome, by, requestId, basis, s);
  }

  async function _settle(
    r: SignRecord,
    k: NonNullable<ReturnType<typeof parseAttemptKey>>,
    outcome: SettleOutcome,
    by: string,
    requestId: string | null,
    basis: string,
    s: RunSummary | null,
  ): Promise<SignRecord | null> {
    const identity = _identity(k);
    try {
      if (outcome === "signed") await o.billing.confirm(r.businessId, identity);
      else await o.billing.reverse(r.businessId, identity, "regulator_not_signed");
    } catch (e) {
      if (isDependencyUnavailableError(e)) {
        log.warn("recovery_billing_unavailable", { operationId: r.operationId, error: describeError(e) });
        return null;
      }
      // The ledger refuses (e.g. confirming a reversed debit): an operator must look.
      if (s) _unprovable(r.operationId, "billing_refused", s);
      throw e;
    }
    const at = now();
    const updated = await records.findOneAndUpdate(
      { _id: r._id, money: "held" },
      {
        $set: {
          status: "resolved",
          money: outcome === "signed" ? "confirmed" : "reversed",
          resolution: { outcome, by, at: new Date(at).toISOString(), basis },
        },
      },
    );
    if (!updated) return null;
    await _recorded(r, outcome, by, requestId, basis, "held", s);
    return updated;
  }

  async function _recorded(r: SignRecord, outcome: SettleOutcome, by: string, requestId: string | null, basis: string, from: string, s: RunSummary | null): Promise<void> {
    const money = outcome === "signed" ? "confirmed" : "reversed";
    if (s) {
      if (outcome === "signed") {
        s.confirmed++;
        totals.confirmed++;
      } else {
        s.reversed++;
        totals.reversed++;
      }
    }
    counter("held_signs", money).inc();
    log.event("recovery_sign_settled", { operationId: r.operationId, outcome, by: by.startsWith("operator:") ? "operator" : by, basis, money });
    await appendAudit(
      audit,
      { actor: by, requestId, action: "sign_attempt.resolve", target: { type: "operation", id: r.operationId }, changes: { outcome, basis, money: { from, to: money } } },
      now(),
    ).catch((e) => log.warn("recovery_audit_failed", { operationId: r.operationId, error: describeError(e) }));
  }

  function _unprovable(operationId: string, failureClass: string, s: RunSummary): void {
    s.unprovable++;
    totals.unprovable++;
    counter("held_signs", "unprovable").inc();
    log.error("recovery_unprovable", { operationId, failureClass, alert: "immediate" });
    o.alerts?.raise({ signal: "recovery_unprovable", operation: "confirm", failureClass, operationId });
  }

  // -------------------------------------------------------------------------
  // Frozen Stored signs
  // -------------------------------------------------------------------------

  async function settleStored(s: RunSummary): Promise<void> {
    if (!o.stored) return;
    const before = new Date(now() - o.settleAfterMs).toISOString();
    const page = await invoices.find({ status: "frozen", "lastError.code": "GW_SIGN_OUTCOME_UNCONFIRMED", updatedAt: { $lte: before } }, { limit: o.batchSize });
    for (const d of page.items) {
      if (s.leaseLost) return;
      const requestId = _newRequestId();
      const c = await o.regulator.confirm(d.state, d.irn, { requestId });
      if (c.kind === "unknown") {
        _unprovable(d.operationId, `regulator_${c.failureClass}`, s);
        continue;
      }
      const outcome: SettleOutcome = c.kind === "found" ? "signed" : "not_signed";
      try {
        await o.stored.resolve({ requestId, credentialId: "recovery", actor: "recovery" }, d._id, outcome);
      } catch (e) {
        log.warn("recovery_stored_resolve_failed", { invoiceId: d._id, error: describeError(e) });
        continue;
      }
      if (outcome === "signed") s.confirmed++;
      else s.reversed++;
      counter("stored_signs", outcome).inc();
      await appendAudit(
        audit,
        { actor: "recovery", requestId, action: "invoice.resolve", target: { type: "operation", id: d.operationId }, changes: { invoiceId: d._id, outcome, basis: `regulator_confirm_${c.kind}` } },
        now(),
      ).catch(() => undefined);
    }
  }

  // -------------------------------------------------------------------------
  // Stale transmission claims
  // -------------------------------------------------------------------------

  async function staleClaims(s: RunSummary): Promise<void> {
    const page = await claims.find({ claimState: "in_progress", startedAtMs: { $lte: now() - o.claimStaleAfterMs } }, { limit: o.batchSize });
    for (const c of page.items) {
      if (s.leaseLost) return;
      const marked = await claims.findOneAndUpdate(
        { _id: c._id, owner: c.owner, claimState: "in_progress" },
        { $set: { claimState: "unknown", detail: "stale_claim", completedAtMs: now() } },
      );
      if (!marked) continue;
      s.claimsUnknown++;
      totals.claimsUnknown++;
      counter("stale_claims", "unknown").inc();
      log.error("transmission_outcome_unconfirmed", { operationId: c.operationId, reason: "stale_claim", alert: "immediate" });
      o.alerts?.raise({ signal: "transmit_outcome_unconfirmed", operation: "transmit", failureClass: "stale_claim", operationId: c.operationId, code: "GW_TRANSMIT_OUTCOME_UNCONFIRMED" });
    }
  }

  // -------------------------------------------------------------------------
  // Overdue reconciliation
  // -------------------------------------------------------------------------

  async function countOpen(): Promise<Record<string, number>> {
    const t = now();
    const overdueAt = t - o.overdueAfterMs;
    const overdueIso = new Date(overdueAt).toISOString();
    const [heldSigns, frozenStored, unknownClaims, heldOverdue, abandonedOverdue, storedOverdue, claimsOverdue] = await Promise.all([
      records.count({ money: "held" }),
      invoices.count({ status: "frozen" }),
      claims.count({ claimState: "unknown" }),
      records.count({ money: "held", completedAtMs: { $lte: overdueAt } }),
      records.count({ status: "in_progress", startedAtMs: { $lte: overdueAt } }),
      invoices.count({ status: "frozen", updatedAt: { $lte: overdueIso } }),
      claims.count({ claimState: "unknown", completedAtMs: { $lte: overdueAt } }),
    ]);
    return {
      heldSignAttempts: heldSigns,
      frozenStoredInvoices: frozenStored,
      unknownTransmissions: unknownClaims,
      overdue: heldOverdue + abandonedOverdue + storedOverdue + claimsOverdue,
    };
  }

  // -------------------------------------------------------------------------
  // Runs
  // -------------------------------------------------------------------------

  async function _run(): Promise<RunSummary> {
    const s: RunSummary = { ran: false, confirmed: 0, reversed: 0, released: 0, unprovable: 0, claimsUnknown: 0, overdue: 0, leaseLost: false };
    const started = now();
    let mine: boolean;
    try {
      mine = await o.coordination.acquireLease(LEASE_KEY, owner, o.leaseMs);
    } catch (e) {
      log.warn("recovery_lease_unavailable", { error: describeError(e) });
      mine = false;
    }
    if (!mine) {
      lastRun = { at: new Date(started).toISOString(), durationMs: 0, outcome: "skipped" };
      return s;
    }
    s.ran = true;
    // Renewed while the run lasts (re-entrant for this owner); a failed renewal stops the run.
    const renew = setInterval(() => {
      o.coordination.acquireLease(LEASE_KEY, owner, o.leaseMs).then(
        (held) => {
          if (!held) s.leaseLost = true;
        },
        () => {
          s.leaseLost = true;
        },
      );
    }, Math.max(1, Math.floor(o.leaseMs / 3)));
    renew.unref();
    let failed = false;
    try {
      for (const job of [settleSigns, settleStored, staleClaims]) {
        try {
          await job(s);
        } catch (e) {
          failed = true;
          log.warn("recovery_job_failed", { job: job.name, error: describeError(e) });
        }
      }
      try {
        open = await countOpen();
        s.overdue = open.overdue!;
        if (s.overdue > 0) {
          log.error("reconciliation_overdue", { count: s.overdue, overdueAfterMs: o.overdueAfterMs, alert: "immediate" });
          o.alerts?.raise({ signal: "reconciliation_overdue", count: s.overdue });
        }
      } catch (e) {
        failed = true;
        log.warn("recovery_job_failed", { job: "overdue", error: describeError(e) });
      }
    } finally {
      clearInterval(renew);
      await o.coordination.releaseLease(LEASE_KEY, owner).catch(() => false);
    }
    if (s.leaseLost) log.warn("recovery_lease_lost", { owner });
    lastRun = { at: new Date(started).toISOString(), durationMs: now() - started, outcome: failed || s.leaseLost ? "failed" : "ok" };
    return s;
  }

  function runOnce(): Promise<RunSummary> {
    running ??= _run().finally(() => {
      running = null;
    });
    return running;
  }

  async function resolveSignAttempt(operationId: string, outcome: SettleOutcome, by: { actor: string; requestId: string }) {
    const r = await records.findOne({ operationId });
    if (!r) return "not_found" as const;
    // The same decision again (a retried request): the recorded settlement.
    if (r.money !== "held") return r.resolution?.outcome === outcome ? r : ("not_held" as const);
    const k = parseAttemptKey(r.attemptKey);
    if (!k) return "not_found" as const;
    const updated = await _settle(r, k, outcome, by.actor, by.requestId, "operator_decision", null);
    if (!updated) {
      const again = await records.findOne({ operationId });
      if (again && again.money !== "held") return again.resolution?.outcome === outcome ? again : ("not_held" as const);
      throw new Error("the settlement could not be recorded");
    }
    return updated;
  }

  async function resolveTransmission(operationId: string, outcome: TransmissionOutcome, by: { actor: string; requestId: string }) {
    const c = await claims.findOne({ operationId });
    if (!c) return "not_found" as const;
    if (c.claimState !== "unknown") {
      // The same decision again (a retried request): what was recorded.
      if (outcome === "transmitted" && c.resolution?.outcome === "transmitted")
        return { operationId, businessId: c.businessId, claimState: "succeeded" as const, resolution: c.resolution };
      return "not_unknown" as const;
    }
    const at = new Date(now()).toISOString();
    const resolution = { outcome, by: by.actor, at };
    if (outcome === "transmitted") {
      const done = await claims.findOneAndUpdate(
        { _id: c._id, operationId, claimState: "unknown" },
        { $set: { claimState: "succeeded", detail: "operator_resolved", resolution: { outcome: "transmitted", by: by.actor, at } } },
      );
      if (!done) return resolveTransmission(operationId, outcome, by);
    } else if ((await claims.deleteMany({ _id: c._id, operationId, claimState: "unknown" })) === 0) {
      return resolveTransmission(operationId, outcome, by);
    }
    counter("transmissions", outcome).inc();
    log.event("recovery_transmission_resolved", { operationId, outcome, by: "operator" });
    await appendAudit(
      audit,
      { actor: by.actor, requestId: by.requestId, action: "transmission.resolve", target: { type: "operation", id: operationId }, changes: { outcome } },
      now(),
    ).catch((e) => log.warn("recovery_audit_failed", { operationId, error: describeError(e) }));
    return { operationId, businessId: c.businessId, claimState: outcome === "transmitted" ? ("succeeded" as const) : ("released" as const), resolution };
  }

  return {
    runOnce,
    resolveSignAttempt,
    resolveTransmission,
    async report() {
      return { owner, lastRun, totals: { ...totals }, open };
    },
    worker: {
      name: "recovery",
      async start() {
        if (timer) return;
        timer = setInterval(() => void runOnce().catch(() => undefined), o.intervalMs);
        timer.unref();
      },
      async stop() {
        if (timer) clearInterval(timer);
        timer = null;
        await running?.catch(() => undefined);
      },
    },
  };
}

// --- Internal helpers ---

function _identity(k: { domain: string; subBusinessId: string; irn: string; attemptNumber: number }): BillingIdentity {
  return { subBusinessId: k.subBusinessId, domain: k.domain, irn: k.irn, attemptNumber: k.attemptNumber };
}

function _newRequestId(): string {
  return randomUUID();
}
