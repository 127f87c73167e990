/**
 * Checkout sessions of payment links: one session per payment attempt, one transaction of the
 * link each (DECISIONS.md "Checkout", "Transactions").
 *
 * States: `pending` → `successful` | `failed` | `abandoned` (no completion within 30 minutes);
 * a payment that does not match the link's fixed amount (or what the session asked the processor
 * to charge) becomes `refunded`, never settled; so does a payment reported for a session that had
 * already failed or been abandoned (late payment).
 *
 * Exactly once, across duplicate processor reports and processes:
 * - every state change is a compare-and-set on the session's current status, so only one report
 *   (or the abandonment sweep) moves a session out of `pending`;
 * - the effects of a final state are idempotent and re-driven on every later report and by the
 *   worker until done (`effectsPending`): the wallet credit is keyed by the session id (one credit
 *   document per session), the refund is idempotent per session at the processor, and the webhook
 *   enqueue is idempotent on `${eventType}:${sessionId}`.
 */
import { randomUUID } from "node:crypto";
import {
  isPaymentRefusedError,
  type Collection,
  type Doc,
  type DocumentStore,
  type Filter,
  type PaymentProcessor,
  type PaymentReport,
  type WebhookOutbox,
} from "../../../../adapters/ports.ts";
import type { TenantDirectory } from "../../../../core/directory.ts";
import { describeError, type Logger } from "../../../../core/log.ts";
import { CURRENCY, koboToNgn, split, type FeeBearer, type FeePolicy } from "../../shared/money.ts";
import type { CheckoutInput, ListTransactionsInput, SandboxOutcome } from "../schemas.ts";
import type { PaymentLink } from "../link-service.ts";
import { findPage, newReference, webhookEndpointOf } from "../../shared/common.ts";
import { formatTime, formatTimeOrNull } from "../../shared/time.ts";
import type { CollectionWallet } from "../../wallet/wallet.ts";

export const SESSIONS_COLLECTION = "collections_checkout_sessions";
/** A session with no completion within this time is abandoned (DECISIONS.md). */
export const ABANDON_AFTER_MS = 30 * 60_000;
/** Wallet credits of checkouts carry this source type. */
export const CHECKOUT_SOURCE = "payment_link_checkout";
const SWEEP_BATCH = 100;

/** A business as the tenant directory answers it. */
type Business = NonNullable<ReturnType<TenantDirectory["business"]>>;
/** The worker re-drives a final state's effects only after this long (the request may still be on it). */
const REDRIVE_AFTER_MS = 10_000;

export type SessionStatus = "pending" | "successful" | "failed" | "abandoned" | "refunded";
/** A transaction of a payment link (one checkout session) as the API and webhooks show it. */
export interface TransactionView {
  id: string;
  reference: string;
  linkReference: string;
  sourceReference: string;
  amount: number;
  fee: number;
  feeBearer: FeeBearer;
  chargedAmount: number;
  netAmount: number;
  currency: string;
  status: SessionStatus;
  customerEmail: string;
  paymentMethod: string;
  processorReference: string | null;
  failureReason: string | null;
  refund: { amount: number; reason: string; refundReference: string | null } | null;
  createdAt: string;
  paidAt: string | null;
  completedAt: string | null;
}

export type FinalStatus = Exclude<SessionStatus, "pending">;

export const CHECKOUT_EVENTS = {
  successful: "CHECKOUT_COMPLETED",
  failed: "CHECKOUT_FAILED",
  abandoned: "CHECKOUT_CANCELLED",
  refunded: "CHECKOUT_REFUNDED",
} as const satisfies Record<FinalStatus, string>;

/** A checkout webhook body: `{ event_type, data }` with the transaction (DECISIONS.md "Checkout"). */
export interface CheckoutEvent {
  event_type: (typeof CHECKOUT_EVENTS)[FinalStatus];
  data: TransactionView;
}

