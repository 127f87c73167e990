/**
 * Typed errors of the Gatehouse client. Every failure a method can end with is one of four kinds:
 *
 *   ProblemError            the gateway answered application/problem+json (spec §2.4): code,
 *                           strategy, requestId, operationId, violations, the whole problem
 *   CollectionsApiError     the collections service answered its error envelope (DECISIONS.md)
 *   ConnectionError         no HTTP answer at all: refused, reset, timed out (spec §7.1: "carry no code")
 *   UnexpectedResponseError an answer that is neither an error of ours nor the success the route
 *                           promises (a proxy's HTML 502, a sign answer without `data.ok`, bad JSON)
 *
 * `strategy` is what to do now: the problem's own `retry.strategy`, overridden by spec §7.2's two
 * exceptions, or decided for failures that carry none (a mutation that may have happened without
 * the client knowing is CONTACT_SUPPORT: do not resubmit; give support the requestIds and the key).
 * Each error has a brand and a guard (`isProblemError(e)`), which work across package copies.
 */
import type { CollectionsErrorEnvelope, ErrorCode, FieldError, Problem, RetryStrategy, Violation } from "./types.ts";

/** Why the client did not (or no longer) retry; `null` while a retry was still possible. */
export type StopReason =
  | "strategy"
  | "exception_1_rotation"
  | "exception_2_content_conflict"
  | "outcome_unknown"
  | "attempts_exhausted"
  | "time_exhausted";

export interface ErrorContext {
  /** The client method, e.g. "invoices.sign". */
  operation: string;
  method: string;
  path: string;
  /** The idempotency key every send of this operation carried (null for reads and keyless routes). */
  idempotencyKey: string | null;
  /** x-attempt-number of a Pass-through sign. */
  attemptNumber: number | null;
}

export abstract class GatehouseError extends Error {
  readonly isGatehouseError = true as const;
  abstract readonly kind: "problem" | "collections" | "connection" | "unexpected";
  readonly operation: string;
  readonly method: string;
  readonly path: string;
  readonly idempotencyKey: string | null;
  readonly attemptNumber: number | null;
  /** The gateway's authoritative request id of the last send (X-Request-ID), when it answered. */
  requestId: string | null;
  /** Request ids of every send of this operation, oldest first (what support asks for). */
  requestIds: string[] = [];
  /** HTTP sends made for this operation. */
  sends = 0;
  /** What to do now (spec §7.2, exceptions applied). */
  strategy: RetryStrategy;
  stopReason: StopReason = "strategy";

  constructor(message: string, context: ErrorContext, strategy: RetryStrategy, requestId: string | null, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.operation = context.operation;
    this.method = context.method;
    this.path = context.path;
    this.idempotencyKey = context.idempotencyKey;
    this.attemptNumber = context.attemptNumber;
    this.strategy = strategy;
    this.requestId = requestId;
  }

  /** True when spec §7.2 says to stop and contact support (with requestIds and the key). */
  get contactSupport(): boolean {
    return this.strategy === "CONTACT_SUPPORT";
  }
}

/** A problem+json answer of the invoice gateway. */
export class ProblemError extends GatehouseError {
  readonly kind = "problem" as const;
  readonly isProblemError = true as const;
  readonly status: number;
  readonly code: ErrorCode;
  /** The whole problem body as received. */
  readonly problem: Problem;
  /** `retry.strategy` exactly as the gateway sent it (`strategy` may override it: spec §7.2 exceptions). */
  readonly returnedStrategy: RetryStrategy;
  readonly sameIdempotencyKey: boolean;
  /** Seconds to wait: the Retry-After header, else `retry.afterSeconds`. */
  readonly retryAfterSeconds: number | null;
  readonly operationId: string | null;
  readonly violations: Violation[];

