/**
 * One run of every job, at most one at a time in the deployment: a run holds the coordination lease
 * `recovery:run` (ttl `leaseMs`, renewed every third of it while the run lasts, so it outlives no
 * dead process by more than `leaseMs`); a run whose renewal fails stops before its next record.
 * After the jobs, what is still open is counted and the overdue part alerted.
 */
import { describeError } from "../../../core/log.ts";
import { countOpen } from "./overdue.ts";
import { settleHeldSigns } from "./settle-held.ts";
import { settleFrozenStored } from "./settle-stored.ts";
import { settleUnownedDebits } from "./settle-unowned.ts";
import { markStaleClaims } from "./stale-claims.ts";
import type { RecoveryContext, RunSummary } from "./types.ts";

const LEASE_KEY = "recovery:run";

/** The jobs in run order, by the name their failures are logged under. */
const JOBS: ReadonlyArray<readonly [string, (c: RecoveryContext, s: RunSummary) => Promise<void>]> = [
  ["settleSigns", settleHeldSigns],
  ["settleStored", settleFrozenStored],
  ["settleUnownedDebits", settleUnownedDebits],
  ["staleClaims", markStaleClaims],
];

/** How the last run went, and what was open after it (the health report). */
export interface RunState {
  lastRun: { at: string; durationMs: number; outcome: "ok" | "skipped" | "failed" } | null;
  open: Record<string, number>;
}

export async function runJobs(c: RecoveryContext, owner: string, state: RunState): Promise<RunSummary> {
  const { o } = c;
  const s: RunSummary = { ran: false, confirmed: 0, reversed: 0, released: 0, unprovable: 0, claimsUnknown: 0, overdue: 0, unownedOverdue: 0, leaseLost: false };
  const started = o.now();
  if (!(await _acquire(c, owner))) {
    state.lastRun = { at: new Date(started).toISOString(), durationMs: 0, outcome: "skipped" };
    return s;
  }
  s.ran = true;
  const renew = _renewing(c, owner, s);
  let failed = false;
  try {
    for (const [name, job] of JOBS) {
      try {
        await job(c, s);
      } catch (e) {
        failed = true;
        o.log.warn("recovery_job_failed", { job: name, error: describeError(e) });
      }
    }
    if (!(await _overdue(c, s, state))) failed = true;
  } finally {
    clearInterval(renew);
    await o.coordination.releaseLease(LEASE_KEY, owner).catch(() => false);
  }
  if (s.leaseLost) o.log.warn("recovery_lease_lost", { owner });
  state.lastRun = { at: new Date(started).toISOString(), durationMs: o.now() - started, outcome: failed || s.leaseLost ? "failed" : "ok" };
  return s;
}

// --- Internal helpers ---

async function _acquire(c: RecoveryContext, owner: string): Promise<boolean> {
  try {
    return await c.o.coordination.acquireLease(LEASE_KEY, owner, c.o.leaseMs);
  } catch (e) {
    c.o.log.warn("recovery_lease_unavailable", { error: describeError(e) });
    return false;
  }
}

/** Renews the lease while the run lasts (re-entrant for this owner); a failed renewal stops the run. */
function _renewing(c: RecoveryContext, owner: string, s: RunSummary): NodeJS.Timeout {
  const renew = setInterval(() => {
    c.o.coordination.acquireLease(LEASE_KEY, owner, c.o.leaseMs).then(
      (held) => {
        if (!held) s.leaseLost = true;
      },
      () => {
        s.leaseLost = true;
      },
    );
  }, Math.max(1, Math.floor(c.o.leaseMs / 3)));
  renew.unref();
  return renew;
}

/** Counts what is open and alerts the overdue part; false when the count failed. */
async function _overdue(c: RecoveryContext, s: RunSummary, state: RunState): Promise<boolean> {
  try {
    state.open = { ...(await countOpen(c)), unownedHeldDebitsOverdue: s.unownedOverdue };
    s.overdue = state.open.overdue! + s.unownedOverdue;
    state.open.overdue = s.overdue;
    if (s.overdue > 0) {
      c.o.log.error("reconciliation_overdue", { count: s.overdue, overdueAfterMs: c.o.overdueAfterMs, alert: "immediate" });
      c.o.alerts?.raise({ signal: "reconciliation_overdue", count: s.overdue });
    }
    return true;
  } catch (e) {
    c.o.log.warn("recovery_job_failed", { job: "overdue", error: describeError(e) });
    return false;
  }
}
