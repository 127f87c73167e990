/**
 * Serving and stopping.
 *
 * `serveGateway` runs Node's HTTP server with the gateway behind srvx's Node bridge, through the
 * HTTP edge (core/http/edge.ts: parser failures, answer order per connection, CONNECT, raw writes).
 *
 * `drain` is the shutdown path for SIGTERM/SIGINT: readiness turns not_ready and new requests get
 * 503 GW_GATEWAY_CAPACITY_EXCEEDED with Retry-After at once, every answer closing its connection;
 * after `drainDelayMs` (an edge without health checks stops reusing connections) the listener stops accepting
 * connections; in-flight requests get until the grace deadline; then remaining connections are
 * closed, workers stop, stores close and logs are flushed.
 */
import { createServer, type Server } from "node:http";
import type { Gateway } from "./create-gateway.ts";
import { createEdge } from "./http/edge.ts";
import type { Logger } from "./log.ts";

export { createEdge, type Edge } from "./http/edge.ts";

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
  /**
   * Before the listener closes, how long it keeps answering every request 503 (Retry-After,
   * `Connection: close`): an edge without active health checks (nginx) stops reusing its idle
   * connections to this process instead of racing their close. Default 0.
   */
  drainDelayMs?: number;
  log: Logger;
  /** Closed after the gateway (the demo's regulator simulator). */
  extras?: Array<{ close(): Promise<void> }>;
}

/** How long an idle keep-alive connection stays open. */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** Node's whole-request deadline never undercuts the header and body deadlines. */
const MIN_REQUEST_TIMEOUT_MS = 60_000;

export async function serveGateway(gateway: Gateway, options: ServeOptions): Promise<RunningServer> {
  const node = _createNodeServer(gateway, options.log);
  await new Promise<void>((resolve, reject) => {
    node.once("error", reject);
    node.listen(options.port, options.host, () => {
      node.off("error", reject);
      resolve();
    });
  });
  const address = node.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`;
  await gateway.startWorkers();

  let draining: Promise<{ drained: boolean; remaining: number }> | null = null;
  return {
    url,
    port,
    drain(reason) {
      draining ??= _drain(node, gateway, options, reason);
      return draining;
    },
  };
}

// --- Internal helpers ---

/** Node's HTTP server with the edge's handlers and the limits of config `server`. */
function _createNodeServer(gateway: Gateway, log: Logger): Server {
  const edge = createEdge(gateway, log);
  const limits = gateway.kit.config.server;
  const node = createServer(
    {
      headersTimeout: limits.headerReadTimeoutMs,
      requestTimeout: Math.max(MIN_REQUEST_TIMEOUT_MS, limits.headerReadTimeoutMs + limits.bodyReadTimeoutMs),
      // Node checks the deadlines on this interval (default 30 s): a fraction of the header deadline.
      connectionsCheckingInterval: Math.min(1_000, Math.max(25, Math.floor(limits.headerReadTimeoutMs / 4))),
      maxHeaderSize: limits.maxHeaderBytes,
      // Checked by the canonical-host stage, so the 400 carries the contract's shape and a request id.
      requireHostHeader: false,
    },
    edge.request,
  );
  node.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // A client may half-close (FIN) once its request is sent. Node's default then ends the
  // connection at once, and the answer of a request still running (a sign already debited) is
  // lost: keep the write side open until the last response is out (Node then closes). The switch
  // is a long-standing but undocumented server property: checked here, and covered by
  // test/core/http/ordering.test.ts.
  if (!("httpAllowHalfOpen" in node)) throw new Error("node:http no longer has httpAllowHalfOpen: review core/server.ts");
  (node as { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // An Expect other than 100-continue: served as if absent (RFC 9110 §10.1.1 allows it), rather
  // than Node's bare 417 without a request id.
  node.on("checkExpectation", edge.request);
  node.on("clientError", edge.clientError);
  node.on("connect", edge.connect);
  return node;
}

async function _drain(node: Server, gateway: Gateway, options: ServeOptions, reason: string): Promise<{ drained: boolean; remaining: number }> {
  const started = Date.now();
  options.log.event("gateway_draining", { reason, inFlight: gateway.runtime.inFlight().total, graceMs: options.graceMs });
  gateway.runtime.startDraining();
  if (options.drainDelayMs) await new Promise((r) => setTimeout(r, options.drainDelayMs));
  const closed = new Promise<void>((resolve) => node.close(() => resolve()));
  node.closeIdleConnections();
  const drained = await gateway.runtime.waitIdle(options.graceMs);
  const remaining = gateway.runtime.inFlight().total;
  // The last responses may still be on their way out: give connections a moment to finish
  // (the server closes each one as it goes idle), then cut whatever is left.
  const flushMs = drained ? Math.min(1_000, Math.max(0, options.graceMs - (Date.now() - started))) : 0;
  await Promise.race([closed, new Promise((r) => setTimeout(r, flushMs).unref())]);
  node.closeAllConnections();
  await gateway.close();
  for (const extra of options.extras ?? []) await extra.close().catch(() => {});
  options.log.event("gateway_stopped", { reason, drained, remaining, durationMs: Date.now() - started });
  await options.log.flush();
  return { drained, remaining };
}
