/**
 * A gateway process for multi-process tests: the production composition (composeGateway +
 * serveGateway) from a config file, with the test plugins mounted next to the real ones.
 * Prints `LISTENING <url>` when ready; drains and exits 0 on SIGTERM.
 *
 *   tsx test/support/gateway-process.ts <config.json>
 */
import { loadConfig } from "../../config/load.ts";
import { composeGateway } from "../../core/compose.ts";
import { createLogger } from "../../core/log.ts";
import { serveGateway } from "../../core/server.ts";
import { plugins } from "../../plugins/index.ts";
import { hello } from "../../docs/examples/hello/plugin.ts";
import { probePlugin } from "./probe-plugin.ts";

const config = loadConfig({ argv: ["--config", process.argv[2]!], env: {} });
const log = createLogger({ level: "warn" });
const gateway = await composeGateway(config, { log, plugins: [...plugins, probePlugin, hello] });
const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
process.stdout.write(`LISTENING ${server.url}\n`);
process.once("SIGTERM", () => void server.drain("SIGTERM").then(() => process.exit(0)));
