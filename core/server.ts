/**
 * Serving and stopping. `serveGateway` listens with srvx (Node adapter). `drain` is the shutdown
 * path for SIGTERM/SIGINT: readiness turns not_ready and new requests get 503
 * GW_GATEWAY_CAPACITY_EXCEEDED with Retry-After at once; the listener stops accepting connections;
 * in-flight requests get until the grace deadline; then remaining connections are closed, workers
 * stop, stores close and logs are flushed.
 */
import type { Server as NodeServer } from "node:http";
import { serve, type Server } from "srvx";
import type { Gateway } from "./create-gateway.ts";
import type { Logger } from "./log.ts";

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** Drains and closes everything; resolves when done. Idempotent. */
  drain(reason: string): Promise<{ drained: boolean; remaining: number }>;
}

export interface ServeOptions {
  host: string;
  port: number;
  graceMs: number;
  log: Logger;
  /** Closed after the gateway (the demo's regulator simulator). */
  extras?: Array<{ close(): Promise<void> }>;
}

export async function serveGateway(gateway: Gateway, options: ServeOptions): Promise<RunningServer> {
  const server: Server = serve({
    fetch: gateway.fetch,
    hostname: options.host,
    port: options.port,
    silent: true,
    gracefulShutdown: false,
    node: { keepAliveTimeout: 5_000, requestTimeout: 60_000 },
  });
  await server.ready();
  const node = server.node?.server as NodeServer | undefined;
  const address = node?.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`;
  await gateway.startWorkers();

  let draining: Promise<{ drained: boolean; remaining: number }> | null = null;
  return {
    url,
    port,
    drain(reason) {
      draining ??= (async () => {
        const started = Date.now();
        options.log.event("gateway_draining", { reason, inFlight: gateway.runtime.inFlight().total, graceMs: options.graceMs });
        gateway.runtime.startDraining();
        const closed = new Promise<void>((resolve) => (node ? node.close(() => resolve()) : resolve()));
        node?.closeIdleConnections();
        const drained = await gateway.runtime.waitIdle(options.graceMs);
        const remaining = gateway.runtime.inFlight().total;
        // The last responses may still be on their way out: give connections a moment to finish
        // (the server closes each one as it goes idle), then cut whatever is left.
        const flushMs = drained ? Math.min(1_000, Math.max(0, options.graceMs - (Date.now() - started))) : 0;
        await Promise.race([closed, new Promise((r) => setTimeout(r, flushMs).unref())]);
        node?.closeAllConnections();
        await gateway.close();
        for (const extra of options.extras ?? []) await extra.close().catch(() => {});
        options.log.event("gateway_stopped", { reason, drained, remaining, durationMs: Date.now() - started });
        await options.log.flush();
        return { drained, remaining };
      })();
      return draining;
    },
  };
}
