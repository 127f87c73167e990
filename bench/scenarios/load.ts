/**
 * The load scenarios of `npm run bench`: `ping`, `health` and `relay`, each fired by autocannon
 * (fixed settings) at every server that offers it, one after the other, in one run:
 *
 * | server        | what it is (bench/servers/)                                                           |
 * |---------------|---------------------------------------------------------------------------------------|
 * | upstream      | plain node:http answering ~600 bytes of JSON: the relay's ceiling ("direct")          |
 * | node-http     | plain node:http answering ping and health: the floor under every Node server (ceiling) |
 * | bare-h3       | `new H3()` + srvx, the same routes, nothing else: the baseline of every ratio         |
 * | fast-gateway  | peer: x-api-key check + rate limit + proxy (fast-gateway 3.4.7)                       |
 * | fastify       | peer: x-api-key hook + @fastify/rate-limit + @fastify/http-proxy (fastify 5)          |
 * | gateway       | Gatehouse, every stage, log level info to a file, the real regulator client           |
 * | gateway-console-off | the same Gatehouse with `console.enabled: false`: the console's cost, same run  |
 *
 * | scenario | path                                      | servers                                   |
 * |----------|-------------------------------------------|-------------------------------------------|
 * | ping     | GET /bench/ping (x-api-key)               | node-http, bare-h3, fast-gateway, fastify, gateway (both) |
 * | health   | GET /health/live (public)                 | node-http, bare-h3, gateway               |
 * | relay    | GET /api/v1/invoice/resources/currencies  | upstream, bare-h3, fast-gateway, fastify, gateway (both) |
 *
 * Every request carries the same headers (host of the Pass-through demo domain, the demo x-api-key),
 * whatever the server. Each server runs in its own process, the upstream too, compiled by esbuild
 * and run with plain node as a deployment would (bench/build.ts; under tsx with BENCH_TSX=1 or --profile). Before the load, one
 * request must answer 200 with the expected body, and on a server that checks keys a request
 * without x-api-key must answer 401 (a peer without its key check would be a false comparison).
 * Measured per row: req/s, latency, the server's CPU time per request and its RSS after the row
 * (from /proc). For the gateway, the log lines written during the row are counted: at least one
 * `gateway_request_completed` per answered request (and one `gateway_dependency_call` per relayed
 * one), or the run fails.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { buildServers, serverNodeFlags } from "../build.ts";
import { processCpuMs, processRss, spawnListening, stopProcess, type Listening } from "../processes.ts";
import { envInt, summarizeCannon } from "../report.ts";
import type { BenchSettings, ScenarioResult, ServerRole } from "../run.ts";
import {
  BENCH_API_KEY,
  BENCH_BODY,
  BENCH_HOST,
  BENCH_PATH,
  HEALTH_BODY,
  HEALTH_PATH,
  READY_PREFIX,
  RELAY_PATH,
  UPSTREAM_BODY,
} from "../servers/common.ts";

export type ServerName = "upstream" | "node-http" | "bare-h3" | "fast-gateway" | "fastify" | "gateway" | "gateway-log-off" | "gateway-console-off";

export const SERVERS: Readonly<Record<ServerName, { role: ServerRole; description: string; checksKey: boolean }>> = {
  upstream: { role: "ceiling", description: "the upstream itself (node:http, ~600 B JSON)", checksKey: false },
  "node-http": { role: "ceiling", description: "node:http alone, same routes and bytes: the floor under every Node server", checksKey: false },
  "bare-h3": { role: "baseline", description: "new H3() + srvx, same routes, nothing else", checksKey: false },
  "fast-gateway": { role: "peer", description: "fast-gateway 3.4.7: key check + rate limit + proxy", checksKey: true },
  fastify: { role: "peer", description: "fastify 5 + @fastify/rate-limit + @fastify/http-proxy, key hook", checksKey: true },
  gateway: { role: "subject", description: "Gatehouse: every stage, info logs to a file, regulator client, request log on", checksKey: true },
  "gateway-log-off": { role: "subject", description: "Gatehouse as above with the request log off (its before/after row)", checksKey: true },
  "gateway-console-off": { role: "subject", description: "the same Gatehouse with the operator console disabled: what the console costs the request path", checksKey: true },
};

/** Load rows whose server is another's bundle started with extra arguments. */
const VARIANTS: Partial<Record<ServerName, { bundle: ServerName; args: readonly string[] }>> = {
  "gateway-log-off": { bundle: "gateway", args: ["--request-log", "off"] },
};

export interface LoadScenario {
  name: "ping" | "health" | "relay";
  path: string;
  expectBody: string;
  servers: readonly ServerName[];
}

