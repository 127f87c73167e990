/**
 * `npm start`: load and validate the config (an invalid one stops here, listing every problem),
 * start the demo regulator simulator when configured, open the ports, seed the tenant directory from
 * the config (`--sync`: make it match the file exactly), listen, and drain cleanly on SIGTERM/SIGINT
 * (exit 0).
 */
import { loadFixtures } from "../adapters/regulator/simulator/fixtures.ts";
import { startRegulatorSimulator, type RegulatorSimulator } from "../adapters/regulator/simulator/server.ts";
import { createLogger, describeError } from "../core/log.ts";
import { serveMetrics } from "../core/metrics.ts";
import { serveGateway } from "../core/server.ts";
import { readBannerDirectory, startupBanner, type BannerDirectory } from "./banner.ts";
import { composeGateway } from "./compose.ts";
import { exitOnStartupFailure, loadConfigOrExit, stopOnSignals } from "./process.ts";

const PROGRAM = "gatehouse";

async function main(): Promise<void> {
  const config = loadConfigOrExit(PROGRAM);
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
  // The banner advertises what the tenant directory holds (a key revoked since is not shown).
  const held: BannerDirectory | null = config.demo
    ? await readBannerDirectory(config, gateway.kit.ports.documentStore).catch((e: unknown) => {
        log.warn("startup_banner_directory_unreadable", { error: describeError(e) });
        return null;
      })
    : null;
  await log.flush(); // log lines leave in batches: the banner follows them
  process.stdout.write(startupBanner(config, server.url, simulator?.url ?? null, held ?? { accepts: () => false, modeOf: () => null }));
  stopOnSignals(PROGRAM, (signal) => server.drain(signal));
}

main().catch(exitOnStartupFailure(PROGRAM));
