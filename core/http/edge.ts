/**
 * The HTTP edge: the Node server handlers that take a request to the gateway, and answer what
 * Node's parser decides before a request reaches the pipeline, in the contract's shape (the host's:
 * problem+json, or the collections envelope on collections hosts; the gateway's problem+json where
 * no host is known) with a request id:
 * - a request Node cannot parse (malformed request line or headers, headers over
 *   `server.maxHeaderBytes`, bad framing) → 400 GW_REQUEST_HEADER_INVALID (414 for a request line
 *   over `server.maxUriLength`); headers slower than `server.headerReadTimeoutMs` → 408
 *   (core/http/parser-errors.ts);
 * - answers on one connection leave in request order (RFC 9112 §9.3.2, core/http/connections.ts):
 *   when a request that Node cannot parse follows requests already dispatched on the connection,
 *   its answer waits until their responses are done, then the connection closes. When the parse
 *   failure is inside the body of a dispatched request (the client half-closed mid-body, a
 *   malformed chunk), that request's own answer says so (GW_REQUEST_BODY_INCOMPLETE,
 *   core/http/body.ts `failBody`) and the connection closes after it;
 * - a request target that is neither a path nor an http(s) URL, and CONNECT, are answered too;
 *   an unknown Expect is ignored (Node would answer a bare 417);
 * - an answer given before the request's body was read (401, 404, 405, 413, 415, …) closes its
 *   connection (`Connection: close`) instead of leaving Node to drain a body nobody wants, which a
 *   slow client could stretch to Node's 60 s request deadline.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { NodeRequest, sendNodeResponse } from "srvx/node";
import type { ServerRequest } from "srvx";
import { createRequestContext, type RequestContext } from "../context.ts";
import type { Gateway } from "../create-gateway.ts";
import type { TenantDirectory } from "../directory.ts";
import { CATALOG } from "../errors/catalog.ts";
import { CollectionsError, gwError, type GatewayError } from "../errors/gateway-error.ts";
import { renderError } from "../errors/render.ts";
import { describeError, type Logger } from "../log.ts";
import { failBody } from "./body.ts";
import { connectionOf, openConnection, trackRequest, whenIdle, type TrackedSocket } from "./connections.ts";
import { resolveHostKind } from "./host.ts";
import { isParserFailure, parserError, rawHead, rawHeaderValue, rawRequestPath, type ParserLimits } from "./parser-errors.ts";
import { sendBuilt, sendClosing, writeRaw } from "./write.ts";
import { newRequestId } from "../request-id.ts";

/** The Node server handlers of the edge: requests, parser failures, CONNECT. */
export interface Edge {
  request(req: IncomingMessage, res: ServerResponse): void;
  clientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void;
  connect(req: IncomingMessage, socket: Duplex): void;
}

export function createEdge(gateway: Gateway, log: Logger): Edge {
  const e: _Edge = { gateway, log, directory: gateway.kit.directory, limits: gateway.kit.config.server };
  return {
    request: (req, res) => _request(e, req, res),
    clientError: (err, duplex) => _clientError(e, err, duplex),
    connect: (req, duplex) => _connect(e, req, duplex),
  };
}

// --- Internal helpers ---

interface _Edge {
  gateway: Gateway;
  log: Logger;
  directory: TenantDirectory;
  limits: ParserLimits;
}

function _request(e: _Edge, req: IncomingMessage, res: ServerResponse): void {
  trackRequest(req, res);
  const target = req.url ?? "";
  if (target.charCodeAt(0) === 0x2f || target === "*" || _isHttpUrl(target)) {
    _dispatch(e, req, res);
    return;
  }
  // srvx would answer a bare 400 without a request id: answer in the contract's shape.
  const response = _answer(
    e,
    req.headers.host ?? null,
    "/",
    req.method ?? null,
    gwError("GW_REQUEST_HEADER_INVALID", { detail: "The request target must be a path or an http(s) URL." }),
    null,
  );
  void sendClosing(res, response);
}

/**
 * srvx's Node bridge (its request wrapper and FastResponse writer), as srvx's own server uses it,
 * but quiet: a response that cannot be sent (the client is gone) is logged without a stack and
 * its connection closed; a failure before any byte was sent is still answered in the contract's
 * shape. A request the gateway answers synchronously (the in-process stores let most do) is sent
 * without a promise, as srvx's server does.
 */
function _dispatch(e: _Edge, req: IncomingMessage, res: ServerResponse): void {
  let answer: Response | Promise<Response>;
  try {
    answer = e.gateway.app.fetch(new NodeRequest({ req, res }) as unknown as ServerRequest);
  } catch (err) {
    _notSent(e, req, res, err);
    return;
  }
  if (answer instanceof Promise) answer.then((response) => _send(e, req, res, response), (err: unknown) => _notSent(e, req, res, err));
  else _send(e, req, res, answer);
}

