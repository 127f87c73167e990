/**
 * Bench server "gateway-console-off": the bench server "gateway" (bench/servers/gateway.ts) with the
 * operator console disabled (`console.enabled: false`), measured in the same run, so the ping and
 * relay rows of both show what the console adds to the merchant request path.
 *
 *   node --import tsx bench/servers/gateway-console-off.ts --upstream http://127.0.0.1:<port>
 */
import { createLogger } from "../../core/log.ts";
import { serveGateway } from "../../core/server.ts";
import { announce, argValue, closeOnSignal, upstreamArg } from "./common.ts";
import { benchGatewayConfig, composeBenchGateway } from "./gateway-app.ts";

const config = benchGatewayConfig(upstreamArg(), argValue("log") === "silent" ? "silent" : "info", { console: false });
const log = createLogger({ level: config.log.level, format: "json" });
const gateway = await composeBenchGateway(config, log);
if (gateway.routes.lookup("gateway", "GET", "/console").kind === "found") throw new Error("bench: the console is still routed with console.enabled false");
const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
announce(server.url);
closeOnSignal(() => server.drain("bench"));
