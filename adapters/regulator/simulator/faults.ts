/**
 * Fault injection for the regulator simulator.
 *
 * A fault is set per route (or for every route with "*"), applies to the next `times` calls (or until
 * cleared), and either replaces the simulator's processing (default) or is applied after it
 * (`afterProcessing: true`: the simulator does the work, e.g. records a signed IRN, and then the answer
 * is lost or damaged). This file only decides *what* the fault does; the server performs it.
 */
import * as v from "valibot";
import { SIMULATOR_ROUTES, successStatusOf } from "./router.ts";
import type { SimulatorRoute } from "./router.ts";
import { HANDLER_OF, NO_ROUTE_BODY, VALIDATION_FAILED, credentialsRejectedBody, errorEnvelope } from "./views.ts";

// Route names and the regulator's error shapes live in router.ts and views.ts; re-exported here so
// the fault API's importers keep one path.
export { SIMULATOR_ROUTES, isSimulatorRoute, successStatusOf } from "./router.ts";
export type { SimulatorRoute } from "./router.ts";
export { HANDLER_OF, NO_ROUTE_BODY, VALIDATION_FAILED, credentialsRejectedBody, errorEnvelope } from "./views.ts";
export type { ErrorEnvelope } from "./views.ts";

/** A route name, or "*" for every route (a route's own fault wins over "*"). */
export type FaultTarget = SimulatorRoute | "*";

// ---------------------------------------------------------------------------
// Fault shapes
// ---------------------------------------------------------------------------

export interface FaultCommon {
  /** Apply to the next n calls of the route only; default: until cleared. */
  times?: number;
  /**
   * Process the call normally first (state changes happen: a sign records the IRN, a transmit records
   * the transmission), then answer with the fault instead of the real answer.
   */
  afterProcessing?: boolean;
}

export type Fault = FaultCommon &
  (
    | { kind: "latency"; ms: number }
    | { kind: "timeout" }
    | { kind: "status"; status: number; message?: string; handler?: string; retryAfter?: number }
    | { kind: "rate_limit"; retryAfter?: number }
    | { kind: "reset" }
    | { kind: "malformed"; status?: number; body?: string }
    | { kind: "empty"; status?: number }
    | { kind: "renamed"; status?: number }
    | { kind: "reject_credentials" }
    | { kind: "no_route" }
    | { kind: "ok_false"; status?: number }
    | { kind: "custom"; status: number; body?: unknown; headers?: Record<string, string> }
  );

export type FaultKind = Fault["kind"];

export const FAULT_KINDS: readonly FaultKind[] = [
  "latency",
  "timeout",
  "status",
  "rate_limit",
  "reset",
  "malformed",
  "empty",
  "renamed",
  "reject_credentials",
  "no_route",
  "ok_false",
  "custom",
];

export interface ActiveFault {
  route: FaultTarget;
  fault: Fault;
  /** Calls left before the fault expires; null = until cleared. */
  remaining: number | null;
}

