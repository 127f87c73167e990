/**
 * One request's flow after the HTTP edge: the compiled stages → the route's own checks → a check
 * that the domain's mode version has not moved since authorization → the handler; any thrown error
 * rendered once in the request's service shape; then, on every exit path, the finishers, the
 * request id, the route's metrics and one `gateway_request_completed` record. Each step may answer
 * synchronously (the in-process stores do) or with a promise; a request waits only where a step
 * really waits, and one that never waits is answered without a promise.
 */
import type { H3Event } from "h3";
import type { ServerRequest } from "srvx";
import { isDependencyUnavailableError } from "../adapters/ports.ts";
import { createRequestContext, type RequestContext } from "./context.ts";
import type { TenantDirectory } from "./directory.ts";
import { gwError } from "./errors/gateway-error.ts";
import { renderError } from "./errors/render.ts";
import { describeError, type Logger } from "./log.ts";
import type { GatewayMetrics, HistogramSeries } from "./metrics.ts";
import { prepareInput } from "./request-input.ts";
import type { RequestLogSink } from "./request-log/writer.ts";
import { builtSize } from "./respond.ts";
import type { CompiledRoute, RouteTable } from "./route-table.ts";
import type { Runtime } from "./runtime.ts";
import type { CompiledPipeline } from "./stages/compile.ts";
import { newRequestId } from "./request-id.ts";

export interface RequestFlowOptions {
  pipeline: CompiledPipeline;
  routes: RouteTable;
  directory: TenantDirectory;
  runtime: Runtime;
  log: Logger;
  metrics: GatewayMetrics;
  /** The request log's buffer (null: off); fed once per request, after the completion record. */
  requestLog: RequestLogSink | null;
  bodyTimeoutMs: number;
  checkJson: (text: string) => void;
}

/** What the flow needs per request, resolved once at startup. */
export interface RequestFlow extends RequestFlowOptions {
  record: (route: CompiledRoute | null, code: string | null, seconds: number) => void;
  completed: { event(values: unknown[]): void };
}

export function createRequestFlow(o: RequestFlowOptions): RequestFlow {
  return { ...o, record: _requestRecorder(o.metrics, o.routes), completed: o.log.shape("gateway_request_completed", COMPLETION_FIELDS, COMPLETION_REPEATING) };
}

export function dispatch(flow: RequestFlow, event: H3Event): Response | Promise<Response> {
  const ctx = createRequestContext(event.req as ServerRequest, newRequestId(), event.url);
  let answer: Response | Promise<Response>;
  try {
    const stages = flow.pipeline.run(ctx);
    answer = stages ? stages.then(() => _handle(flow, ctx)) : _handle(flow, ctx);
  } catch (e) {
    answer = fail(flow, ctx, e);
  }
  if (answer instanceof Promise) return answer.then((res) => _complete(flow, ctx, res), (e: unknown) => _complete(flow, ctx, fail(flow, ctx, e)));
  return _complete(flow, ctx, answer);
}

/** Renders `e` in the request's shape (and logs an unexpected one, sanitized). */
export function fail(flow: RequestFlow, ctx: RequestContext, e: unknown): Response {
  const rendered = renderError(ctx, _unavailableAsDeclared(ctx, e));
  ctx.errorCode = rendered.code;
  if (rendered.internal) flow.log.error("gateway_internal_error", { requestId: ctx.requestId, route: ctx.route?.id ?? null, error: describeError(e) });
  return rendered.response;
}

/** The one completion record of a request (and the one place per-request figures are taken). */
export function logCompletion(flow: RequestFlow, ctx: RequestContext, res: Response, size: number | undefined): void {
  const durationMs = performance.now() - ctx.startedAt;
  flow.record(ctx.route, ctx.errorCode, durationMs / 1000);
  // Epoch ms from the request's own clock readings (no further clock read on the request path).
  const endedAt = TIME_ORIGIN + ctx.startedAt + durationMs;
  flow.runtime.observeServices(ctx.errorCode, ctx.domain !== null, ctx.principal?.scheme ?? null, ctx.route?.decl.auth === "admin", res.status, endedAt);
  flow.completed.event([
    ctx.requestId,
    ctx.callerRequestId,
    ctx.method,
    ctx.route?.id ?? null,
    ctx.host,
    ctx.businessId,
    ctx.principal?.credentialId ?? null,
    ctx.state,
    ctx.mode,
    res.status,
    ctx.errorCode,
    Math.round(durationMs * 1000) / 1000,
    size ?? Number(res.headers.get("content-length") ?? 0),
  ]);
  if (flow.requestLog !== null) flow.requestLog.record(ctx, res.status, durationMs, endedAt);
}

