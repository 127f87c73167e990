/**
 * CPU time per request of the full pipeline, without sockets: the `gateway-pipeline` scenario's
 * gateway (bench/pipeline-gateway.ts: every stage, x-api-key auth, quota) answering
 * sequential `gateway.fetch()` calls. Process CPU time (user + system) divided by requests is far
 * less sensitive to a busy machine than autocannon's req/s, so it resolves per-request costs of a
 * microsecond. Run it alternately on two commits to compare them (docs/bench.md, issue 14).
 *
 *   npx tsx bench/pipeline-cpu.ts             20 000 warm-up requests, then 5 rounds of 50 000
 *   BENCH_CPU_REQUESTS=20000 npx tsx bench/pipeline-cpu.ts
 */
import { DEMO_KEY, PASSTHROUGH } from "../test/support/gateway.ts";
import { BENCH_PATH, startBenchGateway } from "./pipeline-gateway.ts";

const REQUESTS = Number(process.env.BENCH_CPU_REQUESTS ?? 50_000);
const ROUNDS = 5;

const running = await startBenchGateway();
const url = `http://${PASSTHROUGH}${BENCH_PATH}`;
const headers = { host: PASSTHROUGH, "x-api-key": DEMO_KEY };

async function batch(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await running.gateway.fetch(new Request(url, { headers }));
    if (res.status !== 200) throw new Error(`bench: answered ${res.status}`);
    await res.arrayBuffer();
  }
}

try {
  await batch(20_000);
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.cpuUsage();
    await batch(REQUESTS);
    const used = process.cpuUsage(start);
    rounds.push((used.user + used.system) / REQUESTS);
  }
  rounds.sort((a, b) => a - b);
  process.stdout.write(
    `pipeline CPU per request (µs), ${ROUNDS} rounds of ${REQUESTS}: ${rounds.map((x) => x.toFixed(2)).join(" ")}; median ${rounds[ROUNDS >> 1]!.toFixed(2)}\n`,
  );
} finally {
  await running.close();
}