export const LOAD_SCENARIOS: readonly LoadScenario[] = [
  { name: "ping", path: BENCH_PATH, expectBody: JSON.stringify(BENCH_BODY), servers: ["node-http", "bare-h3", "fast-gateway", "fastify", "gateway-log-off", "gateway", "gateway-console-off"] },
  { name: "health", path: HEALTH_PATH, expectBody: JSON.stringify(HEALTH_BODY), servers: ["node-http", "bare-h3", "gateway"] },
  { name: "relay", path: RELAY_PATH, expectBody: UPSTREAM_BODY, servers: ["upstream", "bare-h3", "fast-gateway", "fastify", "gateway-log-off", "gateway", "gateway-console-off"] },
];

const HEADERS = { host: BENCH_HOST, "x-api-key": BENCH_API_KEY };

export interface LoadOptions {
  /** Only these scenarios (default all). */
  only?: readonly string[];
  /** Run every server with `--cpu-prof` into <dir>/<server>/ (written when the server stops). */
  cpuProfDir?: string;
  progress?: (line: string) => void;
}

export interface LoadOutcome {
  results: ScenarioResult[];
  notes: string[];
  problems: string[];
}

/** Starts the upstream and every server, runs every (scenario, server) row, stops everything. */
export async function runLoadScenarios(settings: BenchSettings, options: LoadOptions = {}): Promise<LoadOutcome> {
  const progress = options.progress ?? (() => {});
  const scenarios = LOAD_SCENARIOS.filter((s) => !options.only || options.only.includes(s.name));
  const outcome: LoadOutcome = { results: [], notes: [], problems: [] };
  if (scenarios.length === 0) return outcome;
  const needed = new Set<ServerName>(scenarios.flatMap((s) => s.servers));
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-load-"));
  const started: Array<Listening & { name: ServerName }> = [];
  // Compiled, as deployed (bench/build.ts); under tsx when profiling, so profiles name the sources.
  const bundles = new Set([...needed].map((n) => VARIANTS[n]?.bundle ?? n));
  const compiled: Partial<Record<ServerName, string>> = options.cpuProfDir || process.env.BENCH_TSX === "1" ? {} : await buildServers([...bundles, "upstream"]);
  try {
    const upstream = await startServer("upstream", [], { cpuProfDir: options.cpuProfDir, compiled: compiled.upstream });
    started.push({ ...upstream, name: "upstream" });
    // The servers start side by side (each is idle until its rows run).
    const others = await Promise.all(
      [...needed].filter((n) => n !== "upstream").map(async (name) => {
        const variant = VARIANTS[name];
        const listening = await startServer(variant?.bundle ?? name, ["--upstream", upstream.url, ...(variant?.args ?? [])], {
          cpuProfDir: options.cpuProfDir,
          compiled: compiled[variant?.bundle ?? name],
          ...(_isGateway(name) ? { stdoutFile: _logOf(dir, name) } : {}),
          ...(variant ? { profileName: name } : {}),
        });
        return { ...listening, name };
      }),
    );
    started.push(...others);
    progress(`servers: ${started.map((s) => `${s.name} pid ${s.child.pid}`).join(", ")}`);
    outcome.notes.push(
      (compiled.upstream
        ? "load servers: compiled bundles run with plain node (bench/build.ts)"
        : "load servers: TypeScript sources under the tsx loader (~35 MiB more RSS each; BENCH_TSX=1 or --profile)") +
        `, node flags: ${serverNodeFlags().join(" ") || "none"}`,
    );
    const byName = new Map(started.map((s) => [s.name, s]));

    for (const scenario of scenarios) {
      for (const name of scenario.servers) {
        const server = byName.get(name)!;
        const row = `${scenario.name}/${name}`;
        const url = server.url + scenario.path;
        await _preflight(row, url, scenario.expectBody, SERVERS[name].checksKey);
        if (settings.warmup > 0) await _cannon(url, settings, settings.warmup);
        progress(`${row}: measuring ${settings.duration} s (-c ${settings.connections} -p ${settings.pipelining})`);
        const gatewayLog = _logOf(dir, name);
        const logBefore = _isGateway(name) ? _logSize(gatewayLog) : 0;
        const pid = server.child.pid!;
        const cpuBefore = processCpuMs(pid);
        const raw = await _cannon(url, settings, settings.duration);
        const cpuMs = processCpuMs(pid) - cpuBefore;
        const rss = processRss(pid);
        const result = _result(scenario, name, raw, rss.rssMiB, raw.requests.total > 0 ? (cpuMs * 1000) / raw.requests.total : Number.NaN);
        outcome.results.push(result);
        outcome.problems.push(...problemsOf(result));
        if (_isGateway(name)) {
          const counted = await _countEventsSettled(gatewayLog, logBefore, raw.requests.total, scenario.name === "relay");
          const relayed = scenario.name === "relay";
          outcome.notes.push(
            `${row}: log lines written while measuring: ${counted.completed} gateway_request_completed, ${counted.dependency} gateway_dependency_call (${raw.requests.total} answered requests)`,
          );
          if (counted.completed < raw.requests.total)
            outcome.problems.push(`${row}: ${counted.completed} gateway_request_completed lines for ${raw.requests.total} answered requests`);
          if (relayed && counted.dependency < raw.requests.total)
            outcome.problems.push(`${row}: ${counted.dependency} gateway_dependency_call lines for ${raw.requests.total} relayed requests`);
        }
      }
      outcome.notes.push(..._requestLogCost(scenario.name, outcome.results));
      if (scenario.servers.includes("gateway") && scenario.servers.includes("gateway-log-off"))
        outcome.notes.push(await _requestLogPairs(scenario, byName.get("gateway-log-off")!, byName.get("gateway")!, settings, progress));
    }
  } finally {
    await Promise.all(started.map((s) => stopProcess(s.child)));
    rmSync(dir, { recursive: true, force: true });
  }
  return outcome;
}

