/**
 * `npm run worker`: the same config and composition as `npm start` (boot/compose.ts), without HTTP:
 * the background workers only (the Stored invoice processor, webhook delivery, the collections
 * workers, the health snapshot). Every worker claims its work through leases in the shared document
 * store, so a deployment runs N gateways + M workers (ARCHITECTURE.md §6).
 *
 * A worker needs a store shared with the gateways: the SQLite file with Redis coordination (one
 * host) or MongoDB + Redis (several hosts); it refuses to start otherwise (npm start already runs
 * every worker in its process).
 * SIGTERM / SIGINT: no new claims; running work finishes its current step or hands its invoice back
 * (lease released); then the ports close and the process exits 0.
 */
import { pathToFileURL } from "node:url";
import type { Config } from "../config/schema.ts";
import { composeGateway } from "./compose.ts";
import type { Gateway } from "../core/create-gateway.ts";
import { createLogger, type Logger } from "../core/log.ts";
import { serveMetrics } from "../core/metrics.ts";
import type { GatewayPlugin } from "../core/plugin.ts";
import { exitOnStartupFailure, loadConfigOrExit, stopOnSignals } from "./process.ts";

const PROGRAM = "gatehouse worker";

export interface WorkerProcess {
  gateway: Gateway;
  /** Stops every worker (running work finishes or is handed back) and closes the ports. Idempotent. */
  stop(reason: string): Promise<void>;
}

export async function startWorker(config: Config, options: { log: Logger; plugins?: readonly GatewayPlugin[] }): Promise<WorkerProcess> {
  const problem = workerStorageProblem(config);
  if (problem) throw new Error(problem);
  const sim = config.regulator.simulator;
  // A simulator enabled in this config is served by the gateway process (npm start) of the deployment.
  const simulated = sim.enabled ? { TEST: `http://${sim.host}:${sim.port}`, LIVE: `http://${sim.host}:${sim.port}` } : undefined;
  const gateway = await composeGateway(config, {
    log: options.log,
    ...(options.plugins ? { plugins: options.plugins } : {}),
    regulatorBaseUrls: { ...simulated, ...config.regulator.baseUrls },
  });
  await gateway.startWorkers();
  // Workers have no HTTP server: their metrics (processor, outbox, recovery, alerts) need the separate listener.
  const metrics = config.metrics.port === null ? null : await serveMetrics(gateway.kit.metrics, { host: config.metrics.host, port: config.metrics.port });
  if (metrics) options.log.event("metrics_listening", { url: metrics.url });
  let stopping: Promise<void> | null = null;
  return {
    gateway,
    stop(reason) {
      stopping ??= (async () => {
        const started = Date.now();
        options.log.event("worker_stopping", { reason });
        gateway.runtime.startDraining();
        await metrics?.close();
        await gateway.close();
        options.log.event("worker_stopped", { reason, durationMs: Date.now() - started });
        await options.log.flush();
      })();
      return stopping;
    },
  };
}

/**
 * Why this config cannot run a worker beside the gateways (null: it can). A worker shares the
 * gateways' store and coordination: MongoDB, or the SQLite file with Redis coordination (quotas,
 * leases and directory changes must reach every process). In memory, or with in-process
 * coordination, a store is one process's: npm start already runs the workers.
 */
export function workerStorageProblem(config: Config): string | null {
  const driver = config.storage.driver;
  if (driver === "mongodb") return null;
  if (driver === "memory") return `npm run worker needs a shared document store (storage.driver "mongodb", or the SQLite file with Redis coordination); "memory" is one process's and npm start already runs the workers`;
  if (config.coordination.driver !== "redis")
    return `npm run worker needs a shared document store (storage.driver "mongodb") or the SQLite file shared with coordination { "driver": "redis" }: with in-process coordination the file is one process's (quotas, leases and directory changes would not reach the others), and npm start already runs the workers`;
  return null;
}

async function main(): Promise<void> {
  const config = loadConfigOrExit(PROGRAM);
  const log = createLogger({ level: config.log.level, format: config.log.format });
  const worker = await startWorker(config, { log });
  log.event("worker_started", { storage: config.storage.driver, coordination: config.coordination.driver, storedProcessor: config.stored.processor.enabled });
  await log.flush(); // log lines leave in batches: the banner follows them
  process.stdout.write(
    `Gatehouse worker running (storage ${config.storage.driver}, coordination ${config.coordination.driver}; Stored processor ${config.stored.processor.enabled ? "on" : "off"}). SIGTERM stops it.\n`,
  );
  stopOnSignals(PROGRAM, (signal) => worker.stop(signal));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main().catch(exitOnStartupFailure(PROGRAM));
