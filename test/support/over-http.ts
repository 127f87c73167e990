/**
 * Real HTTP for a test gateway built for in-process calls: `callOverHttp(tg)` starts its server on a
 * loopback port and makes `tg.call()` (and every harness method built on it) send each request over
 * the wire with node:http, so the Host header can be the approved domain. The catalog-coverage
 * check counts only answers read off HTTP; suites that exist to produce codes over HTTP use this.
 */
import { request } from "node:http";
import type { CallInit, TestGateway } from "./gateway.ts";
import { PASSTHROUGH, withHostKey } from "./gateway.ts";

/** Starts `tg`'s server and routes `tg.call()` through it. Returns the port. */
export async function callOverHttp(tg: TestGateway): Promise<number> {
  const server = await tg.listen();
  tg.call = (path, init = {}) => httpCall(server.port, path, init);
  return server.port;
}

/** One request over HTTP to 127.0.0.1:`port`, answered as a fetch Response. */
export function httpCall(port: number, path: string, init: CallInit = {}): Promise<Response> {
  const host = init.host ?? PASSTHROUGH;
  // As tg.call(): the demo key is swapped for the key of the business owning the host.
  const headers: Record<string, string> = { host, ...withHostKey(host, init.headers ?? {}) };
  let body: Buffer | undefined;
  if (init.body !== undefined) {
    if (typeof init.body === "string" || init.body instanceof Uint8Array) body = Buffer.from(init.body as string | Uint8Array);
    else {
      body = Buffer.from(JSON.stringify(init.body));
      headers["content-type"] ??= "application/json";
    }
    headers["content-length"] = String(body.length);
  }
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method: init.method ?? "GET", path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const out = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) out.append(name, v);
        }
        const status = res.statusCode ?? 0;
        const bodyless = status === 204 || status === 205 || status === 304 || (init.method ?? "GET") === "HEAD";
        resolve(new Response(bodyless ? null : Buffer.concat(chunks), { status, headers: out }));
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}
