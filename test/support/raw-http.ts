/**
 * Raw HTTP/1.1 over a socket, for cases fetch cannot produce: a body that stops arriving, a body
 * shorter than its Content-Length, a connection the client aborts mid-request.
 */
import { connect, type Socket } from "node:net";
import { recordProblemAnswer } from "./code-coverage.ts";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawRequestOptions {
  port: number;
  /** Everything before the body, without the final blank line; "\r\n" joins are added. */
  head: string[];
  /** Body bytes written right after the head. */
  body?: string;
  /** After writing, half-close (end) the socket, or keep it open. */
  end?: boolean;
  /** Give up after this many ms (resolves with status 0). */
  timeoutMs?: number;
}

export function rawRequest(options: RawRequestOptions): Promise<RawResponse & { socket: Socket }> {
  return new Promise((resolve) => {
    const socket = connect(options.port, "127.0.0.1");
    let data = "";
    const timer = setTimeout(() => finish(), options.timeoutMs ?? 5_000);
    const finish = () => {
      clearTimeout(timer);
      const [head = "", ...rest] = data.split("\r\n\r\n");
      const lines = head.split("\r\n");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? "")?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const i = line.indexOf(":");
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const body = _dechunk(rest.join("\r\n\r\n"), headers);
      recordProblemAnswer(headers["content-type"], body);
      resolve({ status, headers, body, socket });
      socket.destroy();
    };
    socket.on("connect", () => {
      socket.write(options.head.join("\r\n") + "\r\n\r\n");
      if (options.body) socket.write(options.body);
      if (options.end) socket.end();
    });
    socket.on("data", (d) => {
      data += d;
      const [head, body] = [data.split("\r\n\r\n")[0] ?? "", data.split("\r\n\r\n").slice(1).join("\r\n\r\n")];
      const length = /content-length: *(\d+)/i.exec(head)?.[1];
      if (length !== undefined && Buffer.byteLength(body) >= Number(length)) finish();
      if (/transfer-encoding: *chunked/i.test(head) && body.endsWith("0\r\n\r\n")) finish();
    });
    socket.on("close", finish);
    socket.on("error", () => {});
  });
}

export interface RawExchangeOptions {
  port: number;
  /** Bytes to write, in order; a number waits that many ms before the next piece. */
  send: Array<string | Buffer | number>;
  /** Half-close (FIN) after the last piece. */
  end?: boolean;
  /** Stop reading after this many ms (the exchange resolves with what arrived). */
  timeoutMs?: number;
  /** Resolve as soon as this many complete responses arrived. */
  expect?: number;
  /** Resolve once a response arrived and nothing more came for this many ms. */
  idleMs?: number;
  /** The (first) request is a HEAD: its response has no body whatever its Content-Length. */
  head?: boolean;
}

export interface RawExchange {
  /** Every complete response read off the connection, in order. */
  responses: RawResponse[];
  /** Bytes after the last complete response (a response cut short). */
  rest: string;
  /** The server closed the connection (rather than the exchange timing out). */
  closed: boolean;
}

/**
 * Writes raw bytes to one connection and reads every response the server sends back, framed by
 * Content-Length or chunked encoding (HTTP/1.1 pipelining, answers to malformed requests).
 */
export function rawExchange(options: RawExchangeOptions): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect(options.port, "127.0.0.1");
    let data = Buffer.alloc(0);
    let closed = false;
    let done = false;
    let idle: NodeJS.Timeout | undefined;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(idle);
      const { responses, rest } = parseResponses(data, { head: options.head });
      socket.destroy();
      resolve({ responses, rest: rest.toString("latin1"), closed });
    };
    const timer = setTimeout(finish, options.timeoutMs ?? 5_000);
    socket.on("connect", async () => {
      for (const piece of options.send) {
        if (typeof piece === "number") await new Promise((r) => setTimeout(r, piece));
        else if (!socket.destroyed) socket.write(piece);
      }
      if (options.end && !socket.destroyed) socket.end();
    });
    socket.on("data", (d) => {
      data = Buffer.concat([data, d]);
      const count = options.expect !== undefined || options.idleMs !== undefined ? parseResponses(data, { head: options.head }).responses.length : 0;
      if (options.expect !== undefined && count >= options.expect) finish();
      if (options.idleMs !== undefined && count > 0) {
        clearTimeout(idle);
        idle = setTimeout(finish, options.idleMs);
      }
    });
    socket.on("close", () => {
      closed = true;
      finish();
    });
    socket.on("error", () => {});
  });
}

