/**
 * The bench's gateway build, shared by the load server (bench/servers/gateway.ts) and the in-process
 * hot-path harness (bench/hot-path.ts): config/demo.json on the embedded in-memory stores, the
 * regulator's base URLs pointed at the bench upstream, limits far above the load, log level info in
 * JSON, and the bench plugin (`GET /bench/ping`: x-api-key, management quota, every stage).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { loadConfig } from "../../config/load.ts";
import type { Config } from "../../config/schema.ts";
import { composeGateway } from "../../boot/compose.ts";
import type { Gateway } from "../../core/create-gateway.ts";
import type { Logger } from "../../core/log.ts";
import { definePlugin } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import { plugins as defaultPlugins } from "../../plugins/index.ts";
import { STAGE_NAMES } from "../../core/stages/names.ts";
import { BENCH_BODY, BENCH_PATH, benchLimits } from "./common.ts";

export const benchPlugin = definePlugin({
  name: "bench",
  needs: ["coordination"],
  // "admission" is the only stage config may disable: requiring it keeps all ten stages on.
  stages: ["admission", "auth", "ip-allowlist", "quota"],
  setup: () => ({
    routes: [
    {
      method: "GET",
      path: BENCH_PATH,
      service: "gateway",
      auth: "apiKey",
      quota: "management",
      summary: "Bench: an authenticated GET through the full pipeline",
      responses: { 200: "A fixed JSON body" },
      handler: (ctx) => json(ctx, 200, BENCH_BODY),
    },
    ],
  }),
});

/**
 * config/demo.json for the bench: in-memory stores, `upstream` plays the regulator (TEST and LIVE),
 * limits far above the load; the request log on unless `requestLog: false` (the "off" rows), the
 * console on unless `console: false` (gateway-console-off).
 */
export function benchGatewayConfig(upstream: string | null, level: "info" | "silent" = "info", options: { requestLog?: boolean; console?: boolean } = {}): Config {
  const raw = JSON.parse(readFileSync(resolve("config/demo.json"), "utf8")) as Record<string, any>;
  raw.server = { ...raw.server, port: 0 };
  raw.storage = { driver: "memory" };
  raw.coordination = { driver: "memory" };
  raw.regulator = { ...raw.regulator, simulator: { enabled: false }, ...(upstream ? { baseUrls: { TEST: upstream, LIVE: upstream } } : {}) };
  raw.log = { level, format: "json" };
  raw.limits = benchLimits();
  raw.requestLog = { enabled: options.requestLog ?? true };
  if (options.console === false) raw.console = { ...raw.console, enabled: false };
  return loadConfig({ raw, env: {} });
}

/** The gateway of `config` with every plugin and the bench plugin; refuses a bench route that skips a stage. */
export async function composeBenchGateway(config: Config, log: Logger): Promise<Gateway> {
  const gateway = await composeGateway(config, { log, plugins: [...defaultPlugins, benchPlugin] });
  const match = gateway.routes.lookup("gateway", "GET", BENCH_PATH);
  if (gateway.pipeline.names.length !== STAGE_NAMES.length || match.kind !== "found" || match.route.skips.size > 0) {
    await gateway.close();
    throw new Error(`bench: the bench route does not run the full pipeline (stages: ${gateway.pipeline.names.join(", ")})`);
  }
  return gateway;
}
