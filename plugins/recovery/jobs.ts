/**
 * Recovery jobs (docs/operations.md "Recovery jobs"): what nobody else will finish.
 *
 *   held signs        Pass-through sign attempts whose fee is held, and frozen Stored signs, settled
 *                     against the regulator (jobs/settle-held.ts, jobs/settle-stored.ts)
 *   unowned debits    fees still `debited` that no sign record or Stored invoice owns (a claim released
 *                     after its debit, never retried): reversed when the regulator proves nothing was
 *                     signed, alerted otherwise (jobs/settle-unowned.ts)
 *   stale claims      Pass-through transmission claims `in_progress` past the stale age → `unknown`
 *                     (jobs/stale-claims.ts)
 *   overdue           anything above still unresolved past `recovery.overdueAfterMs` →
 *                     `reconciliation_overdue` (an alert, every cooldown while it lasts; jobs/overdue.ts)
 *
 * One run at a time in the deployment, under a coordination lease (jobs/run.ts). Every write is a
 * compare-and-set on the record's state and the ledger's confirm and reverse are idempotent, so even
 * two overlapping runs settle nothing twice. Operator decisions (jobs/resolve.ts) use the same
 * settlement code. The records are the invoice kit's (plugins/invoice/).
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { openDirectoryStore } from "../../core/directory-store.ts";
import type { SignRecord } from "../invoice/sign-attempts.ts";
import { openSignAttempts } from "../invoice/sign-attempts.ts";
import { openRepresentedBusinesses } from "../invoice/represented-businesses.ts";
import { openStoredInvoices } from "../invoice/stored-invoices.ts";
import { openTransmissionClaims } from "../invoice/transmission-claims.ts";
import { resolveSignAttempt, resolveTransmission } from "./jobs/resolve.ts";
import { runJobs, type RunState } from "./jobs/run.ts";
import type { Decider, RecoveryContext, RecoveryOptions, RunSummary, SettleOutcome, TransmissionOutcome, TransmissionResolution } from "./jobs/types.ts";

export type { Decider, RecoveryOptions, RunSummary, SettleOutcome, TransmissionOutcome, TransmissionResolution } from "./jobs/types.ts";

export interface Recovery {
  /** One run of every job (tests call it; the worker calls it every `intervalMs`). */
  runOnce(): Promise<RunSummary>;
  /** An operator's decision on a held Pass-through sign attempt (same settlement as the job). */
  resolveSignAttempt(operationId: string, outcome: SettleOutcome, by: Decider): Promise<SignRecord | "not_found" | "not_held">;
  /**
   * An operator's decision on a Pass-through transmission whose outcome is unknown: "transmitted"
   * records it as succeeded (a matching request then answers 409 with its operationId);
   * "not_transmitted" removes the claim, so the merchant may transmit the IRN again.
   */
  resolveTransmission(operationId: string, outcome: TransmissionOutcome, by: Decider): Promise<TransmissionResolution | "not_found" | "not_unknown">;
  report(): Promise<Record<string, unknown>>;
  readonly worker: { name: string; start(): Promise<void>; stop(): Promise<void> };
}

export function createRecovery(o: RecoveryOptions): Recovery {
  const actions = o.metrics.counter("gatehouse_recovery_actions_total", "Recovery job actions, by job and outcome.", ["job", "outcome"]);
  const c: RecoveryContext = {
    o,
    records: openSignAttempts(o.store),
    invoices: openStoredInvoices(o.store),
    claims: openTransmissionClaims(o.store),
    subs: openRepresentedBusinesses(o.store),
    audit: openDirectoryStore(o.store).audit,
    totals: { confirmed: 0, reversed: 0, released: 0, unprovable: 0, claimsUnknown: 0 },
    count: (job, outcome) => actions.series(job, outcome).inc(),
  };
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const state: RunState = { lastRun: null, open: {} };
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<RunSummary> | null = null;

  function runOnce(): Promise<RunSummary> {
    running ??= runJobs(c, owner, state).finally(() => {
      running = null;
    });
    return running;
  }

  return {
    runOnce,
    resolveSignAttempt: (operationId, outcome, by) => resolveSignAttempt(c, operationId, outcome, by),
    resolveTransmission: (operationId, outcome, by) => resolveTransmission(c, operationId, outcome, by),
    async report() {
      return { owner, lastRun: state.lastRun, totals: { ...c.totals }, open: state.open };
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
