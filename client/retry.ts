/**
 * The retry policy of spec §7.1–§7.2, in one place: which failure may be sent again, after how long,
 * and when to stop. Every client method runs through `runWithRetries`; `decide` is the whole policy
 * and is a pure function (test/client/retry.test.ts covers each row below).
 *
 *   failure                                       read            mutation
 *   problem BACKOFF                               retry           retry, same key and content
 *   problem SAME_IDEMPOTENCY_KEY                  retry           retry, same key and content
 *   problem DO_NOT_RETRY / AFTER_CORRECTION /     stop            stop
 *     POLL_OPERATION / CONTACT_SUPPORT
 *   no connection (refused, DNS, connect timeout) retry           retry (the request never left)
 *   no answer / unreadable answer (codeless)      retry once      replay-safe routes: retry, same key;
 *                                                                 others: stop, CONTACT_SUPPORT
 *   collections envelope 429                      retry           retry
 *   collections envelope 502/503/504              retry           stop (no idempotency key there)
 *
 * Spec §7.2's exceptions override the returned strategy:
 *   1. QR-material rotation never retries after a timeout, a lost answer or an uncertain 5xx, even
 *      when the problem says SAME_IDEMPOTENCY_KEY: only refusals that prove nothing was done
 *      (`REFUSED_BEFORE_WORK`, and connections that never opened) are sent again. Otherwise the
 *      error's strategy becomes CONTACT_SUPPORT.
 *   2. GW_IDEMPOTENCY_CONTENT_CONFLICT on onboarding or rotation: never loop, never start new work;
 *      the error's strategy becomes CONTACT_SUPPORT.
 *
 * Every retry waits a jittered exponential backoff, and at least what the server asked for
 * (Retry-After, else retry.afterSeconds); attempts and total time are bounded; a wait that would
 * end past the time budget is not started. The idempotency key (and the x-attempt-number) of the
 * operation stay the same on every send: the caller's send function reuses them.
 */
import {
  isCollectionsApiError,
  isConnectionError,
  isGatehouseError,
  isProblemError,
  type GatehouseError,
  type StopReason,
} from "./errors.ts";
import type { ErrorCode, RetryStrategy } from "./types.ts";

export interface RetryOptions {
  /** Sends of one operation, the first included (1 = never retry). Default 4. */
  maxAttempts?: number;
  /** Time budget of one operation from its first send, waits included. Default 30 000 ms. */
  maxElapsedMs?: number;
  /** First backoff step. Default 250 ms. */
  baseDelayMs?: number;
  /** Largest backoff step (a server's Retry-After may ask for more; it is honoured within the budget). Default 8 000 ms. */
  maxDelayMs?: number;
  /** Retries of a read after failures that carry no code (spec §7.11: at most once). Default 1. */
  codelessReadRetries?: number;
}

export const DEFAULT_RETRY: Readonly<Required<RetryOptions>> = {
  maxAttempts: 4,
  maxElapsedMs: 30_000,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  codelessReadRetries: 1,
};

/** What kind of operation a client method is: the policy's only input besides the failure. */
export interface OperationSpec {
  /** The client method, e.g. "invoices.sign". */
  name: string;
  kind: "read" | "mutation";
  /**
   * The server answers a repeated key with the same content from its idempotency record and never
   * acts twice (onboarding, reverification, Stored intake): a codeless failure may be sent again
   * with the same key. Sign, transmission and rotation are not: an uncertain one is never replayed.
   */
  replaySafe?: boolean;
  /** QR-material rotation: spec §7.2 exception 1. */
  rotation?: boolean;
  /** Onboarding and rotation: spec §7.2 exception 2. */
  identityBound?: boolean;
}

/**
 * Codes that prove the request was refused before any work (admission, capacity, quota and
 * authorization stages; spec §7.5, §7.11 "regulator not called"): safe to send again for any operation.
 */
export const REFUSED_BEFORE_WORK: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "GW_RATE_LIMIT_EXCEEDED",
  "GW_GATEWAY_CAPACITY_EXCEEDED",
  "GW_DOMAIN_REGISTRY_UNAVAILABLE",
  "GW_TENANT_AUTHORIZATION_UNAVAILABLE",
  "GW_AUTH_CONTEXT_UNAVAILABLE",
  "GW_TENANT_MODE_UNAVAILABLE",
]);

