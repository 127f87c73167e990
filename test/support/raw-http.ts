/**
 * Raw HTTP/1.1 over a socket, for cases fetch cannot produce: a body that stops arriving, a body
 * shorter than its Content-Length, a connection the client aborts mid-request.
 */
import { connect, type Socket } from "node:net";

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
      resolve({ status, headers, body: _dechunk(rest.join("\r\n\r\n"), headers), socket });
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
  return { status: res.statusCode, headers: flat, text, json: () => JSON.parse(text) };
}