export interface CheckoutSession extends Doc {
  businessId: string;
  linkId: string;
  linkReference: string;
  sourceReference: string;
  linkName: string;
  /** Transaction reference (generated, unique). */
  reference: string;
  /** The checkout form's one-time token, when it sent one (unique per link). */
  formToken?: string;
  /** The amount paid for, before a CUSTOMER fee. */
  amountKobo: number;
  feeKobo: number;
  /** What the processor is asked to charge. */
  chargeKobo: number;
  /** What the wallet receives when the session succeeds. */
  netKobo: number;
  feeBearer: FeeBearer;
  /** The link's fixed amount when the session started, or null. */
  fixedAmountKobo: number | null;
  currency: typeof CURRENCY;
  status: SessionStatus;
  customerEmail: string;
  paymentMethod: string;
  simulate: SandboxOutcome | null;
  processorReference: string | null;
  reportedAmountKobo: number | null;
  failureReason: string | null;
  refund: { amountKobo: number; reason: string; refundReference: string | null } | null;
  /** A final state whose effects (credit, refund, webhook) are not confirmed done yet. */
  effectsPending: boolean;
  createdAt: number;
  expiresAt: number;
  paidAt: number | null;
  completedAt: number | null;
  updatedAt: number;
}

export interface CheckoutServiceOptions {
  store: DocumentStore;
  directory: TenantDirectory;
  payments: PaymentProcessor;
  webhooks: WebhookOutbox;
  wallet: CollectionWallet;
  log: Logger;
  fee: FeePolicy;
  clock: () => number;
  /** How long the checkout request waits for the processor before answering "processing". */
  payTimeoutMs: number;
  abandonAfterMs?: number;
}

export interface CheckoutService {
  /** Starts (or, for a resubmitted form, returns) a session and pays it. Answers its current state. */
  start(link: PaymentLink, business: Business, input: CheckoutInput): Promise<CheckoutSession>;
  /** Settles a processor report (idempotent; safe to call any number of times, concurrently). */
  applyReport(report: PaymentReport): Promise<void>;
  /** Abandons pending sessions past their deadline (all, or one link's); returns how many. */
  expireStale(scope?: { linkId?: string }): Promise<number>;
  /** Completes the effects of final states left unfinished (a crash, a store hiccup). */
  redrive(): Promise<number>;
  findSession(linkId: string, sessionId: string): Promise<CheckoutSession | null>;
  transactions(businessId: string, linkId: string, query: ListTransactionsInput): Promise<{ items: CheckoutSession[]; total: number }>;
  view(session: CheckoutSession): TransactionView;
}

