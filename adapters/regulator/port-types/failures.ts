/**
 * Every way a regulator call can fail, normalised; how each failure counts for the circuit and is
 * named in logs; the marks every thrown regulator error carries. Re-exported by ../port.ts.
 */
import type { GatewayError } from "../../../core/errors/gateway-error.ts";
import type { AmbiguousReason, RegulatorRejection } from "./results.ts";

export type RegulatorOperation =
  | "authenticate"
  | "getEntity"
  | "validateIrn"
  | "validateInvoice"
  | "sign"
  | "transmit"
  | "relay";

/** Why the returned data could not be used. */
export type InvalidResponseReason = Exclude<AmbiguousReason, "timeout" | "connection_lost" | "server_error" | "redirect">;

/** Every way a regulator call can fail, normalised. */
export type RegulatorFailure =
  /** No base URL for the state: nothing was called. */
  | { kind: "not_configured" }
  /** Refused by the open circuit: nothing was called. */
  | { kind: "circuit_open" }
  /** The per-call deadline passed (or the regulator answered 408). */
  | { kind: "timeout"; upstreamStatus?: number }
  /** Connection failure; `dispatched: false` = the connection was never established (nothing sent). */
  | { kind: "transport"; dispatched: boolean }
  | { kind: "server_error"; upstreamStatus: number }
  | { kind: "rate_limited"; retryAfterSeconds: number }
  /** The deployment's own x-api-key / x-api-secret refused (400 "unable to validate api key", 401, 403). */
  | { kind: "credentials_rejected"; upstreamStatus: number }
  /** The regulator's router knows no such path (its un-enveloped 404): nothing was processed. */
  | { kind: "route_not_found"; upstreamStatus: number }
  /** A 3xx: redirects are never followed (a contract failure). */
  | { kind: "redirect"; upstreamStatus: number }
  /** The answer breaks the dependency contract (envelope, body, unrecognised error answer). */
  | { kind: "invalid_response"; reason: InvalidResponseReason; upstreamStatus: number }
  /** The entity answer is coherent but a field is missing/malformed ("invalid") or over ENTITY_LIMITS ("unsupported"). */
  | { kind: "entity_metadata"; problem: "invalid" | "unsupported" }
  | RegulatorRejection;

/** Normalised `failureClass` values (logs, circuit). */
export type RegulatorFailureClass =
  | "not_configured"
  | "circuit_open"
  | "timeout"
  | "transport"
  | "server_error"
  | "rate_limited"
  | "credentials_rejected"
  | "invalid_response"
  | "metadata_invalid"
  | "rejected";

/**
 * How a failure counts for the circuit (spec §3.5): timeouts, transport errors, 5xx, rejected deployment
 * credentials and invalid dependency contracts (bad envelope, 3xx, unrecognised error answer, a
 * route the regulator does not know) count. Customer 4xx, business rejections, 429 and a coherent entity
 * answer whose business fields are malformed or oversized (one taxpayer's data, not the dependency) do not.
 */
export function regulatorFailureCounts(failure: RegulatorFailure): boolean {
  switch (failure.kind) {
    case "timeout":
    case "transport":
    case "server_error":
    case "credentials_rejected":
    case "redirect":
    case "route_not_found":
    case "invalid_response":
    case "circuit_open":
      return true;
    case "rejected":
    case "not_configured":
    case "rate_limited":
    case "entity_metadata":
      return false;
  }
}

export function regulatorFailureClass(failure: RegulatorFailure): RegulatorFailureClass {
  switch (failure.kind) {
    case "redirect":
    case "route_not_found":
      return "invalid_response";
    case "entity_metadata":
      return "metadata_invalid";
    default:
      return failure.kind;
  }
}

/** Marks carried by every GatewayError the regulator client throws (read by `classifyError`). */
export interface RegulatorErrorMarks {
  /** true: counts against the regulator circuit (spec §3.5); false: customer/business outcome. */
  dependencyFailure: boolean;
  /** Present only when dependencyFailure is true. */
  failureClass?: RegulatorFailureClass;
  regulatorFailure: RegulatorFailure["kind"];
}

export type RegulatorGatewayError = GatewayError & RegulatorErrorMarks;

export function isRegulatorGatewayError(e: unknown): e is RegulatorGatewayError {
  return (
    typeof e === "object" &&
    e !== null &&
    (e as { isGatewayError?: unknown }).isGatewayError === true &&
    typeof (e as { dependencyFailure?: unknown }).dependencyFailure === "boolean" &&
    typeof (e as { regulatorFailure?: unknown }).regulatorFailure === "string"
  );
}
