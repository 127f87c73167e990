/**
 * `npm start`: load and validate the config (an invalid one stops here, listing every problem),
 * start the demo regulator simulator when configured, open the ports, seed the tenant directory from
 * the config (`--sync`: make it match the file exactly), listen, and drain cleanly on SIGTERM/SIGINT
 * (exit 0).
 */
import { loadFixtures } from "../adapters/regulator/simulator/fixtures.ts";
import { startRegulatorSimulator, type RegulatorSimulator } from "../adapters/regulator/simulator/server.ts";
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { composeGateway } from "./compose.ts";
import { createLogger, describeError } from "./log.ts";
import { serveMetrics } from "./metrics.ts";
import { BootError } from "./route-table.ts";
import { serveGateway } from "./server.ts";

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    process.stderr.write(`gatehouse: ${(e as Error).message}\n`);
    process.exit(1);
  }
  const log = createLogger({ level: config.log.level, format: config.log.format });

  let simulator: RegulatorSimulator | null = null;
  if (config.regulator.simulator.enabled) {
    const sim = config.regulator.simulator;
    simulator = await startRegulatorSimulator({
      host: sim.host,
      port: sim.port,
      fixtures: loadFixtures(sim.fixtures),
      credentials: { apiKey: config.regulator.apiKey, apiSecret: config.regulator.apiSecret },
    });
    log.event("regulator_simulator_started", { url: simulator.url });
  }

  // The demo simulator plays the regulator for both states unless config names real base URLs.
  const simulated = simulator ? { TEST: simulator.url, LIVE: simulator.url } : undefined;
  const gateway = await composeGateway(config, {
    log,
    regulatorBaseUrls: { ...simulated, ...config.regulator.baseUrls },
    // `npm start -- --sync`: the directory's store is made to match the config file exactly.
    syncDirectory: process.argv.slice(2).includes("--sync"),
  });
  const metrics = config.metrics.port === null ? null : await serveMetrics(gateway.kit.metrics, { host: config.metrics.host, port: config.metrics.port });
  if (metrics) log.event("metrics_listening", { url: metrics.url });
  const server = await serveGateway(gateway, {
    host: config.server.host,
    port: config.server.port,
    graceMs: config.server.shutdownGraceMs,
    drainDelayMs: config.server.drainDelayMs,
    log,
    extras: [...(simulator ? [simulator] : []), ...(metrics ? [metrics] : [])],
  });
  log.event("gateway_listening", { url: server.url, storage: config.storage.driver, coordination: config.coordination.driver });
  await log.flush(); // log lines leave in batches: the banner follows them
  process.stdout.write(_banner(config, server.url, simulator?.url ?? null));

  const stop = (signal: string) => {
    server.drain(signal).then(
      () => process.exit(0),
      (e) => {
        process.stderr.write(`gatehouse: shutdown failed: ${describeError(e).message}\n`);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

function _banner(config: Config, url: string, simulatorUrl: string | null): string {
  const port = new URL(url).port;
  const lines = [`Gatehouse listening on ${url}`];
  if (config.demo) {
    lines.push("Demo deployment (demo-only keys; never use them elsewhere):");
    for (const b of config.businesses) {
      for (const d of b.gateway?.domains ?? []) lines.push(`  invoice gateway  http://${d.host}:${port}  (${b.id}, ${d.mode})`);
      for (const k of b.gateway?.apiKeys ?? []) if (k.key) lines.push(`    x-api-key: ${k.key}  (${b.id}${k.ipWhitelisted.length ? `, allowlist ${k.ipWhitelisted.join(",")}` : ""})`);
    }
    lines.push(`  collections      ${config.collections.hosts.map((h) => `http://${h}:${port}`).join("  ")}`);
    for (const b of config.businesses)
      for (const k of b.collections?.apiKeys ?? []) if (k.key) lines.push(`    Authorization: Bearer ${k.key}  (${b.id})`);
    for (const k of config.operators.apiKeys) if (k.key) lines.push(`  operator         x-admin-api-key: ${k.key}`);
    if (simulatorUrl) lines.push(`  regulator simulator ${simulatorUrl}  (fixtures: ${config.regulator.simulator.fixtures})`);
  }
  return lines.join("\n") + "\n";
}

main().catch((e) => {
  if (e instanceof BootError) process.stderr.write(`gatehouse: ${e.message}\n`);
  else process.stderr.write(`gatehouse: startup failed: ${describeError(e).name}: ${describeError(e).message}\n`);
  process.exit(1);
});
