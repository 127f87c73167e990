/**
 * Serving and stopping, and the HTTP edge.
 *
 * `serveGateway` runs Node's HTTP server with the gateway behind srvx's Node bridge
 * (`NodeRequest`, `sendNodeResponse`). The edge is everything Node's parser decides before a
 * request reaches the pipeline, answered in the contract's shape (the host's: problem+json, or the
 * collections envelope on collections hosts; the gateway's problem+json where no host is known)
 * with a request id:
 * - a request Node cannot parse (malformed request line or headers, headers over
 *   `server.maxHeaderBytes`, bad framing) → 400 GW_REQUEST_HEADER_INVALID (414 for a request line
 *   over `server.maxUriLength`); headers slower than `server.headerReadTimeoutMs` → 408;
 * - answers on one connection leave in request order (RFC 9112 §9.3.2): when a request that Node
 *   cannot parse follows requests already dispatched on the connection, its answer waits until
 *   their responses are done, then the connection closes. When the parse failure is inside the
 *   body of a dispatched request (the client half-closed mid-body, a malformed chunk), that
 *   request's own answer says so (GW_REQUEST_BODY_INCOMPLETE, pipeline/protocol.ts `failBody`)
 *   and the connection closes after it;
 * - a request target that is neither a path nor an http(s) URL, and CONNECT, are answered too;
 *   an unknown Expect is ignored (Node would answer a bare 417).
 * The requests in flight on a connection are counted with public events only: the server's
 * `request` and each response's `close`.
 *
 * `drain` is the shutdown path for SIGTERM/SIGINT: readiness turns not_ready and new requests get
 * 503 GW_GATEWAY_CAPACITY_EXCEEDED with Retry-After at once, every answer closing its connection;
 * after `drainDelayMs` (an edge without health checks stops reusing connections) the listener stops accepting
 * connections; in-flight requests get until the grace deadline; then remaining connections are
 * closed, workers stop, stores close and logs are flushed.
 */
import { randomUUID } from "node:crypto";
import { STATUS_CODES, createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { NodeRequest, sendNodeResponse } from "srvx/node";
import type { ServerRequest } from "srvx";
import { createRequestContext, type RequestContext } from "./context.ts";
import { CollectionsError, gwError, type GatewayError } from "./errors/gateway-error.ts";
import { CATALOG } from "./errors/catalog.ts";
import { renderError } from "./errors/render.ts";
import type { Gateway } from "./create-gateway.ts";
import { describeError, type Logger } from "./log.ts";
import { builtSize } from "./respond.ts";
import { resolveHostKind } from "./http/host.ts";
import { failBody } from "./http/body.ts";

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
  const edge = createEdge(gateway, options.log);
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
  // test/edge/ordering.test.ts.
  if (!("httpAllowHalfOpen" in node)) throw new Error("node:http no longer has httpAllowHalfOpen: review core/server.ts");
  (node as { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // An Expect other than 100-continue: served as if absent (RFC 9110 §10.1.1 allows it), rather
  // than Node's bare 417 without a request id.
  node.on("checkExpectation", edge.request);
  node.on("clientError", edge.clientError);
  node.on("connect", edge.connect);
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
      draining ??= (async () => {
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
      })();
      return draining;
    },
  };
}

/** The Node server handlers of the edge: requests, parser failures, CONNECT. */
export interface Edge {
  request(req: IncomingMessage, res: ServerResponse): void;
  clientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void;
  connect(req: IncomingMessage, socket: Duplex): void;
}

