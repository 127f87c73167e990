/**
 * The hot path in process: the CPU time of one request through the gateway's own code, without the
 * sockets. Each request is an srvx NodeRequest over a stand-in for Node's IncomingMessage (the shape
 * the server hands the gateway), answered by `gateway.fetch` and consumed as srvx consumes it
 * (`_toNodeResponse`); the log lines are written to stdout as in production. Bare h3 answers the same
 * way for reference; the gateway runs with the request log off and on (its flush worker running, so
 * its batched writes count), alternated twice. Reported: the median of 9 rounds of `process.cpuUsage()` per request. CPU time
 * barely moves when other work shares the machine, so steps of docs/bench.md are compared with it;
 * `npm run bench` measures what a client sees.
 *
 *   npx tsx bench/hot-path.ts > /dev/null                         GET /bench/ping, one request at a time
 *   npx tsx bench/hot-path.ts --relay --concurrency 64 > /dev/null a relayed regulator read (starts the upstream)
 *   npx tsx bench/hot-path.ts --console > /dev/null               the operator console on vs off instead (request log on)
 *
 * (stdout carries the gateway's log lines; the figures go to stderr.)
 */
import { H3 } from "h3";
import { NodeRequest } from "srvx/node";
import { createLogger } from "../core/log.ts";
import { stopProcess } from "./processes.ts";
import { startServer } from "./scenarios/load.ts";
import { BENCH_API_KEY, BENCH_BODY, BENCH_HOST, BENCH_PATH, RELAY_PATH } from "./servers/common.ts";
import { benchGatewayConfig, composeBenchGateway } from "./servers/gateway-app.ts";

const ROUNDS = 9;
const PER_ROUND = 4_000;
const SOCKET = { remoteAddress: "127.0.0.1" };

const relay = process.argv.includes("--relay");
const consoleOnOff = process.argv.includes("--console");
const i = process.argv.indexOf("--concurrency");
const concurrency = i >= 0 ? Number(process.argv[i + 1]) : 1;
const path = relay ? RELAY_PATH : BENCH_PATH;

const upstream = relay ? await startServer("upstream", []) : null;
const log = createLogger({ level: "info", format: "json" });
const gateway = await composeBenchGateway(benchGatewayConfig(upstream?.url ?? null), log);
// With --console the other gateway is the same one with the operator console disabled.
const unlogged = await composeBenchGateway(benchGatewayConfig(upstream?.url ?? null, "info", consoleOnOff ? { console: false } : { requestLog: false }), log);
const [offName, onName] = consoleOnOff ? ["gateway, console off", "gateway, console on"] : ["gateway, request log off", "gateway, request log on"];
await Promise.all([gateway.startWorkers(), unlogged.startWorkers()]);
const bare = new H3().get(BENCH_PATH, () => BENCH_BODY);

try {
  if (!relay) await _report("bare h3", (r) => bare.fetch(r));
  // Alternated, so drifting load hits both alike.
  for (let pass = 0; pass < 2; pass++) {
    await _report(offName, (r) => unlogged.fetch(r));
    await _report(onName, (r) => gateway.fetch(r));
  }
} finally {
  await unlogged.close();
  await gateway.close();
  if (upstream) await stopProcess(upstream.child);
}

// --- Internal helpers ---

type Fetch = (r: Request) => Response | Promise<Response>;

async function _report(name: string, fetch: Fetch): Promise<void> {
  await _requests(fetch, 2 * PER_ROUND); // warm-up
  const perRequest: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const before = process.cpuUsage();
    await _requests(fetch, PER_ROUND);
    const used = process.cpuUsage(before);
    perRequest.push((used.user + used.system) / PER_ROUND);
  }
  perRequest.sort((a, b) => a - b);
  process.stderr.write(
    `${name} GET ${path} (concurrency ${concurrency}): ${perRequest[ROUNDS >> 1]!.toFixed(2)} µs CPU per request (min ${perRequest[0]!.toFixed(2)}, max ${perRequest[ROUNDS - 1]!.toFixed(2)})\n`,
  );
}

async function _requests(fetch: Fetch, n: number): Promise<void> {
  let left = n;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await _one(fetch);
    }),
  );
}

async function _one(fetch: Fetch): Promise<void> {
  const headers = { host: BENCH_HOST, "x-api-key": BENCH_API_KEY, "user-agent": "bench", connection: "keep-alive" };
  const req = { method: "GET", url: path, headers, rawHeaders: Object.entries(headers).flat(), socket: SOCKET, httpVersion: "1.1" };
  const res = (await fetch(new NodeRequest({ req: req as never, res: undefined as never }) as unknown as Request)) as Response & {
    _toNodeResponse(): { status: number };
  };
  const status = res._toNodeResponse().status;
  if (status !== 200) throw new Error(`hot-path: ${path} answered ${status}`);
}