/**
 * Splits bytes read off a connection into complete HTTP/1.1 responses and what is left over.
 * Interim 1xx responses (100 Continue) are skipped; with `head`, the first final response has no body.
 */
export function parseResponses(data: Buffer, options: { head?: boolean } = {}): { responses: RawResponse[]; rest: Buffer } {
  const responses: RawResponse[] = [];
  let at = 0;
  let bodyless = options.head ?? false;
  for (;;) {
    const headEnd = data.indexOf("\r\n\r\n", at);
    if (headEnd < 0) break;
    const lines = data.toString("latin1", at, headEnd).split("\r\n");
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "")?.[1] ?? 0);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(":");
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    let bodyStart = headEnd + 4;
    let body: Buffer;
    if (status >= 100 && status < 200) {
      at = bodyStart;
      continue;
    }
    if (bodyless) {
      bodyless = false;
      responses.push({ status, headers, body: "" });
      at = bodyStart;
      continue;
    }
    if (headers["transfer-encoding"]?.toLowerCase() === "chunked") {
      const parts: Buffer[] = [];
      let p = bodyStart;
      let complete = false;
      for (;;) {
        const lineEnd = data.indexOf("\r\n", p);
        if (lineEnd < 0) break;
        const size = parseInt(data.toString("latin1", p, lineEnd), 16);
        if (Number.isNaN(size)) break;
        if (size === 0) {
          const trailerEnd = data.indexOf("\r\n\r\n", lineEnd);
          if (trailerEnd < 0 && data.length < lineEnd + 4) break;
          p = trailerEnd >= 0 ? trailerEnd + 4 : lineEnd + 4;
          complete = true;
          break;
        }
        if (data.length < lineEnd + 2 + size + 2) break;
        parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
        p = lineEnd + 2 + size + 2;
      }
      if (!complete) break;
      body = Buffer.concat(parts);
      bodyStart = p;
    } else {
      const length = Number(headers["content-length"] ?? 0);
      if (data.length < bodyStart + length) break;
      body = data.subarray(bodyStart, bodyStart + length);
      bodyStart += length;
    }
    responses.push({ status, headers, body: body.toString("utf8") });
    recordProblemAnswer(headers["content-type"], body.toString("utf8"));
    at = bodyStart;
  }
  return { responses, rest: data.subarray(at) };
}

function _dechunk(body: string, headers: Record<string, string>): string {
  if (headers["transfer-encoding"] !== "chunked") return body;
  let out = "";
  let rest = body;
  for (;;) {
    const i = rest.indexOf("\r\n");
    if (i < 0) break;
    const size = parseInt(rest.slice(0, i), 16);
    if (!size) break;
    out += rest.slice(i + 2, i + 2 + size);
    rest = rest.slice(i + 2 + size + 2);
  }
  return out;
}

/**
 * One HTTP request over a real connection with a chosen Host header (fetch cannot set Host).
 * `signal` aborts the request (client disconnect).
 */
export async function httpCall(
  baseUrl: string,
  path: string,
  init: { method?: string; host?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {},
): Promise<{ status: number; headers: Record<string, string>; text: string; json(): unknown }> {
  const { request } = await import("undici");
  const headers: Record<string, string> = { ...init.headers };
  if (init.host) headers.host = init.host;
  const res = await request(baseUrl + path, {
    method: (init.method ?? "GET") as "GET",
    headers,
    body: init.body,
    signal: init.signal,
  });
  const text = await res.body.text();
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) flat[k] = Array.isArray(v) ? v.join(", ") : String(v);
  recordProblemAnswer(flat["content-type"], text);
  return { status: res.statusCode, headers: flat, text, json: () => JSON.parse(text) };
}