export interface RetryState {
  /** Sends made so far (≥ 1 when deciding). */
  sends: number;
  /** Retries already spent on codeless read failures. */
  codelessRetries: number;
  /** Time since the first send. */
  elapsedMs: number;
}

export type Decision =
  | { retry: true; delayMs: number; codeless: boolean }
  | { retry: false; strategy: RetryStrategy; reason: StopReason };

/** The policy: may this failure be sent again, and after how long? Pure; `random` in [0, 1). */
export function decide(
  error: GatehouseError,
  op: OperationSpec,
  state: RetryState,
  options: Readonly<Required<RetryOptions>>,
  random: () => number,
): Decision {
  const c = _classify(error, op);
  if (!c.retry) return { retry: false, strategy: c.strategy, reason: c.reason };
  if (c.codeless && op.kind === "read" && state.codelessRetries >= options.codelessReadRetries)
    return { retry: false, strategy: c.strategy, reason: "attempts_exhausted" };
  if (state.sends >= options.maxAttempts) return { retry: false, strategy: c.strategy, reason: "attempts_exhausted" };
  const delayMs = Math.max(backoffDelay(state.sends, options, random), c.minWaitMs);
  if (state.elapsedMs + delayMs > options.maxElapsedMs) return { retry: false, strategy: c.strategy, reason: "time_exhausted" };
  return { retry: true, delayMs, codeless: c.codeless };
}

/**
 * Exponential backoff with jitter before send `sends + 1`: step = min(maxDelay, base × 2^(sends−1)),
 * waited as a uniform draw in [step/2, step) ("equal jitter": spread out, never near zero).
 */
export function backoffDelay(sends: number, options: Readonly<Required<RetryOptions>>, random: () => number): number {
  const step = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, sends - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

/** A Retry-After header value (delta-seconds or an HTTP date) → seconds, or null. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/** One send of an operation, as the persistence hook and retry observers see it (spec §7.1 rule 3). */
export interface AttemptRecord {
  operation: string;
  method: string;
  path: string;
  idempotencyKey: string | null;
  /** x-attempt-number of a Pass-through sign. */
  attemptNumber: number | null;
  /** 1 for the first send of the operation, 2 for its first retry, … */
  send: number;
  /** The gateway's authoritative request id (X-Request-ID), null when nothing answered. */
  requestId: string | null;
  status: number | null;
  /** The problem's GW_* code, null on success and on failures that carry none. */
  code: string | null;
  ok: boolean;
  /** What the client does next: return the answer, send again after `delayMs`, or throw. */
  next: "return" | "retry" | "throw";
  delayMs: number | null;
  /** On a failure: what to do now (spec §7.2 with its exceptions applied). */
  strategy: RetryStrategy | null;
  /** When the answer (or the failure) arrived, by the client's clock. */
  at: number;
}

/** Clock, sleep and jitter source: injectable so tests (and issue-15 topologies) control time. */
export interface RetryRuntime {
  now(): number;
  sleep(ms: number): Promise<void>;
  random(): number;
}

export const REAL_RUNTIME: RetryRuntime = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};

export interface Sent<T> {
  status: number;
  requestId: string | null;
  data: T;
}

export interface RunContext {
  op: OperationSpec;
  method: string;
  path: string;
  idempotencyKey: string | null;
  attemptNumber: number | null;
  options: Readonly<Required<RetryOptions>>;
  runtime: RetryRuntime;
  /**
   * Called after every send, before the client sends again, returns or throws: persist
   * (requestId, key, attempt number) here. If it throws, the operation stops and rejects with that
   * error (nothing more is sent).
   */
  onAttempt?: (record: AttemptRecord) => void | Promise<void>;
}

export interface RunResult<T> extends Sent<T> {
  sends: number;
  requestIds: string[];
}

/**
 * Runs one logical operation: `send` makes one HTTP exchange (always with the same key, attempt
 * number and content) and returns the success or throws a GatehouseError; the policy decides the rest.
 */