  constructor(context: ErrorContext, status: number, problem: Problem, retryAfterHeader: number | null) {
    const strategy = problem.retry.strategy as RetryStrategy;
    super(`${problem.code}: ${problem.detail}`, context, strategy, problem.requestId);
    this.status = status;
    this.code = problem.code;
    this.problem = problem;
    this.returnedStrategy = strategy;
    this.sameIdempotencyKey = problem.retry.sameIdempotencyKey === true;
    this.retryAfterSeconds = retryAfterHeader ?? problem.retry.afterSeconds ?? null;
    this.operationId = problem.operationId ?? null;
    this.violations = problem.errors ?? [];
  }
}

/** An error envelope of the collections service (no code, no strategy: the client decides from the status). */
export class CollectionsApiError extends GatehouseError {
  readonly kind = "collections" as const;
  readonly isCollectionsApiError = true as const;
  readonly status: number;
  readonly errors: FieldError[];
  readonly retryAfterSeconds: number | null;
  /** The envelope as received: requestId, requestTimestamp, message, statusCode, errors. */
  readonly envelope: CollectionsErrorEnvelope;

  constructor(context: ErrorContext, status: number, envelope: CollectionsApiError["envelope"], retryAfterSeconds: number | null) {
    super(envelope.message, context, status === 429 ? "BACKOFF" : status >= 500 ? "CONTACT_SUPPORT" : "AFTER_CORRECTION", envelope.requestId ?? null);
    this.status = status;
    this.errors = envelope.errors ?? [];
    this.envelope = envelope;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** No HTTP answer: the connection was refused, reset or timed out. */
export class ConnectionError extends GatehouseError {
  readonly kind = "connection" as const;
  readonly isConnectionError = true as const;
  /** True when the request certainly never reached the server (refused, DNS, connect timeout). */
  readonly notSent: boolean;
  /** The transport's error code (ECONNRESET, UND_ERR_HEADERS_TIMEOUT, …). */
  readonly transportCode: string | null;

  constructor(context: ErrorContext, cause: unknown, notSent: boolean, transportCode: string | null) {
    super(
      `${context.method} ${context.path}: ${notSent ? "could not connect" : "no answer"} (${transportCode ?? "transport error"})`,
      context,
      notSent ? "BACKOFF" : "CONTACT_SUPPORT",
      null,
      { cause },
    );
    this.notSent = notSent;
    this.transportCode = transportCode;
  }
}

/** An answer the client cannot read as the route's success or as one of our errors. */
export class UnexpectedResponseError extends GatehouseError {
  readonly kind = "unexpected" as const;
  readonly isUnexpectedResponseError = true as const;
  readonly status: number;
  readonly contentType: string;
  /** At most 512 characters of the body, for the support ticket. */
  readonly bodyExcerpt: string;

  constructor(context: ErrorContext, status: number, contentType: string, bodyText: string, requestId: string | null, why: string) {
    super(`${context.method} ${context.path}: ${why} (HTTP ${status})`, context, "CONTACT_SUPPORT", requestId);
    this.status = status;
    this.contentType = contentType;
    this.bodyExcerpt = bodyText.slice(0, 512);
  }
}

export function isGatehouseError(e: unknown): e is GatehouseError {
  return typeof e === "object" && e !== null && (e as { isGatehouseError?: unknown }).isGatehouseError === true;
}
export function isProblemError(e: unknown): e is ProblemError {
  return isGatehouseError(e) && (e as { isProblemError?: unknown }).isProblemError === true;
}
export function isCollectionsApiError(e: unknown): e is CollectionsApiError {
  return isGatehouseError(e) && (e as { isCollectionsApiError?: unknown }).isCollectionsApiError === true;
}
export function isConnectionError(e: unknown): e is ConnectionError {
  return isGatehouseError(e) && (e as { isConnectionError?: unknown }).isConnectionError === true;
}
export function isUnexpectedResponseError(e: unknown): e is UnexpectedResponseError {
  return isGatehouseError(e) && (e as { isUnexpectedResponseError?: unknown }).isUnexpectedResponseError === true;
}

