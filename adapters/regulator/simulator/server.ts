/**
 * The regulator simulator: a standalone `node:http` server that behaves like the regulator's
 * e-invoicing interface (v1.1.6 shapes) under `/api/v1`, with fixtures from a file and per-route fault
 * injection. Tests, the demo and the bench reach "the regulator" through it, over real HTTP.
 *
 * Answers: success `{ code, data }`; errors `{ code, data: null, message, error: { id, handler, details,
 * public_message } }` with HTTP status = code. See docs/regulator-simulator.md for every route and error.
 */
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { DEFAULT_RESOURCES, parseFixtures } from "./fixtures.ts";
import type { FixtureBusiness, FixtureEntity, FixtureTaxpayer, SimulatorFixtures } from "./fixtures.ts";
import {
  SIMULATOR_ROUTES,
  createFaultController,
  errorEnvelope,
  isFaultSpecError,
  isSimulatorRoute,
  parseFaultSpec,
  renderFault,
} from "./faults.ts";
import type { Fault, FaultAction, FaultController, SimulatorProblem, SimulatorRoute } from "./faults.ts";
import { INBOUND_CONTROL_PATH, handleInboundPush } from "./inbound.ts";

// ---------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------

export interface RegulatorSimulatorOptions {
  /** TCP port; 0 (default) picks a free port. */
  port?: number;
  /** Interface to listen on; default "127.0.0.1". */
  host?: string;
  fixtures: SimulatorFixtures;
  /** The deployment's own credentials; every call except `GET /api` must carry them as x-api-key / x-api-secret. */
  credentials: { apiKey: string; apiSecret: string };
  /** Serve the fault/state control API under `/__sim/` (no credentials needed). Default true. */
  controlApi?: boolean;
  /** Largest accepted request body; default 2 MiB (larger → 413). */
  bodyLimitBytes?: number;
  /** Optional structured log sink; one "regulator_sim_request" event per answered call. */
  log?: (event: string, fields: Record<string, unknown>) => void;
}

export type PaymentStatus = "PENDING" | "PAID" | "REJECTED";

export interface SignedInvoiceRecord {
  irn: string;
  business_id: string;
  entity_id: string;
  status: "SIGNED" | "TRANSMITTED";
  payment_status: PaymentStatus;
  signed_at: string;
  transmitted_at: string | null;
  updated_at: string;
  /** The signed document exactly as received. */
  invoice: Record<string, unknown>;
}

/** Read-only view of what the simulator has seen and done. */
export interface SimulatorState {
  /** IRNs signed, in order. */
  signedIrns(): string[];
  /** IRNs transmitted, in order of signing. */
  transmittedIrns(): string[];
  isSigned(irn: string): boolean;
  isTransmitted(irn: string): boolean;
  /** A copy of the stored record of a signed IRN. */
  invoice(irn: string): SignedInvoiceRecord | undefined;
  /** Calls of one route (every call that matched the route, whatever its outcome). */
  calls(route: SimulatorRoute): number;
  callCounts(): Record<SimulatorRoute, number>;
  totalCalls(): number;
}

export interface RegulatorSimulatorHandler {
  /** The request listener (for `http.createServer`). */
  handle(req: IncomingMessage, res: ServerResponse): void;
  faults: FaultController;
  state: SimulatorState;
  /** Forget signed/transmitted invoices, call counts and faults. */
  reset(): void;
  /** Zero the call counts only. */
  resetCalls(): void;
  /** Cancel pending latency timers and drop held (timeout) answers. */
  dispose(): void;
}

