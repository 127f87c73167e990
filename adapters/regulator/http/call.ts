/**
 * One regulator call: the exchange run through the state's dependency policy (the per-call deadline,
 * body included, and the §3.5 circuit; the policy's deadline aborts the undici exchange), with the
 * credential pair in use and, when the regulator rejects it and another pair is staged, once more with
 * that pair. Each attempt is one `gateway_dependency_call` log event and one `onCall` report; an
 * attempt no staged pair passes raises `regulator_credentials_rejected` (error level,
 * `alert: "immediate"`: the immediate signal of spec §6). A call never throws: every failure is a value.
 */
import type { CallReport, ResultVerdict } from "../../policies.ts";
import type { EventShape, Logger } from "../../../core/log.ts";
import { regulatorFailureClass, regulatorFailureCounts } from "../port.ts";
import type { RegulatorCallContext, RegulatorOperation, RegulatorState } from "../port.ts";
import { logCall } from "./call-log.ts";
import type { Interpreted } from "./interpret.ts";
import type { HttpRegulatorClientOptions, RegulatorCallEvent } from "./options.ts";
import { SLOT_NAMES, exchange, failureOf, type RawResponse, type Target, type Wire } from "./transport.ts";

/** What every call of one client shares. */
export interface CallEnv {
  targets: ReadonlyMap<RegulatorState, Target>;
  /** Request headers per credential pair: [current, next?]. */
  credentialHeaders: readonly (readonly string[])[];
  callEvent: EventShape;
  log: Logger;
  maxResponseBytes: number;
  /** Where `onCall` and `alerts` are read, at each call. */
  hooks: Pick<HttpRegulatorClientOptions, "onCall" | "alerts">;
}

/** One call's request and how its answer is read. */
export interface CallSpec<T> {
  /** The port operation (decides whether it is a mutation). */
  operation: RegulatorOperation;
  /** The `operation` log field. */
  logOperation: string;
  wire: Wire;
  interpret: (raw: RawResponse) => Interpreted<T>;
}

/** Runs one call on the state's target; a state without one is "not configured" (nothing is called). */
export async function call<T>(env: CallEnv, state: RegulatorState, spec: CallSpec<T>, ctx: RegulatorCallContext): Promise<Interpreted<T>> {
  const target = env.targets.get(state);
  if (!target) {
    const result: Interpreted<T> = { ok: false, failure: { kind: "not_configured" } };
    logCall(env.callEvent, { dependency: _dependencyName(state), operation: spec.logOperation, ctx, latencyMs: 0, result, mutation: _isMutation(spec.operation) });
    return result;
  }
  const first = target.slot;
  let result = await _attempt(env, target, first, spec, ctx);
  if (!result.ok && result.failure.kind === "credentials_rejected" && env.credentialHeaders.length > 1) {
    // Rejected credentials: the regulator refused before doing anything, so the other staged pair
    // may be tried — this is the only failure that is ever sent again with other credentials.
    const other = 1 - first;
    const second = await _attempt(env, target, other, spec, ctx);
    if (second.ok || second.failure.kind !== "credentials_rejected") {
      if (target.slot === first) {
        target.slot = other;
        env.log.warn("regulator_credentials_switched", { dependency: target.dependency, from: SLOT_NAMES[first], to: SLOT_NAMES[other] });
      }
    }
    result = second;
  }
  if (!result.ok && result.failure.kind === "credentials_rejected") _raiseCredentialsRejected(env, target, spec.logOperation, result.failure.upstreamStatus, ctx);
  return result;
}

// --- Internal helpers ---

interface Exchange<T> {
  raw: RawResponse;
  interpreted: Interpreted<T>;
}

/** One attempt with the credential pair of `slot`: through the policy, logged and reported. */
async function _attempt<T>(env: CallEnv, target: Target, slot: number, spec: CallSpec<T>, ctx: RegulatorCallContext): Promise<Interpreted<T>> {
  const started = performance.now();
  let report: CallReport | undefined;
  let done: Exchange<T> | undefined;
  let result: Interpreted<T>;
  try {
    done = await target.policy.execute(
      (deadline) =>
        exchange(target, env.credentialHeaders[slot]!, spec.wire, ctx, deadline, env.maxResponseBytes).then((raw) => ({ raw, interpreted: spec.interpret(raw) })),
      {
        classify: _classifyExchange<T>,
        observe: (r) => {
          report = r;
        },
      },
    );
    result = done.interpreted;
  } catch (error) {
    result = { ok: false, failure: failureOf(error) };
  }
  const outcome = logCall(env.callEvent, {
    dependency: target.dependency,
    operation: spec.logOperation,
    ctx,
    latencyMs: performance.now() - started,
    result,
    mutation: _isMutation(spec.operation),
    raw: done?.raw,
    circuitState: report?.circuitState ?? target.policy.snapshot().state,
    outcome: report?.outcome,
    contractVersion: target.contractVersion,
    credentials: env.credentialHeaders.length > 1 ? SLOT_NAMES[slot] : undefined,
  });
  _reportCall(env, target, spec.logOperation, outcome, result, ctx);
  return result;
}

/** The `onCall` report of one attempt; whatever it throws is ignored. */
function _reportCall<T>(env: CallEnv, target: Target, operation: string, outcome: RegulatorCallEvent["outcome"], result: Interpreted<T>, ctx: RegulatorCallContext): void {
  const onCall = env.hooks.onCall;
  if (!onCall) return;
  try {
    const event: RegulatorCallEvent = { dependency: target.dependency, operation, outcome };
    if (!result.ok) event.failureClass = regulatorFailureClass(result.failure);
    if (typeof ctx?.requestId === "string") event.requestId = ctx.requestId;
    onCall(event);
  } catch {
    // metrics and alerts must not change the call's outcome
  }
}

/** The immediate signal (spec §6 "rejected internal credentials"): no staged pair is accepted. */
function _raiseCredentialsRejected(env: CallEnv, target: Target, operation: string, upstreamStatus: number, ctx: RegulatorCallContext): void {
  env.log.error("regulator_credentials_rejected", {
    requestId: ctx.requestId,
    dependency: target.dependency,
    operation,
    upstreamStatus,
    alert: "immediate",
  });
  env.hooks.alerts?.raise({ signal: "regulator_credentials_rejected", dependency: target.dependency, operation, failureClass: "credentials_rejected", requestId: ctx.requestId });
}

/** How the policy counts an exchange: by its interpreted answer. */
function _classifyExchange<T>(x: Exchange<T>): ResultVerdict {
  const r = x.interpreted;
  if (r.ok) return "success";
  return regulatorFailureCounts(r.failure) ? { verdict: "failure", failureClass: regulatorFailureClass(r.failure) } : "neutral";
}

function _isMutation(operation: RegulatorOperation): boolean {
  return operation === "sign" || operation === "transmit";
}

function _dependencyName(state: unknown): string {
  return state === "TEST" || state === "LIVE" ? `regulator:${state}` : "regulator:unknown";
}
