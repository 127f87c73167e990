/**
 * Serving and stopping. `serveGateway` listens with srvx (Node adapter). `drain` is the shutdown
 * path for SIGTERM/SIGINT: readiness turns not_ready and new requests get 503
 * GW_GATEWAY_CAPACITY_EXCEEDED with Retry-After at once; the listener stops accepting connections;
 * in-flight requests get until the grace deadline; then remaining connections are closed, workers
 * stop, stores close and logs are flushed.
 */
import { randomUUID } from "node:crypto";
import type { Server as NodeServer } from "node:http";
import type { Duplex } from "node:stream";
import { createRequestContext } from "./context.ts";
import { gwError } from "./errors/gateway-error.ts";
import { renderError } from "./errors/render.ts";
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
  node?.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => _answerClientError(err, socket, options.log));
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

// --- Internal helpers ---

/**
 * Node's HTTP parser failed (a body shorter than its Content-Length when the client half-closes,
 * a malformed request line…). Node's default is a bare 400; answer in the contract's shape instead.
 */
async function _answerClientError(err: NodeJS.ErrnoException, socket: Duplex, log: Logger): Promise<void> {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // When a request was already dispatched on this socket, its own completion is logged by the
  // gateway (its body reader sees the abort); Node will not let that response out, so this answer
  // is what the client reads.
  const dispatched = Boolean((socket as Duplex & { _httpMessage?: unknown })._httpMessage);
  const code =
    err.code === "HPE_INVALID_EOF_STATE"
      ? "GW_REQUEST_BODY_INCOMPLETE"
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? "GW_REQUEST_BODY_TIMEOUT"
        : "GW_REQUEST_HEADER_INVALID"; // a malformed request line or headers (incl. overflow)
  const ctx = createRequestContext(new Request("http://gateway.invalid/"), randomUUID(), new URL("http://gateway.invalid/"));
  const detail = code === "GW_REQUEST_BODY_INCOMPLETE" ? "The connection ended before the whole body arrived." : "The request could not be read.";
  const { response } = renderError(ctx, gwError(code, { detail }));
  const body = await response.text();
  const head = [`HTTP/1.1 ${response.status} ${response.status === 408 ? "Request Timeout" : "Bad Request"}`];
  response.headers.forEach((value, name) => head.push(`${name}: ${value}`));
  head.push("connection: close");
  socket.end(head.join("\r\n") + "\r\n\r\n" + body);
  if (dispatched) return;
  log.event("gateway_request_completed", {
    requestId: ctx.requestId,
    route: null,
    status: response.status,
    code,
    parserError: err.code ?? "unknown",
  });
}