export function createCheckoutService(options: CheckoutServiceOptions): CheckoutService {
  const { directory, payments, webhooks, wallet, log, fee, clock } = options;
  const abandonAfterMs = options.abandonAfterMs ?? ABANDON_AFTER_MS;
  const sessions: Collection<CheckoutSession> = options.store.collection<CheckoutSession>(SESSIONS_COLLECTION, {
    indexes: [
      { fields: ["reference"], unique: true },
      { fields: ["linkId", "formToken"], unique: true, sparse: true },
      { fields: ["businessId", "linkId", "createdAt"] },
      { fields: ["status", "expiresAt"] },
    ],
  });

  const view = (s: CheckoutSession): TransactionView => ({
    id: s._id,
    reference: s.reference,
    linkReference: s.linkReference,
    sourceReference: s.sourceReference,
    amount: koboToNgn(s.amountKobo),
    fee: koboToNgn(s.feeKobo),
    feeBearer: s.feeBearer,
    chargedAmount: koboToNgn(s.chargeKobo),
    netAmount: koboToNgn(s.netKobo),
    currency: s.currency,
    status: s.status,
    customerEmail: s.customerEmail,
    paymentMethod: s.paymentMethod,
    processorReference: s.processorReference,
    failureReason: s.failureReason,
    refund: s.refund
      ? { amount: koboToNgn(s.refund.amountKobo), reason: s.refund.reason, refundReference: s.refund.refundReference }
      : null,
    createdAt: formatTime(s.createdAt),
    paidAt: formatTimeOrNull(s.paidAt),
    completedAt: formatTimeOrNull(s.completedAt),
  });

  /** Runs the idempotent effects of the session's state, then clears `effectsPending`. */
  const effects = async (s: CheckoutSession): Promise<void> => {
    if (s.status === "pending") return;
    let current = s;
    if (current.status === "successful") {
      const { created } = await wallet.credit(current.businessId, current.netKobo, {
        sourceType: CHECKOUT_SOURCE,
        sourceId: current._id,
        reference: current.reference,
        description: `Payment link ${current.linkReference} (${current.linkName})`,
      });
      if (created) log.event("collections_wallet_credited", { businessId: current.businessId, sessionId: current._id, amountKobo: current.netKobo });
    }
    if (current.status === "refunded" && current.refund && current.refund.refundReference === null) {
      const { refundReference } = await payments.refund(current._id, current.refund.amountKobo, current.refund.reason);
      current =
        (await sessions.findOneAndUpdate(
          { _id: current._id, status: "refunded" },
          { $set: { "refund.refundReference": refundReference, updatedAt: clock() } },
        )) ?? current;
    }
    const eventType = CHECKOUT_EVENTS[current.status as FinalStatus];
    await webhooks.enqueue(
      {
        businessId: current.businessId,
        eventType,
        payload: { event_type: eventType, data: view(current) },
        idempotencyKey: `${eventType}:${current._id}`,
      },
      webhookEndpointOf(directory, current.businessId),
    );
    if (current.effectsPending)
      await sessions.findOneAndUpdate({ _id: current._id, status: current.status, effectsPending: true }, { $set: { effectsPending: false } });
  };

  /** Compare-and-set from the session's current status; null when another writer moved it first. */
  const transition = async (s: CheckoutSession, set: Partial<CheckoutSession> & { status: FinalStatus }): Promise<CheckoutSession | null> => {
    const updated = await sessions.findOneAndUpdate(
      { _id: s._id, status: s.status },
      { $set: { ...set, effectsPending: true, updatedAt: clock() } },
    );
    if (updated)
      log.event("collections_checkout_state_changed", {
        sessionId: s._id,
        businessId: s.businessId,
        linkReference: s.linkReference,
        from: s.status,
        to: updated.status,
      });
    return updated;
  };

  const applyReport = async (report: PaymentReport): Promise<void> => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const s = await sessions.get(report.sessionId);
      if (!s) {
        log.warn("collections_payment_report_unknown_session", { sessionId: report.sessionId });
        return;
      }
      const next = _decide(s, report, clock());
      if (!next) {
        await effects(s);
        return;
      }
      const updated = await transition(s, next);
      if (updated) {
        await effects(updated);
        return;
      }
    }
    throw new Error("the checkout session kept changing while a payment report was applied");
  };

  const settleInBackground = (paying: Promise<PaymentReport>, sessionId: string): void => {
    paying.then(applyReport).catch((e) =>
      log.warn("collections_payment_settlement_deferred", { sessionId, error: describeError(e) }),
    );
  };

  /** The processor's report of a session's payment; null when it has none; undefined when it did not answer in time. */
  const lookupPayment = async (sessionId: string): Promise<PaymentReport | null | undefined> => {
    try {
      return await _within(payments.lookup(sessionId), options.payTimeoutMs);
    } catch (e) {
      log.warn("collections_payment_lookup_failed", { sessionId, error: e === _TIMEOUT ? "timeout" : describeError(e) });
      return undefined;
    }
  };

  const expireStale = async (scope: { linkId?: string } = {}): Promise<number> => {
    let total = 0;
    for (let round = 0; round < 20; round++) {
      const now = clock();
      const filter: Filter = { status: "pending", expiresAt: { $lte: now } };
      if (scope.linkId) filter.linkId = scope.linkId;
      const { items } = await sessions.find(filter, { sort: [{ field: "expiresAt", direction: 1 }], limit: SWEEP_BATCH });
      let unanswered = 0;
      for (const s of items) {
        // Before abandoning, ask the processor: a payment whose every notification was lost is
        // settled (or refunded) from its report instead of being abandoned with the payer charged.
        const known = await lookupPayment(s._id);
        if (known === undefined) {
          unanswered++; // the processor did not answer: asked again on the next sweep
          continue;
        }
        if (known) {
          log.warn("collections_payment_report_recovered", { sessionId: s._id, businessId: s.businessId });
          await applyReport(known);
          continue;
        }
        const updated = await transition(s, {
          status: "abandoned",
          failureReason: "No payment was completed within 30 minutes.",
          completedAt: now,
        });
        if (!updated) continue;
        total++;
        try {
          await effects(updated);
        } catch (e) {
          log.warn("collections_checkout_effects_deferred", { sessionId: s._id, error: describeError(e) });
        }
      }
      if (items.length < SWEEP_BATCH || unanswered === items.length) break;
    }
    return total;
  };

  /**
   * Asks the processor to pay a pending session and applies its answer; answers the stored state.
   * Also run for a resubmitted form whose session is still pending: the processor charges once per
   * session id (a repeated call returns the first outcome), so a session whose first submission
   * stored it but never reached the processor (a store hiccup, a gateway that died) is paid now, and
   * one whose report was not taken is settled now, instead of waiting to be abandoned.
   */
  const pay = async (session: CheckoutSession, business: Business): Promise<CheckoutSession> => {
    log.event("collections_payment_requested", { sessionId: session._id, businessId: session.businessId });
    const paying = payments.pay({
      sessionId: session._id,
      businessId: session.businessId,
      businessState: business.state,
      amountKobo: session.chargeKobo,
      currency: CURRENCY,
      customerEmail: session.customerEmail,
      ...(session.simulate ? { simulate: session.simulate } : {}),
    });
    let report: PaymentReport;
    try {
      report = await _within(paying, options.payTimeoutMs);
    } catch (e) {
      if (e === _TIMEOUT) {
        // The processor is slow: the session stays pending; its report settles it later, or the
        // sweep abandons it after 30 minutes.
        settleInBackground(paying, session._id);
        return (await sessions.get(session._id)) ?? session;
      }
      if (!isPaymentRefusedError(e)) {
        // No definite answer (the processor unreachable, an unclear error): the payment may have
        // been taken. The session stays pending ("processing"): its report, a resubmission (which
        // asks again with the same session id) or the look-up before abandonment decides it.
        log.warn("collections_payment_outcome_unknown", { sessionId: session._id, error: describeError(e) });
        return (await sessions.get(session._id)) ?? session;
      }
      log.warn("collections_payment_processor_refused", { sessionId: session._id, error: describeError(e) });
      const failed = await transition(session, {
        status: "failed",
        failureReason: "The payment processor did not accept the payment.",
        completedAt: clock(),
      });
      if (failed) await effects(failed);
      return (await sessions.get(session._id)) ?? session;
    }
    try {
      await applyReport(report);
    } catch (e) {
      // The state change is stored before its effects; unfinished effects are re-driven by the
      // next report and by the worker. The customer sees the session's stored state.
      log.warn("collections_checkout_effects_deferred", { sessionId: session._id, error: describeError(e) });
    }
    return (await sessions.get(session._id)) ?? session;
  };

  return {
    async start(link, business, input) {
      // A resubmitted form answers its session; one still pending is paid (again: once per session id).
      const resume = (existing: CheckoutSession) => (existing.status === "pending" ? pay(existing, business) : existing);
      if (input.token) {
        const existing = await sessions.findOne({ linkId: link._id, formToken: input.token });
        if (existing) return resume(existing);
      }
      const now = clock();
      const parts = split(input.amountKobo, link.feeBearer, fee);
      const session: CheckoutSession = {
        _id: randomUUID(),
        businessId: link.businessId,
        linkId: link._id,
        linkReference: link.reference,
        sourceReference: link.sourceReference,
        linkName: link.linkName,
        reference: newReference("PLT-"),
        ...(input.token ? { formToken: input.token } : {}),
        amountKobo: parts.amountKobo,
        feeKobo: parts.feeKobo,
        chargeKobo: parts.chargeKobo,
        netKobo: parts.netKobo,
        feeBearer: link.feeBearer,
        fixedAmountKobo: link.amountKobo,
        currency: CURRENCY,
        status: "pending",
        customerEmail: input.email,
        paymentMethod: payments.kind,
        simulate: business.state === "TEST" ? input.outcome : null,
        processorReference: null,
        reportedAmountKobo: null,
        failureReason: null,
        refund: null,
        effectsPending: false,
        createdAt: now,
        expiresAt: now + abandonAfterMs,
        paidAt: null,
        completedAt: null,
        updatedAt: now,
      };
      try {
        await sessions.insert(session);
      } catch (e) {
        // The same form submitted twice at once: answer the session the other submission created.
        const existing = input.token ? await sessions.findOne({ linkId: link._id, formToken: input.token }) : null;
        if (existing) return resume(existing);
        throw e;
      }
      log.event("collections_checkout_started", { sessionId: session._id, businessId: session.businessId, linkReference: link.reference });
      return pay(session, business);
    },

    applyReport,

    expireStale,

    async redrive() {
      const { items } = await sessions.find(
        { effectsPending: true, updatedAt: { $lt: clock() - REDRIVE_AFTER_MS } },
        { sort: [{ field: "updatedAt", direction: 1 }], limit: SWEEP_BATCH },
      );
      let done = 0;
      for (const s of items) {
        try {
          await effects(s);
          done++;
        } catch (e) {
          log.warn("collections_checkout_effects_deferred", { sessionId: s._id, error: describeError(e) });
          // To the back of the queue: a session whose effects keep failing (a refund the processor
          // refuses) must not hold the batch's places against every session behind it.
          await sessions.findOneAndUpdate({ _id: s._id, effectsPending: true }, { $set: { updatedAt: clock() } }).catch(() => undefined);
        }
      }
      return done;
    },

    async findSession(linkId, sessionId) {
      const s = await sessions.get(sessionId);
      return s && s.linkId === linkId ? s : null;
    },

    async transactions(businessId, linkId, query) {
      await expireStale({ linkId });
      const filter: Filter = { businessId, linkId };
      if (query.status) filter.status = query.status;
      const search = query.search?.trim();
      if (search) filter.reference = { $contains: search };
      return findPage(sessions, filter, { field: "createdAt", direction: -1 }, query.page, query.limit);
    },

    view,
  };
}

