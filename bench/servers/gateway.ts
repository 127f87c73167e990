/**
 * Bench server "gateway": Gatehouse as `npm start` builds it (composeGateway, every plugin of
 * plugins/index.ts, serveGateway), from config/demo.json with:
 * - the embedded in-memory stores (unstorage memory, in-process coordination);
 * - the regulator's TEST and LIVE base URLs pointed at the bench upstream, the simulator off: the
 *   relay scenario runs the real regulator client (pool, policy with its deadline and circuit, the
 *   `gateway_dependency_call` event);
 * - admission and quota limits far above the load (a bench of 429s measures nothing);
 * - log level `info` in JSON, as in production: one `gateway_request_completed` line per request
 *   (and one `gateway_dependency_call` per regulator call) on stdout, which the runner sends to a
 *   file and counts;
 * - plus the bench plugin: `GET /bench/ping` (x-api-key, management quota, no skipped stage), a
 *   route that runs every stage of the pipeline. The server refuses to start if it does not.
 *
 *   node --import tsx bench/servers/gateway.ts --upstream http://127.0.0.1:<port>
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { loadConfig } from "../../config/load.ts";
import { composeGateway } from "../../core/compose.ts";
import { createLogger } from "../../core/log.ts";
import { definePlugin } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import { serveGateway } from "../../core/server.ts";
import { plugins as defaultPlugins } from "../../plugins/index.ts";
import { STAGE_NAMES } from "../../pipeline/stage-names.ts";
import { announce, argValue, BENCH_BODY, BENCH_LIMIT, BENCH_PATH, closeOnSignal, upstreamArg } from "./common.ts";

const benchPlugin = definePlugin({
  name: "bench",
  needs: ["coordination"],
  // "admission" is the only stage config may disable: requiring it keeps all ten stages on.
  stages: ["admission", "auth", "ip-allowlist", "quota"],
  routes: () => [
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
});

/** config/demo.json for the bench (see the header); `upstream` plays the regulator. */
function benchGatewayConfig(upstream: string, level: "info" | "silent" = "info"): ReturnType<typeof loadConfig> {
  const raw = JSON.parse(readFileSync(resolve("config/demo.json"), "utf8")) as Record<string, any>;
  raw.server = { ...raw.server, port: 0 };
  raw.storage = { driver: "memory" };
  raw.coordination = { driver: "memory" };
  raw.regulator = { ...raw.regulator, simulator: { enabled: false }, baseUrls: { TEST: upstream, LIVE: upstream } };
  raw.log = { level, format: "json" };
  raw.limits = {
    admission: { perClient: BENCH_LIMIT, windowSeconds: 1 },
    quotas: {
      sign: { limit: BENCH_LIMIT, windowSeconds: 60 },
      management: { limit: BENCH_LIMIT, windowSeconds: 60 },
      default: { limit: BENCH_LIMIT, windowSeconds: 60 },
    },
  };
  return loadConfig({ raw, env: {} });
}

const config = benchGatewayConfig(upstreamArg(), argValue("log") === "silent" ? "silent" : "info");
const log = createLogger({ level: config.log.level, format: "json" });
const gateway = await composeGateway(config, { log, plugins: [...defaultPlugins, benchPlugin] });
const match = gateway.routes.lookup("gateway", "GET", BENCH_PATH);
if (gateway.pipeline.names.length !== STAGE_NAMES.length || match.kind !== "found" || match.route.skips.size > 0) {
  throw new Error(`bench: the bench route does not run the full pipeline (stages: ${gateway.pipeline.names.join(", ")})`);
}
const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
announce(server.url);
closeOnSignal(() => server.drain("bench"));