/** A bench of 401s, 429s or dropped connections measures nothing. */
export function problemsOf(r: ScenarioResult): string[] {
  const out: string[] = [];
  if (r.requests === 0) out.push(`${r.name}: no request completed`);
  if (r.non2xx > 0) out.push(`${r.name}: ${r.non2xx} non-2xx responses`);
  if (r.errors > 0) out.push(`${r.name}: ${r.errors} connection errors (${r.timeouts} timeouts)`);
  return out;
}

/**
 * Starts one bench server (bench/servers/<name>.ts) in its own process; resolves with its URL once it
 * listens. `compiled`: its bundle (bench/build.ts), run with plain node; else the source under tsx.
 * `stdoutFile`: where its stdout goes (the gateway's log); `cpuProfDir`: --cpu-prof into <dir>/<name>/.
 */
export async function startServer(
  name: ServerName,
  args: readonly string[],
  options: { cpuProfDir?: string; stdoutFile?: string; compiled?: string; profileName?: string } = {},
): Promise<Listening> {
  const nodeArgs: string[] = serverNodeFlags();
  if (options.cpuProfDir) {
    const d = join(options.cpuProfDir, options.profileName ?? name);
    mkdirSync(d, { recursive: true });
    nodeArgs.push("--cpu-prof", `--cpu-prof-dir=${d}`);
  }
  const fd = options.stdoutFile ? openSync(options.stdoutFile, "w") : undefined;
  try {
    return await spawnListening(name, [options.compiled ?? `bench/servers/${name}.ts`, ...args], new RegExp(`^${READY_PREFIX}(\\S+)$`, "m"), {
      readyOn: "stderr",
      stdout: fd ?? "pipe",
      nodeArgs,
      tsx: options.compiled === undefined,
    });
  } finally {
    if (fd !== undefined) closeSync(fd); // the child holds its own copy
  }
}

// --- Internal helpers ---

function _isGateway(name: ServerName): boolean {
  return name.startsWith("gateway");
}

function _logOf(dir: string, name: ServerName): string {
  return join(dir, `${name}.log`);
}

/** The request log's cost on a scenario: the gateway's CPU per request with it on, less with it off (same run, back to back). */
function _requestLogCost(scenario: string, rows: readonly ScenarioResult[]): string[] {
  const on = rows.find((r) => r.scenario === scenario && r.server === "gateway");
  const off = rows.find((r) => r.scenario === scenario && r.server === "gateway-log-off");
  if (!on?.cpuUsPerRequest || !off?.cpuUsPerRequest) return [];
  const d = on.cpuUsPerRequest - off.cpuUsPerRequest;
  return [`${scenario}: request log on − off = ${d.toFixed(2)} µs CPU per request (${on.cpuUsPerRequest.toFixed(2)} vs ${off.cpuUsPerRequest.toFixed(2)}; ${Math.round(on.requestsPerSec)} vs ${Math.round(off.requestsPerSec)} req/s)`];
}

/**
 * The request log's cost measured again in BENCH_LOG_PAIRS (default 4, rounded up to even) pairs in
 * alternating order (off then on, then on then off: "ABBA"), each leg BENCH_LOG_PAIR_SECONDS (default
 * 5; with `--quick`, 2 pairs of 1 s) of the scenario's load: the mean over pairs of both orders cancels a leg's place in its pair.
 * On a shared machine even this moves by tens of µs per request (docs/bench.md "Request log": with
 * the log's writes discarded, pairs of −1 to +73 µs); a cost of a few µs is read off the gateway's
 * CPU profile instead (`--profile`, then bench/profile-share.ts).
 */
