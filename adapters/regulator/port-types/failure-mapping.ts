/**
 * The one mapping from a regulator failure to the public `GW_*` error (spec §7.5, §7.6, §7.10, §7.11).
 * Re-exported by ../port.ts.
 */
import { gwError, type GatewayError } from "../../../core/errors/gateway-error.ts";
import type { RegulatorRejection } from "./results.ts";
import { regulatorViolations } from "./violations.ts";
import {
  regulatorFailureClass,
  regulatorFailureCounts,
  type RegulatorErrorMarks,
  type RegulatorFailure,
  type RegulatorGatewayError,
  type RegulatorOperation,
} from "./failures.ts";

/**
 * The one mapping from a regulator failure to the public error (spec §7.11 and the tables of §7.5,
 * §7.6, §7.10). `authenticate` and `getEntity` are "regulator verification" (§7.6, onboarding and
 * reverification): their unavailability is retryable with the same idempotency key, and an unusable
 * integration (circuit open, deployment credentials rejected, a route the regulator does not serve) is
 * GW_REG_VERIFICATION_UNAVAILABLE. Every other operation is an "ordinary" call (§7.10, §7.11).
 * See docs/regulator-client.md for the full table.
 */
export function mapRegulatorFailure(failure: RegulatorFailure, operation: RegulatorOperation): RegulatorGatewayError {
  const verification = operation === "authenticate" || operation === "getEntity";
  const err = _mapped(failure, operation, verification);
  const counts = regulatorFailureCounts(failure);
  const marks: RegulatorErrorMarks = {
    dependencyFailure: counts,
    ...(counts ? { failureClass: regulatorFailureClass(failure) } : {}),
    regulatorFailure: failure.kind,
  };
  return Object.assign(err, marks);
}

// --- Internal helpers ---

function _mapped(failure: RegulatorFailure, operation: RegulatorOperation, verification: boolean): GatewayError {
  switch (failure.kind) {
    case "not_configured":
      return gwError("GW_REGULATOR_UNAVAILABLE", { detail: "No regulator is configured for the business's state." });
    case "circuit_open":
      return verification
        ? gwError("GW_REG_VERIFICATION_UNAVAILABLE", { detail: "Regulator verification is temporarily unavailable." })
        : gwError("GW_UPSTREAM_UNAVAILABLE", { detail: "The regulator is temporarily unavailable." });
    case "credentials_rejected":
      return verification
        ? gwError("GW_REG_VERIFICATION_UNAVAILABLE", { detail: "Regulator verification is unavailable." })
        : gwError("GW_UPSTREAM_UNAVAILABLE", { detail: "The regulator is unavailable." });
    case "timeout":
      return verification
        ? gwError("GW_REG_AUTH_UNAVAILABLE", { detail: "The regulator did not answer in time." })
        : gwError("GW_UPSTREAM_TIMEOUT", { detail: "The regulator did not answer in time." });
    case "transport":
      return verification
        ? gwError("GW_REG_AUTH_UNAVAILABLE", { detail: "The regulator could not be reached." })
        : gwError("GW_UPSTREAM_UNAVAILABLE", { detail: "The regulator could not be reached." });
    case "server_error":
      return verification
        ? gwError("GW_REG_AUTH_UNAVAILABLE", { detail: `The regulator failed (HTTP ${failure.upstreamStatus}).` })
        : gwError("GW_UPSTREAM_UNAVAILABLE", { detail: `The regulator failed (HTTP ${failure.upstreamStatus}).` });
    case "rate_limited":
      return gwError("GW_RATE_LIMIT_EXCEEDED", {
        detail: "The regulator is throttling requests; wait before retrying.",
        retryAfterSeconds: failure.retryAfterSeconds,
      });
    case "route_not_found":
      // The integration calls a path the regulator does not serve: verification is unusable (§7.6),
      // an ordinary call got an answer it cannot use (§7.10).
      return verification
        ? gwError("GW_REG_VERIFICATION_UNAVAILABLE", { detail: "Regulator verification is unavailable." })
        : gwError("GW_UPSTREAM_RESPONSE_INVALID", { detail: "The regulator's answer could not be used." });
    case "redirect":
    case "invalid_response": {
      const detail = "The regulator's answer could not be used.";
      if (operation === "authenticate") return gwError("GW_REG_AUTH_RESPONSE_INVALID", { detail });
      if (operation === "getEntity") return gwError("GW_REG_BUSINESS_METADATA_INVALID", { detail });
      return gwError("GW_UPSTREAM_RESPONSE_INVALID", { detail });
    }
    case "entity_metadata":
      return failure.problem === "unsupported"
        ? gwError("GW_REG_ENTITY_METADATA_UNSUPPORTED", { detail: "The regulator's entity details exceed the accepted limits." })
        : gwError("GW_REG_BUSINESS_METADATA_INVALID", { detail: "The regulator's business metadata is missing or malformed." });
    case "rejected":
      return _rejection(failure, operation);
  }
}

function _rejection(r: RegulatorRejection, operation: RegulatorOperation): GatewayError {
  const reason = r.reason;
  if (operation === "authenticate") {
    // The taxpayer login (§7.6): 401 wrong password, 403 application not linked, anything else
    // (400 validation, 404 unknown user) a refusal of the taxpayer's credentials.
    if (reason === "unauthorized") return gwError("GW_REG_LOGIN_INVALID");
    if (reason === "forbidden") return gwError("GW_REG_APPLICATION_NOT_LINKED");
    return gwError("GW_REG_CREDENTIALS_REJECTED");
  }
  if (operation === "getEntity") {
    // 404, and the real 400 "validation failed" for an entity id it cannot read (e.g. "invalid UUID length"):
    // no usable entity under the id the login returned.
    if (reason === "not_found" || reason === "bad_request") {
      return gwError("GW_REG_ENTITY_NOT_FOUND", { detail: "The regulator has no usable taxpayer entity for this login." });
    }
    return gwError("GW_REG_BUSINESS_METADATA_INVALID", { detail: "The regulator refused the entity read." });
  }
  switch (reason) {
    case "webhook_not_configured":
      return gwError("GW_INVOICE_NOT_TRANSMITTABLE", {
        detail: "The regulator refused the transmission: the business's webhook URL is not set up at the regulator.",
      });
    case "not_found":
      return gwError("GW_INVOICE_NOT_FOUND", { detail: "The regulator has no invoice (or business) for this request." });
    case "conflict":
      return gwError("GW_INVOICE_STATE_CONFLICT", { detail: "The regulator refused the change in the invoice's current state." });
    case "payload_too_large":
      return gwError("GW_REQUEST_BODY_TOO_LARGE");
    default: {
      if (operation === "validateIrn") return gwError("GW_INVOICE_IRN_INVALID", { detail: "The regulator rejected the IRN." });
      // A rejected document says which fields (never the regulator's words: they may repeat the document).
      const violations = operation === "validateInvoice" || operation === "sign" ? regulatorViolations(r.message) : [];
      return gwError("GW_REQUEST_VALIDATION_FAILED", {
        detail: `The regulator rejected the request (HTTP ${r.status})${violations.length > 0 ? "; the fields it named are listed in errors" : ""}.`,
        ...(violations.length > 0 ? { violations } : {}),
      });
    }
  }
}
