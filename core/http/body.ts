/**
 * The request body reader of the core: reads a whole body with the route's size limit (413), a
 * read deadline (408 GW_REQUEST_BODY_TIMEOUT) and completeness (400 GW_REQUEST_BODY_INCOMPLETE),
 * and the edge's way to end a body the HTTP parser could not finish (`failBody`).
 */
import type { IncomingMessage } from "node:http";
import { finished } from "node:stream";
import type { RequestContext } from "../context.ts";
import { gwError } from "../errors/gateway-error.ts";

export type BodyFailure = "incomplete" | "malformed" | "timeout";
const BODY_FAILURE = Symbol("gatehouse.bodyFailure");

/**
 * Ends the body of a dispatched request whose message the HTTP parser could not finish (the
 * connection ended mid-body, a malformed chunk, the request deadline): `readBody` then answers
 * GW_REQUEST_BODY_INCOMPLETE (or GW_REQUEST_BODY_TIMEOUT) in the request's own shape, as its
 * response in request order, instead of waiting for bytes that will never come.
 */
export function failBody(message: IncomingMessage, reason: BodyFailure): void {
  if (message.complete || message.readableEnded) return;
  (message as FailedMessage)[BODY_FAILURE] = reason;
  // Ended but incomplete, Node's auto-destroy of the message would destroy the connection and the
  // answer with it: the message counts as complete, and `readBody` reads the failure mark instead.
  message.complete = true;
  message.push(null);
}

type FailedMessage = IncomingMessage & { [BODY_FAILURE]?: BodyFailure };

/** True when the request carries (or announces) a body. */
export function hasBody(ctx: RequestContext): boolean {
  const length = ctx.req.headers.get("content-length");
  if (length !== null) return length !== "0";
  if (ctx.req.headers.has("transfer-encoding")) return true;
  // On the wire, HTTP/1.1 without either header has no body. In-process requests (app.fetch)
  // carry no framing headers, so their body stream decides.
  return ctx.req.runtime?.node === undefined && ctx.req.body !== null;
}

/**
 * Reads the whole body with a size limit and a read deadline. Returns the bytes (empty when the
 * request has none).
 *
 * On the wire (srvx's Node bridge) the body is read from Node's IncomingMessage itself, not through
 * the web stream srvx would build for `ctx.req.body` (`Readable.toWeb`: a ReadableStream, a copy of
 * every chunk and a promise per read, ~5 % of the gateway's CPU per sign, docs/bench.md). A body the
 * parser already finished (most: it arrives with its headers) is taken from the message's buffer at
 * once. The outcomes are the stream's, case for case: over the limit → 413 (the message destroyed,
 * as cancelling the stream did), the deadline → 408 (destroyed), the message failing or closing
 * before its end → 400 incomplete, then the `failBody` mark and the Content-Length check. Requests
 * without a Node message (`gateway.fetch`), or whose message someone already started reading, are
 * read through the stream.
 */
export function readBody(ctx: RequestContext, limit: number, timeoutMs: number): Promise<Uint8Array> {
  // The gateway serves HTTP/1.1 only (core/server.ts): the message is an IncomingMessage.
  const message = ctx.req.runtime?.node?.req as IncomingMessage | undefined;
  if (message === undefined || message.readableFlowing !== null) return _readStream(ctx, limit, timeoutMs);
  // srvx gives GET and HEAD no body stream.
  if (message.method === "GET" || message.method === "HEAD" || !hasBody(ctx)) return Promise.resolve(new Uint8Array(0));
  return _readMessage(ctx, message, limit, timeoutMs, true);
}

/**
 * `message`'s body: from its buffer when every byte of it is there, else as it arrives. Every byte
 * is there when the parser has finished the message (a `failBody` end too), or when the buffer holds
 * the declared Content-Length (the parser hands over no more, and marks the message complete a turn
 * later). When the pipeline reaches here synchronously from the server's `request` event, the parser
 * has not yet parsed the body bytes that came in the same packet as the headers; it does before this
 * turn's microtasks run, so the buffer is looked at once more after them (`mayWait`).
 */