export interface RegulatorSimulator {
  /** e.g. "http://127.0.0.1:41234" (no trailing slash). */
  url: string;
  host: string;
  port: number;
  faults: FaultController;
  state: SimulatorState;
  reset(): void;
  resetCalls(): void;
  /** Stop listening and destroy every connection (held timeout answers included). Idempotent. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

export async function startRegulatorSimulator(options: RegulatorSimulatorOptions): Promise<RegulatorSimulator> {
  const handler = createRegulatorSimulatorHandler(options);
  const host = options.host ?? "127.0.0.1";
  const server = createServer({ noDelay: true }, handler.handle);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  await new Promise<void>((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once("error", onError);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    host,
    port,
    faults: handler.faults,
    state: handler.state,
    reset: handler.reset,
    resetCalls: handler.resetCalls,
    close() {
      closing ??= new Promise<void>((resolve) => {
        handler.dispose();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

// ---------------------------------------------------------------------------
// Handler
// ---------------------------------------------------------------------------

export function createRegulatorSimulatorHandler(options: RegulatorSimulatorOptions): RegulatorSimulatorHandler {
  const fixtures = parseFixtures(options.fixtures, "options.fixtures");
  const { apiKey, apiSecret } = options.credentials;
  const controlApi = options.controlApi ?? true;
  const bodyLimit = options.bodyLimitBytes ?? 2 * 1024 * 1024;
  const log = options.log;

  // --- Fixture indexes (built once) ---
  const taxpayers = new Map<string, FixtureTaxpayer>();
  for (const t of fixtures.taxpayers) taxpayers.set(t.email.toLowerCase(), t);
  const entityAnswers = new Map<string, string>();
  const businesses = new Map<string, BusinessRecord>();
  for (const entity of fixtures.entities) {
    entityAnswers.set(entity.id, JSON.stringify({ code: 200, data: _entityView(entity) }));
    for (const business of entity.businesses) {
      businesses.set(business.id, {
        business,
        entity,
        template: typeof business.irn_template === "string" && business.irn_template !== "" ? _compileTemplate(business.irn_template) : null,
      });
    }
  }
  const resources: Record<string, readonly unknown[]> = { ...DEFAULT_RESOURCES, ...(fixtures.resources ?? {}) };
  const resourceAnswers = new Map<string, string>();
  for (const [name, list] of Object.entries(resources)) resourceAnswers.set(name, JSON.stringify({ code: 200, data: list }));
  const currencyCodes = _codes(resources.currencies);
  const invoiceTypeCodes = _codes(resources["invoice-types"]);

  // --- Mutable state ---
  const faults = createFaultController();
  const signed = new Map<string, SignedInvoiceRecord>();
  let calls = _zeroCalls();
  const timers = new Set<NodeJS.Timeout>();
  const held = new Set<ServerResponse>();

  const credentialsRejectedBody = JSON.stringify(
    errorEnvelope(401, "api_credentials_invalid", "api_authentication", "Invalid or missing API key/secret"),
  );

  const state: SimulatorState = {
    signedIrns: () => [...signed.keys()],
    transmittedIrns: () => [...signed.values()].filter((r) => r.transmitted_at !== null).map((r) => r.irn),
    isSigned: (irn) => signed.has(irn),
    isTransmitted: (irn) => (signed.get(irn)?.transmitted_at ?? null) !== null,
    invoice: (irn) => {
      const r = signed.get(irn);
      return r ? { ...r } : undefined;
    },
    calls: (route) => calls[route],
    callCounts: () => ({ ...calls }),
    totalCalls: () => Object.values(calls).reduce((a, b) => a + b, 0),
  };

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    const method = req.method ?? "GET";

    if (controlApi && path.startsWith("/__sim/")) {
      void _control(req, res, method, path, q === -1 ? "" : url.slice(q + 1));
      return;
    }
    const m = _match(method, path);
    if (m.kind === "not_found") {
      _send(res, _err(404, "route_not_found", "router", `No route for ${method} ${path}`));
      return;
    }
    if (m.kind === "method_not_allowed") {
      _send(res, _err(405, "method_not_allowed", "router", `Method ${method} is not allowed here`), { allow: m.allow });
      return;
    }
    calls[m.route] += 1;
    const fault = faults.take(m.route);
    if (log) {
      const started = performance.now();
      res.once("close", () =>
        log("regulator_sim_request", {
          route: m.route,
          method,
          status: res.headersSent ? res.statusCode : null,
          fault: fault?.kind ?? null,
          ms: Math.round(performance.now() - started),
        }),
      );
    }
    if (fault === undefined) {
      const answer = _process(req, m.route, m.param);
      if (answer instanceof Promise) void answer.then((a) => _send(res, a), (e) => _send(res, _internal(m.route, e)));
      else _send(res, answer);
      return;
    }
    void _serveWithFault(req, res, m.route, m.param, fault).catch((e) => _send(res, _internal(m.route, e)));
  }

  async function _serveWithFault(
    req: IncomingMessage,
    res: ServerResponse,
    route: SimulatorRoute,
    param: string,
    fault: Fault,
  ): Promise<void> {
    if (fault.afterProcessing !== true) {
      const action = renderFault(fault, { route, credentialsRejectedBody });
      if (action.type !== "delay") return _perform(req, res, action);
      await _delay(action.ms);
      if (_gone(res)) return;
      return _send(res, await _process(req, route, param));
    }
    const answer = await _process(req, route, param);
    const action = renderFault(fault, { route, processedData: _dataOf(answer), credentialsRejectedBody });
    if (action.type !== "delay") return _perform(req, res, action);
    await _delay(action.ms);
    if (!_gone(res)) _send(res, answer);
  }

  function _perform(req: IncomingMessage, res: ServerResponse, action: Exclude<FaultAction, { type: "delay" }>): void {
    switch (action.type) {
      case "hold":
        held.add(res);
        res.once("close", () => held.delete(res));
        return;
      case "reset": {
        const socket = req.socket;
        try {
          socket.resetAndDestroy();
        } catch {
          socket.destroy();
        }
        return;
      }
      case "respond":
        if (_gone(res)) return;
        res.writeHead(action.status, { ...action.headers, "content-length": Buffer.byteLength(action.body) });
        res.end(action.body);
    }
  }

  function _delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });
  }

  // --- Processing (credentials, body, route logic) ---

  function _process(req: IncomingMessage, route: SimulatorRoute, param: string): Answer | Promise<Answer> {
    if (route === "health") return HEALTH_ANSWER;
    if (req.headers["x-api-key"] !== apiKey || req.headers["x-api-secret"] !== apiSecret) {
      return { status: 401, raw: credentialsRejectedBody };
    }
    switch (route) {
      case "entity": {
        const raw = entityAnswers.get(param);
        return raw ? { status: 200, raw } : _err(404, "entity_not_found", route, "No entity with this id");
      }
      case "resources": {
        const raw = resourceAnswers.get(param);
        return raw ? { status: 200, raw } : _err(404, "resource_not_found", route, `No resource named "${param}"`);
      }
      case "confirm":
        return _confirm(param, false);
      case "download":
        return _confirm(param, true);
      case "transmit":
        // The body (the gateway sends `{}`) is ignored, but read so the connection stays reusable.
        return _withBody(req, route, () => _transmit(param), true);
      case "authenticate":
        return _withBody(req, route, _authenticate);
      case "irn-validate":
        return _withBody(req, route, _irnValidate);
      case "validate":
        return _withBody(req, route, (body) => _invoice(body, "validate"));
      case "sign":
        return _withBody(req, route, (body) => _invoice(body, "sign"));
      case "update":
        return _withBody(req, route, (body) => _update(param, body));
    }
  }

  async function _withBody(
    req: IncomingMessage,
    route: SimulatorRoute,
    fn: (body: unknown) => Answer,
    optional = false,
  ): Promise<Answer> {
    const read = await _readBody(req, bodyLimit);
    if (read.kind === "too_large") {
      return { ..._err(413, "payload_too_large", route, `Request body exceeds ${bodyLimit} bytes`), headers: { connection: "close" } };
    }
    if (read.kind === "aborted") return _err(400, "request_aborted", route, "The request body was not received");
    if (read.text.trim() === "") {
      if (optional) return fn(undefined);
      return _err(400, "invalid_json", route, "The request body is empty; a JSON object is expected");
    }
    let body: unknown;
    try {
      body = JSON.parse(read.text);
    } catch {
      if (optional) return fn(undefined);
      return _err(400, "invalid_json", route, "The request body is not valid JSON");
    }
    return fn(body);
  }

  function _authenticate(body: unknown): Answer {
    const route = "authenticate";
    if (!_isObject(body)) return _validation(route, [{ pointer: "", code: "TYPE", message: "body must be a JSON object" }]);
    const problems: SimulatorProblem[] = [];
    const email = _str(body, "email", "/email", problems);
    const password = _str(body, "password", "/password", problems);
    if (problems.length > 0 || email === undefined || password === undefined) return _validation(route, problems);
    const taxpayer = taxpayers.get(email.toLowerCase());
    if (!taxpayer) return _err(404, "user_not_found", route, "No user account matches this email");
    if (taxpayer.password !== password) return _err(401, "invalid_credentials", route, "Invalid email or password");
    if (taxpayer.app_linked === false) {
      return _err(403, "app_not_linked", route, "The taxpayer has not linked this application as an access point provider");
    }
    return {
      status: 200,
      body: { code: 200, data: { entity_id: taxpayer.entity_id, user: { email: taxpayer.email, name: taxpayer.name ?? null } } },
    };
  }

  function _irnValidate(body: unknown): Answer {
    const route = "irn-validate";
    if (!_isObject(body)) return _validation(route, [{ pointer: "", code: "TYPE", message: "body must be a JSON object" }]);
    const problems: SimulatorProblem[] = [];
    const reference = _str(body, "invoice_reference", "/invoice_reference", problems);
    const businessId = _str(body, "business_id", "/business_id", problems);
    const irn = _str(body, "irn", "/irn", problems);
    if (problems.length > 0 || reference === undefined || businessId === undefined || irn === undefined) {
      return _validation(route, problems);
    }
    const found = _business(businessId, route);
    if ("status" in found) return found;
    const irnProblems = _checkIrn(irn, found, "/irn");
    const invoiceNo = irn.split("-")[0];
    if (irnProblems.length === 0 && invoiceNo !== reference) {
      irnProblems.push({ pointer: "/invoice_reference", code: "MISMATCH", message: "invoice_reference differs from the invoice number in the IRN" });
    }
    if (irnProblems.length > 0) return _err(400, "irn_invalid", route, "The IRN is not valid for this business", irnProblems);
    return OK_200;
  }

  function _invoice(body: unknown, route: "validate" | "sign"): Answer {
    if (!_isObject(body)) return _validation(route, [{ pointer: "", code: "TYPE", message: "body must be a JSON object" }]);
    const problems = _checkInvoiceShape(body, currencyCodes, invoiceTypeCodes);
    if (problems.length > 0) return _validation(route, problems);
    const businessId = body.business_id as string;
    const irn = body.irn as string;
    const found = _business(businessId, route);
    if ("status" in found) return found;
    const cross = _checkIrn(irn, found, "/irn");
    const supplierTin = (body.accounting_supplier_party as Record<string, unknown>).tin;
    if (supplierTin !== found.business.tin) {
      cross.push({ pointer: "/accounting_supplier_party/tin", code: "MISMATCH", message: "supplier TIN differs from the business's TIN" });
    }
    if (cross.length > 0) return _validation(route, cross);
    if (route === "validate") return OK_200;
    if (signed.has(irn)) return _err(409, "duplicate_irn", route, "An invoice with this IRN has already been signed");
    const now = new Date().toISOString();
    signed.set(irn, {
      irn,
      business_id: businessId,
      entity_id: found.entity.id,
      status: "SIGNED",
      payment_status: "PENDING",
      signed_at: now,
      transmitted_at: null,
      updated_at: now,
      invoice: body,
    });
    return OK_201;
  }

  function _transmit(irn: string): Answer {
    const rec = signed.get(irn);
    if (!rec) return _err(404, "irn_not_found", "transmit", "No signed invoice has this IRN");
    if (rec.transmitted_at !== null) return _err(409, "already_transmitted", "transmit", "This invoice has already been transmitted");
    const now = new Date().toISOString();
    rec.transmitted_at = now;
    rec.updated_at = now;
    rec.status = "TRANSMITTED";
    return OK_201;
  }

  function _confirm(irn: string, withInvoice: boolean): Answer {
    const rec = signed.get(irn);
    const route = withInvoice ? "download" : "confirm";
    if (!rec) return _err(404, "irn_not_found", route, "No signed invoice has this IRN");
    const data: Record<string, unknown> = {
      irn: rec.irn,
      business_id: rec.business_id,
      status: rec.status,
      payment_status: rec.payment_status,
      signed_at: rec.signed_at,
      transmitted_at: rec.transmitted_at,
      updated_at: rec.updated_at,
    };
    if (withInvoice) data.invoice = rec.invoice;
    return { status: 200, body: { code: 200, data } };
  }

  function _update(irn: string, body: unknown): Answer {
    const route = "update";
    const rec = signed.get(irn);
    if (!rec) return _err(404, "irn_not_found", route, "No signed invoice has this IRN");
    if (!_isObject(body)) return _validation(route, [{ pointer: "", code: "TYPE", message: "body must be a JSON object" }]);
    const status = body.payment_status;
    if (status !== "PENDING" && status !== "PAID" && status !== "REJECTED") {
      return _validation(route, [
        {
          pointer: "/payment_status",
          code: status === undefined ? "REQUIRED" : "UNKNOWN_VALUE",
          message: "payment_status must be PENDING, PAID or REJECTED",
        },
      ]);
    }
    rec.payment_status = status;
    rec.updated_at = new Date().toISOString();
    return OK_200;
  }

  function _business(id: string, route: SimulatorRoute): BusinessRecord | Answer {
    const found = businesses.get(id);
    if (!found) return _err(404, "business_not_found", route, "No business with this id");
    if (!found.business.is_active || !found.entity.is_active) {
      return _err(400, "business_inactive", route, "The business (or its entity) is not active");
    }
    if (found.template === null) return _err(400, "irn_template_missing", route, "The business has no IRN template");
    return found;
  }

  // --- Control API (/__sim/*, no credentials) ---

  async function _control(req: IncomingMessage, res: ServerResponse, method: string, path: string, query: string): Promise<void> {
    const reply = (status: number, body: unknown) => _send(res, { status, body });
    if (path === "/__sim/faults" || path.startsWith("/__sim/faults/")) {
      const named = path.length > "/__sim/faults/".length ? _decode(path.slice("/__sim/faults/".length)) : undefined;
      const route = named ?? new URLSearchParams(query).get("route") ?? undefined;
      if (method === "GET" && named === undefined) return reply(200, { faults: faults.list() });
      if (method === "DELETE") {
        if (route !== undefined && route !== "*" && !isSimulatorRoute(route)) {
          return reply(404, { ok: false, error: "unknown_route", routes: SIMULATOR_ROUTES });
        }
        faults.clear(route as SimulatorRoute | "*" | undefined);
        return reply(200, { ok: true, faults: faults.list() });
      }
      if (method === "POST" && named === undefined) {
        const read = await _readBody(req, 64 * 1024);
        let body: unknown;
        try {
          body = read.kind === "ok" ? JSON.parse(read.text) : undefined;
        } catch {
          return reply(400, { ok: false, error: "invalid_json", problems: ["body is not valid JSON"] });
        }
        try {
          const spec = parseFaultSpec(body);
          faults.set(spec.route, spec.fault);
          return reply(201, { ok: true, route: spec.route, fault: spec.fault });
        } catch (e) {
          if (isFaultSpecError(e)) return reply(400, { ok: false, error: "invalid_fault", problems: e.problems });
          throw e;
        }
      }
      return reply(405, { ok: false, error: "method_not_allowed" });
    }
    if (path === "/__sim/state" && method === "GET") {
      return reply(200, {
        signed: state.signedIrns(),
        transmitted: state.transmittedIrns(),
        calls: state.callCounts(),
        totalCalls: state.totalCalls(),
        faults: faults.list(),
      });
    }
    if (path === INBOUND_CONTROL_PATH) {
      const pushed = await handleInboundPush(req, method, { secret: apiSecret, signedInvoice: (irn) => signed.get(irn)?.invoice });
      return reply(pushed.status, pushed.body);
    }
    if (path === "/__sim/reset" && method === "POST") {
      reset();
      return reply(200, { ok: true });
    }
    return reply(404, { ok: false, error: "not_found" });
  }

  function reset(): void {
    signed.clear();
    faults.clear();
    calls = _zeroCalls();
  }

  return {
    handle,
    faults,
    state,
    reset,
    resetCalls() {
      calls = _zeroCalls();
    },
    dispose() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const res of held) res.destroy();
      held.clear();
    },
  };
}

// --- Internal helpers ---

interface BusinessRecord {
  business: FixtureBusiness;
  entity: FixtureEntity;
  /** Compiled IRN template, or null when the business has none. */
  template: RegExp | null;
}

