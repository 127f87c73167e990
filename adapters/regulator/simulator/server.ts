/**
 * The regulator simulator: a standalone `node:http` server that answers like the regulator's MBS
 * e-invoicing API, with fixtures from a file and per-route fault injection. Tests, the demo and the
 * bench reach "the regulator" through it, over real HTTP.
 *
 * It answers in the real shapes (docs/regulator-simulator.md has the table, with sources):
 * - success `{ code, data }` with HTTP status = code;
 * - errors `{ code, data: null, message: "error has occurred", error: { id, handler, details?,
 *   public_message } }`: `id` a fresh UUID per request, `details` free text, often absent;
 * - a deployment key/secret it cannot validate: HTTP 400, public_message "unable to validate api key";
 * - an unknown path (or method): the router's un-enveloped 404 `{ code: 404, data: null, message }`;
 * - `GET /api` (health, no credentials): `{ "healthy": true }`; resource lists need no credentials.
 * There is one mode, realistic: everything the real API enforces is enforced (the documented invoice
 * schema, invoice type and currency codes, payment statuses incl. CANCELED, the transmit webhook
 * precondition). Tests change behaviour only through fixtures and named faults.
 *
 * This file is the HTTP entry: it matches a call (router.ts), counts it, applies a fault (faults.ts
 * decides what a fault does, this file performs it) or has the call processed (routes/dispatch.ts,
 * over the store of state.ts, answering in the shapes of views.ts), and serves `/__sim/` (control.ts).
 */
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CONTROL_PREFIX, handleControl } from "./control.ts";
import type { ControlContext } from "./control.ts";
import { createFaultController, renderFault } from "./faults.ts";
import type { Fault, FaultAction, FaultController } from "./faults.ts";
import { parseFixtures } from "./fixtures.ts";
import { isGone, sendAnswer } from "./http-io.ts";
import { matchRoute } from "./router.ts";
import { processCall } from "./routes/dispatch.ts";
import type { Call, RouteContext } from "./routes/dispatch.ts";
import { createSimulatorStore, createStateView, resetRecords, zeroCalls } from "./state.ts";
import type { RegulatorSimulatorOptions, SimulatorState } from "./types.ts";
import { NO_ROUTE, dataOf, internalError } from "./views.ts";

export type { PartyRecord, PaymentStatus, RegulatorSimulatorOptions, SignedInvoiceRecord, SimulatorState } from "./types.ts";

// ---------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------

export interface RegulatorSimulatorHandler {
  /** The request listener (for `http.createServer`). */
  handle(req: IncomingMessage, res: ServerResponse): void;
  faults: FaultController;
  state: SimulatorState;
  /** Forget signed/transmitted invoices, parties, call counts and faults. */
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
  const store = createSimulatorStore(fixtures);
  const faults = createFaultController();
  const state = createStateView(store);
  const reset = (): void => {
    resetRecords(store);
    faults.clear();
  };
  const rt: Runtime = {
    routes: { store, apiKey, apiSecret, bodyLimit: options.bodyLimitBytes ?? 2 * 1024 * 1024 },
    control: (options.controlApi ?? true) ? { faults, store, state, apiSecret, reset } : null,
    faults,
    log: options.log,
    timers: new Set(),
    held: new Set(),
  };
  return {
    handle: function handle(req, res) {
      _handle(rt, req, res);
    },
    faults,
    state,
    reset,
    resetCalls() {
      store.calls = zeroCalls();
    },
    dispose() {
      for (const t of rt.timers) clearTimeout(t);
      rt.timers.clear();
      for (const res of rt.held) res.destroy();
      rt.held.clear();
    },
  };
}

// --- Internal helpers ---

/** What a handler keeps between calls. */
interface Runtime {
  routes: RouteContext;
  /** null when the control API is off (then `/__sim/` paths are no route). */
  control: ControlContext | null;
  faults: FaultController;
  log: RegulatorSimulatorOptions["log"];
  /** Pending latency timers (cleared by dispose). */
  timers: Set<NodeJS.Timeout>;
  /** Responses held by a timeout fault (destroyed by dispose). */
  held: Set<ServerResponse>;
}

function _handle(rt: Runtime, req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? "" : url.slice(q + 1);
  const method = req.method ?? "GET";

  if (rt.control !== null && path.startsWith(CONTROL_PREFIX)) {
    void handleControl(rt.control, req, res, method, path, query);
    return;
  }
  const m = matchRoute(method, path);
  if (m === null) {
    // The real router: the same un-enveloped 404 for an unknown path and an unserved method.
    sendAnswer(res, NO_ROUTE);
    return;
  }
  rt.routes.store.calls[m.route] += 1;
  const call: Call = { req, route: m.route, param: m.param, by: m.by, query };
  const fault = rt.faults.take(m.route);
  if (rt.log) _logWhenClosed(rt.log, res, m.route, method, fault);
  if (fault === undefined) {
    const answer = processCall(rt.routes, call);
    if (answer instanceof Promise) void answer.then((a) => sendAnswer(res, a), () => sendAnswer(res, internalError(m.route)));
    else sendAnswer(res, answer);
    return;
  }
  void _serveWithFault(rt, res, call, fault).catch(() => sendAnswer(res, internalError(m.route)));
}

/** One "regulator_sim_request" event when the response closes. */
function _logWhenClosed(log: NonNullable<RegulatorSimulatorOptions["log"]>, res: ServerResponse, route: string, method: string, fault: Fault | undefined): void {
  const started = performance.now();
  res.once("close", () =>
    log("regulator_sim_request", {
      route,
      method,
      status: res.headersSent ? res.statusCode : null,
      fault: fault?.kind ?? null,
      ms: Math.round(performance.now() - started),
    }),
  );
}

/** Answer a faulted call: the fault instead of processing, or (afterProcessing) after it. */
async function _serveWithFault(rt: Runtime, res: ServerResponse, call: Call, fault: Fault): Promise<void> {
  if (fault.afterProcessing !== true) {
    const action = renderFault(fault, { route: call.route });
    if (action.type !== "delay") return _perform(rt, call.req, res, action);
    await _delay(rt, action.ms);
    if (isGone(res)) return;
    return sendAnswer(res, await processCall(rt.routes, call));
  }
  const answer = await processCall(rt.routes, call);
  const action = renderFault(fault, { route: call.route, processedData: dataOf(answer) });
  if (action.type !== "delay") return _perform(rt, call.req, res, action);
  await _delay(rt, action.ms);
  if (!isGone(res)) sendAnswer(res, answer);
}

function _perform(rt: Runtime, req: IncomingMessage, res: ServerResponse, action: Exclude<FaultAction, { type: "delay" }>): void {
  switch (action.type) {
    case "hold":
      rt.held.add(res);
      res.once("close", () => rt.held.delete(res));
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
      if (isGone(res)) return;
      res.writeHead(action.status, { "cache-control": "private", ...action.headers, "content-length": Buffer.byteLength(action.body) });
      res.end(action.body);
  }
}

function _delay(rt: Runtime, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      rt.timers.delete(t);
      resolve();
    }, ms);
    rt.timers.add(t);
  });
}
