/**
 * createGateway: the only wiring of the core. Sets the plugins up (checking their declarations at
 * boot, every problem reported at once), builds the route table and the compiled pipeline, and
 * returns an h3 app whose one handler runs each request through the request flow
 * (core/request-flow.ts).
 */
import { H3Core, type H3CoreConfig, type H3Event } from "h3";
import type { ServerRequest } from "srvx";
import type { DependencyHealth } from "../adapters/ports.ts";
import type { Config } from "../config/schema.ts";
import { createRequestContext } from "./context.ts";
import type { TenantDirectory } from "./directory.ts";
import { describeError, type Logger } from "./log.ts";
import { createGatewayMetrics, type GatewayMetrics } from "./metrics.ts";
import { openApiRoute } from "./openapi-route.ts";
import type { GatewayPlugin, PluginKit, Ports, Worker } from "./plugin.ts";
import { NO_OFFERS, setUpPlugins } from "./plugin-setup.ts";
import { createRequestFlow, dispatch, fail, logCompletion } from "./request-flow.ts";
import { createRequestLogWriter, type RequestLogWriter } from "./request-log/writer.ts";
import { builtSize } from "./respond.ts";
import { BootError, buildRouteTable, type RouteTable } from "./route-table.ts";
import { Runtime, createStatusReports } from "./runtime.ts";
import { compilePipeline, stageListProblems, type CompiledPipeline } from "./stages/compile.ts";
import type { Stage } from "./stages/define.ts";
import type { StageName } from "./stages/names.ts";
import { createJsonLimitCheck } from "./validation.ts";
import { newRequestId } from "./request-id.ts";

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
  /** The request log's writer (core/request-log/writer.ts); null when config turns it off. */
  readonly requestLog: RequestLogWriter | null;
  startWorkers(): Promise<void>;
  /** Stops workers and closes the ports. */
  close(): Promise<void>;
}

export function createGateway(options: GatewayOptions): Gateway {
  const { config, ports, plugins, log, directory } = options;
  const runtime = new Runtime();
  const metrics = options.metrics ?? createGatewayMetrics();
  const kit: PluginKit = { config, ports, directory, dependencyHealth: options.policies, log, runtime, reports: createStatusReports(), metrics, offers: NO_OFFERS };
  const disabled = config.pipeline.disable as readonly StageName[];

  // Boot checks: every problem of every plugin is collected, then reported at once.
  const problems: string[] = stageListProblems(options.stages);
  const { entries, workers: pluginWorkers } = setUpPlugins(plugins, kit, disabled, problems);
  const requestLog = config.requestLog.enabled ? createRequestLogWriter({ store: ports.documentStore, config: config.requestLog, metrics, log }) : null;
  // First to start, last to stop: its final flush sees every request the other workers' stop let finish.
  const workers: Worker[] = [...(requestLog ? [requestLog.worker] : []), ...(options.workers ?? []), ...pluginWorkers];
  entries.push({ plugin: CORE_PLUGIN, routes: [openApiRoute(() => routes)] });
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
    { config, directory, routes, coordination: ports.coordination, runtime, log, now: options.now ?? Date.now, alerts: ports.alerts ?? null, metrics },
    disabled,
  );
  const flow = createRequestFlow({
    pipeline,
    routes,
    directory,
    runtime,
    log,
    metrics,
    requestLog,
    bodyTimeoutMs: config.server.bodyReadTimeoutMs,
    checkJson: createJsonLimitCheck(config.limits.json),
  });
  const app = new _GatewayApp((event) => dispatch(flow, event), {
    allowMalformedURL: true,
    onError: (error, event) => {
      // Reached only if something fails outside dispatch (h3 internals): still the contract's shape.
      const ctx = createRequestContext(event.req as ServerRequest, newRequestId(), event.url);
      const res = fail(flow, ctx, error);
      logCompletion(flow, ctx, res, builtSize(res));
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
    requestLog,
    async startWorkers() {
      for (const w of workers) await w.start();
      runtime.markReady();
    },
    close: () => _close(workers, directory, ports, log),
  };
}

// --- Internal helpers ---

/** The core's own routes (the OpenAPI document) are declared under this name. */
const CORE_PLUGIN: GatewayPlugin = { name: "core", setup: () => ({ routes: [] }) };

/** Workers stop in reverse order, then the directory and the ports close. */
async function _close(workers: readonly Worker[], directory: TenantDirectory, ports: Ports, log: Logger): Promise<void> {
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
}

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