// --- Internal helpers ---

/** The fields of `gateway_request_completed`, in order (the values of `logCompletion` follow it). */
const COMPLETION_FIELDS = [
  "requestId", "callerRequestId", "method", "route", "host", "businessId", "credentialId", "state", "mode", "status", "code", "durationMs", "responseSize",
] as const;
/** Its fields that take few values (their JSON is remembered by the logger). */
const COMPLETION_REPEATING = ["method", "route", "host", "businessId", "credentialId", "state", "mode", "code"];

/** performance.now() 0 as epoch milliseconds (read once: the getter is not free). */
const TIME_ORIGIN = performance.timeOrigin;

/** After the stages: the route's own checks, then the handler. */
function _handle(flow: RequestFlow, ctx: RequestContext): Response | Promise<Response> {
  const input = prepareInput(ctx, flow.bodyTimeoutMs, flow.checkJson);
  if (input) return input.then(() => _handler(flow, ctx));
  return _handler(flow, ctx);
}

function _handler(flow: RequestFlow, ctx: RequestContext): Response | Promise<Response> {
  if (ctx.domain !== null && !flow.directory.isCurrent(ctx.domain)) throw _approvalChanged();
  return ctx.route!.decl.handler(ctx);
}

/** Every exit path: finishers (capacity release), the request id, the completion record. */
function _complete(flow: RequestFlow, ctx: RequestContext, response: Response): Response {
  for (const finish of ctx.finishers) finish();
  // Responses from core/respond.ts and the error renderer carry the request id and their size
  // already; any other Response is given the request id here.
  const size = builtSize(response);
  const res = size === undefined ? _withRequestId(response, ctx.requestId) : response;
  logCompletion(flow, ctx, res, size);
  return res;
}

/**
 * The one metrics update of a request: its route's series, resolved at startup (by public code on
 * first use; codes are catalog constants, so the map stays small).
 */
function _requestRecorder(metrics: GatewayMetrics, routes: RouteTable): RequestFlow["record"] {
  const h = metrics.requests;
  const ok = new Map<CompiledRoute, HistogramSeries>();
  const failed = new Map<CompiledRoute | null, Map<string, HistogramSeries>>();
  for (const r of routes.routes()) ok.set(r, h.series(r.id, "OK"));
  return (route, code, seconds) => {
    if (code === null && route !== null) {
      let s = ok.get(route);
      if (s === undefined) ok.set(route, (s = h.series(route.id, "OK")));
      s.observe(seconds);
      return;
    }
    let byCode = failed.get(route);
    if (byCode === undefined) failed.set(route, (byCode = new Map()));
    const c = code ?? "OK";
    let s = byCode.get(c);
    if (s === undefined) byCode.set(c, (s = h.series(route?.id ?? "unmatched", c)));
    s.observe(seconds);
  };
}

/**
 * A dependency that could not answer, on a route that declares what to answer then: that catalog
 * code (503s carry their retry strategy). Anything else, and collections routes, unchanged.
 */
function _unavailableAsDeclared(ctx: RequestContext, e: unknown): unknown {
  const declared = ctx.route?.decl.unavailable;
  if (declared === undefined || !isDependencyUnavailableError(e)) return e;
  return gwError(declared.code, { detail: declared.detail, cause: e });
}

/** The domain's mode version moved (a mode change was approved) after this request was authorized. */
function _approvalChanged(): Error {
  return gwError("GW_DOMAIN_APPROVAL_STATE_CHANGED", {
    detail: "The domain's configuration changed after this request was authorized (a mode change was approved); nothing was done. Check the domain's mode, then send the request again.",
  });
}

function _withRequestId(res: Response, requestId: string): Response {
  if (res.headers.get("x-request-id") === requestId) return res;
  try {
    res.headers.set("x-request-id", requestId);
    return res;
  } catch {
    const copy = new Response(res.body, res);
    copy.headers.set("x-request-id", requestId);
    return copy;
  }
}