/** Raised by `faults.set()` and the control API for an invalid fault description. */
export class FaultSpecError extends Error {
  readonly isFaultSpecError = true;
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid simulator fault: ${problems.join("; ")}`);
    this.name = "FaultSpecError";
    this.problems = problems;
  }
}

export function isFaultSpecError(e: unknown): e is FaultSpecError {
  return typeof e === "object" && e !== null && (e as { isFaultSpecError?: unknown }).isFaultSpecError === true;
}

// ---------------------------------------------------------------------------
// Controller
// ---------------------------------------------------------------------------

export interface FaultController {
  /** Set (replace) the fault of a route. Throws FaultSpecError when the fault is invalid. */
  set(route: FaultTarget, fault: Fault): void;
  /** Clear one route's fault, or every fault when no route is given. */
  clear(route?: FaultTarget): void;
  /** The faults now active. */
  list(): ActiveFault[];
  /** The fault that the next call of `route` would get, without consuming it. */
  peek(route: SimulatorRoute): Fault | undefined;
  /** Consume one use of the fault for a call of `route` (used by the server). */
  take(route: SimulatorRoute): Fault | undefined;
}

export function createFaultController(): FaultController {
  const active = new Map<FaultTarget, ActiveFault>();

  function _find(route: SimulatorRoute): ActiveFault | undefined {
    return active.get(route) ?? active.get("*");
  }

  return {
    set(route, fault) {
      const parsed = parseFaultSpec({ ...fault, route });
      active.set(parsed.route, { route: parsed.route, fault: parsed.fault, remaining: parsed.fault.times ?? null });
    },
    clear(route) {
      if (route === undefined) active.clear();
      else active.delete(route);
    },
    list() {
      return [...active.values()].map((a) => ({ route: a.route, fault: { ...a.fault }, remaining: a.remaining }));
    },
    peek(route) {
      if (active.size === 0) return undefined;
      return _find(route)?.fault;
    },
    take(route) {
      if (active.size === 0) return undefined;
      const found = _find(route);
      if (!found) return undefined;
      if (found.remaining !== null) {
        found.remaining -= 1;
        if (found.remaining <= 0) active.delete(found.route);
      }
      return found.fault;
    },
  };
}

// ---------------------------------------------------------------------------
// Validation (shared by faults.set() and the HTTP control API)
// ---------------------------------------------------------------------------

const COMMON = {
  route: v.union([v.picklist(SIMULATOR_ROUTES), v.literal("*")], "must be a simulator route name or \"*\""),
  times: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  afterProcessing: v.optional(v.boolean()),
};
const HTTP_STATUS = v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(599));
const SECONDS = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(86_400));

const FAULT_SCHEMA = v.variant(
  "kind",
  [
    v.strictObject({ ...COMMON, kind: v.literal("latency"), ms: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(600_000)) }),
    v.strictObject({ ...COMMON, kind: v.literal("timeout") }),
    v.strictObject({
      ...COMMON,
      kind: v.literal("status"),
      status: v.pipe(v.number(), v.integer(), v.minValue(400), v.maxValue(599)),
      message: v.optional(v.string()),
      handler: v.optional(v.pipe(v.string(), v.minLength(1))),
      retryAfter: v.optional(SECONDS),
    }),
    v.strictObject({ ...COMMON, kind: v.literal("rate_limit"), retryAfter: v.optional(SECONDS) }),
    v.strictObject({ ...COMMON, kind: v.literal("reset") }),
    v.strictObject({ ...COMMON, kind: v.literal("malformed"), status: v.optional(HTTP_STATUS), body: v.optional(v.string()) }),
    v.strictObject({ ...COMMON, kind: v.literal("empty"), status: v.optional(HTTP_STATUS) }),
    v.strictObject({ ...COMMON, kind: v.literal("renamed"), status: v.optional(HTTP_STATUS) }),
    v.strictObject({ ...COMMON, kind: v.literal("reject_credentials") }),
    v.strictObject({ ...COMMON, kind: v.literal("no_route") }),
    v.strictObject({ ...COMMON, kind: v.literal("ok_false"), status: v.optional(HTTP_STATUS) }),
    v.strictObject({
      ...COMMON,
      kind: v.literal("custom"),
      status: HTTP_STATUS,
      body: v.optional(v.unknown()),
      headers: v.optional(v.record(v.string(), v.string())),
    }),
  ],
  `kind must be one of: ${FAULT_KINDS.join(", ")}`,
);

/** Parse `{ route, kind, ...options }` (the control API body). Throws FaultSpecError listing every problem. */
export function parseFaultSpec(input: unknown): { route: FaultTarget; fault: Fault } {
  const result = v.safeParse(FAULT_SCHEMA, input);
  if (!result.success) {
    throw new FaultSpecError(
      result.issues.map((issue) => {
        const path = (issue.path ?? []).map((p) => String(p.key)).join(".");
        return path ? `${path}: ${issue.message}` : issue.message;
      }),
    );
  }
  const { route, ...fault } = result.output;
  return { route, fault: fault as Fault };
}

// ---------------------------------------------------------------------------
// What a fault does
// ---------------------------------------------------------------------------

/** What the server must do for a fault. */
export type FaultAction =
  | { type: "delay"; ms: number }
  | { type: "hold" }
  | { type: "reset" }
  | { type: "respond"; status: number; headers: Record<string, string>; body: string };

export interface FaultRenderContext {
  route: SimulatorRoute;
  /** The `data` of the real answer, when the call was processed first (afterProcessing). */
  processedData?: unknown;
}

const JSON_TYPE = "application/json; charset=utf-8";

/** Decide what the server does for `fault` on `route`. Pure: no I/O. */
export function renderFault(fault: Fault, ctx: FaultRenderContext): FaultAction {
  const ok = successStatusOf(ctx.route);
  switch (fault.kind) {
    case "latency":
      return { type: "delay", ms: fault.ms };
    case "timeout":
      return { type: "hold" };
    case "reset":
      return { type: "reset" };
    case "status": {
      const headers: Record<string, string> = { "content-type": JSON_TYPE };
      if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter);
      const body = errorEnvelope(
        fault.status,
        fault.handler ?? HANDLER_OF[ctx.route],
        fault.message ?? (fault.status >= 500 ? "internal server error" : VALIDATION_FAILED),
      );
      return { type: "respond", status: fault.status, headers, body: JSON.stringify(body) };
    }
    case "rate_limit": {
      const seconds = fault.retryAfter ?? 1;
      const body = errorEnvelope(429, "handler", "too many requests, kindly retry later");
      return {
        type: "respond",
        status: 429,
        headers: { "content-type": JSON_TYPE, "retry-after": String(seconds) },
        body: JSON.stringify(body),
      };
    }
    case "malformed": {
      const status = fault.status ?? ok;
      const body = fault.body ?? `{"code":${status},"data":{"ok":tru`;
      return { type: "respond", status, headers: { "content-type": JSON_TYPE }, body };
    }
    case "empty":
      return { type: "respond", status: fault.status ?? ok, headers: { "content-type": JSON_TYPE }, body: "" };
    case "renamed": {
      const status = fault.status ?? ok;
      const result = ctx.processedData !== undefined ? ctx.processedData : { ok: true };
      return { type: "respond", status, headers: { "content-type": JSON_TYPE }, body: JSON.stringify({ status, result }) };
    }
    case "ok_false": {
      const status = fault.status ?? ok;
      return {
        type: "respond",
        status,
        headers: { "content-type": JSON_TYPE },
        body: JSON.stringify({ code: status, data: { ok: false } }),
      };
    }
    case "reject_credentials":
      return { type: "respond", status: 400, headers: { "content-type": JSON_TYPE }, body: credentialsRejectedBody() };
    case "no_route":
      return { type: "respond", status: 404, headers: { "content-type": JSON_TYPE }, body: NO_ROUTE_BODY };
    case "custom": {
      const body = fault.body === undefined ? "" : typeof fault.body === "string" ? fault.body : JSON.stringify(fault.body);
      return { type: "respond", status: fault.status, headers: { "content-type": JSON_TYPE, ...(fault.headers ?? {}) }, body };
    }
  }
}
