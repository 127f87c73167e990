/**
 * Raising errors. Code raises by catalog code (`throw gwError("GW_RATE_LIMIT_EXCEEDED", {...})`);
 * the renderer (render.ts) turns it into the service's error shape. Collections routes may also
 * raise CollectionsError for their own envelope (422 field lists, 409 duplicates).
 */
import { HTTPError } from "h3";
import { CATALOG, type GwCode } from "./catalog.ts";

/** One item of a §7.3 validation error list. */
export interface Violation {
  location: "header" | "path" | "query" | "body";
  /** Name of the header, path or query parameter (not for body problems). */
  field?: string;
  /** RFC 6901 JSON Pointer (body problems). */
  pointer?: string;
  code: "REQUIRED" | "FORMAT" | "TYPE" | "RANGE" | "LENGTH" | "UNKNOWN_FIELD" | "MISMATCH" | "IMMUTABLE_FIELD";
  /** At most 256 characters; never repeats the rejected value. */
  detail: string;
}

export interface GatewayErrorData {
  /** Human-readable detail; defaults to the catalog description. Never include secrets or input values. */
  detail?: string;
  /**
   * A title for this raise when the code's catalog title would mislead (one code, several causes:
   * a content conflict raised for a key never used before). Clients decide on `code`, never on it.
   */
  title?: string;
  violations?: Violation[];
  operationId?: string;
  /** Overrides the catalog's afterSeconds (quota windows); also sets Retry-After. */
  retryAfterSeconds?: number;
  /** Allow header value for 405. */
  allow?: string;
  /** Internal cause, logged (sanitized) but never rendered. */
  cause?: unknown;
}

export class GatewayError extends HTTPError<GatewayErrorData> {
  readonly isGatewayError = true;
  readonly code: GwCode;

  constructor(code: GwCode, data: GatewayErrorData = {}) {
    const row = CATALOG[code];
    super(data.detail ?? row.description, { status: row.status, cause: data.cause, data });
    this.code = code;
  }

  /** The raise's data (always set; HTTPError types it as optional). */
  get info(): GatewayErrorData {
    return this.data ?? {};
  }

  override get name(): string {
    return "GatewayError";
  }
}

export function gwError(code: GwCode, data?: GatewayErrorData): GatewayError {
  return new GatewayError(code, data);
}

export function isGatewayError(e: unknown): e is GatewayError {
  return typeof e === "object" && e !== null && (e as { isGatewayError?: unknown }).isGatewayError === true;
}

/**
 * A collections-service error: rendered as `{ requestId, requestTimestamp, message, statusCode, errors }`,
 * with a `Retry-After` header when `retryAfterSeconds` is set.
 */
export class CollectionsError extends Error {
  readonly isCollectionsError = true;
  constructor(
    readonly status: number,
    message: string,
    readonly errors: Array<{ field: string; message: string }> = [],
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "CollectionsError";
  }
}

export function isCollectionsError(e: unknown): e is CollectionsError {
  return typeof e === "object" && e !== null && (e as { isCollectionsError?: unknown }).isCollectionsError === true;
}