export async function runWithRetries<T>(ctx: RunContext, send: () => Promise<Sent<T>>): Promise<RunResult<T>> {
  const { runtime } = ctx;
  const started = runtime.now();
  const requestIds: string[] = [];
  let codelessRetries = 0;
  for (let sends = 1; ; sends++) {
    let sent: Sent<T>;
    try {
      sent = await send();
    } catch (e) {
      if (!isGatehouseError(e)) throw e;
      if (e.requestId) requestIds.push(e.requestId);
      e.sends = sends;
      e.requestIds = [...requestIds];
      const decision = decide(e, ctx.op, { sends, codelessRetries, elapsedMs: runtime.now() - started }, ctx.options, runtime.random);
      if (!decision.retry) {
        e.strategy = decision.strategy;
        e.stopReason = decision.reason;
      }
      await _record(ctx, sends, e.requestId, _status(e), isProblemError(e) ? e.code : null, false, decision);
      if (!decision.retry) throw e;
      if (decision.codeless) codelessRetries++;
      await runtime.sleep(decision.delayMs);
      continue;
    }
    if (sent.requestId) requestIds.push(sent.requestId);
    await _record(ctx, sends, sent.requestId, sent.status, null, true, null);
    return { ...sent, sends, requestIds };
  }
}

// --- Internal helpers ---

/** `strategy` of a retryable failure is what the error says if the bounds stop the retries. */
type Classified =
  | { retry: true; minWaitMs: number; codeless: boolean; strategy: RetryStrategy }
  | { retry: false; strategy: RetryStrategy; reason: StopReason };

function _classify(e: GatehouseError, op: OperationSpec): Classified {
  const stop = (strategy: RetryStrategy, reason: StopReason): Classified => ({ retry: false, strategy, reason });
  const retry = (strategy: RetryStrategy, afterSeconds: number | null, codeless = false): Classified => ({
    retry: true,
    minWaitMs: (afterSeconds ?? 0) * 1000,
    codeless,
    strategy,
  });

  if (isProblemError(e)) {
    if (e.code === "GW_IDEMPOTENCY_CONTENT_CONFLICT" && op.identityBound) return stop("CONTACT_SUPPORT", "exception_2_content_conflict");
    if (op.rotation && e.status >= 500 && !REFUSED_BEFORE_WORK.has(e.code)) return stop("CONTACT_SUPPORT", "exception_1_rotation");
    if (e.returnedStrategy === "BACKOFF" || e.returnedStrategy === "SAME_IDEMPOTENCY_KEY") return retry(e.returnedStrategy, e.retryAfterSeconds);
    return stop(e.returnedStrategy, "strategy");
  }
  if (isCollectionsApiError(e)) {
    if (e.status === 429) return retry("BACKOFF", e.retryAfterSeconds);
    if (op.kind === "read" && (e.status === 502 || e.status === 503 || e.status === 504)) return retry("BACKOFF", e.retryAfterSeconds);
    return stop(e.strategy, "strategy");
  }
  if (isConnectionError(e) && e.notSent) return retry("BACKOFF", null);
  // No answer, or an answer that is neither the success nor one of our errors: the outcome is unknown.
  if (op.kind === "read") return retry("BACKOFF", null, true);
  if (op.rotation) return stop("CONTACT_SUPPORT", "exception_1_rotation");
  if (op.replaySafe) return retry("SAME_IDEMPOTENCY_KEY", null);
  return stop("CONTACT_SUPPORT", "outcome_unknown");
}

function _status(e: GatehouseError): number | null {
  return "status" in e && typeof e.status === "number" ? e.status : null;
}

async function _record(
  ctx: RunContext,
  send: number,
  requestId: string | null,
  status: number | null,
  code: string | null,
  ok: boolean,
  decision: Decision | null,
): Promise<void> {
  if (!ctx.onAttempt) return;
  await ctx.onAttempt({
    operation: ctx.op.name,
    method: ctx.method,
    path: ctx.path,
    idempotencyKey: ctx.idempotencyKey,
    attemptNumber: ctx.attemptNumber,
    send,
    requestId,
    status,
    code,
    ok,
    next: decision === null ? "return" : decision.retry ? "retry" : "throw",
    delayMs: decision?.retry ? decision.delayMs : null,
    strategy: decision === null ? null : decision.retry ? null : decision.strategy,
    at: ctx.runtime.now(),
  });
}