export function createEdge(gateway: Gateway, log: Logger): Edge {
  /**
   * srvx's Node bridge (its request wrapper and FastResponse writer), as srvx's own server uses it,
   * but quiet: a response that cannot be sent (the client is gone) is logged without a stack and
   * its connection closed; a failure before any byte was sent is still answered in the contract's
   * shape. A request the gateway answers synchronously (the in-process stores let most do) is sent
   * without a promise, as srvx's server does.
   */
  function dispatch(req: IncomingMessage, res: ServerResponse): void {
    let answer: Response | Promise<Response>;
    try {
      answer = gateway.app.fetch(new NodeRequest({ req, res }) as unknown as ServerRequest);
    } catch (e) {
      notSent(req, res, e);
      return;
    }
    if (answer instanceof Promise) answer.then((response) => send(req, res, response), (e: unknown) => notSent(req, res, e));
    else send(req, res, answer);
  }

  function send(req: IncomingMessage, res: ServerResponse, response: Response): void {
    // While draining, every answer closes its connection: the edge opens a new one elsewhere.
    if (gateway.runtime.isDraining()) res.shouldKeepAlive = false;
    try {
      const sending = _sendBuilt(res, response) ? undefined : sendNodeResponse(res, response);
      sending?.catch((e: unknown) => notSent(req, res, e));
    } catch (e) {
      notSent(req, res, e);
    }
  }

  function notSent(req: IncomingMessage, res: ServerResponse, e: unknown): void {
    log.warn("gateway_response_not_sent", { error: describeError(e), headersSent: res.headersSent });
    if (res.headersSent) res.destroy();
    else void _sendResponse(res, answer(req.headers.host ?? null, "/", req.method ?? null, gwError("GW_INTERNAL_ERROR"), null));
  }
  const { headerReadTimeoutMs, maxHeaderBytes, maxUriLength } = gateway.kit.config.server;
  const directory = gateway.kit.directory;

  /** Renders `error` in the shape of `hostHeader`'s service and logs the answer as one request. */
  function answer(hostHeader: string | null, path: string, method: string | null, error: GatewayError, parserError: string | null): Response {
    const ctx = _edgeContext(method ?? "", path);
    const { host, kind } = resolveHostKind(directory, hostHeader);
    ctx.host = host;
    ctx.hostKind = kind;
    ctx.service = kind === "collections" ? "collections" : "gateway";
    // The collections envelope of a request that could not be read keeps the catalog's status
    // (400, 408, 414), not the 422 of field validation.
    const rendered = renderError(
      ctx,
      ctx.service === "collections"
        ? new CollectionsError(CATALOG[error.code].status, error.info.detail ?? CATALOG[error.code].title, _fieldErrors(error))
        : error,
    );
    log.event("gateway_request_completed", {
      requestId: ctx.requestId,
      method,
      route: null,
      host,
      status: rendered.response.status,
      code: error.code,
      parserError,
    });
    return rendered.response;
  }

  return {
    request(req, res) {
      _track(req, res);
      const target = req.url ?? "";
      if (target.charCodeAt(0) === 0x2f || target === "*" || _isHttpUrl(target)) {
        dispatch(req, res);
        return;
      }
      // srvx would answer a bare 400 without a request id: answer in the contract's shape.
      const response = answer(
        req.headers.host ?? null,
        "/",
        req.method ?? null,
        gwError("GW_REQUEST_HEADER_INVALID", { detail: "The request target must be a path or an http(s) URL." }),
        null,
      );
      void _sendResponse(res, response);
    },

    clientError(err, duplex) {
      const socket = duplex as Socket & Tracked;
      if (socket[CONNECTION]?.failed) return; // answered (or answering) already; the connection is closing
      if (!_isParserFailure(err) || !socket.writable) {
        socket.destroy();
        return;
      }
      const conn = (socket[CONNECTION] ??= _newConnection());
      conn.failed = true;
      const last = conn.last;
      if (last && !last.complete) {
        // The failure is inside the body of the last dispatched request: that request answers
        // for itself (or already did), then the connection closes.
        if (conn.inFlight > 0) {
          failBody(last, err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? "timeout" : err.code === "HPE_INVALID_EOF_STATE" ? "incomplete" : "malformed");
          _whenIdle(conn, () => socket.destroySoon());
        } else socket.destroy();
        return;
      }
      // A request that could not be parsed, after any dispatched ones (whose host it shares).
      const raw = last ? null : _head(err.rawPacket);
      const hostHeader = last ? (last.headers.host ?? null) : _headerValue(raw, "host");
      const response = answer(hostHeader, _requestPath(raw) ?? "/", null, _parserError(err, raw), err.code ?? "unknown");
      _whenIdle(conn, () => void _writeRaw(socket, response));
    },

    connect(req, duplex) {
      const socket = duplex as Socket & Tracked;
      void (async () => {
        // The gateway is not a proxy: CONNECT is answered as any unsupported method is (405 with
        // the path's Allow list, or 404), after the canonical host's checks.
        const ctx = _connectContext(req);
        let code: string;
        let response: Response;
        try {
          await gateway.pipeline.run(ctx);
          throw gwError("GW_METHOD_NOT_ALLOWED", { detail: "CONNECT is not supported.", allow: "" });
        } catch (e) {
          const rendered = renderError(ctx, e);
          code = rendered.code;
          response = rendered.response;
        }
        log.event("gateway_request_completed", { requestId: ctx.requestId, method: "CONNECT", route: null, host: ctx.host, status: response.status, code });
        const conn = socket[CONNECTION];
        if (conn) _whenIdle(conn, () => void _writeRaw(socket, response));
        else await _writeRaw(socket, response);
      })();
    },
  };

  /** The request's parser error → the catalog error it is answered with. */
  function _parserError(err: NodeJS.ErrnoException, raw: string | null): GatewayError {
    switch (err.code) {
      case "ERR_HTTP_REQUEST_TIMEOUT":
        return gwError("GW_REQUEST_BODY_TIMEOUT", { detail: `The request headers did not arrive within ${headerReadTimeoutMs} ms.` });
      case "HPE_HEADER_OVERFLOW": {
        const lineEnd = raw?.indexOf("\n") ?? -1;
        if (raw !== null && (lineEnd < 0 || lineEnd > maxUriLength))
          return gwError("GW_REQUEST_URI_TOO_LONG", { detail: `Path and query must not exceed ${maxUriLength} characters.` });
        return gwError("GW_REQUEST_HEADER_INVALID", { detail: `The request line and headers must not exceed ${maxHeaderBytes} bytes.` });
      }
      case "HPE_INVALID_CONTENT_LENGTH":
      case "HPE_UNEXPECTED_CONTENT_LENGTH":
        return _framingError("Content-Length", "Content-Length must be one non-negative integer, and not sent with Transfer-Encoding.");
      case "HPE_INVALID_TRANSFER_ENCODING":
        return _framingError("Transfer-Encoding", "Transfer-Encoding must end in chunked, and not be sent with Content-Length.");
      case "HPE_INVALID_EOF_STATE":
        return gwError("GW_REQUEST_HEADER_INVALID", { detail: "The connection ended before the request was complete." });
      default:
        return gwError("GW_REQUEST_HEADER_INVALID", { detail: "The request could not be read: malformed request line or headers." });
    }
  }
}

