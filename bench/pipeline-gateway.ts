/**
 * The in-process bench gateway of bench/pipeline-cpu.ts: the real gateway with the bench plugin
 * (bench/servers/gateway-app.ts: one route that runs every pipeline stage) on the embedded
 * in-memory stores, a silent logger and limits far above any load, served on a free loopback port.
 */
import type { Gateway } from "../core/create-gateway.ts";
import { createLogger } from "../core/log.ts";
import { serveGateway } from "../core/server.ts";
import { benchGatewayConfig, composeBenchGateway } from "./servers/gateway-app.ts";

export { BENCH_PATH } from "./servers/common.ts";

export async function startBenchGateway(): Promise<{ gateway: Gateway; url: string; close(): Promise<void> }> {
  const log = createLogger({ level: "silent", sink: () => {} });
  const gateway = await composeBenchGateway(benchGatewayConfig(null, "silent"), log);
  const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
  return {
    gateway,
    url: server.url,
    async close() {
      await server.drain("bench");
    },
  };
}
