/**
 * Bench server "bare-h3": the floor. `new H3()` served with srvx like the gateway, with the same
 * routes and the same bytes on the wire, and nothing else: no stages, no context, no key check, no
 * rate limit, no logging. `/bench/ping` and `/health/live` answer fixed JSON; the relay route
 * forwards the GET to the upstream through one undici Pool (keep-alive) and answers its body.
 *
 *   node --import tsx bench/servers/bare-h3.ts --upstream http://127.0.0.1:<port>
 */
import { H3 } from "h3";
import { FastResponse, serve } from "srvx";
import { Pool } from "undici";
import { announce, BENCH_BODY, BENCH_PATH, closeOnSignal, HEALTH_BODY, HEALTH_PATH, RELAY_PREFIX, upstreamArg } from "./common.ts";

const pool = new Pool(upstreamArg(), { connections: 128, pipelining: 1 });

const app = new H3()
  .get(BENCH_PATH, () => BENCH_BODY)
  .get(HEALTH_PATH, () => HEALTH_BODY)
  .get(`${RELAY_PREFIX}/:name`, async (event) => {
    const res = await pool.request({ method: "GET", path: event.url.pathname });
    const body = new Uint8Array(await res.body.arrayBuffer());
    return new FastResponse(body, {
      status: res.statusCode,
      headers: { "content-type": String(res.headers["content-type"] ?? "application/json"), "content-length": String(body.byteLength) },
    });
  });

const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0, silent: true, gracefulShutdown: false });
await server.ready();
announce(new URL(server.url!).origin);
closeOnSignal(async () => {
  await server.close(true);
  await pool.close();
});
