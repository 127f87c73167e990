/**
 * The simulator's test-control API under `/__sim/` (no credentials; off with `controlApi: false`):
 *
 *   GET    /__sim/faults                   the active faults
 *   POST   /__sim/faults                   set one: `{ route, kind, ...options }` (faults.ts)
 *   DELETE /__sim/faults[/{route}|?route=] clear one route's fault, or all
 *   GET    /__sim/state                    signed and transmitted IRNs, party count, call counts, faults
 *   POST   /__sim/inbound                  push an invoice to a gateway's inbound receiver (inbound.ts)
 *   POST   /__sim/reset                    forget records, call counts and faults
 *
 * Answers are plain JSON (`{ ok, ... }`), not the regulator's envelope: this is the tests' API.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isFaultSpecError, parseFaultSpec } from "./faults.ts";
import type { FaultController } from "./faults.ts";
import { readBody, sendAnswer } from "./http-io.ts";
import { INBOUND_CONTROL_PATH, handleInboundPush } from "./inbound.ts";
import { SIMULATOR_ROUTES, decodeSegment, isSimulatorRoute } from "./router.ts";
import type { SimulatorRoute } from "./router.ts";
import type { SimulatorStore } from "./state.ts";
import type { SimulatorState } from "./types.ts";

export const CONTROL_PREFIX = "/__sim/";

/** What the control API reads and changes. */
export interface ControlContext {
  faults: FaultController;
  store: SimulatorStore;
  state: SimulatorState;
  /** The deployment's API secret (inbound deliveries are signed with it). */
  apiSecret: string;
  /** Forget records, call counts and faults. */
  reset(): void;
}

/** A request whose path starts with `/__sim/`: answer it. */
export async function handleControl(
  ctx: ControlContext,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  path: string,
  query: string,
): Promise<void> {
  const reply = (status: number, body: unknown) => sendAnswer(res, { status, body });
  if (path === FAULTS_PATH || path.startsWith(`${FAULTS_PATH}/`)) return _faults(ctx.faults, req, method, path, query, reply);
  if (path === "/__sim/state" && method === "GET") {
    const { state } = ctx;
    return reply(200, {
      signed: state.signedIrns(),
      transmitted: state.transmittedIrns(),
      parties: ctx.store.parties.size,
      calls: state.callCounts(),
      totalCalls: state.totalCalls(),
      faults: ctx.faults.list(),
    });
  }
  if (path === INBOUND_CONTROL_PATH) {
    const signedInvoice = (irn: string) => ctx.store.signed.get(irn)?.invoice;
    const pushed = await handleInboundPush(req, method, { secret: ctx.apiSecret, signedInvoice });
    return reply(pushed.status, pushed.body);
  }
  if (path === "/__sim/reset" && method === "POST") {
    ctx.reset();
    return reply(200, { ok: true });
  }
  return reply(404, { ok: false, error: "not_found" });
}

// --- Internal helpers ---

const FAULTS_PATH = "/__sim/faults";
/** The largest fault description accepted. */
const FAULT_BODY_LIMIT = 64 * 1024;

type Reply = (status: number, body: unknown) => void;

/** `/__sim/faults[/{route}]`: list (GET), set (POST) or clear (DELETE) faults. */
async function _faults(faults: FaultController, req: IncomingMessage, method: string, path: string, query: string, reply: Reply): Promise<void> {
  const named = path.length > FAULTS_PATH.length + 1 ? decodeSegment(path.slice(FAULTS_PATH.length + 1)) : undefined;
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
    const read = await readBody(req, FAULT_BODY_LIMIT);
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
