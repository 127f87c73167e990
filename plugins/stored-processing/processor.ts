/**
 * The Stored invoice processor (spec §3.2, §3.4; DECISIONS.md "Stored mode"; ARCHITECTURE.md §6–§7).
 *
 * Any number of processors, in any number of processes, share the work through the document store:
 * each claims due invoices (`dueAt ≤ now`) with a lease (DocumentStore.claim), works on them with
 * p-queue concurrency, and writes every change as a compare-and-set on the invoice's `rev` while it
 * still holds the lease. A processor that dies leaves its lease to expire; the next one picks the
 * invoice up where the record says it is.
 *
 * One pass over an invoice (status → what happens):
 *   pending      regulator validate: valid → signing (bill); a rejection → rejected with the
 *                regulator's violations; an outage → stays pending, dependency backoff
 *   validated    → signing (the processor starts billing; a cancel can no longer win)
 *   signing/bill debit once per billing identity (represented business, domain, IRN, signAttempt):
 *                debited → step "dispatching" is recorded BEFORE the regulator is called → sign;
 *                wallet declined → validated, one unit of the retry budget spent (rejected when
 *                none is left); billing unavailable → validated, dependency backoff (budget kept);
 *                an identity already used elsewhere → next signAttempt
 *   sign outcome signed → signed (transmitting when the domain's autoTransmit is on), billing
 *                confirmation owed (`settle`); rejected → the reversal is owed (step "reverse"),
 *                then rejected; certainly not performed (regulator throws) → reversal, then back to
 *                validated with the next signAttempt (an outage never consumes the budget);
 *                ambiguous → frozen (debit held, never replayed)
 *   transmitting step "transmitting" recorded, then one regulator transmission: transmitted;
 *                a rejection → back to signed with the error; ambiguous → frozen; not performed →
 *                stays transmitting, dependency backoff
 * A pass that finds "dispatching" or "transmitting" recorded by an earlier holder cannot prove what
 * the regulator did: frozen. Each transition records its webhook on the invoice; the pass enqueues
 * it afterwards (events.ts).
 *
 * Backoff: dependency outages back off per invoice (base × 2^(n−1), jittered, capped) and pause the
 * processor's claims the same way while they last; business refusals back off by budget spent.
 * Stop (SIGTERM): no new claims; each running pass finishes its current step, then hands its
 * invoice back (lease released, due at once) or completes it.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import PQueue from "p-queue";
import { isBillingError, type AlertChannel, type BillingIdentity, type BillingLedger, type Lease } from "../../adapters/ports.ts";
import {
  mapRegulatorFailure,
  regulatorFailureCounts,
  type RegulatorClient,
} from "../../adapters/regulator/port.ts";
import type { GwCode } from "../../core/errors/catalog.ts";
import { isGatewayError } from "../../core/errors/gateway-error.ts";
import type { TenantDirectory } from "../../core/directory.ts";
import { keyedHash } from "../../core/keyed-hash.ts";
import { describeError, type Logger } from "../../core/log.ts";
import type { Worker } from "../../core/plugin.ts";
import type { InvoiceWebhooks } from "./events.ts";
import type { InvoiceDoc, InvoiceEvent, InvoiceStatus, LastError, Step, StoredStore } from "./store.ts";

/** Test-only crash points (a hook that kills the process simulates a processor dying there). */
export interface ProcessorHooks {
  /** After the debit was confirmed, before "dispatching" is recorded and the regulator called. */
  afterDebit?(invoiceId: string): void | Promise<void>;
  /** After the regulator answered the sign call, before the outcome is recorded. */
  afterSign?(invoiceId: string): void | Promise<void>;
}

