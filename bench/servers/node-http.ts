/**
 * Bench server "node-http": what node:http alone answers, the floor under every Node server in the
 * table (bare h3 included). `/bench/ping` and `/health/live` answer the same bytes as bare h3, with
 * the same headers, from one `createServer` handler: no router, no request wrapper, no `Response`.
 * Its row is a ceiling, never a baseline: it shows how much of bare h3's cost is node:http's own, so
 * how much room a gateway on node:http has (docs/bench.md, issue 12).
 *
 *   node --import tsx bench/servers/node-http.ts
 */
import { createServer } from "node:http";
import { BENCH_BODY, BENCH_PATH, HEALTH_BODY, HEALTH_PATH, listenAndAnnounce } from "./common.ts";

const answers = new Map<string, Buffer>([
  [BENCH_PATH, Buffer.from(JSON.stringify(BENCH_BODY))],
  [HEALTH_PATH, Buffer.from(JSON.stringify(HEALTH_BODY))],
]);

const server = createServer((req, res) => {
  const body = req.method === "GET" ? answers.get(req.url ?? "") : undefined;
  if (!body) {
    res.writeHead(404, { "content-length": "0" });
    res.end();
    return;
  }
  res.writeHead(200, { "content-type": "application/json;charset=UTF-8", "content-length": String(body.length) });
  res.end(body);
});
listenAndAnnounce(server, "node-http");
