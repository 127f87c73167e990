/**
 * The `gateway_dependency_call` log event of a regulator call (spec §6): one per call made (or refused
 * before it was made), never with a body, path, query, credential or upstream message.
 */
import type { CallReport } from "../../policies.ts";
import type { EventShape, Logger } from "../../../core/log.ts";
import { REGULATOR_ADAPTERS, regulatorFailureClass, type RegulatorCallContext } from "../port.ts";
import type { Interpreted } from "./interpret.ts";
import { disposition } from "./outcomes.ts";
import { REQUEST_ID, type RawResponse } from "./transport.ts";

/** What one call's log event is made of. */
export interface CallLog<T> {
  dependency: string;
  operation: string;
  ctx: RegulatorCallContext;
  latencyMs: number;
  result: Interpreted<T>;
  mutation: boolean;
  raw?: RawResponse;
  circuitState?: string;
  outcome?: CallReport["outcome"];
  contractVersion?: string;
  /** Which staged credential pair was used ("current" / "next"), when a next pair is staged. */
  credentials?: string;
}

/** The event's shape on `log` (made once per client). */
export function callEventShape(log: Logger): EventShape {
  return log.shape("gateway_dependency_call", CALL_FIELDS, CALL_REPEATING);
}

/** One `gateway_dependency_call` (spec §6): no body, path, query, credential or upstream message. Returns the outcome. */
export function logCall<T>(event: EventShape, c: CallLog<T>): CallReport["outcome"] {
  const { result } = c;
  const failure = result.ok ? undefined : result.failure;
  const outcome = c.outcome ?? (failure ? "refused" : "success");
  // The regulator's per-request error.id when it sent one, else its x-request-id header.
  const correlation = failure?.kind === "rejected" && failure.errorId !== null ? failure.errorId : c.raw?.headers["x-request-id"];
  const values = [
    c.ctx?.requestId,
    c.dependency,
    c.operation,
    Math.round(c.latencyMs * 10) / 10,
    c.raw?.status ?? null,
    outcome,
    REGULATOR_ADAPTERS[c.contractVersion ?? "v1"]?.interfaceVersion ?? null,
    c.contractVersion ?? "v1",
    c.credentials,
    failure ? regulatorFailureClass(failure) : undefined,
    failure?.kind === "rejected" ? failure.reason : undefined,
    failure?.kind === "invalid_response" ? failure.reason : undefined,
    c.mutation ? (failure ? disposition(failure).kind : "succeeded") : undefined,
    typeof correlation === "string" && REQUEST_ID.test(correlation) ? correlation : undefined,
    c.circuitState,
  ];
  try {
    if (outcome === "failure" || outcome === "refused") event.warn(values);
    else event.event(values);
  } catch {
    // Logging must not change the call's outcome.
  }
  return outcome;
}

// --- Internal helpers ---

/** The fields of `gateway_dependency_call`, in order (spec §6; `logCall` leaves out those that do not apply). */
const CALL_FIELDS = [
  "requestId", "dependency", "operation", "latencyMs", "upstreamStatus", "outcome", "contractVersion", "adapterVersion",
  "stagedPair", "failureClass", "rejectionReason", "invalidReason", "result", "providerCorrelationId", "circuitState",
] as const;
/** Its fields that take few values (their JSON is remembered by the logger). */
const CALL_REPEATING = ["dependency", "operation", "outcome", "contractVersion", "adapterVersion", "failureClass", "circuitState"];
