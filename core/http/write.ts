/**
 * Writing answers to Node's HTTP objects by hand: a response built by core without srvx's
 * per-response promise, an answer that closes its connection, and an answer written straight to a
 * socket Node's parser gave up on.
 */
import { STATUS_CODES, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { sendNodeResponse } from "srvx/node";
import { builtSize } from "../respond.ts";

/**
 * A response built by core (core/respond.ts, the error renderer: srvx FastResponses whose body is a
 * string or bytes) is written as srvx's `sendNodeResponse` writes it, head then body, but ended
 * without the promise and `finish` listener that function adds per response. False for any other
 * response, which srvx sends.
 */
export function sendBuilt(res: ServerResponse, response: Response): boolean {
  if (builtSize(response) === undefined) return false;
  const { status, headers, body } = (response as Response & { _toNodeResponse(): _NodeAnswer })._toNodeResponse();
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

/** An answer through the request's own response (the connection closes after it). */
export async function sendClosing(res: ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  const headers: Record<string, string> = { connection: "close" };
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  res.end(body);
}

/** An answer written straight to the socket, which then closes. */
export async function writeRaw(socket: Socket, response: Response): Promise<void> {
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

// --- Internal helpers ---

interface _NodeAnswer {
  status: number;
  headers: string[];
  body: unknown;
}

function _pairs(flat: readonly string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!]);
  return pairs;
}