/** An answer: `raw` (pre-serialised JSON) wins over `body`. */
interface Answer {
  status: number;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}

type RouteMatch =
  | { kind: "route"; route: SimulatorRoute; param: string }
  | { kind: "not_found" }
  | { kind: "method_not_allowed"; allow: string };

const JSON_TYPE = "application/json; charset=utf-8";
const HEALTH_ANSWER: Answer = { status: 200, raw: JSON.stringify({ code: 200, data: { status: "ok" } }) };
const OK_200: Answer = { status: 200, raw: JSON.stringify({ code: 200, data: { ok: true } }) };
const OK_201: Answer = { status: 201, raw: JSON.stringify({ code: 201, data: { ok: true } }) };
const NOT_FOUND: RouteMatch = { kind: "not_found" };
const MAX_DETAILS = 50;

function _match(method: string, path: string): RouteMatch {
  if (path === "/api" || path === "/api/") return _only(method, "GET", "health", "");
  if (!path.startsWith("/api/v1/")) return NOT_FOUND;
  const s = path.slice(8).split("/");
  const [a, b, c] = s;
  if (s.length === 2 && a === "utilities" && b === "authenticate") return _only(method, "POST", "authenticate", "");
  if (s.length === 2 && a === "entity" && b) return _only(method, "GET", "entity", _decode(b));
  if (a !== "invoice") return NOT_FOUND;
  if (s.length === 2) {
    if (b === "validate") return _only(method, "POST", "validate", "");
    if (b === "sign") return _only(method, "POST", "sign", "");
    return NOT_FOUND;
  }
  if (s.length !== 3 || !c) return NOT_FOUND;
  switch (b) {
    case "irn":
      return c === "validate" ? _only(method, "POST", "irn-validate", "") : NOT_FOUND;
    case "transmit":
      return _only(method, "POST", "transmit", _decode(c));
    case "confirm":
      return _only(method, "GET", "confirm", _decode(c));
    case "download":
      return _only(method, "GET", "download", _decode(c));
    case "update":
      return _only(method, "PATCH", "update", _decode(c));
    case "resources":
      return _only(method, "GET", "resources", _decode(c));
    default:
      return NOT_FOUND;
  }
}