// --- Internal helpers ---

const _TIMEOUT = Symbol("timeout");

function _within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(_TIMEOUT), ms);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** The state change a report causes, or null when it causes none. */
function _decide(s: CheckoutSession, report: PaymentReport, now: number): (Partial<CheckoutSession> & { status: FinalStatus }) | null {
  const reportedAt = Date.parse(report.reportedAt);
  const at = Number.isFinite(reportedAt) ? reportedAt : now;
  if (report.status === "failed") {
    if (s.status !== "pending") return null;
    return {
      status: "failed",
      processorReference: report.processorReference,
      failureReason: report.failureReason ?? "The payment was declined.",
      completedAt: now,
    };
  }
  if (s.status === "successful" || s.status === "refunded") return null;
  const paid = { processorReference: report.processorReference, reportedAmountKobo: report.amountKobo, paidAt: at, completedAt: now };
  if (s.status === "failed" || s.status === "abandoned") {
    return {
      status: "refunded",
      ...paid,
      refund: { amountKobo: report.amountKobo, reason: `payment reported after the session was ${s.status}`, refundReference: null },
    };
  }
  const mismatch = report.amountKobo !== s.chargeKobo || (s.fixedAmountKobo !== null && s.amountKobo !== s.fixedAmountKobo);
  if (mismatch) {
    return {
      status: "refunded",
      ...paid,
      failureReason: "The amount paid does not match the payment link's fixed amount.",
      refund: { amountKobo: report.amountKobo, reason: "amount does not match the link's fixed amount", refundReference: null },
    };
  }
  return { status: "successful", ...paid };
}
