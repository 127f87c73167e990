/**
 * Bench peer "fastify": fastify 5 + @fastify/rate-limit + @fastify/http-proxy, configured as their
 * docs show. An `onRequest` hook checks x-api-key (401), @fastify/rate-limit counts per key (429,
 * in-memory store), @fastify/http-proxy forwards the relay prefix to the upstream with the path
 * unchanged (undici pool, keep-alive), and `/bench/ping` is a plain fastify route behind the same
 * hooks. Logger off.
 *
 *   node --import tsx bench/servers/fastify.ts --upstream http://127.0.0.1:<port>
 */
import proxy from "@fastify/http-proxy";
import rateLimit from "@fastify/rate-limit";
import Fastify from "fastify";
import { announce, BENCH_API_KEY, BENCH_BODY, BENCH_PATH, BENCH_WINDOW_MS, closeOnSignal, limitArg, RELAY_PREFIX, upstreamArg } from "./common.ts";

const KEYS = new Set([BENCH_API_KEY]);
const LIMIT = limitArg();

const app = Fastify({ logger: false });
app.addHook("onRequest", async (req, reply) => {
  const key = req.headers["x-api-key"];
  if (typeof key !== "string" || !KEYS.has(key)) return reply.code(401).send({ error: "invalid api key" });
});
await app.register(rateLimit, {
  global: true,
  max: LIMIT,
  timeWindow: BENCH_WINDOW_MS,
  keyGenerator: (req) => String(req.headers["x-api-key"]),
});
await app.register(proxy, { upstream: upstreamArg(), prefix: RELAY_PREFIX, rewritePrefix: RELAY_PREFIX, httpMethods: ["GET"] });
app.get(BENCH_PATH, async () => BENCH_BODY);

await app.listen({ port: 0, host: "127.0.0.1" });
const address = app.server.address();
if (typeof address !== "object" || !address) throw new Error("fastify: no address");
announce(`http://127.0.0.1:${address.port}`);
closeOnSignal(() => app.close());
