/**
 * Settling sessions after the request that started them: a processor report applied (idempotent,
 * safe to call any number of times, concurrently), pending sessions past their deadline abandoned
 * (after asking the processor whether it took a payment whose every notification was lost), and
 * the effects of final states left unfinished re-driven by the worker.
 */
import type { Filter, PaymentReport } from "../../../../adapters/ports.ts";
import { describeError } from "../../../../core/log.ts";
import { DEADLINE_PASSED, within } from "./deadline.ts";
import { decideReport } from "./decide.ts";
import type { CheckoutDeps } from "./deps.ts";
import { runEffects, transition } from "./effects.ts";
import type { CheckoutSession } from "./session.ts";
import { isBankTransfer } from "./transfer.ts";

const SWEEP_BATCH = 100;
const SWEEP_ROUNDS = 20;
const REPORT_ATTEMPTS = 5;
/** The worker re-drives a final state's effects only after this long (the request may still be on it). */
const REDRIVE_AFTER_MS = 10_000;

/** Settles a processor report: the state change it causes (if any), then the effects. */
export async function applyReport(deps: CheckoutDeps, report: PaymentReport): Promise<void> {
  for (let attempt = 0; attempt < REPORT_ATTEMPTS; attempt++) {
    const s = await deps.sessions.get(report.sessionId);
    if (!s) {
      deps.log.warn("collections_payment_report_unknown_session", { sessionId: report.sessionId });
      return;
    }
    const next = decideReport(s, report, deps.clock());
    if (!next) {
      await runEffects(deps, s);
      return;
    }
    const updated = await transition(deps, s, next);
    if (updated) {
      await runEffects(deps, updated);
      return;
    }
  }
  throw new Error("the checkout session kept changing while a payment report was applied");
}

/** Abandons pending sessions past their deadline (all, or one link's); returns how many. */
export async function expireStale(deps: CheckoutDeps, scope: { linkId?: string } = {}): Promise<number> {
  let total = 0;
  for (let round = 0; round < SWEEP_ROUNDS; round++) {
    const now = deps.clock();
    const filter: Filter = { status: "pending", expiresAt: { $lte: now } };
    if (scope.linkId) filter.linkId = scope.linkId;
    const { items } = await deps.sessions.find(filter, { sort: [{ field: "expiresAt", direction: 1 }], limit: SWEEP_BATCH });
    let unanswered = 0;
    for (const s of items) {
      const outcome = await _abandonOrSettle(deps, s, now);
      if (outcome === "unanswered") unanswered++; // the processor did not answer: asked again on the next sweep
      else if (outcome === "abandoned") total++;
    }
    if (items.length < SWEEP_BATCH || unanswered === items.length) break;
  }
  return total;
}

/** Completes the effects of final states left unfinished (a crash, a store hiccup). */
export async function redrive(deps: CheckoutDeps): Promise<number> {
  const { sessions, log, clock } = deps;
  const { items } = await sessions.find(
    { effectsPending: true, updatedAt: { $lt: clock() - REDRIVE_AFTER_MS } },
    { sort: [{ field: "updatedAt", direction: 1 }], limit: SWEEP_BATCH },
  );
  let done = 0;
  for (const s of items) {
    try {
      await runEffects(deps, s);
      done++;
    } catch (e) {
      log.warn("collections_checkout_effects_deferred", { sessionId: s._id, error: describeError(e) });
      // To the back of the queue: a session whose effects keep failing (a refund the processor
      // refuses) must not hold the batch's places against every session behind it.
      await sessions.findOneAndUpdate({ _id: s._id, effectsPending: true }, { $set: { updatedAt: clock() } }).catch(() => undefined);
    }
  }
  return done;
}

// --- Internal helpers ---

/**
 * One stale session: before abandoning it, ask the processor: a payment whose every notification
 * was lost is settled (or refunded) from its report instead of being abandoned with the payer
 * charged.
 */
async function _abandonOrSettle(deps: CheckoutDeps, s: CheckoutSession, now: number): Promise<"unanswered" | "settled" | "abandoned" | "moved"> {
  const known = await _lookupPayment(deps, s);
  if (known === undefined) return "unanswered";
  if (known) {
    deps.log.warn("collections_payment_report_recovered", { sessionId: s._id, businessId: s.businessId });
    await applyReport(deps, known);
    return "settled";
  }
  const updated = await transition(deps, s, {
    status: "abandoned",
    failureReason: isBankTransfer(s) ? "No transfer of the amount due was received within 30 minutes." : "No payment was completed within 30 minutes.",
    completedAt: now,
  });
  if (!updated) return "moved";
  try {
    await runEffects(deps, updated);
  } catch (e) {
    deps.log.warn("collections_checkout_effects_deferred", { sessionId: s._id, error: describeError(e) });
  }
  return "abandoned";
}

/**
 * The processor's report of a session's payment (for a transfer: the settled transfer into its
 * account); null when it has none; undefined when it did not answer in time.
 */
async function _lookupPayment(deps: CheckoutDeps, s: CheckoutSession): Promise<PaymentReport | null | undefined> {
  const sessionId = s._id;
  try {
    if (isBankTransfer(s)) return s.transfer && deps.transfers ? await deps.transfers.lookup(s) : null;
    return await within(deps.payments.lookup(sessionId), deps.payTimeoutMs);
  } catch (e) {
    deps.log.warn("collections_payment_lookup_failed", { sessionId, error: e === DEADLINE_PASSED ? "timeout" : describeError(e) });
    return undefined;
  }
}