function _send(e: _Edge, req: IncomingMessage, res: ServerResponse, response: Response): void {
  // While draining, every answer closes its connection: the edge opens a new one elsewhere. So does
  // an answer to a request whose body is still unread.
  if (e.gateway.runtime.isDraining() || _bodyUnread(req)) res.shouldKeepAlive = false;
  try {
    const sending = sendBuilt(res, response) ? undefined : sendNodeResponse(res, response);
    sending?.catch((err: unknown) => _notSent(e, req, res, err));
  } catch (err) {
    _notSent(e, req, res, err);
  }
}

function _notSent(e: _Edge, req: IncomingMessage, res: ServerResponse, err: unknown): void {
  e.log.warn("gateway_response_not_sent", { error: describeError(err), headersSent: res.headersSent });
  if (res.headersSent) res.destroy();
  else void sendClosing(res, _answer(e, req.headers.host ?? null, "/", req.method ?? null, gwError("GW_INTERNAL_ERROR"), null));
}

/** Renders `error` in the shape of `hostHeader`'s service and logs the answer as one request. */
function _answer(e: _Edge, hostHeader: string | null, path: string, method: string | null, error: GatewayError, parserErr: string | null): Response {
  const ctx = _edgeContext(method ?? "", path);
  const { host, kind } = resolveHostKind(e.directory, hostHeader);
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
  e.log.event("gateway_request_completed", {
    requestId: ctx.requestId,
    method,
    route: null,
    host,
    status: rendered.response.status,
    code: error.code,
    parserError: parserErr,
  });
  return rendered.response;
}

function _clientError(e: _Edge, err: NodeJS.ErrnoException & { rawPacket?: Buffer }, duplex: Duplex): void {
  const socket = duplex as TrackedSocket;
  if (connectionOf(socket)?.failed) return; // answered (or answering) already; the connection is closing
  if (!isParserFailure(err) || !socket.writable) {
    socket.destroy();
    return;
  }
  const conn = openConnection(socket);
  conn.failed = true;
  const last = conn.last;
  if (last && !last.complete) {
    // The failure is inside the body of the last dispatched request: that request answers
    // for itself (or already did), then the connection closes.
    if (conn.inFlight > 0) {
      failBody(last, err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? "timeout" : err.code === "HPE_INVALID_EOF_STATE" ? "incomplete" : "malformed");
      whenIdle(conn, () => socket.destroySoon());
    } else socket.destroy();
    return;
  }
  // A request that could not be parsed, after any dispatched ones (whose host it shares).
  const raw = last ? null : rawHead(err.rawPacket);
  const hostHeader = last ? (last.headers.host ?? null) : rawHeaderValue(raw, "host");
  const response = _answer(e, hostHeader, rawRequestPath(raw) ?? "/", null, parserError(err, raw, e.limits), err.code ?? "unknown");
  whenIdle(conn, () => void writeRaw(socket, response));
}

/**
 * The gateway is not a proxy: CONNECT is answered as any unsupported method is (405 with the
 * path's Allow list, or 404), after the canonical host's checks.
 */
function _connect(e: _Edge, req: IncomingMessage, duplex: Duplex): void {
  const socket = duplex as TrackedSocket;
  void (async () => {
    const ctx = _connectContext(req);
    let code: string;
    let response: Response;
    try {
      await e.gateway.pipeline.run(ctx);
      throw gwError("GW_METHOD_NOT_ALLOWED", { detail: "CONNECT is not supported.", allow: "" });
    } catch (err) {
      const rendered = renderError(ctx, err);
      code = rendered.code;
      response = rendered.response;
    }
    e.log.event("gateway_request_completed", { requestId: ctx.requestId, method: "CONNECT", route: null, host: ctx.host, status: response.status, code });
    const conn = connectionOf(socket);
    if (conn) whenIdle(conn, () => void writeRaw(socket, response));
    else await writeRaw(socket, response);
  })();
}

/**
 * The request announced a body nobody started reading: the answer came before it. `_consuming` is
 * Node's own mark of a message whose body was read (it is what decides, when the answer ends,
 * whether Node drains the rest itself).
 */
function _bodyUnread(req: IncomingMessage): boolean {
  if (req.complete || (req as IncomingMessage & { _consuming?: boolean })._consuming === true) return false;
  const length = req.headers["content-length"];
  return (length !== undefined && length !== "0") || req.headers["transfer-encoding"] !== undefined;
}

function _isHttpUrl(target: string): boolean {
  if (!URL.canParse(target)) return false;
  const url = new URL(target);
  return (url.protocol === "http:" || url.protocol === "https:") && url.host !== "";
}

function _fieldErrors(error: GatewayError): Array<{ field: string; message: string }> {
  return (error.info.violations ?? []).map((v) => ({ field: v.field ?? v.location, message: v.detail }));
}

function _edgeContext(method: string, path: string, headers: Headers = new Headers(), req?: IncomingMessage): RequestContext {
  const shim = { method, headers, ip: req?.socket.remoteAddress, runtime: req ? { name: "node", node: { req } } : undefined };
  return createRequestContext(shim as unknown as ServerRequest, newRequestId(), { pathname: path, search: "" } as URL);
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
