/**
 * The onboarding answers shared by several use cases: an effect that could not be confirmed, an
 * already decided review and a stale rotation proof.
 */
import type { GwCode } from "../../core/errors/catalog.ts";
import { gwError, isGatewayError, type GatewayError } from "../../core/errors/gateway-error.ts";

/** A failure after which the effect is uncertain: always answered with `code`. */
export function uncertain(e: unknown, code: GwCode): GatewayError {
  if (isGatewayError(e)) return e;
  return gwError(code, { detail: "The outcome could not be confirmed; do not retry automatically, contact support.", cause: e });
}

export function reviewDecided(): GatewayError {
  return gwError("GW_IDENTITY_REVIEW_CONFLICT", { detail: "The review is already decided; read identity-versions first." });
}

/**
 * The title of a content conflict raised because the regulator business is represented already
 * (spec §7.2 exception 2): the key itself may never have been used, so the catalog's title would mislead.
 */
export const ALREADY_REPRESENTED = "Regulator business already represented through the gateway";

export function staleRotationProof(): GatewayError {
  return gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", {
    title: "Rotation proof is stale",
    detail: "expectedCryptoVersion is no longer the current cryptoVersion (stale rotation proof); read the represented business, do not retry.",
  });
}