export interface ProcessorOptions {
  store: StoredStore;
  billing: BillingLedger;
  regulator: RegulatorClient;
  webhooks: InvoiceWebhooks;
  directory: TenantDirectory;
  log: Logger;
  /** HMAC key of the billing fingerprints (deriveStoredSecret). */
  secret: Buffer;
  concurrency: number;
  pollMs: number;
  leaseMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  heartbeatMs: number;
  /** Lease owner id; default `<host>:<pid>:<random>`. */
  owner?: string;
  hooks?: ProcessorHooks;
  /** Immediate operator signals (spec §6): frozen invoices, unconfirmed reversals. */
  alerts?: AlertChannel;
}

export interface StoredProcessor extends Worker {
  /** Looks for due work at once (a new intake in this process). */
  wake(): void;
  readonly owner: string;
}

const SORT = [{ field: "dueAt", direction: 1 as const }];
/** Steps one pass may take before it hands the invoice back (a loop guard, never reached normally). */
const MAX_STEPS = 32;
/** Retries of the write that records a regulator outcome (losing it would freeze the invoice). */
const RECORD_TRIES = 3;
/** The longest claim pause of an outage streak (a dependency that is back is noticed within it). */
const MAX_PAUSE_MS = 10_000;

export function createStoredProcessor(o: ProcessorOptions): StoredProcessor {
  const { store, billing, regulator, webhooks, directory, log } = o;
  const invoices = store.invoices;
  const owner = o.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const queue = new PQueue({ concurrency: o.concurrency });
  const startedAt = new Date().toISOString();

  let running = false;
  let stopping = false;
  let loop: Promise<void> | null = null;
  let wakeUp: (() => void) | null = null;
  let heartbeat: NodeJS.Timeout | null = null;
  let lastTickAt = Date.now();
  let processed = 0;
  /** Consecutive passes that met a dependency outage, and the claim pause they cause. */
  let outageStreak = 0;
  let pauseUntil = 0;

  // -------------------------------------------------------------------------
  // The claim loop
  // -------------------------------------------------------------------------

  async function claimLoop(): Promise<void> {
    while (running) {
      lastTickAt = Date.now();
      if (queue.pending + queue.size >= o.concurrency) {
        await new Promise((resolve) => queue.once("next", resolve));
        continue;
      }
      const pause = pauseUntil - Date.now();
      if (pause > 0) {
        await sleep(pause); // a wake during the pause only re-checks it
        continue;
      }
      let doc: (InvoiceDoc & { lease: Lease }) | null;
      try {
        doc = await invoices.claim({ dueAt: { $lte: Date.now() } }, owner, o.leaseMs, SORT);
      } catch (e) {
        log.warn("stored_processor_claim_failed", { error: describeError(e) });
        passEnded(true);
        continue;
      }
      if (!doc) {
        await sleep(o.pollMs);
        continue;
      }
      const claimed = doc;
      void queue.add(() => runPass(claimed));
    }
  }

  /** Sleeps `ms`, or less when woken (new work) or stopped. */
  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        if (wakeUp === done) wakeUp = null;
        resolve();
      }
      wakeUp = done;
    });
  }

  /** base × 2^(n−1), capped, jittered down by up to half. */
  function backoff(n: number): number {
    const raw = Math.min(o.backoffMaxMs, o.backoffBaseMs * 2 ** Math.min(Math.max(n, 1) - 1, 30));
    return Math.max(1, Math.round(raw * (0.5 + 0.5 * Math.random())));
  }

  /**
   * While dependency outages last, the processor pauses its claims (backoff of the streak, at most
   * MAX_PAUSE_MS): invoices wait out their own backoff anyway, and a long outage costs no churn.
   */
  function passEnded(outage: boolean): void {
    if (!outage) {
      outageStreak = 0;
      pauseUntil = 0;
      return;
    }
    outageStreak++;
    pauseUntil = Date.now() + Math.min(MAX_PAUSE_MS, backoff(outageStreak));
  }

  // -------------------------------------------------------------------------
  // One pass
  // -------------------------------------------------------------------------

  interface Pass {
    cur: InvoiceDoc;
    lease: Lease;
    /** The events on `cur` were enqueued in this pass: the next write may drop them. */
    flushed: boolean;
    /** A dependency was called in this pass: the next write counts the pass in `attempts` (once). */
    worked: boolean;
    counted: boolean;
    /** The billing confirmation failed in this pass (retried after backoff). */
    settleFailed: boolean;
    /** A dependency outage was met in this pass. */
    outage: boolean;
  }

  type Written = "ok" | "changed" | "lost" | "failed";

  async function runPass(doc: InvoiceDoc & { lease: Lease }): Promise<void> {
    const p: Pass = { cur: doc, lease: doc.lease, flushed: false, worked: false, counted: false, settleFailed: false, outage: false };
    try {
      await machine(p);
    } catch (e) {
      log.error("stored_processor_pass_failed", { invoiceId: doc._id, error: describeError(e) });
      p.outage = true;
      await finish(p, {}, [], Date.now() + backoff(p.cur.outages + 1)).catch(() => undefined);
    } finally {
      processed++;
      passEnded(p.outage);
    }
  }

  async function machine(p: Pass): Promise<void> {
    for (let steps = 0; steps < MAX_STEPS; steps++) {
      const d = p.cur;
      if (stopping && d.step !== "dispatching" && d.step !== "transmitting") {
        await finish(p, {}, [], Date.now());
        return;
      }
      if (d.events.length > 0 && !p.flushed) {
        try {
          await webhooks.enqueue(d, d.events);
          p.flushed = true;
        } catch (e) {
          log.warn("stored_webhook_enqueue_failed", { invoiceId: d._id, error: describeError(e) });
          p.outage = true;
        }
      }
      if (d.settle && !p.settleFailed) {
        const w = await settle(p);
        if (w === "done" || w === "lost" || w === "failed") return;
        continue;
      }
      let next: Written | "done";
      switch (d.step) {
        case "validate":
          next = await validate(p);
          break;
        case "bill":
          next = d.status === "validated" ? await write(p, { ...status(d, "signing") }) : await bill(p);
          break;
        case "dispatching":
          next = await freeze(p, "GW_SIGN_OUTCOME_UNCONFIRMED", "interrupted_sign");
          break;
        case "reverse":
          next = await reverse(p);
          break;
        case "transmit":
          next = await transmit(p);
          break;
        case "transmitting":
          next = await freeze(p, "GW_TRANSMIT_OUTCOME_UNCONFIRMED", "interrupted_transmit");
          break;
        case "done":
          next = await finish(p, {}, [], null);
          break;
      }
      if (next === "done" || next === "lost" || next === "failed") return;
    }
    log.error("stored_processor_step_limit", { invoiceId: p.cur._id, step: p.cur.step });
    await finish(p, {}, [], Date.now() + backoff(1));
  }

  // --- validate --------------------------------------------------------------

  async function validate(p: Pass): Promise<Written | "done"> {
    const d = p.cur;
    p.worked = true;
    let outcome;
    try {
      outcome = await regulator.validateInvoice(d.state, d.document, { requestId: d.operationId });
    } catch (e) {
      return outage(p, _code(e), {});
    }
    if (outcome.kind === "valid") {
      return write(p, { ...status(d, "validated", "signing"), step: "bill", outages: 0, lastError: null });
    }
    if (regulatorFailureCounts(outcome)) return outage(p, mapRegulatorFailure(outcome, "validateInvoice").code, {});
    return reject(p, mapRegulatorFailure(outcome, "validateInvoice").code, outcome.message, "validation_failed");
  }

  // --- bill, then sign -------------------------------------------------------

  async function bill(p: Pass): Promise<Written | "done"> {
    const d = p.cur;
    const identity = _identity(d);
    p.worked = true;
    let debit;
    try {
      debit = await billing.debit(d.businessId, identity, d.feeKobo, _fingerprint(o.secret, d._id, d.signAttempt));
    } catch (e) {
      if (isBillingError(e)) {
        if (e.reason === "attempt_conflict") {
          // This billing identity belongs to another operation (e.g. a Pass-through sign of the
          // same IRN on this domain): the processor's next attempt number.
          log.event("stored_sign_attempt_taken", { invoiceId: d._id, signAttempt: d.signAttempt });
          return write(p, { signAttempt: d.signAttempt + 1 });
        }
        const code: GwCode = e.reason === "wallet_declined" ? "GW_BILLING_WALLET_DECLINED" : "GW_BILLING_REQUEST_REJECTED";
        const budgetLeft = d.budgetLeft - 1;
        log.event("stored_billing_refused", { invoiceId: d._id, reason: e.reason, budgetLeft });
        if (budgetLeft <= 0) return reject(p, code, undefined, "budget_spent", { budgetLeft: 0 });
        const spent = d.budget - budgetLeft;
        return finish(
          p,
          { ...status(d, "validated"), step: "bill", budgetLeft, billDoubt: false, lastError: _error(code) },
          [],
          Date.now() + backoff(spent),
        );
      }
      // Nothing is known to be charged; a retry of the same identity replays a debit that did happen.
      return outage(p, "GW_BILLING_SERVICE_UNAVAILABLE", { ...status(d, "validated"), step: "bill", billDoubt: true });
    }
    if (debit.kind === "replay" && debit.state !== "debited") {
      if (debit.state === "reversed") return write(p, { signAttempt: d.signAttempt + 1, billDoubt: false });
      // Confirmed means a sign of ours was settled but never recorded: unprovable.
      return freeze(p, "GW_SIGN_OUTCOME_UNCONFIRMED", "settled_unrecorded");
    }
    await o.hooks?.afterDebit?.(d._id);
    const marked = await mark(p, "dispatching", "bill", { billDoubt: false });
    if (marked !== "ok") return marked; // the regulator was not called; the debit replays next time
    return sign(p);
  }

  async function sign(p: Pass): Promise<Written | "done"> {
    const d = p.cur;
    let outcome;
    try {
      outcome = await regulator.sign(d.state, d.document, { requestId: d.operationId });
    } catch (e) {
      // Thrown = certainly not signed: the fee goes back, then the invoice waits as validated.
      return record(p, { step: "reverse", reverseFor: { why: "regulator_not_called", code: _code(e) } });
    }
    await o.hooks?.afterSign?.(d._id);
    if (outcome.kind === "signed") {
      const auto = await autoTransmitOf(d.domain);
      const at = new Date().toISOString();
      const events = webhooks.event(d, "invoice.signed", "signed", at);
      log.event("stored_invoice_signed", { invoiceId: d._id, operationId: d.operationId, autoTransmit: auto });
      return record(
        p,
        { ...status(d, ...(auto ? (["signed", "transmitting"] as const) : (["signed"] as const))), step: auto ? "transmit" : "done", settle: true, outages: 0, lastError: null },
        events,
      );
    }
    if (outcome.kind === "rejected" && !regulatorFailureCounts(outcome)) {
      log.event("stored_sign_rejected", { invoiceId: d._id, operationId: d.operationId, upstreamErrorId: outcome.errorId });
      return record(p, { step: "reverse", reverseFor: { why: "regulator_rejected", code: "GW_SIGN_REJECTED", ...(outcome.message ? { regulatorMessage: outcome.message } : {}) } });
    }
    if (outcome.kind === "rejected") {
      // A contract failure (the regulator does not serve the route): it did not sign.
      return record(p, { step: "reverse", reverseFor: { why: "regulator_not_called", code: mapRegulatorFailure(outcome, "sign").code } });
    }
    log.error("stored_sign_outcome_unconfirmed", { invoiceId: d._id, operationId: d.operationId, reason: outcome.reason, alert: "immediate" });
    return freeze(p, "GW_SIGN_OUTCOME_UNCONFIRMED", outcome.reason);
  }

  async function reverse(p: Pass): Promise<Written | "done"> {
    const d = p.cur;
    const why = d.reverseFor;
    if (!why) return write(p, { step: "bill" });
    p.worked = true;
    try {
      await billing.reverse(d.businessId, _identity(d), why.why);
    } catch (e) {
      log.error("stored_reversal_unconfirmed", { invoiceId: d._id, operationId: d.operationId, error: describeError(e), alert: "immediate" });
      o.alerts?.raise({ signal: "sign_reversal_unconfirmed", dependency: "billing", operationId: d.operationId, code: "GW_SIGN_REVERSAL_UNCONFIRMED" });
      return outage(p, "GW_SIGN_REVERSAL_UNCONFIRMED", {});
    }
    log.event("stored_sign_reversed", { invoiceId: d._id, operationId: d.operationId, why: why.why });
    if (why.why === "regulator_rejected") return reject(p, why.code, why.regulatorMessage, "sign_rejected");
    return outage(p, why.code, { ...status(d, "validated"), step: "bill", signAttempt: d.signAttempt + 1, reverseFor: null });
  }

  async function settle(p: Pass): Promise<Written | "done"> {
    const d = p.cur;
    try {
      await billing.confirm(d.businessId, _identity(d));
    } catch (e) {
      log.warn("stored_settlement_pending", { invoiceId: d._id, operationId: d.operationId, error: describeError(e) });
      p.settleFailed = true;
      p.outage = true;
      return "ok";
    }
    // Nothing else to do: the confirmation and the hand-back are one write.
    if (d.step === "done" && (p.flushed || d.events.length === 0)) return finish(p, { settle: false }, [], null);
    return write(p, { settle: false });
  }

  // --- transmit --------------------------------------------------------------

  async function transmit(p: Pass): Promise<Written | "done"> {
    const marked = await mark(p, "transmitting", "transmit");
    if (marked !== "ok") return marked;
    const d = p.cur;
    p.worked = true;
    let outcome;
    try {
      outcome = await regulator.transmit(d.state, d.irn, { requestId: d.operationId });
    } catch (e) {
      // Certainly not transmitted: the claim stays with this invoice, dispatched again after backoff.
      const back = await record(p, { step: "transmit" });
      if (back !== "ok") return back;
      return outage(p, _code(e), {});
    }
    if (outcome.kind === "transmitted") {
      const at = new Date().toISOString();
      log.event("stored_invoice_transmitted", { invoiceId: d._id, operationId: d.operationId });
      return finish(p, { ...status(d, "transmitted"), step: "done", outages: 0, lastError: null }, webhooks.event(d, "invoice.transmitted", "transmitted", at), null);
    }
    if (outcome.kind === "rejected" && !regulatorFailureCounts(outcome)) {
      log.event("stored_transmit_rejected", { invoiceId: d._id, operationId: d.operationId, upstreamErrorId: outcome.errorId });
      const code = mapRegulatorFailure(outcome, "transmit").code;
      return finish(p, { ...status(d, "signed"), step: "done", lastError: _error(code, outcome.message) }, [], null);
    }
    if (outcome.kind === "rejected") {
      const back = await record(p, { step: "transmit" });
      if (back !== "ok") return back;
      return outage(p, mapRegulatorFailure(outcome, "transmit").code, {});
    }
    log.error("stored_transmit_outcome_unconfirmed", { invoiceId: d._id, operationId: d.operationId, reason: outcome.reason, alert: "immediate" });
    return freeze(p, "GW_TRANSMIT_OUTCOME_UNCONFIRMED", outcome.reason);
  }

  // --- terminal transitions --------------------------------------------------

  async function reject(p: Pass, code: string, regulatorMessage: string | undefined, reason: string, extra: Partial<InvoiceDoc> = {}): Promise<Written | "done"> {
    const d = p.cur;
    const lastError = _error(code, regulatorMessage);
    log.event("stored_invoice_rejected", { invoiceId: d._id, operationId: d.operationId, code, reason });
    return finish(
      p,
      { ...status(d, "rejected"), step: "done", lastError, reverseFor: null, ...extra },
      webhooks.event(d, "invoice.rejected", "rejected", lastError.at, lastError),
      null,
      ["irnLock"],
    );
  }

  async function freeze(p: Pass, code: GwCode, reason: string): Promise<Written | "done"> {
    const d = p.cur;
    const lastError = _error(code);
    log.error("stored_invoice_frozen", { invoiceId: d._id, operationId: d.operationId, code, reason, alert: "immediate" });
    o.alerts?.raise({
      signal: code === "GW_TRANSMIT_OUTCOME_UNCONFIRMED" ? "transmit_outcome_unconfirmed" : "sign_outcome_unconfirmed",
      dependency: `regulator:${d.state}`,
      operation: code === "GW_TRANSMIT_OUTCOME_UNCONFIRMED" ? "transmit" : "sign",
      failureClass: reason,
      operationId: d.operationId,
      code,
    });
    return finish(p, { ...status(d, "frozen"), step: "done", lastError }, webhooks.event(d, "invoice.frozen", "frozen", lastError.at, lastError), null);
  }

  /**
   * Marks a dispatch (`step`) before the regulator is called. When the store does not acknowledge the
   * mark, it may have landed or may still land (a hung server applies its queue when it resumes), but
   * the regulator was certainly not called: a fence write, while the lease is still ours, moves the
   * invoice back to `back` past both revisions (rev + 2), so a mark that landed is undone and one that
   * lands later fails its compare-and-set. Otherwise the next pass would freeze an invoice that was
   * never sent. The pass then ends with a backoff.
   */
  async function mark(p: Pass, step: "dispatching" | "transmitting", back: Step, set: Partial<InvoiceDoc> = {}): Promise<Written | "done"> {
    const before = p.cur.rev;
    const marked = await write(p, { ...set, step });
    if (marked !== "failed") return marked;
    const id = p.cur._id;
    const ours = { "lease.owner": owner, "lease.until": p.lease.until };
    const fenced = (d: InvoiceDoc | null | undefined): boolean => !!d && d.rev === before + 2 && d.step === back && d.lease?.owner === owner;
    for (let i = 0; i < RECORD_TRIES; i++) {
      await new Promise((r) => setTimeout(r, 100 * (i + 1)));
      let fresh: InvoiceDoc | null | undefined = await invoices
        .findOneAndUpdate({ _id: id, rev: { $in: [before, before + 1] }, ...ours }, { $set: { step: back, rev: before + 2, updatedAt: new Date().toISOString() } })
        .catch(() => undefined);
      // Not answered, or nothing matched: an earlier fence may have landed; see what is stored.
      if (!fenced(fresh)) fresh = await invoices.get(id).catch(() => undefined);
      if (fresh === undefined) continue;
      if (!fenced(fresh)) {
        if (!fresh || fresh.lease?.owner !== owner || fresh.lease.until !== p.lease.until) return "lost";
        continue; // still at `before` or `before + 1`: fence again
      }
      p.cur = fresh!;
      log.warn("stored_dispatch_mark_taken_back", { invoiceId: id, step });
      p.outage = true;
      return finish(p, {}, [], Date.now() + backoff(p.cur.outages + 1));
    }
    // Still unknown: the lease expires and the next pass freezes the invoice (it cannot prove more).
    log.warn("stored_dispatch_mark_unresolved", { invoiceId: id, step });
    return "failed";
  }

  /** A dependency outage: record where the invoice waits, back off (the budget is untouched). */
  async function outage(p: Pass, code: string, set: Partial<InvoiceDoc>): Promise<Written | "done"> {
    p.outage = true;
    const outages = p.cur.outages + 1;
    log.warn("stored_dependency_backoff", { invoiceId: p.cur._id, code, outages, status: set.status ?? p.cur.status });
    return finish(p, { ...set, outages, lastError: _error(code) }, [], Date.now() + backoff(outages));
  }

  // -------------------------------------------------------------------------
  // Writes
  // -------------------------------------------------------------------------

  /** The status fields of moving through `statuses` now (history appended). */
  function status(d: InvoiceDoc, ...statuses: readonly InvoiceStatus[]): Partial<InvoiceDoc> {
    const at = new Date().toISOString();
    return { status: statuses[statuses.length - 1]!, statusHistory: [...d.statusHistory, ...statuses.map((s) => ({ status: s, at }))] };
  }

  /**
   * One compare-and-set on the invoice, still holding the lease. "changed": someone else (a transmit
   * or cancel request) wrote first; `p.cur` is the fresh document and the pass re-evaluates it.
   */
  async function write(p: Pass, set: Partial<InvoiceDoc>, events: InvoiceEvent[] = [], unset: string[] = []): Promise<Written> {
    const d = p.cur;
    const next: Record<string, unknown> = { ...set, rev: d.rev + 1, updatedAt: new Date().toISOString() };
    next.events = p.flushed ? events : [...d.events, ...events];
    const counting = p.worked && !p.counted;
    if (counting) next.attempts = d.attempts + 1;
    let updated: InvoiceDoc | null;
    try {
      updated = await invoices.findOneAndUpdate(
        { _id: d._id, rev: d.rev, "lease.owner": owner, "lease.until": p.lease.until },
        unset.length > 0 ? { $set: next, $unset: unset } : { $set: next },
      );
    } catch (e) {
      log.warn("stored_processor_write_failed", { invoiceId: d._id, error: describeError(e) });
      p.outage = true;
      return "failed";
    }
    if (updated) {
      p.cur = updated;
      if (p.flushed) p.flushed = events.length === 0;
      if (counting) p.counted = true;
      return "ok";
    }
    const fresh = await invoices.get(d._id).catch(() => null);
    if (!fresh || fresh.lease?.owner !== owner || fresh.lease.until !== p.lease.until) {
      log.warn("stored_processor_lease_lost", { invoiceId: d._id });
      return "lost";
    }
    p.cur = fresh;
    p.flushed = false;
    return "changed";
  }

  /** A write that records a regulator outcome: retried, because losing it freezes the invoice. */
  /**
   * The domain's current autoTransmit. A record that cannot be read leaves the invoice `signed`
   * (the merchant or an operator transmits it by ID); the signing outcome is never put at risk for it.
   */
  async function autoTransmitOf(host: string | null): Promise<boolean> {
    if (!host) return false;
    const cached = directory.cachedDomain(host);
    if (cached !== undefined) return cached?.autoTransmit === true;
    try {
      return (await directory.loadDomain(host))?.autoTransmit === true;
    } catch (e) {
      log.warn("stored_domain_unreadable", { host, error: describeError(e) });
      return false;
    }
  }

  async function record(p: Pass, set: Partial<InvoiceDoc>, events: InvoiceEvent[] = []): Promise<Written> {
    let w: Written = "failed";
    for (let i = 0; i < RECORD_TRIES; i++) {
      w = await write(p, set, events);
      if (w !== "failed") return w;
      await new Promise((r) => setTimeout(r, 100 * (i + 1)));
    }
    o.alerts?.raise({ signal: "post_sign_state_missing", dependency: "documentStore", operation: "stored_invoices.findOneAndUpdate", operationId: p.cur.operationId });
    return w;
  }

  /**
   * The pass's last write: the lease is released and the invoice is due again at `dueAt` (null:
   * idle), earlier when a settlement or webhooks are still owed. Webhooks this write records are
   * enqueued right after it; once they are, a compare-and-set clears them.
   */
  async function finish(p: Pass, set: Partial<InvoiceDoc>, events: InvoiceEvent[], dueAt: number | null, unset: string[] = []): Promise<Written | "done"> {
    let wanted = dueAt;
    const earliest = (due: number | null, t: number) => (due === null ? t : Math.min(due, t));
    const retryAt = Date.now() + backoff(p.cur.outages + 1);
    if ((set.settle ?? p.cur.settle) === true) wanted = earliest(wanted, p.settleFailed ? retryAt : Date.now());
    const eventsLeft = events.length > 0 || (!p.flushed && p.cur.events.length > 0);
    const w = await write(p, { ...set, dueAt: eventsLeft ? earliest(wanted, retryAt) : wanted }, events, [...unset, "lease"]);
    if (w !== "ok") return w;
    if (events.length > 0) await flushAfter(p, wanted);
    return "done";
  }

  /** Enqueues the webhooks on the invoice; once they are, clears them (unless someone wrote since). */
  async function flushAfter(p: Pass, dueAt: number | null): Promise<void> {
    const d = p.cur;
    try {
      await webhooks.enqueue(d, d.events);
    } catch (e) {
      log.warn("stored_webhook_enqueue_failed", { invoiceId: d._id, error: describeError(e) });
      return;
    }
    await invoices.findOneAndUpdate({ _id: d._id, rev: d.rev }, { $set: { events: [], dueAt, rev: d.rev + 1 } }).catch(() => null);
  }

  // -------------------------------------------------------------------------
  // Heartbeat and lifecycle
  // -------------------------------------------------------------------------

  /** The heartbeat write in flight: stop() waits for it, so that no beat lands after the heartbeat is removed. */
  let lastBeat: Promise<unknown> = Promise.resolve();

  /**
   * Updates this processor's heartbeat; creates it only when the update finds none (the first beat,
   * or one expired during a long store outage) and the processor is not stopping. A beat whose write
   * lands late (after its deadline, after stop() removed the heartbeat) is an update: it finds
   * nothing and recreates nothing.
   */
  function beat(): Promise<unknown> {
    const now = Date.now();
    const update = {
      $set: {
        host: hostname(),
        pid: process.pid,
        startedAt,
        lastTickAt,
        inFlight: queue.pending,
        processed,
        concurrency: o.concurrency,
        expiresAtMs: now + Math.max(60_000, 10 * o.heartbeatMs),
      },
    };
    lastBeat = store.heartbeats
      .updateOne({ _id: owner }, update)
      .then((found): unknown => (found || stopping ? found : store.heartbeats.findOneAndUpdate({ _id: owner }, update, { upsert: true })))
      .catch((e) => log.warn("stored_processor_heartbeat_failed", { error: describeError(e) }));
    return lastBeat;
  }

  return {
    name: "stored-processor",
    owner,
    wake() {
      wakeUp?.();
    },
    async start() {
      if (running) return;
      running = true;
      stopping = false;
      log.event("stored_processor_started", { owner, concurrency: o.concurrency });
      await beat();
      heartbeat = setInterval(() => void beat(), o.heartbeatMs);
      heartbeat.unref();
      loop = claimLoop();
    },
    async stop() {
      if (!running) return;
      running = false;
      stopping = true;
      wakeUp?.();
      if (heartbeat) clearInterval(heartbeat);
      heartbeat = null;
      // The loop ends at its next turn (a sleeping loop was woken; a saturated one waits for a pass).
      await loop;
      await queue.onIdle();
      await lastBeat;
      await store.heartbeats.delete(owner).catch(() => false);
      log.event("stored_processor_stopped", { owner, processed });
    },
  };
}

// --- Internal helpers ---

function _identity(d: InvoiceDoc): BillingIdentity {
  return { subBusinessId: d.subBusinessId, domain: d.domain ?? "", irn: d.irn, attemptNumber: d.signAttempt };
}

/** The ledger fingerprint of one of the processor's attempts: unique to this invoice and attempt. */
function _fingerprint(secret: Buffer, invoiceId: string, attempt: number): string {
  return keyedHash(secret, `stored\u0000${invoiceId}\u0000${attempt}`);
}

function _error(code: string, regulatorMessage?: string): LastError {
  return { code, at: new Date().toISOString(), ...(regulatorMessage ? { regulatorMessage } : {}) };
}

function _code(e: unknown): string {
  return isGatewayError(e) ? e.code : "GW_UPSTREAM_UNAVAILABLE";
}
