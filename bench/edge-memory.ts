/**
 * Memory after hostile load (issue 18 item 8), not a test: what the gateway retains after a
 * fuzz-like load, and whether it grows with more of it.
 *
 *   npx tsx bench/edge-memory.ts
 *   EDGE_MEM_CASES=20000 EDGE_MEM_SNAPSHOT=1 npx tsx bench/edge-memory.ts
 *
 * This process is the client; it starts the server as a child (`--server`: the demo composition on
 * the embedded fs store in a temporary folder, the regulator simulator, the demo taxpayer
 * onboarded), so the client's own allocations never count. The client sends the fuzz suite's cases
 * (test/e2e/fuzz/requests.ts) over raw sockets, 8 connections at a time: a warm-up round, then
 * EDGE_MEM_ROUNDS rounds of EDGE_MEM_CASES / rounds cases. After each round the server collects
 * garbage (four full GCs) and reports rss / heapUsed / heapTotal / external. With
 * EDGE_MEM_SNAPSHOT=1 it also writes heap snapshots after the warm-up and after the last round (RSS
 * is measured before each snapshot: writing one costs ~100 MiB of RSS) and the largest growths by
 * object type are printed.
 *
 * Bounds (exit 1 when exceeded): the heap retained after the load is at most EDGE_MEM_MAX_GROWTH_MB
 * (default 8) above the warm-up's, and the last round adds at most EDGE_MEM_MAX_LAST_ROUND_MB
 * (default 1): what a request leaves behind is bounded, not proportional to the traffic.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { writeHeapSnapshot } from "node:v8";
import * as fc from "fast-check";

const ROOT = new URL("..", import.meta.url).pathname;
const CASES = Number(process.env.EDGE_MEM_CASES ?? 8_000);
const ROUNDS = Number(process.env.EDGE_MEM_ROUNDS ?? 4);
const WARMUP = Number(process.env.EDGE_MEM_WARMUP ?? 500);
const SNAPSHOT = process.env.EDGE_MEM_SNAPSHOT === "1";
const MAX_GROWTH_MB = Number(process.env.EDGE_MEM_MAX_GROWTH_MB ?? 8);
const MAX_LAST_ROUND_MB = Number(process.env.EDGE_MEM_MAX_LAST_ROUND_MB ?? 1);
const CONCURRENCY = 8;

interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  snapshot?: string;
}

if (process.argv.includes("--server")) await serverRole();
else await clientRole();

// ---------------------------------------------------------------------------

async function clientRole(): Promise<void> {
  const { demoFuzzContext, fuzzCase, routesOf, toBytes } = await import("../test/e2e/fuzz/requests.ts");
  const { rawExchange } = await import("../test/support/raw-http.ts");
  const { tempDir } = await import("../test/support/temp.ts");
  const snapshots = SNAPSHOT ? tempDir("heap") : null;
  const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", join(ROOT, "bench/edge-memory.ts"), "--server"], { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (prefix: string): Promise<string> => {
    for (;;) {
      const { value, done } = await lines.next();
      if (done) throw new Error("the server exited");
      if ((value as string).startsWith(prefix)) return (value as string).slice(prefix.length);
    }
  };
  const [port, sub] = (await next("READY ")).split(" ") as [string, string];
  const measure = async (snapshot?: string): Promise<Memory> => {
    child.stdin.write(`measure ${snapshot ?? ""}\n`);
    return JSON.parse(await next("MEMORY ")) as Memory;
  };
  const openapi = await (await fetch(`http://127.0.0.1:${port}/openapi.json`)).json();
  const ctx = demoFuzzContext(routesOf(openapi), sub);
  let seed = 1;
  const load = async (count: number): Promise<number> => {
    const cases = fc.sample(fuzzCase(ctx), { numRuns: count, seed: seed++ });
    let i = 0;
    let answered = 0;
    const worker = async () => {
      for (let c = cases[i++]; c; c = cases[i++]) {
        const ex = await rawExchange({ port: Number(port), send: [toBytes(c)], end: c.halfClose, head: c.method === "HEAD", idleMs: 100, timeoutMs: 3_000 });
        if (ex.responses.length > 0) answered++;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return answered;
  };

  const rows: Array<{ label: string; cases: number; answered: number; memory: Memory }> = [];
  rows.push({ label: "started", cases: 0, answered: 0, memory: await measure() });
  const warmAnswered = await load(WARMUP);
  rows.push({ label: "warm-up", cases: WARMUP, answered: warmAnswered, memory: await measure(snapshots ? join(snapshots, "warm.heapsnapshot") : undefined) });
  const perRound = Math.ceil(CASES / ROUNDS);
  for (let r = 1; r <= ROUNDS; r++) {
    const answered = await load(perRound);
    const last = r === ROUNDS;
    rows.push({ label: `round ${r}`, cases: perRound, answered, memory: await measure(last && snapshots ? join(snapshots, "load.heapsnapshot") : undefined) });
  }
  child.stdin.write("quit\n");
  await new Promise((resolve) => child.once("exit", resolve));

  const mb = (n: number) => (n / 1_048_576).toFixed(1);
  process.stdout.write(`\nedge memory: ${WARMUP} warm-up + ${CASES} fuzz cases over raw sockets, ${CONCURRENCY} at a time (after 4 full GCs)\n\n`);
  process.stdout.write("| after | cases | answered | rss MiB | heapUsed MiB | heapTotal MiB | external MiB |\n|---|---|---|---|---|---|---|\n");
  for (const row of rows)
    process.stdout.write(`| ${row.label} | ${row.cases} | ${row.answered} | ${mb(row.memory.rss)} | ${mb(row.memory.heapUsed)} | ${mb(row.memory.heapTotal)} | ${mb(row.memory.external)} |\n`);
  const warm = rows[1]!.memory;
  const end = rows[rows.length - 1]!.memory;
  const before = rows[rows.length - 2]!.memory;
  const growth = (end.heapUsed - warm.heapUsed) / 1_048_576;
  const lastRound = (end.heapUsed - before.heapUsed) / 1_048_576;
  process.stdout.write(`\nretained heap after the load: +${growth.toFixed(2)} MiB over the warm-up (bound ${MAX_GROWTH_MB}); last round +${lastRound.toFixed(2)} MiB (bound ${MAX_LAST_ROUND_MB}); rss ${mb(end.rss - warm.rss)} MiB over the warm-up\n`);
  if (warm.snapshot && end.snapshot) process.stdout.write(`\nlargest growths by object type (self size, count), ${warm.snapshot} → ${end.snapshot}:\n${_heapDiff(warm.snapshot, end.snapshot)}\n`);
  const ok = growth <= MAX_GROWTH_MB && lastRound <= MAX_LAST_ROUND_MB;
  process.stdout.write(`${ok ? "within bounds" : "OVER BOUNDS"}\n`);
  process.exitCode = ok ? 0 : 1;
}

async function serverRole(): Promise<void> {
  const { composeGateway } = await import("../boot/compose.ts");
  const { createLogger } = await import("../core/log.ts");
  const { serveGateway } = await import("../core/server.ts");
  const { DEMO_KEY, PASSTHROUGH, testConfig } = await import("../test/support/gateway.ts");
  const { tempDir } = await import("../test/support/temp.ts");
  const { startDemoSimulator, CREDENTIALS } = await import("../test/adapters/regulator/simulator/simulator-helpers.ts");
  const sim = await startDemoSimulator();
  const config = testConfig({
    storage: { driver: "fs", dir: tempDir("edge-memory-data") },
    regulator: CREDENTIALS,
    log: { level: "info" },
    server: { bodyReadTimeoutMs: 400, headerReadTimeoutMs: 800 },
    limits: { admission: { perClient: 1_000_000 }, quotas: { sign: { limit: 1_000_000, windowSeconds: 60 }, management: { limit: 1_000_000, windowSeconds: 60 }, default: { limit: 1_000_000, windowSeconds: 60 } } },
  });
  // Every record is built and redacted as in production; writing it out is left out.
  const log = createLogger({ level: "info", sink: () => {} });
  const gateway = await composeGateway(config, { log, regulatorBaseUrls: { TEST: sim.url, LIVE: sim.url } });
  const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 1_000, log });
  const onboard = await gateway.fetch(
    new Request(`http://${PASSTHROUGH}/sub-businesses`, {
      method: "POST",
      headers: { host: PASSTHROUGH, "x-api-key": DEMO_KEY, "x-idempotency-key": "edge-memory-onboard", "content-type": "application/json" },
      body: JSON.stringify({ regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } }),
    }),
  );
  const { gatewaySubBusinessId } = (await onboard.json()) as { gatewaySubBusinessId: string };
  process.stdout.write(`READY ${server.port} ${gatewaySubBusinessId}\n`);
  const gc = (globalThis as { gc?: () => void }).gc!;
  for await (const line of createInterface({ input: process.stdin })) {
    const [command, file] = line.split(" ");
    if (command === "measure") {
      for (let i = 0; i < 4; i++) {
        gc();
        await new Promise((r) => setTimeout(r, 50));
      }
      const m = process.memoryUsage();
      const memory: Memory = { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external };
      if (file) memory.snapshot = writeHeapSnapshot(file);
      process.stdout.write(`MEMORY ${JSON.stringify(memory)}\n`);
    } else if (command === "quit") {
      await server.drain("bench done");
      await sim.close();
      process.exit(0);
    }
  }
}

/** Self size and count per object type, after minus before: the ten largest growths. */
function _heapDiff(beforeFile: string, afterFile: string): string {
  const before = _byType(beforeFile);
  const after = _byType(afterFile);
  return [...after]
    .map(([key, a]) => ({ key, size: a.size - (before.get(key)?.size ?? 0), count: a.count - (before.get(key)?.count ?? 0) }))
    .sort((x, y) => y.size - x.size)
    .slice(0, 10)
    .map((d) => `  ${String(d.size).padStart(9)} B ${String(d.count).padStart(6)}  ${d.key}`)
    .join("\n");
}

function _byType(file: string): Map<string, { count: number; size: number }> {
  const snap = JSON.parse(readFileSync(file, "utf8")) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [ti, ni, si] = [fields.indexOf("type"), fields.indexOf("name"), fields.indexOf("self_size")];
  const out = new Map<string, { count: number; size: number }>();
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const type = types[snap.nodes[i + ti]!]!;
    const name = type.includes("string") ? "(string)" : type === "code" || type === "hidden" ? `(${type})` : snap.strings[snap.nodes[i + ni]!]!.slice(0, 60);
    const key = `${type}: ${name}`;
    const entry = out.get(key) ?? { count: 0, size: 0 };
    entry.count++;
    entry.size += snap.nodes[i + si]!;
    out.set(key, entry);
  }
  return out;
}
