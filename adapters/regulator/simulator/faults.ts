/**
 * Fault injection for the regulator simulator.
 *
 * A fault is set per route (or for every route with "*"), applies to the next `times` calls (or until
 * cleared), and either replaces the simulator's processing (default) or is applied after it
 * (`afterProcessing: true`: the simulator does the work, e.g. records a signed IRN, and then the answer
 * is lost or damaged). This file only decides *what* the fault does; the server performs it.
 */
import { randomUUID } from "node:crypto";
import * as v from "valibot";

// ---------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------

/** The simulator's route names; call counts and faults are keyed by them (docs/regulator-simulator.md). */
export const SIMULATOR_ROUTES = [
  "authenticate",
  "verify-tin",
  "entity-search",
  "entity",
  "irn-validate",
  "validate",
  "sign",
  "party-create",
  "party-search",
  "invoice-search",
  "transmit",
  "confirm-receipt",
  "transmit-lookup",
  "self-health-check",
  "pull",
  "confirm",
  "download",
  "update",
  "resources",
  "health",
] as const;

export type SimulatorRoute = (typeof SIMULATOR_ROUTES)[number];

/** A route name, or "*" for every route (a route's own fault wins over "*"). */
export type FaultTarget = SimulatorRoute | "*";

/** The HTTP status of a route's normal success answer (sign, transmit and party creation answer 201). */
export function successStatusOf(route: SimulatorRoute): 200 | 201 {
  return route === "sign" || route === "transmit" || route === "party-create" ? 201 : 200;
}

export function isSimulatorRoute(value: unknown): value is SimulatorRoute {
  return typeof value === "string" && (SIMULATOR_ROUTES as readonly string[]).includes(value);
}

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

// ---------------------------------------------------------------------------
// Error answers (the regulator's shapes)
// ---------------------------------------------------------------------------

/**
 * The real error envelope (FIRS-MBS_E-Invoicing_Documentation.md, every recorded 400):
 * `{ code, data: null, message: "error has occurred", error: { id, handler, details?, public_message } }`
 * with `id` a fresh UUID per request and `details` a free-text string, often absent.
 */
export interface ErrorEnvelope {
  code: number;
  data: null;
  message: string;
  error: { id: string; handler: string; details?: string; public_message: string };
}

export function errorEnvelope(status: number, handler: string, publicMessage: string, details?: string): ErrorEnvelope {
  // Key order as recorded: id, handler, details (when present), public_message.
  const error: ErrorEnvelope["error"] =
    details === undefined
      ? { id: randomUUID(), handler, public_message: publicMessage }
      : { id: randomUUID(), handler, details, public_message: publicMessage };
  return { code: status, data: null, message: "error has occurred", error };
}

/** The recorded public message of the regulator's validation refusals (GetEntity, "invalid UUID length"). */
export const VALIDATION_FAILED = "validation failed: we are unable to process your request. also confirm this is not a duplicate request";

/** The recorded answer to a deployment key/secret the regulator cannot validate: HTTP 400, handler "handler". */
export function credentialsRejectedBody(): string {
  return JSON.stringify(errorEnvelope(400, "handler", "unable to validate api key"));
}

/** The regulator router's recorded answer to an unknown path (HTTP 404, no `error` object). */
export const NO_ROUTE_BODY = JSON.stringify({
  code: 404,
  data: null,
  message: "no route found for this path. kindly check your request and try again",
});

/** `error.handler` per route: "entity_actions" is recorded; the others are modelled the same way. */
export const HANDLER_OF: Readonly<Record<SimulatorRoute, string>> = {
  authenticate: "utility_actions",
  "verify-tin": "utility_actions",
  "entity-search": "entity_actions",
  entity: "entity_actions",
  "irn-validate": "invoice_actions",
  validate: "invoice_actions",
  sign: "invoice_actions",
  "party-create": "party_actions",
  "party-search": "party_actions",
  "invoice-search": "invoice_actions",
  transmit: "transmit_actions",
  "confirm-receipt": "transmit_actions",
  "transmit-lookup": "transmit_actions",
  "self-health-check": "transmit_actions",
  pull: "transmit_actions",
  confirm: "invoice_actions",
  download: "invoice_actions",
  update: "invoice_actions",
  resources: "resource_actions",
  health: "handler",
};