// --- Internal helpers ---

/** What the edge knows of one connection: its dispatched requests whose responses are not done. */
interface Connection {
  inFlight: number;
  /** The request dispatched last (its body may still be arriving). */
  last: IncomingMessage | null;
  /** Runs once no response is in flight (an answer waiting its turn, or closing). */
  onIdle: (() => void) | null;
  /** A parse failure was handled; later ones on this connection are not answered again. */
  failed: boolean;
}

const CONNECTION = Symbol("gatehouse.connection");
type Tracked = { [CONNECTION]?: Connection };

function _newConnection(): Connection {
  return { inFlight: 0, last: null, onIdle: null, failed: false };
}

function _track(req: IncomingMessage, res: ServerResponse): Connection {
  const socket = req.socket as Socket & Tracked;
  const conn = (socket[CONNECTION] ??= _newConnection());
  conn.inFlight++;
  conn.last = req;
  (res as ServerResponse & Tracked)[CONNECTION] = conn;
  res.on("close", _responseClosed);
  return conn;
}

/** A response is done (sent, or its connection gone): one fewer in flight. Shared, no closure per request. */
function _responseClosed(this: ServerResponse & Tracked): void {
  const conn = this[CONNECTION]!;
  conn.inFlight--;
  if (conn.inFlight === 0 && conn.onIdle) {
    const run = conn.onIdle;
    conn.onIdle = null;
    run();
  }
}

function _whenIdle(conn: Connection, run: () => void): void {
  if (conn.inFlight === 0) run();
  else conn.onIdle = run;
}