function _only(method: string, allowed: string, route: SimulatorRoute, param: string): RouteMatch {
  return method === allowed ? { kind: "route", route, param } : { kind: "method_not_allowed", allow: allowed };
}

function _decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function _send(res: ServerResponse, answer: Answer, extraHeaders?: Record<string, string>): void {
  if (_gone(res)) return;
  const text = answer.raw ?? JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    "content-type": JSON_TYPE,
    "content-length": Buffer.byteLength(text),
    ...answer.headers,
    ...extraHeaders,
  });
  res.end(text);
}

function _gone(res: ServerResponse): boolean {
  return res.headersSent || res.destroyed || res.writableEnded;
}

function _err(status: number, id: string, handler: string, message: string, details: SimulatorProblem[] = []): Answer {
  return { status, body: errorEnvelope(status, id, handler, message, details.slice(0, MAX_DETAILS)) };
}

function _validation(route: SimulatorRoute, problems: SimulatorProblem[]): Answer {
  return _err(400, "validation_failed", route, "The request failed validation", problems);
}

function _internal(route: SimulatorRoute, _e: unknown): Answer {
  return _err(500, "internal_server_error", route, "The simulator failed to process the request");
}

function _dataOf(answer: Answer): unknown {
  const body: unknown = answer.raw !== undefined ? JSON.parse(answer.raw) : answer.body;
  return _isObject(body) && "data" in body ? body.data : undefined;
}

