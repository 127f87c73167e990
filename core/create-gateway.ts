/**
 * createGateway: the only wiring of the core. Checks the plugins' declarations at boot, builds the
 * route table, the OpenAPI document and the compiled pipeline, and returns an h3 app whose one
 * handler runs a request through: stages → the route's own checks (headers, body, query,
 * params) → a check that the domain's mode version has not moved since authorization → handler,
 * rendering any thrown error in the request's service shape and writing one
 * `gateway_request_completed` event per request.
 */
import { randomUUID } from "node:crypto";
import { H3Core, type H3CoreConfig, type H3Event } from "h3";
import type { ServerRequest } from "srvx";
import type { Config } from "../config/schema.ts";
import { isDependencyUnavailableError, type DependencyHealth } from "../adapters/ports.ts";
import { createRequestContext, type RequestContext } from "./context.ts";
import type { TenantDirectory } from "./directory.ts";
import { gwError } from "./errors/gateway-error.ts";
import { renderError } from "./errors/render.ts";
import { describeError, type Logger } from "./log.ts";
import { createGatewayMetrics, type GatewayMetrics, type HistogramSeries } from "./metrics.ts";
import { buildOpenApi } from "./openapi.ts";
import { builtSize } from "./respond.ts";
import type { GatewayPlugin, PluginKit, Ports, Worker } from "./plugin.ts";
import { NO_OFFERS, setUpPlugins } from "./plugin-setup.ts";
import { BootError, buildRouteTable, type CompiledRoute, type RouteTable } from "./route-table.ts";
import { Runtime, createStatusReports } from "./runtime.ts";
import { createJsonLimitCheck, idempotencyKey, rejectServerManagedFields, rejectServerManagedParams, validateInput } from "./validation.ts";
import { readBody } from "./http/body.ts";
import { compilePipeline, stageListProblems, type CompiledPipeline } from "./stages/compile.ts";
import type { Stage } from "./stages/define.ts";
import type { StageName } from "./stages/names.ts";

import { VERSION } from "./version.ts";

/** The fields of `gateway_request_completed`, in order (the values of `_logCompletion` follow it). */
const COMPLETION_FIELDS = [
  "requestId", "callerRequestId", "method", "route", "host", "businessId", "credentialId", "state", "mode", "status", "code", "durationMs", "responseSize",
] as const;
/** Its fields that take few values (their JSON is remembered by the logger). */
const COMPLETION_REPEATING = ["method", "route", "host", "businessId", "credentialId", "state", "mode", "code"];

/** performance.now() 0 as epoch milliseconds (read once: the getter is not free). */
const TIME_ORIGIN = performance.timeOrigin;

export interface GatewayOptions {
  config: Config;
  /** The ordered stage list (pipeline/stages.ts), compiled into the request loop. */
  stages: readonly Stage[];
  ports: Ports;
  plugins: readonly GatewayPlugin[];
  log: Logger;
  /** Every dependency's circuit, read by the health plugin. */
  policies: DependencyHealth;
  /** The tenant directory (core/directory.ts openDirectory). */
  directory: TenantDirectory;
  /** Background work of the ports themselves (webhook delivery), started and stopped with the plugins'. */
  workers?: readonly Worker[];
  /** Prometheus metrics (core/metrics.ts); one registry per gateway. */
  metrics?: GatewayMetrics;
  now?: () => number;
}

export interface Gateway {
  readonly app: H3Core;
  readonly fetch: (req: Request) => Promise<Response>;
  readonly routes: RouteTable;
  readonly pipeline: CompiledPipeline;
  readonly runtime: Runtime;
  readonly kit: PluginKit;
  startWorkers(): Promise<void>;
  /** Stops workers and closes the ports. */
  close(): Promise<void>;
}