function _readMessage(ctx: RequestContext, message: IncomingMessage, limit: number, timeoutMs: number, mayWait: boolean): Promise<Uint8Array> {
  if (_sourceFinished(message)) return Promise.reject(_incomplete());
  const declared = ctx.req.headers.get("content-length");
  if (message.complete || (declared !== null && message.readableLength >= Number(declared))) {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (let chunk: Buffer | null; (chunk = message.read() as Buffer | null) !== null; ) {
      size += chunk.byteLength;
      chunks.push(chunk);
    }
    if (size > limit) {
      _abandon(message);
      return Promise.reject(_tooLarge(limit));
    }
    // The end of the message still to come flows through, as it did through the stream.
    if (!message.readableEnded) message.resume();
    try {
      return Promise.resolve(_complete(ctx, chunks, size));
    } catch (e) {
      return Promise.reject(e);
    }
  }
  if (mayWait) return Promise.resolve().then(() => _readMessage(ctx, message, limit, timeoutMs, false));
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let settled = false;
    const settle = (error: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      message.off("data", onData);
      cleanup();
      if (error) reject(error);
      else {
        try {
          resolve(_complete(ctx, chunks, size));
        } catch (e) {
          reject(e);
        }
      }
    };
    const timer = setTimeout(() => {
      _abandon(message);
      settle(_timedOut(timeoutMs));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size > limit) {
        _abandon(message);
        settle(_tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const cleanup = finished(message, (error) => settle(error ? _incomplete() : null));
    message.on("data", onData);
  });
}

/** The body through srvx's web stream (in-process requests, or a message already being read). */
async function _readStream(ctx: RequestContext, limit: number, timeoutMs: number): Promise<Uint8Array> {
  const stream = ctx.req.body;
  if (!stream || !hasBody(ctx)) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    reader.cancel().catch(() => {});
  }, timeoutMs);
  try {
    for (;;) {
      let step: ReadableStreamReadResult<Uint8Array>;
      try {
        step = await reader.read();
      } catch {
        if (timedOut) throw _timedOut(timeoutMs);
        throw _incomplete();
      }
      if (step.done) break;
      size += step.value.byteLength;
      if (size > limit) {
        reader.cancel().catch(() => {});
        throw _tooLarge(limit);
      }
      chunks.push(step.value);
    }
  } finally {
    clearTimeout(timer);
  }
  if (timedOut) throw _timedOut(timeoutMs);
  return _complete(ctx, chunks, size);
}

/**
 * The bytes of a body read to its end: refused when the server ended it early (`failBody`: what
 * arrived is a prefix, never a body to act on) or when it differs from its Content-Length.
 */
function _complete(ctx: RequestContext, chunks: Uint8Array[], size: number): Uint8Array {
  const failure = (ctx.req.runtime?.node?.req as FailedMessage | undefined)?.[BODY_FAILURE];
  if (failure === "timeout") throw gwError("GW_REQUEST_BODY_TIMEOUT", { detail: "The body did not arrive in time." });
  if (failure)
    throw gwError("GW_REQUEST_BODY_INCOMPLETE", {
      detail: failure === "malformed" ? "The body's framing is malformed; it could not be read." : "The connection ended before the whole body arrived.",
    });
  const declared = ctx.req.headers.get("content-length");
  if (declared !== null && size !== Number(declared))
    throw gwError("GW_REQUEST_BODY_INCOMPLETE", { detail: "The body is shorter than its Content-Length." });
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

/**
 * Stops reading a body, as cancelling srvx's stream did (Node's stream destroyer for a server
 * request): the message is destroyed with an AbortError but keeps the socket out of it, so the
 * connection stays open for the answer.
 */
function _abandon(message: IncomingMessage): void {
  message.on("error", _ignore);
  (message as { socket: IncomingMessage["socket"] | null }).socket = null;
  message.destroy(Object.assign(new Error("The operation was aborted"), { name: "AbortError", code: "ABORT_ERR" }));
}

function _ignore(): void {}

/** What srvx treats as a body that can no longer be read (its stream then errors at once). */
function _sourceFinished(message: IncomingMessage): boolean {
  return message.aborted || !!message.errored || message.destroyed || message.readableEnded;
}

function _tooLarge(limit: number) {
  return gwError("GW_REQUEST_BODY_TOO_LARGE", { detail: `The body limit of this endpoint is ${limit} bytes.` });
}

function _timedOut(timeoutMs: number) {
  return gwError("GW_REQUEST_BODY_TIMEOUT", { detail: `The body did not arrive within ${timeoutMs} ms.` });
}

function _incomplete() {
  return gwError("GW_REQUEST_BODY_INCOMPLETE", { detail: "The connection ended before the whole body arrived." });
}
