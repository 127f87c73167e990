/**
 * How a call counts (spec §3.5 "failures that count"):
 *   failure  timeouts, transport errors, 5xx, rejected deployment-owned credentials, invalid dependency
 *            contracts: a DependencyUnavailableError, an AbortError/TimeoutError, any error carrying a
 *            string `failureClass` or `dependencyFailure: true`, and any unknown error ("transport").
 *   neutral  customer 4xx and business rejections (errors carrying `dependencyFailure: false`) and
 *            DuplicateKeyError. Neutral calls are not "eligible calls": they count neither toward the
 *            20-call minimum nor toward the ratio, so a flood of customer mistakes can neither open the
 *            circuit nor dilute a real outage into staying closed. As the half-open probe, a neutral
 *            outcome closes the circuit: the dependency answered coherently, which is what the probe asks.
 * Results are successes unless `execute(fn, { classify })` says otherwise (e.g. a 5xx response object).
 */
import { isDependencyUnavailableError, isDuplicateKeyError, isInvalidQueryError } from "../ports.ts";
import type { CallVerdict, ErrorClassification, ResultVerdict } from "./types.ts";

/**
 * Default classification of a thrown error (spec §3.5):
 * - DuplicateKeyError → neutral (the store answered; the clash is a value for the caller)
 * - DependencyUnavailableError → failure with its failureClass
 * - AbortError / TimeoutError (DOMException from fetch, AbortSignal.timeout) → failure "timeout"
 * - `dependencyFailure: false` → neutral (customer 4xx, business rejection)
 * - a string `failureClass` or `dependencyFailure: true` → failure (class defaults to "transport")
 * - anything else → failure "transport"
 */
export function classifyError(error: unknown): ErrorClassification {
  if (isDuplicateKeyError(error) || isInvalidQueryError(error)) return { verdict: "neutral" };
  if (isDependencyUnavailableError(error)) return { verdict: "failure", failureClass: error.failureClass };
  if (typeof error === "object" && error !== null) {
    const e = error as { name?: unknown; failureClass?: unknown; dependencyFailure?: unknown };
    if (e.dependencyFailure === false) return { verdict: "neutral" };
    if (typeof e.failureClass === "string" && e.failureClass !== "") {
      return { verdict: "failure", failureClass: e.failureClass };
    }
    if (e.name === "AbortError" || e.name === "TimeoutError") return { verdict: "failure", failureClass: "timeout" };
  }
  return { verdict: "failure", failureClass: "transport" };
}

/** How a returned value counts, by the caller's `classify` (a bare "failure" is "server_error"); success without one. */
export function resultVerdict<T>(
  classify: ((result: T) => ResultVerdict) | undefined,
  result: T,
): { verdict: CallVerdict; failureClass?: string } {
  if (!classify) return _SUCCESS;
  const v = classify(result);
  if (typeof v === "object") return { verdict: "failure", failureClass: v.failureClass };
  return v === "failure" ? { verdict: "failure", failureClass: "server_error" } : { verdict: v };
}

// --- Internal helpers ---

const _SUCCESS: { readonly verdict: "success" } = { verdict: "success" };