export function createGateway(options: GatewayOptions): Gateway {
  const { config, ports, plugins, log, policies } = options;
  const now = options.now ?? Date.now;
  const { directory } = options;
  const runtime = new Runtime();
  const metrics = options.metrics ?? createGatewayMetrics();
  const kit: PluginKit = { config, ports, directory, dependencyHealth: policies, log, runtime, reports: createStatusReports(), metrics, offers: NO_OFFERS };
  const disabled = config.pipeline.disable as readonly StageName[];

  // Boot checks: every problem of every plugin is collected, then reported at once.
  const problems: string[] = stageListProblems(options.stages);
  const { entries, workers: pluginWorkers } = setUpPlugins(plugins, kit, disabled, problems);
  const workers: Worker[] = [...(options.workers ?? []), ...pluginWorkers];

  let openapi: string | null = null;
  const corePlugin: GatewayPlugin = {
    name: "core",
    setup: () => ({ routes: [
      {
        method: "GET",
        path: "/openapi.json",
        service: "gateway",
        hosts: "any",
        auth: "none",
        skip: ["admission", "capacity-guard", "ip-allowlist", "quota", "mode"],
        summary: "The OpenAPI 3.1 document of every route, derived from the plugin declarations",
        handler: (ctx) => {
          openapi ??= JSON.stringify(buildOpenApi(routes.routes(), VERSION));
          return new Response(openapi, {
            headers: {
              "content-type": "application/json",
              "content-length": String(Buffer.byteLength(openapi)),
              "x-request-id": ctx.requestId,
              "cache-control": "public, max-age=60",
            },
          });
        },
      },
    ] }),
  };
  entries.push({ plugin: corePlugin, routes: corePlugin.setup(kit).routes });
  let routes: RouteTable;
  try {
    routes = buildRouteTable(config, entries);
  } catch (e) {
    if (e instanceof BootError) throw new BootError([...problems, ...e.problems]);
    throw e;
  }
  if (problems.length > 0) throw new BootError(problems);
  const pipeline = compilePipeline(
    options.stages,
    { config, directory, routes, coordination: ports.coordination, runtime, log, now, alerts: ports.alerts ?? null, metrics },
    disabled,
  );
  const recordRequest = _requestRecorder(metrics, routes);
  const completed = log.shape("gateway_request_completed", COMPLETION_FIELDS, COMPLETION_REPEATING);
  const bodyTimeout = config.server.bodyReadTimeoutMs;
  const checkJson = createJsonLimitCheck(config.limits.json);

  /**
   * One request: stages → the route's own checks → handler → completion. Each step may answer
   * synchronously (the in-process stores do) or with a promise; the request only waits where a
   * step really waits, and a request that never waits is answered without a promise.
   */
  function dispatch(event: H3Event): Response | Promise<Response> {
    const ctx = createRequestContext(event.req as ServerRequest, randomUUID(), event.url);
    let answer: Response | Promise<Response>;
    try {
      const stages = pipeline.run(ctx);
      answer = stages ? stages.then(() => _handle(ctx)) : _handle(ctx);
    } catch (e) {
      answer = _fail(ctx, e);
    }
    if (answer instanceof Promise) return answer.then((res) => _complete(ctx, res), (e: unknown) => _complete(ctx, _fail(ctx, e)));
    return _complete(ctx, answer);
  }

  /** After the stages: the route's own checks, the approval check, the handler. */
  function _handle(ctx: RequestContext): Response | Promise<Response> {
    const input = _prepareInput(ctx, bodyTimeout, checkJson);
    if (input) return input.then(() => _handler(ctx));
    return _handler(ctx);
  }

  function _handler(ctx: RequestContext): Response | Promise<Response> {
    if (ctx.domain !== null && !directory.isCurrent(ctx.domain)) throw _approvalChanged();
    return ctx.route!.decl.handler(ctx);
  }

  /** Every exit path: finishers (capacity release), the request id, the completion record. */
  function _complete(ctx: RequestContext, response: Response): Response {
    for (const finish of ctx.finishers) finish();
    // Responses from core/respond.ts and the error renderer carry the request id and their size
    // already; any other Response is given the request id here.
    const size = builtSize(response);
    const res = size === undefined ? _withRequestId(response, ctx.requestId) : response;
    _logCompletion(ctx, res, size);
    return res;
  }

  function _fail(ctx: RequestContext, e: unknown): Response {
    const rendered = renderError(ctx, _unavailableAsDeclared(ctx, e));
    ctx.errorCode = rendered.code;
    if (rendered.internal)
      log.error("gateway_internal_error", { requestId: ctx.requestId, route: ctx.route?.id ?? null, error: describeError(e) });
    return rendered.response;
  }

  /** The one completion record of a request (and the one place per-request figures are taken). */
  function _logCompletion(ctx: RequestContext, res: Response, size: number | undefined): void {
    const durationMs = performance.now() - ctx.startedAt;
    recordRequest(ctx.route, ctx.errorCode, durationMs / 1000);
    // Epoch ms from the request's own clock readings (no further clock read on the request path).
    const endedAt = TIME_ORIGIN + ctx.startedAt + durationMs;
    runtime.observeServices(ctx.errorCode, ctx.domain !== null, ctx.principal?.scheme ?? null, ctx.route?.decl.auth === "admin", res.status, endedAt);
    completed.event([
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
  }

  const app = new _GatewayApp(dispatch, {
    allowMalformedURL: true,
    onError: (error, event) => {
      // Reached only if something fails outside dispatch (h3 internals): still the contract's shape.
      const ctx = createRequestContext(event.req as ServerRequest, randomUUID(), event.url);
      const res = _fail(ctx, error);
      _logCompletion(ctx, res, builtSize(res));
      return res;
    },
  });

  return {
    app,
    fetch: async (req) => app.fetch(req),
    routes,
    pipeline,
    runtime,
    kit,
    async startWorkers() {
      for (const w of workers) await w.start();
      runtime.markReady();
    },
    async close() {
      for (const w of workers.toReversed()) {
        try {
          await w.stop();
        } catch (e) {
          log.error("gateway_worker_stop_failed", { worker: w.name, error: describeError(e) });
        }
      }
      await directory.close().catch((e) => log.error("gateway_directory_close_failed", { error: describeError(e) }));
      const closable = Object.values(ports) as Array<{ close?: () => Promise<void> } | undefined>;
      await Promise.allSettled(closable.map((port) => port?.close?.()));
    },
  };
}

// --- Internal helpers ---

/**
 * The h3 app of the gateway: every request goes to the dispatcher, which routes it itself (the
 * route stage). h3's core without its router and middleware layer: no route lookup that always
 * misses and no `next` closure per request.
 */
class _GatewayApp extends H3Core {
  readonly #dispatch: (event: H3Event) => Response | Promise<Response>;

  constructor(dispatch: (event: H3Event) => Response | Promise<Response>, config: H3CoreConfig) {
    super(config);
    this.#dispatch = dispatch;
  }

  override handler(event: H3Event): Response | Promise<Response> {
    return this.#dispatch(event);
  }
}

const UTF8 = new TextDecoder();

/**
 * The route's own checks, after the pipeline: server-managed fields in headers and query, the
 * idempotency key, params, query, then the body: read (limit, deadline, completeness), its JSON
 * shape checked (depth, members) before anything parses it, parsed, server-managed body fields,
 * schema.
 */
function _prepareInput(ctx: RequestContext, bodyTimeoutMs: number, checkJson: (text: string) => void): Promise<void> | undefined {
  const route = ctx.route!;
  const d = route.decl;
  const serverFields = d.rejectServerFields ?? d.service === "gateway";
  if (serverFields) rejectServerManagedParams(ctx);
  if (d.idempotent) ctx.idempotencyKey = idempotencyKey(ctx, d.idempotent === true);
  if (d.schemas?.params) ctx.params = validateInput(d.schemas.params, ctx.params, "path") as Record<string, string>;
  if (d.schemas?.query) {
    const query: Record<string, string> = {};
    for (const [k, value] of new URLSearchParams(ctx.search)) if (!(k in query)) query[k] = value;
    ctx.query = validateInput(d.schemas.query, query, "query") as Record<string, string>;
  }
  if (d.method === "GET" || d.method === "DELETE") return;
  return _readInputBody(ctx, bodyTimeoutMs, checkJson, serverFields);
}

/** The body: read (limit, deadline, completeness), its JSON shape checked, parsed, server-managed fields, schema. */
async function _readInputBody(ctx: RequestContext, bodyTimeoutMs: number, checkJson: (text: string) => void, serverFields: boolean): Promise<void> {
  const route = ctx.route!;
  const d = route.decl;
  const bytes = await readBody(ctx, route.bodyLimit, bodyTimeoutMs);
  ctx.rawBody = bytes;
  let body: unknown = undefined;
  if (bytes.byteLength > 0) {
    const text = UTF8.decode(bytes);
    const type = (ctx.req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type === "application/x-www-form-urlencoded") body = Object.fromEntries(new URLSearchParams(text));
    else {
      checkJson(text);
      try {
        body = JSON.parse(text);
      } catch {
        throw gwError("GW_REQUEST_INVALID_JSON", { detail: "The body is not valid JSON." });
      }
    }
  }
  if (serverFields) rejectServerManagedFields(body);
  ctx.body = d.schemas?.body ? validateInput(d.schemas.body, body, "body") : body;
}

/**
 * The one metrics update of a request: its route's series, resolved at startup (by public code on
 * first use; codes are catalog constants, so the map stays small).
 */
function _requestRecorder(metrics: GatewayMetrics, routes: RouteTable): (route: CompiledRoute | null, code: string | null, seconds: number) => void {
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
