/** The directory-admin answers shared by several use cases (the catalog codes and their details). */
import { gwError, type GatewayError } from "../../../core/errors/gateway-error.ts";

/**
 * Another writer changed the key between our read and our write (a concurrent roll or revoke): a
 * deterministic conflict, not an outage, so 409 with AFTER_CORRECTION (the spec has no key-specific
 * conflict code; admin state conflicts reuse GW_DOMAIN_APPROVAL_STATE_CHANGED, docs/decisions.md).
 */
export function keyRaced(): GatewayError {
  const e = gwError("GW_DOMAIN_APPROVAL_STATE_CHANGED", {
    title: "Key changed while this request ran",
    detail: "The key changed while this request ran (another request rolled or revoked it); read the key and decide again. Sending this request again does not help.",
  });
  _raced.add(e);
  return e;
}

/** True for the error `keyRaced` made (a lost compare-and-set on a key). */
export function isKeyRaced(e: unknown): boolean {
  return typeof e === "object" && e !== null && _raced.has(e);
}

const _raced = new WeakSet<object>();

export function notFound(what: "business" | "key"): GatewayError {
  return gwError("GW_OPERATION_NOT_FOUND", { detail: what === "business" ? "No business with that id." : "No key with that id." });
}

/** The domain's approval state refuses the change; `title` when the catalog's ("changed after authorization") would mislead. */
export function approvalState(detail: string, title?: string): GatewayError {
  return gwError("GW_DOMAIN_APPROVAL_STATE_CHANGED", { detail, ...(title ? { title } : {}) });
}

/** The key (named in the path) cannot take this change. */
export function keyState(detail: string): GatewayError {
  return gwError("GW_REQUEST_VALIDATION_FAILED", {
    detail,
    violations: [{ location: "path", field: "keyId", code: "MISMATCH", detail }],
  });
}

export function invalidBody(pointer: string, code: "REQUIRED" | "MISMATCH" | "RANGE", detail: string): GatewayError {
  return gwError("GW_REQUEST_VALIDATION_FAILED", {
    detail: "The request has invalid values; see errors.",
    violations: [{ location: "body", pointer, code, detail }],
  });
}

export function badCursor(): GatewayError {
  return gwError("GW_REQUEST_VALIDATION_FAILED", {
    detail: "The request has invalid values; see errors.",
    violations: [{ location: "query", field: "cursor", code: "FORMAT", detail: "an opaque cursor from nextCursor" }],
  });
}
