/**
 * Bench server "gateway": Gatehouse as `npm start` builds it (composeGateway, every plugin of
 * plugins/index.ts, serveGateway), from config/demo.json with:
 * - the embedded in-memory stores (SQLite in memory, in-process coordination);
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
 * - the request log on (flushed in batches into the in-memory store), off with `--request-log off`
 *   (the before/after rows of docs/bench.md "Request log").
 *
 *   node --import tsx bench/servers/gateway.ts --upstream http://127.0.0.1:<port> [--request-log off]
 */
import { createLogger } from "../../core/log.ts";
import { serveGateway } from "../../core/server.ts";
import { announce, argValue, closeOnSignal, upstreamArg } from "./common.ts";
import { benchGatewayConfig, composeBenchGateway } from "./gateway-app.ts";

const config = benchGatewayConfig(upstreamArg(), argValue("log") === "silent" ? "silent" : "info", { requestLog: argValue("request-log") !== "off" });
const log = createLogger({ level: config.log.level, format: "json" });
const gateway = await composeBenchGateway(config, log);
const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
announce(server.url);
closeOnSignal(() => server.drain("bench"));
