/**
 * Wrong passwords and codes per account, counted in the coordination store (shared by every
 * process, as the console's sign-in limit is): the first `freeFailures` cost nothing, each further
 * one makes the account wait before its next attempt (`failureDelayMs`, doubling), and at
 * `lockAfterFailures` the account locks for `lockMs` and its user gets an e-mail saying so.
 *
 * The counter is a fixed window of permits (`takePermit`): the number of failures is the permits
 * taken. The wait is a lease held for the delay: an attempt that finds it held is refused unchecked.
 */
import type { RequestContext } from "../../core/context.ts";
import { describeError } from "../../core/log.ts";
import type { DashboardEnv } from "./env.ts";
import type { DashboardUser } from "./users.ts";

/** More than any window will ever see: the permits left tell how many were taken. */
const COUNTER_LIMIT = 1_000_000;

export type Gate = { open: true } | { open: false; reason: "locked" | "waiting"; retryAfterSeconds: number };

/** May this account try now? (locked, or inside the wait after a failure) */
export async function attemptGate(env: DashboardEnv, user: DashboardUser): Promise<Gate> {
  const now = env.now();
  if (user.lockedUntil !== null && user.lockedUntil > now) return { open: false, reason: "locked", retryAfterSeconds: Math.ceil((user.lockedUntil - now) / 1000) };
  const probe = `probe:${now}:${Math.random()}`;
  const key = _waitKey(user._id);
  if (!(await env.kit.ports.coordination.acquireLease(key, probe, 1))) return { open: false, reason: "waiting", retryAfterSeconds: Math.ceil(env.config.failureDelayMs / 1000) };
  await env.kit.ports.coordination.releaseLease(key, probe);
  return { open: true };
}

/** Counts one wrong password or code; starts the wait, or locks and e-mails the user. Answers the failures so far. */
export async function recordFailure(env: DashboardEnv, ctx: RequestContext, user: DashboardUser, what: "password" | "code"): Promise<{ failures: number; waitMs: number; locked: boolean }> {
  const c = env.config;
  const permit = await env.kit.ports.coordination.takePermit(`dashboard-failures:${user._id}`, COUNTER_LIMIT, c.failureWindowMs);
  const failures = COUNTER_LIMIT - permit.remaining;
  env.kit.log.warn("dashboard_sign_in_failed", { requestId: ctx.requestId, clientAddress: ctx.clientAddress ?? "unknown", userId: user._id, businessId: user.businessId, reason: `wrong_${what}`, failures });
  if (failures >= c.lockAfterFailures) {
    await _lock(env, ctx, user);
    return { failures, waitMs: c.lockMs, locked: true };
  }
  if (failures < c.freeFailures) return { failures, waitMs: 0, locked: false };
  const waitMs = c.failureDelayMs * 2 ** (failures - c.freeFailures);
  await env.kit.ports.coordination.acquireLease(_waitKey(user._id), `failure:${failures}`, waitMs);
  return { failures, waitMs, locked: false };
}

// --- Internal helpers ---

function _waitKey(userId: string): string {
  return `dashboard-wait:${userId}`;
}

async function _lock(env: DashboardEnv, ctx: RequestContext, user: DashboardUser): Promise<void> {
  const until = env.now() + env.config.lockMs;
  await env.users.update(user._id, { lockedUntil: until });
  env.kit.log.event("dashboard_account_locked", { requestId: ctx.requestId, userId: user._id, businessId: user.businessId, until: new Date(until).toISOString() });
  if (!env.email) return;
  try {
    await env.email.send({
      to: [user.email],
      subject: "Your Gatehouse dashboard account was locked",
      text: [
        `There were too many wrong passwords or codes for your dashboard account (${user.email}).`,
        `Sign-in is locked until ${new Date(until).toISOString()}. If this was not you, reset your password`,
        "from the sign-in page once the lock ends, and tell your team's owner.",
      ].join("\n"),
    });
  } catch (e) {
    env.kit.log.warn("dashboard_email_failed", { requestId: ctx.requestId, userId: user._id, kind: "lock_notice", error: describeError(e) });
  }
}