async function _requestLogPairs(scenario: LoadScenario, off: Listening, on: Listening, settings: BenchSettings, progress: (line: string) => void): Promise<string> {
  // `--quick` (a smoke check of ≤ 60 s in all): two pairs of the quick duration.
  const pairs = Math.ceil(envInt(process.env.BENCH_LOG_PAIRS, settings.quick ? 2 : 4, 1, "BENCH_LOG_PAIRS") / 2) * 2;
  const seconds = envInt(process.env.BENCH_LOG_PAIR_SECONDS, settings.quick ? Math.max(1, Math.ceil(settings.duration)) : 5, 1, "BENCH_LOG_PAIR_SECONDS");
  const leg = async (server: Listening): Promise<number> => {
    const pid = server.child.pid!;
    const before = processCpuMs(pid);
    const r = await _cannon(server.url + scenario.path, settings, seconds);
    return r.requests.total > 0 ? ((processCpuMs(pid) - before) * 1000) / r.requests.total : Number.NaN;
  };
  const differences: number[] = [];
  for (let i = 0; i < pairs; i++) {
    progress(`${scenario.name}: request log pair ${i + 1}/${pairs} (${seconds} s a leg)`);
    const order = i % 2 === 0 ? [off, on] : [on, off];
    const [first, second] = [await leg(order[0]!), await leg(order[1]!)];
    differences.push(i % 2 === 0 ? second - first : first - second);
  }
  const mean = differences.reduce((a, b) => a + b, 0) / pairs;
  return `${scenario.name}: request log on − off, mean of ${pairs} pairs in alternating order, ${seconds} s a leg = ${mean.toFixed(2)} µs CPU per request (pairs: ${differences.map((d) => d.toFixed(1)).join(", ")})`;
}

function _cannon(url: string, settings: BenchSettings, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url,
    headers: HEADERS,
    connections: settings.connections,
    pipelining: settings.pipelining,
    duration: seconds,
  });
}

function _result(scenario: LoadScenario, server: ServerName, r: autocannon.Result, rssMiB: number, cpuUsPerRequest: number): ScenarioResult {
  const meta = { name: `${scenario.name}/${server}`, scenario: scenario.name, server, role: SERVERS[server].role, description: SERVERS[server].description };
  return { ...summarizeCannon(meta, scenario.path, r), rssMiB, cpuUsPerRequest };
}

/** One request before the load: 200 with the expected body; without the key, 401 where keys are checked. */
async function _preflight(row: string, url: string, expectBody: string, checksKey: boolean): Promise<void> {
  const ok = await httpGet(url, HEADERS);
  if (ok.status !== 200 || ok.body !== expectBody) throw new Error(`bench: ${row} pre-flight answered ${ok.status}: ${ok.body.slice(0, 300)}`);
  if (checksKey && url.includes("/health/") === false) {
    const refused = await httpGet(url, { host: BENCH_HOST });
    if (refused.status !== 401) throw new Error(`bench: ${row} answered ${refused.status} without x-api-key (expected 401): its key check is not in place`);
  }
}

/** One GET on a fresh connection: its status and body as text. */
export function httpGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "GET", headers, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

function _logSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Counts the two request-path events in what the gateway wrote to its log after `from`. */
function _countEvents(file: string, from: number): { completed: number; dependency: number } {
  const size = _logSize(file);
  const fd = openSync(file, "r");
  const counts = { completed: 0, dependency: 0 };
  const chunk = Buffer.alloc(4 * 1024 * 1024);
  let tail = "";
  try {
    for (let pos = from; pos < size; ) {
      const n = readSync(fd, chunk, 0, Math.min(chunk.length, size - pos), pos);
      if (n <= 0) break;
      pos += n;
      const text = tail + chunk.toString("utf8", 0, n);
      const lastNewline = text.lastIndexOf("\n");
      const lines = text.slice(0, lastNewline + 1);
      tail = text.slice(lastNewline + 1);
      counts.completed += _occurrences(lines, '"event":"gateway_request_completed"');
      counts.dependency += _occurrences(lines, '"event":"gateway_dependency_call"');
    }
  } finally {
    closeSync(fd);
  }
  return counts;
}

/**
 * `_countEvents`, waiting (up to 2 s) for the lines still on their way: the gateway writes its log
 * lines once per event-loop turn, so the last responses may arrive before their lines are written.
 */
async function _countEventsSettled(file: string, from: number, expected: number, relayed: boolean): Promise<{ completed: number; dependency: number }> {
  const deadline = Date.now() + 2_000;
  for (;;) {
    const counted = _countEvents(file, from);
    if ((counted.completed >= expected && (!relayed || counted.dependency >= expected)) || Date.now() > deadline) return counted;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function _occurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}
