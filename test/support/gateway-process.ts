/**
 * A gateway process for multi-process tests: the production composition (composeGateway +
 * serveGateway) from a config file, with the test plugins mounted next to the real ones.
 * Prints `LISTENING <url>` when ready; drains and exits 0 on SIGTERM.
 *
 *   node --import tsx test/support/gateway-process.ts <config.json>
 *
 * env GATEHOUSE_TEST_SIGNING: JSON options of the signing plugin (e.g. `{"staleAfterMs":3000}`).
 */
import { loadConfig } from "../../config/load.ts";
import { composeGateway } from "../../boot/compose.ts";
import { createLogger } from "../../core/log.ts";
import { serveGateway } from "../../core/server.ts";
import { plugins } from "../../plugins/index.ts";
import { createSigningPlugin, type SigningOptions } from "../../plugins/signing/plugin.ts";
import { hello } from "../../docs/examples/hello/plugin.ts";
import { probePlugin } from "./probe-plugin.ts";

const config = loadConfig({ argv: ["--config", process.argv[2]!], env: {} });
const log = createLogger({ level: "warn" });
// GATEHOUSE_TEST_SIGNING: JSON SigningOptions (short stale/wait times for crash and outage tests).
const signingOptions = process.env.GATEHOUSE_TEST_SIGNING ? (JSON.parse(process.env.GATEHOUSE_TEST_SIGNING) as SigningOptions) : null;
const list = signingOptions ? plugins.map((p) => (p.name === "signing" ? createSigningPlugin(signingOptions) : p)) : plugins;
const gateway = await composeGateway(config, { log, plugins: [...list, probePlugin, hello] });
const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
process.stdout.write(`LISTENING ${server.url}\n`);
process.once("SIGTERM", () => void server.drain("SIGTERM").then(() => process.exit(0)));