function _zeroCalls(): Record<SimulatorRoute, number> {
  const calls = {} as Record<SimulatorRoute, number>;
  for (const r of SIMULATOR_ROUTES) calls[r] = 0;
  return calls;
}

type BodyRead = { kind: "ok"; text: string } | { kind: "too_large" } | { kind: "aborted" };

function _readBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (r: BodyRead) => {
      if (done) return;
      done = true;
      resolve(r);
    };
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) finish({ kind: "too_large" });
      else chunks.push(chunk);
    });
    req.on("end", () => finish({ kind: "ok", text: Buffer.concat(chunks, size).toString("utf8") }));
    req.on("error", () => finish({ kind: "aborted" }));
    req.on("close", () => finish({ kind: "aborted" }));
  });
}

function _entityView(entity: FixtureEntity): Record<string, unknown> {
  const view: Record<string, unknown> = { id: entity.id, reference: entity.reference };
  if (entity.name !== undefined) view.name = entity.name;
  view.is_active = entity.is_active;
  view.businesses = entity.businesses.map((b) => {
    const bv: Record<string, unknown> = { id: b.id, name: b.name, tin: b.tin };
    if (b.reference !== undefined) bv.reference = b.reference;
    if (b.irn_template !== undefined) bv.irn_template = b.irn_template;
    bv.service_id = b.service_id;
    bv.is_active = b.is_active;
    return { ...bv, ...(b.overrides ?? {}) };
  });
  return { ...view, ...(entity.overrides ?? {}) };
}