function _isParserFailure(err: NodeJS.ErrnoException): boolean {
  return typeof err.code === "string" && (err.code.startsWith("HPE_") || err.code === "ERR_HTTP_REQUEST_TIMEOUT");
}

function _isHttpUrl(target: string): boolean {
  if (!URL.canParse(target)) return false;
  const url = new URL(target);
  return (url.protocol === "http:" || url.protocol === "https:") && url.host !== "";
}

function _framingError(field: string, detail: string): GatewayError {
  return gwError("GW_REQUEST_HEADER_INVALID", {
    detail: "The request's framing headers are invalid.",
    violations: [{ location: "header", field, code: "FORMAT", detail }],
  });
}

/** The first bytes of the packet Node could not parse, as text (headers are Latin-1). */
const HEAD_SCAN_BYTES = 64 * 1024;
function _head(packet: Buffer | undefined): string | null {
  return packet ? packet.toString("latin1", 0, Math.min(packet.length, HEAD_SCAN_BYTES)) : null;
}

/** A header's value in the first header block of raw request text, or null. */
function _headerValue(raw: string | null, name: string): string | null {
  if (raw === null) return null;
  const end = raw.search(/\r?\n\r?\n/);
  const m = new RegExp(`\\n${name}[ \\t]*:[ \\t]*([^\\r\\n]*)`, "i").exec(end < 0 ? raw : raw.slice(0, end));
  return m ? m[1]!.trim() : null;
}

/** The path of a request line that is at least that readable ("GET /x?y HTTP/1.1" → "/x"). */
function _requestPath(raw: string | null): string | null {
  const m = raw === null ? null : /^[!-~]{1,32} (\/[^?\s]{0,2048})/.exec(raw);
  return m ? m[1]! : null;
}

function _fieldErrors(error: GatewayError): Array<{ field: string; message: string }> {
  return (error.info.violations ?? []).map((v) => ({ field: v.field ?? v.location, message: v.detail }));
}

function _edgeContext(method: string, path: string, headers: Headers = new Headers(), req?: IncomingMessage): RequestContext {
  const shim = { method, headers, ip: req?.socket.remoteAddress, runtime: req ? { name: "node", node: { req } } : undefined };
  return createRequestContext(shim as unknown as ServerRequest, randomUUID(), { pathname: path, search: "" } as URL);
}

function _connectContext(req: IncomingMessage): RequestContext {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    try {
      headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    } catch {
      // a header value fetch cannot hold: not needed to answer
    }
  }
  const target = req.url ?? "";
  const path = target.startsWith("/") ? target.split("?")[0]! : target.slice(0, 2048);
  return _edgeContext("CONNECT", path, headers, req);
}

/**
 * A response built by core (core/respond.ts, the error renderer: srvx FastResponses whose body is a
 * string or bytes) is written as srvx's `sendNodeResponse` writes it, head then body, but ended
 * without the promise and `finish` listener that function adds per response. False for any other
 * response, which srvx sends.
 */
function _sendBuilt(res: ServerResponse, response: Response): boolean {
  if (builtSize(response) === undefined) return false;
  const { status, headers, body } = (response as Response & { _toNodeResponse(): NodeAnswer })._toNodeResponse();
  if (body != null && typeof body !== "string" && !(body instanceof Uint8Array)) {
    // Not what core builds; sent by srvx as a plain Response.
    void sendNodeResponse(res, new Response(body as BodyInit, { status, headers: _pairs(headers) }));
    return true;
  }
  if (!res.headersSent) res.writeHead(status, headers);
  if (body != null) res.write(body);
  res.end();
  return true;
}

interface NodeAnswer {
  status: number;
  headers: string[];
  body: unknown;
}

function _pairs(flat: readonly string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!]);
  return pairs;
}

/** An answer through the request's own response (the connection closes after it). */
async function _sendResponse(res: ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  const headers: Record<string, string> = { connection: "close" };
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  res.end(body);
}

/** An answer written straight to the socket, which then closes. */
async function _writeRaw(socket: Socket, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  let head = `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ""}\r\n`;
  response.headers.forEach((value, name) => (head += `${name}: ${value}\r\n`));
  socket.write(head + "connection: close\r\n\r\n");
  socket.end(body);
  socket.destroySoon();
}
