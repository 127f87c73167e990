/**
 * Bench peer "fast-gateway" (3.4.7: the newest release that installs and runs on Node 20 — 5.0.1
 * depends on fast-proxy-lite ^1.1.3, which is not published, and on restana 6, which declares Node
 * ≥ 24; docs/bench.md). Configured as a platform team would: two global middlewares, an x-api-key
 * check (401) and a fixed-window rate limit per key (429; fast-gateway ships none, so the cheapest
 * correct one: a Map counter per window), then the relay prefix proxied to the upstream with the
 * path unchanged, and `/bench/ping` answered locally behind the same middlewares. No logging.
 *
 *   node --import tsx bench/servers/fast-gateway.ts --upstream http://127.0.0.1:<port>
 */
import gateway from "fast-gateway";
import type { IncomingMessage, ServerResponse } from "node:http";
import { announce, BENCH_API_KEY, BENCH_BODY, BENCH_PATH, BENCH_WINDOW_MS, closeOnSignal, limitArg, RELAY_PREFIX, upstreamArg } from "./common.ts";

const KEYS = new Set([BENCH_API_KEY]);
const LIMIT = limitArg();
const PING = JSON.stringify(BENCH_BODY);

type Next = (err?: unknown) => void;

function apiKey(req: IncomingMessage, res: ServerResponse, next: Next): void {
  const key = req.headers["x-api-key"];
  if (typeof key === "string" && KEYS.has(key)) return next();
  res.writeHead(401, { "content-type": "application/json" }).end('{"error":"invalid api key"}');
}

let windowStart = 0;
let counts = new Map<string, number>();
function rateLimit(req: IncomingMessage, res: ServerResponse, next: Next): void {
  const now = Date.now();
  const start = now - (now % BENCH_WINDOW_MS);
  if (start !== windowStart) {
    windowStart = start;
    counts = new Map();
  }
  const key = req.headers["x-api-key"] as string;
  const n = (counts.get(key) ?? 0) + 1;
  counts.set(key, n);
  if (n <= LIMIT) return next();
  res.writeHead(429, { "content-type": "application/json", "retry-after": String(Math.ceil((start + BENCH_WINDOW_MS - now) / 1000)) });
  res.end('{"error":"rate limit exceeded"}');
}

const server = gateway({
  middlewares: [apiKey, rateLimit],
  routes: [{ prefix: RELAY_PREFIX, prefixRewrite: RELAY_PREFIX, target: upstreamArg(), methods: ["GET"] }],
});
server.get(BENCH_PATH, (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(PING)) }).end(PING);
});
await server.start(0, "127.0.0.1");
const address = server.getServer().address();
if (typeof address !== "object" || !address) throw new Error("fast-gateway: no address");
announce(`http://127.0.0.1:${address.port}`);
closeOnSignal(() => server.close());
