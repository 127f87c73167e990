/**
 * From an interpreted answer to what the port promises per operation (see ../port.ts): validation
 * outcomes, the sign / transmit dispositions (rejected, ambiguous, or certainly not performed: thrown),
 * the confirmation of an IRN. Thrown errors come from the one public mapping, `mapRegulatorFailure`.
 */
import { mapRegulatorFailure, regulatorFailureClass } from "../port.ts";
import type { AmbiguousReason, InvoiceConfirmation, RegulatorFailure, RegulatorOperation, RegulatorRejection, RegulatorResponse, ValidationOutcome } from "../port.ts";
import type { Interpreted } from "./interpret.ts";

export type MutationDisposition =
  | { kind: "rejected"; rejection: RegulatorRejection }
  | { kind: "ambiguous"; reason: AmbiguousReason; upstreamStatus?: number }
  | { kind: "not_performed" };

export function validationOutcome(r: Interpreted<RegulatorResponse>, operation: RegulatorOperation): ValidationOutcome {
  if (r.ok) return { kind: "valid", response: r.value };
  if (r.failure.kind === "rejected") return r.failure;
  throw mapRegulatorFailure(r.failure, operation);
}

/**
 * sign / transmit failures: a rejection, an ambiguous result, or "certainly not performed": nothing
 * called (no base URL, circuit open), no connection, the deployment's credentials refused, the
 * regulator's router knows no such path, throttled.
 */
export function disposition(f: RegulatorFailure): MutationDisposition {
  switch (f.kind) {
    case "rejected":
      return { kind: "rejected", rejection: f };
    case "not_configured":
    case "circuit_open":
    case "credentials_rejected":
    case "route_not_found":
    case "rate_limited":
      return { kind: "not_performed" };
    case "transport":
      return f.dispatched ? { kind: "ambiguous", reason: "connection_lost" } : { kind: "not_performed" };
    case "timeout":
      return { kind: "ambiguous", reason: "timeout", ...(f.upstreamStatus === undefined ? {} : { upstreamStatus: f.upstreamStatus }) };
    case "server_error":
      return { kind: "ambiguous", reason: "server_error", upstreamStatus: f.upstreamStatus };
    case "redirect":
      return { kind: "ambiguous", reason: "redirect", upstreamStatus: f.upstreamStatus };
    case "invalid_response":
      return { kind: "ambiguous", reason: f.reason, upstreamStatus: f.upstreamStatus };
    case "entity_metadata":
      return { kind: "ambiguous", reason: "unrecognized_envelope" };
  }
}

/** A failed sign / transmit as the port returns it; "certainly not performed" is thrown. */
export function mutationFailure(f: RegulatorFailure, operation: "sign" | "transmit"): RegulatorRejection | { kind: "ambiguous"; reason: AmbiguousReason; upstreamStatus?: number } {
  const d = disposition(f);
  if (d.kind === "rejected") return d.rejection;
  if (d.kind === "ambiguous") return { kind: "ambiguous", reason: d.reason, ...(d.upstreamStatus === undefined ? {} : { upstreamStatus: d.upstreamStatus }) };
  throw mapRegulatorFailure(f, operation);
}

/** Confirm by IRN: only the regulator's own "no such invoice" (404 in its error envelope) proves it is not there. */
export function confirmation(r: Interpreted<RegulatorResponse>): InvoiceConfirmation {
  if (r.ok) return { kind: "found" };
  if (r.failure.kind === "rejected" && r.failure.reason === "not_found") return { kind: "not_found" };
  return { kind: "unknown", failureClass: regulatorFailureClass(r.failure) };
}