function _compileTemplate(template: string): RegExp {
  let src = "^";
  for (const part of template.split(/(\{\{\s*invoice_id\s*\}\}|\{\{\s*YYYYMMDD\s*\}\})/)) {
    if (/^\{\{\s*invoice_id\s*\}\}$/.test(part)) src += "[A-Za-z0-9]+";
    else if (/^\{\{\s*YYYYMMDD\s*\}\}$/.test(part)) src += "\\d{8}";
    else src += part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(src + "$");
}

const IRN_SHAPE = /^([A-Za-z0-9]+)-([A-Za-z0-9]{8})-(\d{8})$/;

/** IRN = {InvoiceNo}-{ServiceID}-{YYYYMMDD}: shape, the business's service id, a real date, the template. */
function _checkIrn(irn: string, found: BusinessRecord, pointer: string): SimulatorProblem[] {
  const m = IRN_SHAPE.exec(irn);
  if (!m) {
    return [{ pointer, code: "FORMAT", message: "IRN must be {InvoiceNo}-{ServiceID}-{YYYYMMDD} (invoice number alphanumeric, 8-character service ID)" }];
  }
  const problems: SimulatorProblem[] = [];
  if (m[2] !== found.business.service_id) {
    problems.push({ pointer, code: "MISMATCH", message: "the IRN's service ID does not belong to this business" });
  }
  if (!_isCompactDate(m[3]!)) problems.push({ pointer, code: "FORMAT", message: "the IRN's date part is not a valid YYYYMMDD date" });
  if (problems.length === 0 && found.template !== null && !found.template.test(irn)) {
    problems.push({ pointer, code: "MISMATCH", message: "the IRN does not follow the business's IRN template" });
  }
  return problems;
}

function _isCompactDate(s: string): boolean {
  return _isRealDate(Number(s.slice(0, 4)), Number(s.slice(4, 6)), Number(s.slice(6, 8)));
}

function _isRealDate(y: number, m: number, d: number): boolean {
  if (y < 1900 || y > 2999 || m < 1 || m > 12 || d < 1) return false;
  const dt = new Date(Date.UTC(y, m - 1, d));
  return dt.getUTCFullYear() === y && dt.getUTCMonth() === m - 1 && dt.getUTCDate() === d;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function _checkInvoiceShape(doc: Record<string, unknown>, currencies: Set<string>, invoiceTypes: Set<string>): SimulatorProblem[] {
  const p: SimulatorProblem[] = [];
  _str(doc, "business_id", "/business_id", p);
  _str(doc, "irn", "/irn", p);
  _date(doc, "issue_date", "/issue_date", p, true);
  _date(doc, "due_date", "/due_date", p, false);
  _code(doc, "invoice_type_code", invoiceTypes, p, true);
  _code(doc, "document_currency_code", currencies, p, true);
  _code(doc, "tax_currency_code", currencies, p, false);

  const supplier = _obj(doc, "accounting_supplier_party", "/accounting_supplier_party", p, true);
  if (supplier) _str(supplier, "tin", "/accounting_supplier_party/tin", p);
  _obj(doc, "accounting_customer_party", "/accounting_customer_party", p, false);

  const lines = doc.invoice_line;
  if (lines === undefined || lines === null) p.push({ pointer: "/invoice_line", code: "REQUIRED", message: "invoice_line is required" });
  else if (!Array.isArray(lines)) p.push({ pointer: "/invoice_line", code: "TYPE", message: "invoice_line must be an array" });
  else if (lines.length === 0) p.push({ pointer: "/invoice_line", code: "LENGTH", message: "invoice_line must have at least one line" });
  else {
    lines.forEach((line: unknown, i) => {
      const at = `/invoice_line/${i}`;
      if (!_isObject(line)) {
        p.push({ pointer: at, code: "TYPE", message: "an invoice line must be an object" });
        return;
      }
      _num(line, "invoiced_quantity", `${at}/invoiced_quantity`, p, "positive");
      _num(line, "line_extension_amount", `${at}/line_extension_amount`, p, "any");
      const item = _obj(line, "item", `${at}/item`, p, true);
      if (item) _str(item, "name", `${at}/item/name`, p);
      const price = _obj(line, "price", `${at}/price`, p, true);
      if (price) _num(price, "price_amount", `${at}/price/price_amount`, p, "non_negative");
    });
  }

  const total = _obj(doc, "legal_monetary_total", "/legal_monetary_total", p, true);
  if (total) {
    for (const k of ["line_extension_amount", "tax_exclusive_amount", "tax_inclusive_amount", "payable_amount"]) {
      _num(total, k, `/legal_monetary_total/${k}`, p, "any");
    }
  }
  return p;
}

function _str(o: Record<string, unknown>, key: string, pointer: string, p: SimulatorProblem[]): string | undefined {
  const val = o[key];
  if (val === undefined || val === null || val === "") {
    p.push({ pointer, code: "REQUIRED", message: `${key} is required` });
    return undefined;
  }
  if (typeof val !== "string") {
    p.push({ pointer, code: "TYPE", message: `${key} must be a string` });
    return undefined;
  }
  return val;
}

function _obj(o: Record<string, unknown>, key: string, pointer: string, p: SimulatorProblem[], required: boolean): Record<string, unknown> | undefined {
  const val = o[key];
  if (val === undefined || val === null) {
    if (required) p.push({ pointer, code: "REQUIRED", message: `${key} is required` });
    return undefined;
  }
  if (!_isObject(val)) {
    p.push({ pointer, code: "TYPE", message: `${key} must be an object` });
    return undefined;
  }
  return val;
}

function _num(o: Record<string, unknown>, key: string, pointer: string, p: SimulatorProblem[], range: "any" | "positive" | "non_negative"): void {
  const val = o[key];
  if (val === undefined || val === null) p.push({ pointer, code: "REQUIRED", message: `${key} is required` });
  else if (typeof val !== "number" || !Number.isFinite(val)) p.push({ pointer, code: "TYPE", message: `${key} must be a number` });
  else if (range === "positive" && val <= 0) p.push({ pointer, code: "RANGE", message: `${key} must be greater than 0` });
  else if (range === "non_negative" && val < 0) p.push({ pointer, code: "RANGE", message: `${key} must not be negative` });
}

function _date(o: Record<string, unknown>, key: string, pointer: string, p: SimulatorProblem[], required: boolean): void {
  const val = o[key];
  if (val === undefined || val === null) {
    if (required) p.push({ pointer, code: "REQUIRED", message: `${key} is required` });
    return;
  }
  const m = typeof val === "string" ? ISO_DATE.exec(val) : null;
  if (!m || !_isRealDate(Number(m[1]), Number(m[2]), Number(m[3]))) {
    p.push({ pointer, code: "FORMAT", message: `${key} must be a date YYYY-MM-DD` });
  }
}

function _code(o: Record<string, unknown>, key: string, allowed: Set<string>, p: SimulatorProblem[], required: boolean): void {
  const val = o[key];
  const pointer = `/${key}`;
  if (val === undefined || val === null || val === "") {
    if (required) p.push({ pointer, code: "REQUIRED", message: `${key} is required` });
    return;
  }
  if (typeof val !== "string") p.push({ pointer, code: "TYPE", message: `${key} must be a string` });
  else if (allowed.size > 0 && !allowed.has(val)) p.push({ pointer, code: "UNKNOWN_VALUE", message: `${key} is not a known code` });
}

function _codes(list: readonly unknown[] | undefined): Set<string> {
  const out = new Set<string>();
  for (const item of list ?? []) {
    if (_isObject(item) && typeof item.code === "string") out.add(item.code);
  }
  return out;
}

function _isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
